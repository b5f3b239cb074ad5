//! Linking clang-22 modules with `cranecl_jit::link` and running the result: calls
//! across modules (including to another module's kernel, whose prototype clang types
//! with `uchar*` parameters), libraries of libraries, `inline` functions defined in
//! several modules, and the errors for conflicting definitions.

mod common;
use common::*;

use cranecl_jit::{link, CompileErrorKind, CompileOptions, LinkOutput};

fn compile(words: &[u32]) -> cranecl_jit::CompiledProgram {
    cranecl_jit::compile(words, &CompileOptions::default()).expect("linked module compiles")
}

/// Runs kernel `name(global float* src, global float* dst)` over 64 items.
fn run_copy(p: &cranecl_jit::CompiledProgram, name: &str) -> (Vec<f32>, Vec<f32>) {
    let mut src: Vec<f32> = (0..64).map(|i| i as f32 * 1.5 - 7.0).collect();
    let mut dst = vec![0f32; 64];
    run(
        kernel(p, name),
        &[64],
        &[16],
        &[buf(&mut src), buf(&mut dst)],
    );
    (src, dst)
}

const COPY: &str = r#"
kernel void CopyBuffer(global float* src, global float* dst) {
    int id = (int)get_global_id(0);
    dst[id] = src[id];
}
"#;

const CALLS_COPY: &str = r#"
extern kernel void CopyBuffer(global float* src, global float* dst);
kernel void AnotherCopyBuffer(global float* src, global float* dst) {
    CopyBuffer(src, dst);
}
"#;

#[test]
fn kernel_calls_a_kernel_of_another_module() {
    let a = spirv(COPY);
    let b = spirv(CALLS_COPY);
    let linked = link(&[&a, &b], LinkOutput::Executable).expect("links");
    let p = compile(&linked);
    for name in ["CopyBuffer", "AnotherCopyBuffer"] {
        let (src, dst) = run_copy(&p, name);
        assert_eq!(src, dst, "{name}");
    }
    // The other order links too (the import comes before its definition).
    let linked = link(&[&b, &a], LinkOutput::Executable).expect("links");
    let (src, dst) = run_copy(&compile(&linked), "AnotherCopyBuffer");
    assert_eq!(src, dst);
}

const SCALE: &str = r#"
float scale(float x, float by) { return x * by; }
"#;

const OFFSET: &str = r#"
float scale(float x, float by);
float offset(float x) { return scale(x, 2.0f) + 1.0f; }
"#;

const USES_OFFSET: &str = r#"
float offset(float x);
kernel void k(global float* src, global float* dst) {
    size_t i = get_global_id(0);
    dst[i] = offset(src[i]);
}
"#;

#[test]
fn library_of_libraries_then_executable() {
    let scale = spirv(SCALE);
    let offset = spirv(OFFSET);
    let lib1 = link(&[&scale], LinkOutput::Library).expect("library");
    let lib2 = link(&[&offset, &lib1], LinkOutput::Library).expect("library of a library");
    let user = spirv(USES_OFFSET);
    let exe = link(&[&user, &lib2], LinkOutput::Executable).expect("executable");
    let (src, dst) = run_copy(&compile(&exe), "k");
    for (s, d) in src.iter().zip(&dst) {
        assert_eq!(*d, s * 2.0 + 1.0);
    }
    // An executable without the library still has the import: the jit refuses it.
    let alone = link(&[&user], LinkOutput::Executable).expect("links alone");
    let err = cranecl_jit::compile(&alone, &CompileOptions::default())
        .err()
        .expect("offset is missing");
    assert!(err.message.contains("offset"), "{}", err.message);
}

#[test]
fn identical_definitions_fold_and_different_ones_conflict() {
    let header = "float twice(float x) { return x * 2.0f; }\n";
    let a = spirv(&format!(
        "{header}kernel void a(global float* s, global float* d) {{ d[get_global_id(0)] = twice(s[get_global_id(0)]); }}"
    ));
    let b = spirv(&format!(
        "{header}kernel void b(global float* s, global float* d) {{ d[get_global_id(0)] = twice(s[get_global_id(0)]) + 1.0f; }}"
    ));
    let p = compile(&link(&[&a, &b], LinkOutput::Executable).expect("identical definitions fold"));
    let (src, dst) = run_copy(&p, "b");
    for (s, d) in src.iter().zip(&dst) {
        assert_eq!(*d, s * 2.0 + 1.0);
    }
    let other = spirv("float twice(float x) { return x + x + 0.5f; }");
    let err = link(&[&a, &other], LinkOutput::Executable).expect_err("two definitions");
    assert_eq!(err.kind, CompileErrorKind::Link);
    assert!(err.message.contains("twice"), "{}", err.message);
}

#[test]
fn a_kernel_defined_twice_is_an_error() {
    let a = spirv(COPY);
    let err = link(&[&a, &a], LinkOutput::Executable).expect_err("duplicate kernel");
    assert_eq!(err.kind, CompileErrorKind::Link);
    assert!(err.message.contains("CopyBuffer"), "{}", err.message);
}

#[test]
fn garbage_is_malformed() {
    let a = spirv(COPY);
    let err = link(&[&a, &[1, 2, 3, 4, 5, 6]], LinkOutput::Executable).expect_err("garbage");
    assert_eq!(err.kind, CompileErrorKind::Malformed);
    assert!(err.message.starts_with("input 1:"), "{}", err.message);
    let err = link(&[], LinkOutput::Library).expect_err("nothing");
    assert_eq!(err.kind, CompileErrorKind::Link);
}

/// A small deterministic generator (xorshift) for the mutation test.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn mutated_inputs_fail_cleanly() {
    // Real modules with random words changed: the linker returns a module or an
    // error, never panics (an internal panic would come back as a Codegen error)
    // and never hangs.
    let inputs = [spirv(COPY), spirv(CALLS_COPY), spirv(OFFSET), spirv(SCALE)];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut linked = 0;
    for round in 0..1500 {
        let mut a = inputs[round % 4].clone();
        let b = &inputs[(round + 1) % 4];
        for _ in 0..1 + rng.next() % 3 {
            let at = 5 + (rng.next() as usize) % (a.len() - 5);
            a[at] = match rng.next() % 4 {
                0 => rng.next() as u32,
                1 => a[at] ^ (1 << (rng.next() % 32)),
                2 => (rng.next() % 64) as u32,
                _ => a[at].wrapping_add(1),
            };
        }
        for output in [LinkOutput::Executable, LinkOutput::Library] {
            match link(&[&a, b], output) {
                Ok(words) => {
                    linked += 1;
                    assert_eq!(words[0], 0x0723_0203);
                }
                Err(e) => assert_ne!(
                    e.kind,
                    CompileErrorKind::Codegen,
                    "round {round}: {}",
                    e.message
                ),
            }
        }
    }
    assert!(linked > 0, "some mutations still link");
}
