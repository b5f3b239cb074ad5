//! Program-scope variables (OpenCL C 2.0+): initializers (scalars, vectors, arrays,
//! structs, pointers to other variables), `static` variables in kernels, values kept
//! between launches and shared by the kernels of a program.

mod common;
use common::*;

const SRC: &str = r#"
int counter = 10;
global float4 f4 = (float4)(1.5f, 2.5f, 3.5f, 4.5f);
int arr[3] = {7, 8, 9};
global int* p = &arr[2];
struct S { char c; long l; global int* q; short s; } st = { 3, -5, &counter, 12 };
uchar big[100000];
constant int table[4] = {100, 200, 300, 400};
constant int* ctab = &table[1];

kernel void bump(global int* out) {
  static int calls = 0;
  size_t i = get_global_id(0);
  if (i == 0) {
    calls++;
    counter += 1;
    out[0] = calls;
    out[1] = counter;
    out[2] = *p;
    out[3] = (int)(f4.x * 2) + (int)(f4.w * 2);
    out[4] = st.c + (int)st.l + *st.q + st.s;
    out[5] = *ctab + table[3];
    p = &arr[0];
  }
  big[i] += (uchar)i;
}

kernel void read_back(global int* out) {
  size_t i = get_global_id(0);
  out[i] = big[i] + (i == 0 ? *p * 1000 : 0);
}
"#;

#[test]
fn program_scope_variables_persist_between_launches() {
    let words = spirv_ext(SRC, MEMORY_MODEL_EXT);
    let p = cranecl_jit::compile(&words, &Default::default()).expect("compiles");
    assert_eq!(
        p.global_variable_bytes,
        // counter, calls, f4, arr, p, st, ctab (a global pointer to constant), big
        4 + 4 + 16 + 12 + 8 + 32 + 8 + 100000,
        "CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE counts global (not constant) variables"
    );
    let bump = kernel(&p, "bump");
    let n = 64;
    let mut out = vec![0i32; n];
    run(bump, &[n], &[16], &[buf(&mut out)]);
    // 3 + (-5) + counter (11 after the increment) + 12.
    assert_eq!(&out[..6], &[1, 11, 9, 3 + 9, 3 - 5 + 11 + 12, 200 + 400]);
    let mut out2 = vec![0i32; n];
    run(bump, &[n], &[16], &[buf(&mut out2)]);
    // The second launch sees the first one's writes, including the moved pointer.
    assert_eq!(&out2[..3], &[2, 12, 7]);
    let mut back = vec![0i32; n];
    run(kernel(&p, "read_back"), &[n], &[16], &[buf(&mut back)]);
    for (i, v) in back.iter().enumerate() {
        let want = ((2 * i) & 0xff) as i32 + if i == 0 { 7000 } else { 0 };
        assert_eq!(*v, want, "big[{i}] written by the other kernel");
    }
    // A second compilation of the same module has its own, freshly initialised copy.
    let again = cranecl_jit::compile(&words, &Default::default()).expect("compiles");
    let mut out3 = vec![0i32; n];
    run(kernel(&again, "bump"), &[n], &[16], &[buf(&mut out3)]);
    assert_eq!(&out3[..3], &[1, 11, 9]);
}

#[test]
fn oversized_program_scope_variable_is_refused() {
    let src = format!(
        "uchar huge[{}];\nkernel void k(global uchar* o) {{ o[0] = huge[get_global_id(0)]; }}\n",
        cranecl_jit::MAX_GLOBAL_VARIABLE_SIZE + 1
    );
    let words = spirv_ext(&src, MEMORY_MODEL_EXT);
    let err = match cranecl_jit::compile(&words, &Default::default()) {
        Ok(_) => panic!("a variable over the limit compiled"),
        Err(e) => e,
    };
    assert_eq!(err.kind, cranecl_jit::CompileErrorKind::Unsupported);
    assert!(err.message.contains("huge"), "{}", err.message);
}

#[test]
fn pointer_initializers_point_where_the_source_says() {
    // clang-22 writes these as byte offsets on the whole variable, as direct variable
    // ids, and as casts: all must resolve to the element the source names.
    let src = r#"
int arr[3] = {7, 8, 9};
int a2[4][5] = {{0}, {0}, {0, 0, 0, 23}};
struct T { int a; long b; int c[4]; } t = {1, 2, {3, 4, 5, 6}};
global int* p1 = &arr[2];
global int* p2 = &a2[2][3];
global int* p3 = &t.c[1];
global long* p4 = &t.b;
global int* p5 = (global int*)&t;
global struct T* p6 = &t;
global int* p7 = arr;
struct R { global int* first; int n; global long* second; } r = { &arr[1], 5, &t.b };
global int* nothing;
kernel void k(global long* out) {
  out[0] = *p1; out[1] = *p2; out[2] = *p3; out[3] = *p4; out[4] = *p5;
  out[5] = p6->c[3]; out[6] = *p7; out[7] = *r.first + r.n + *r.second;
  // NULL is a generic null pointer: clang casts it with a constant GenericCastToPtr.
  out[8] = (nothing == NULL) + 2 * (p1 == NULL);
}
"#;
    let words = spirv_ext(src, MEMORY_MODEL_EXT);
    let p = cranecl_jit::compile(&words, &Default::default()).expect("compiles");
    let mut out = vec![0i64; 9];
    run(kernel(&p, "k"), &[1], &[1], &[buf(&mut out)]);
    assert_eq!(out, vec![9, 23, 4, 2, 1, 6, 7, 8 + 5 + 2, 1]);
}

#[test]
fn module_scope_arrays_are_aligned_to_their_type() {
    // Addresses taken as integers fold to constants (`ConvertPtrToU` of a variable).
    let src = r#"
constant char cc[3] = {1, 2, 3};
constant long16 cl16[3] = {(long16)(0)};
global char gc[3];
global double16 gd16[2];
kernel void k(global ulong* out) {
  local char lc[3];
  local char3 lc3[3];
  local long16 ll16[3];
  local int li[5];
  out[0] = (ulong)&lc[0];
  out[1] = (ulong)&lc3[0];
  out[2] = (ulong)&ll16[0];
  out[3] = (ulong)&li[0];
  out[4] = (ulong)&cc[0];
  out[5] = (ulong)&cl16[0];
  out[6] = (ulong)&gc[0];
  out[7] = (ulong)&gd16[0];
  lc[get_local_id(0) % 3] = 1; lc3[0].x = 2; ll16[0].s0 = 3; li[0] = 4;
}
"#;
    let words = spirv_ext(src, MEMORY_MODEL_EXT);
    let p = cranecl_jit::compile(&words, &Default::default()).expect("compiles");
    let mut out = vec![0u64; 8];
    run(kernel(&p, "k"), &[4], &[4], &[buf(&mut out)]);
    let align = [1, 4, 128, 4, 1, 128, 1, 128];
    for (i, (a, want)) in out.iter().zip(align).enumerate() {
        assert_ne!(*a, 0, "address {i}");
        assert_eq!(
            a % want,
            0,
            "address {i} ({a:#x}) must be {want}-byte aligned"
        );
    }
    // The four __local arrays do not overlap.
    let mut local: Vec<(u64, u64)> = vec![(out[0], 3), (out[1], 12), (out[2], 384), (out[3], 20)];
    local.sort();
    for w in local.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "overlap: {w:?}");
    }
}

#[test]
fn uninitialised_pointers_to_atomics_start_null() {
    // clang-22 initialises `global atomic_long* p_var;` with a null of the 64-bit
    // integer type rather than of the pointer's (the CTS progvar_prog_scope_uninit).
    let src = r#"
volatile atomic_long a_var[2];
global volatile atomic_long* p_var;
kernel void writer(global long* src, uint idx, global int* was_null) {
  was_null[0] = p_var == NULL;
  atomic_store(&a_var[0], src[0]);
  atomic_store(&a_var[1], src[1]);
  p_var = a_var + idx;
}
kernel void reader(global long* dest, long v) {
  atomic_store(p_var, v);
  dest[0] = atomic_load(&a_var[0]);
  dest[1] = atomic_load(&a_var[1]);
}
"#;
    let words = spirv_ext(src, MEMORY_MODEL_EXT);
    let p = cranecl_jit::compile(&words, &Default::default()).expect("compiles");
    let mut src_vals = vec![-5i64, 1 << 40];
    let mut was_null = vec![7i32];
    run(
        kernel(&p, "writer"),
        &[1],
        &[1],
        &[buf(&mut src_vals), val(1u32), buf(&mut was_null)],
    );
    assert_eq!(was_null[0], 1, "the pointer starts null");
    let mut dest = vec![0i64; 2];
    run(
        kernel(&p, "reader"),
        &[1],
        &[1],
        &[buf(&mut dest), val(99i64)],
    );
    assert_eq!(dest, vec![-5, 99]);
}
