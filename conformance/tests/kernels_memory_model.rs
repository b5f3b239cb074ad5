//! The OpenCL C 2.0/3.0 memory model through the ICD loader: the atomic capability
//! queries agree with the OpenCL C feature macros, C11 atomics (every order and scope,
//! 32/64-bit, min/max, flags) are exact over many work-groups on several threads, and
//! generic pointers know their address space.

use cranecl_conformance::consts::*;
use cranecl_conformance::sys::*;
use cranecl_conformance::*;

/// `CL_DEVICE_OPENCL_C_FEATURES` names.
fn feature_names(d: cl_device_id) -> Vec<String> {
    let bytes = device_info_bytes(d, CL_DEVICE_OPENCL_C_FEATURES).unwrap();
    // cl_name_version: a 4-byte version, then a 64-byte NUL-padded name.
    bytes
        .chunks_exact(68)
        .map(|c| {
            let name = &c[4..];
            let end = name.iter().position(|&b| b == 0).unwrap_or(name.len());
            String::from_utf8_lossy(&name[..end]).into_owned()
        })
        .collect()
}

#[test]
fn atomic_capabilities_match_feature_macros() {
    let d = first_device(find_platform());
    let features = feature_names(d);
    let has = |n: &str| features.iter().any(|f| f == n);
    let mem: cl_ulong = device_info(d, CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES).unwrap();
    let fence: cl_ulong = device_info(d, CL_DEVICE_ATOMIC_FENCE_CAPABILITIES).unwrap();
    for (feature, bit) in [
        (
            "__opencl_c_atomic_order_acq_rel",
            CL_DEVICE_ATOMIC_ORDER_ACQ_REL,
        ),
        (
            "__opencl_c_atomic_order_seq_cst",
            CL_DEVICE_ATOMIC_ORDER_SEQ_CST,
        ),
        (
            "__opencl_c_atomic_scope_device",
            CL_DEVICE_ATOMIC_SCOPE_DEVICE,
        ),
        (
            "__opencl_c_atomic_scope_all_devices",
            CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES,
        ),
    ] {
        assert_eq!(
            has(feature),
            mem & bit != 0,
            "{feature} vs memory capabilities"
        );
    }
    // The OpenCL 3.0 minimum for both queries.
    let minimum = CL_DEVICE_ATOMIC_ORDER_RELAXED | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP;
    assert_eq!(mem & minimum, minimum);
    assert_eq!(fence & minimum, minimum);
    assert_ne!(fence & CL_DEVICE_ATOMIC_ORDER_ACQ_REL, 0);
    let generic: cl_bool = device_info(d, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT).unwrap();
    assert_eq!(generic != 0, has("__opencl_c_generic_address_space"));
    if testing_cranecl() {
        let all = CL_DEVICE_ATOMIC_ORDER_RELAXED
            | CL_DEVICE_ATOMIC_ORDER_ACQ_REL
            | CL_DEVICE_ATOMIC_ORDER_SEQ_CST
            | CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP
            | CL_DEVICE_ATOMIC_SCOPE_DEVICE
            | CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES;
        assert_eq!(mem, all);
        assert_eq!(fence, all | CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM);
        assert_ne!(generic, 0);
    }
}

#[test]
fn c11_atomics_are_exact_across_work_groups() {
    let ctx = DeviceContext::new();
    if !require(
        ctx.has_extension("cl_khr_int64_extended_atomics"),
        "cl_khr_int64_extended_atomics",
    ) {
        return;
    }
    let src = r#"
kernel void k(global const int* in, global atomic_int* s, global atomic_uint* u,
              global atomic_long* l, global atomic_ulong* ul, global atomic_int* hist) {
  int v = in[get_global_id(0)];
  local atomic_int lsum;
  if (get_local_id(0) == 0) atomic_init(&lsum, 0);
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
  atomic_fetch_min_explicit(&s[0], v, memory_order_relaxed, memory_scope_device);
  atomic_fetch_max_explicit(&s[1], v, memory_order_seq_cst, memory_scope_all_svm_devices);
  atomic_fetch_min_explicit(&u[0], (uint)v, memory_order_acq_rel, memory_scope_device);
  atomic_fetch_max(&u[1], (uint)v);
  atomic_fetch_add_explicit(&l[0], (long)v << 20, memory_order_release, memory_scope_device);
  atomic_fetch_min(&l[1], (long)v << 20);
  atomic_fetch_max(&ul[0], (ulong)(long)v);
  atomic_fetch_xor(&ul[1], (ulong)(long)v);
  atomic_fetch_add_explicit(&lsum, v & 0xff, memory_order_relaxed, memory_scope_work_group);
  atomic_fetch_add_explicit(&hist[v & 15], 1, memory_order_relaxed, memory_scope_device);
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0)
    atomic_fetch_add(&hist[16], atomic_load_explicit(&lsum, memory_order_acquire, memory_scope_work_group));
}
"#;
    let n = 64 * 256;
    let mut rng = TestRng::new(77);
    let input: Vec<i32> = rng.vec(n, |r| r.next_u32() as i32 >> 4);
    let a = ctx.buffer_from(&input);
    let s = ctx.buffer_from(&[i32::MAX, i32::MIN]);
    let u = ctx.buffer_from(&[u32::MAX, 0]);
    let l = ctx.buffer_from(&[0i64, i64::MAX]);
    let ul = ctx.buffer_from(&[0u64, 0]);
    let hist = ctx.buffer_zeroed::<i32>(17);
    run_with_buffers(
        &ctx,
        src,
        "-cl-std=CL3.0",
        "k",
        &[&a, &s, &u, &l, &ul, &hist],
        &[n],
        Some(&[64]),
    );
    let min = *input.iter().min().unwrap();
    let max = *input.iter().max().unwrap();
    assert_eq!(ctx.read::<i32>(&s, 2), vec![min, max]);
    let umin = input.iter().map(|&v| v as u32).min().unwrap();
    let umax = input.iter().map(|&v| v as u32).max().unwrap();
    assert_eq!(ctx.read::<u32>(&u, 2), vec![umin, umax]);
    let sum: i64 = input.iter().map(|&v| (v as i64) << 20).sum();
    assert_eq!(ctx.read::<i64>(&l, 2), vec![sum, (min as i64) << 20]);
    let ulmax = input.iter().map(|&v| v as i64 as u64).max().unwrap();
    let ulxor = input.iter().fold(0u64, |x, &v| x ^ v as i64 as u64);
    assert_eq!(ctx.read::<u64>(&ul, 2), vec![ulmax, ulxor]);
    let mut want = vec![0i32; 17];
    for &v in &input {
        want[(v & 15) as usize] += 1;
        want[16] += v & 0xff;
    }
    assert_eq!(ctx.read::<i32>(&hist, 17), want);
}

#[test]
fn atomic_flags_elect_one_work_item_each() {
    // Every work-item claims the first free flag: across all groups and threads, each
    // flag is won exactly once.
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global atomic_flag* flags, global int* winner, int nflags) {
  for (int c = 0; c < nflags; c++) {
    if (!atomic_flag_test_and_set_explicit(&flags[c], memory_order_acq_rel, memory_scope_device)) {
      winner[c] = get_global_id(0);
      return;
    }
  }
}
"#;
    let n = 4096;
    let nflags = n + 16;
    let flags = ctx.buffer_zeroed::<i32>(nflags);
    let winner = ctx.buffer_from(&vec![-1i32; nflags]);
    let kernel = ctx.kernel(src, "-cl-std=CL3.0", "k");
    kernel
        .arg_buffer(0, &flags)
        .arg_buffer(1, &winner)
        .arg(2, nflags as i32);
    ctx.run(&kernel, &[n], Some(&[128]));
    let got: Vec<i32> = ctx.read(&winner, nflags);
    assert!(
        got[n..].iter().all(|&w| w == -1),
        "surplus flags stay unclaimed"
    );
    let mut won: Vec<i32> = got[..n].to_vec();
    won.sort();
    assert_eq!(won, (0..n as i32).collect::<Vec<_>>());
    let set: Vec<i32> = ctx.read(&flags, nflags);
    assert_eq!(set.iter().filter(|&&f| f != 0).count(), n);
}

#[test]
fn generic_pointers_know_their_address_space() {
    let ctx = DeviceContext::new();
    let generic: cl_bool =
        device_info(ctx.device, CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT).unwrap();
    if !require(generic != 0, "the generic address space") {
        return;
    }
    let src = r#"
uint where(const int* p) {
  return (to_global(p) ? 1u : 0u) | (to_local(p) ? 2u : 0u) | (to_private(p) ? 4u : 0u)
       | (get_fence(p) << 4);
}
int sum3(int* p) { return p[0] + p[1] + p[2]; }
kernel void k(global int* g, local int* la, global uint* out, global int* sums) {
  size_t i = get_global_id(0), l = get_local_id(0);
  local int lv[64];
  int pv[3] = {(int)i, 1, 2};
  la[l] = (int)i * 2;
  lv[l] = (int)i * 3;
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
  out[4 * i + 0] = where(&g[i]);
  out[4 * i + 1] = where(&la[l]);
  out[4 * i + 2] = where(&lv[l]);
  out[4 * i + 3] = where(&pv[1]);
  int* any = (i % 3 == 0) ? (int*)&g[i] : (i % 3 == 1) ? (int*)&la[l] : (int*)pv;
  sums[i] = sum3(any);
}
"#;
    let (n, local) = (256usize, 64usize);
    let gdata: Vec<i32> = (0..n as i32 + 2).map(|v| v * 7).collect();
    let g = ctx.buffer_from(&gdata);
    let out = ctx.buffer_zeroed::<u32>(4 * n);
    let sums = ctx.buffer_zeroed::<i32>(n);
    let kernel = ctx.kernel(src, "-cl-std=CL3.0", "k");
    kernel
        .arg_buffer(0, &g)
        .arg_local(1, local * 4 + 8)
        .arg_buffer(2, &out)
        .arg_buffer(3, &sums);
    ctx.run(&kernel, &[n], Some(&[local]));
    let got: Vec<u32> = ctx.read(&out, 4 * n);
    let sums: Vec<i32> = ctx.read(&sums, n);
    // Fences: CLK_GLOBAL_MEM_FENCE = 2, CLK_LOCAL_MEM_FENCE = 1; private memory: 0.
    // The specification allows any valid fence; cranecl answers exactly these.
    let (global, local_as, private) = (1 | (2 << 4), 2 | (1 << 4), 4);
    let check = |got: u32, want: u32, what: &str| {
        if testing_cranecl() {
            assert_eq!(got, want, "{what}");
        } else {
            // Intel's CPU runtime answers non-null for every to_* cast: only the cast
            // to the right space is checked on other platforms.
            assert_eq!(got & want & 7, want & 7, "{what}");
            assert!(got >> 4 <= 3, "{what}: fence {}", got >> 4);
        }
    };
    for i in 0..n {
        check(got[4 * i], global, &format!("global, work-item {i}"));
        check(
            got[4 * i + 1],
            local_as,
            &format!("local argument, work-item {i}"),
        );
        check(
            got[4 * i + 2],
            local_as,
            &format!("local variable, work-item {i}"),
        );
        check(got[4 * i + 3], private, &format!("private, work-item {i}"));
        let l = i % local;
        let base = i - l;
        let want = match i % 3 {
            0 => gdata[i] + gdata[i + 1] + gdata[i + 2],
            // la[l..l+3]: the last two work-items of a group read past their own
            // writes into other work-items' (or the argument's slack, never written).
            1 if l + 2 < local => ((base + l) * 2 + (base + l + 1) * 2 + (base + l + 2) * 2) as i32,
            1 => continue,
            _ => i as i32 + 3,
        };
        assert_eq!(
            sums[i], want,
            "sum through a generic pointer, work-item {i}"
        );
    }
}

#[test]
fn float_atomics_follow_their_capabilities() {
    let ctx = DeviceContext::new();
    if !require(
        ctx.has_extension("cl_ext_float_atomics"),
        "cl_ext_float_atomics",
    ) {
        return;
    }
    // CL_DEVICE_SINGLE_FP_ATOMIC_CAPABILITIES_EXT and its bits (cl_ext.h).
    let single: cl_ulong = device_info(ctx.device, 0x4231).unwrap();
    let (global_add, global_min_max, local_add) = (1 << 1, 1 << 2, 1 << 17);
    if !require(
        single & (global_add | global_min_max | local_add)
            == global_add | global_min_max | local_add,
        "float add and min/max on global and local memory",
    ) {
        return;
    }
    if testing_cranecl() {
        let double: cl_ulong = device_info(ctx.device, 0x4232).unwrap();
        assert_eq!(single, 0x70007);
        assert_eq!(double, 0x70007);
    }
    let src = r#"
kernel void k(global const float* in, global atomic_float* f) {
  local atomic_float lsum;
  if (get_local_id(0) == 0) atomic_init(&lsum, 0.0f);
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
  float v = in[get_global_id(0)];
  atomic_fetch_add_explicit(&f[0], v, memory_order_relaxed, memory_scope_device);
  atomic_fetch_min(&f[1], v);
  atomic_fetch_max(&f[2], v);
  atomic_fetch_min(&f[3], NAN);
  atomic_fetch_add_explicit(&lsum, v, memory_order_relaxed, memory_scope_work_group);
  work_group_barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) atomic_fetch_sub(&f[4], atomic_load(&lsum));
}
"#;
    let n = 64 * 64;
    let mut rng = TestRng::new(5);
    // Quarter steps in [-64, 64): every partial sum is exact, so any order gives the
    // same result.
    let input: Vec<f32> = rng.vec(n, |r| ((r.next_u32() % 512) as f32 - 256.0) * 0.25);
    let a = ctx.buffer_from(&input);
    let f = ctx.buffer_from(&[0.0f32, f32::INFINITY, f32::NEG_INFINITY, 7.5, 0.0]);
    run_with_buffers(
        &ctx,
        src,
        "-cl-std=CL3.0",
        "k",
        &[&a, &f],
        &[n],
        Some(&[64]),
    );
    let sum: f32 = input.iter().sum();
    let min = input.iter().copied().fold(f32::INFINITY, f32::min);
    let max = input.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    assert_eq!(ctx.read::<f32>(&f, 5), vec![sum, min, max, 7.5, -sum]);
}

#[test]
fn svm_atomics_are_atomic_between_host_and_kernel() {
    // A fine-grain SVM buffer with CL_MEM_SVM_ATOMICS: a host thread and the kernel
    // add to the same counters at the same time; no update may be lost.
    let ctx = DeviceContext::new();
    let caps: cl_ulong = device_info(ctx.device, CL_DEVICE_SVM_CAPABILITIES).unwrap();
    if !require(
        caps & CL_DEVICE_SVM_ATOMICS != 0 && caps & CL_DEVICE_SVM_FINE_GRAIN_BUFFER != 0,
        "SVM atomics",
    ) {
        return;
    }
    // SAFETY: valid context, supported flags, non-zero size, default alignment.
    let counters = unsafe {
        clSVMAlloc(
            ctx.context.raw(),
            CL_MEM_READ_WRITE | CL_MEM_SVM_FINE_GRAIN_BUFFER | CL_MEM_SVM_ATOMICS,
            64,
            0,
        )
    };
    assert!(!counters.is_null(), "clSVMAlloc with CL_MEM_SVM_ATOMICS");
    // SAFETY: 64 fresh bytes, 8-aligned at least; only ever used atomically below.
    let shared = unsafe { &*(counters as *const [std::sync::atomic::AtomicI64; 2]) };
    shared[0].store(0, std::sync::atomic::Ordering::SeqCst);
    shared[1].store(0, std::sync::atomic::Ordering::SeqCst);
    let src = r#"
kernel void k(global atomic_long* c, int reps) {
  for (int i = 0; i < reps; i++) {
    atomic_fetch_add_explicit(&c[0], 1, memory_order_relaxed, memory_scope_all_svm_devices);
    atomic_fetch_add_explicit(&c[1], 3, memory_order_seq_cst, memory_scope_all_svm_devices);
  }
}
"#;
    let kernel = ctx.kernel(src, "-cl-std=CL3.0", "k");
    // SAFETY: `counters` is an SVM allocation of this context.
    let rc = unsafe { clSetKernelArgSVMPointer(kernel.raw(), 0, counters) };
    assert_eq!(rc, CL_SUCCESS);
    let (items, reps, host_reps) = (256usize, 200i32, 200_000i64);
    kernel.arg(1, reps);
    std::thread::scope(|s| {
        let host = s.spawn(|| {
            for _ in 0..host_reps {
                shared[0].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                shared[1].fetch_add(3, std::sync::atomic::Ordering::SeqCst);
            }
        });
        ctx.run(&kernel, &[items], Some(&[64]));
        host.join().unwrap();
    });
    let device_adds = items as i64 * i64::from(reps);
    assert_eq!(
        shared[0].load(std::sync::atomic::Ordering::SeqCst),
        device_adds + host_reps
    );
    assert_eq!(
        shared[1].load(std::sync::atomic::Ordering::SeqCst),
        3 * (device_adds + host_reps)
    );
    // SAFETY: allocated above from this context; nothing uses it any more.
    unsafe { clSVMFree(ctx.context.raw(), counters) };
}
