//! Whole-program builds of big sources: clang optimises each kernel once, not twice.
//!
//! clang-22 emits every kernel twice: the `spir_kernel` entry point and an external
//! `spir_func @__clang_ocl_kern_imp_<name>` holding the body, which the entry point
//! calls (always inlined). The copy is external, so it survives: clang's -O2
//! pipeline and its SPIR-V backend run on both copies, and the jit decodes the
//! copy too. For a clBuildProgram nothing outside the module can call it (an
//! executable is not a link input), so for big sources the build runs clang twice:
//! the front end to unoptimised LLVM IR (`-disable-llvm-passes`; diagnostics come
//! from this run), [`internalise_kernel_bodies`] on the text, then `-O2` from IR to
//! SPIR-V, where the inlined copy is dropped. The optimisation pipeline is the same
//! (without the rewrite, both paths give byte-identical SPIR-V), so every build
//! option keeps its effect; it roughly halves clang's time on big kernels. The
//! second run also skips loop strength reduction (`-disable-lsr`, see
//! `Frontend::ir_to_spirv_with`), worthless for SPIR-V and slow on many loops.
//!
//! A second clang process costs ~35 ms (loading clang's shared libraries), so small
//! sources keep the single run: [`TWO_STEP_MIN_BYTES`] is about where the two paths
//! cost the same (`CRANECL_TWO_STEP_BYTES` overrides it, 0 = always).
//! clCompileProgram objects keep the external copy: a kernel of another object may
//! call it.
//!
//! This module only rewrites IR text; running clang is the caller's business.

/// Sources at least this long (bytes) are built in two clang runs.
pub const TWO_STEP_MIN_BYTES: usize = 16 << 10;

/// The threshold in effect: `CRANECL_TWO_STEP_BYTES` when it is a number, else
/// [`TWO_STEP_MIN_BYTES`].
pub fn min_bytes_from_env() -> usize {
    std::env::var("CRANECL_TWO_STEP_BYTES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(TWO_STEP_MIN_BYTES)
}

/// The start of a kernel body's definition in clang-22's IR.
const KERNEL_BODY: &str = "define spir_func void @__clang_ocl_kern_imp_";

/// `ir` with every kernel body clone (`__clang_ocl_kern_imp_*`) defined `internal`:
/// once inlined into its entry point (and into any kernel that calls it) nothing
/// references it and the optimiser drops it. Declarations are left alone.
pub fn internalise_kernel_bodies(ir: &str) -> String {
    let mut out = String::with_capacity(ir.len() + 1024);
    for line in ir.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix("define spir_func ") {
            if line.starts_with(KERNEL_BODY) {
                out.push_str("define internal spir_func ");
                out.push_str(rest);
                continue;
            }
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_kernel_body_definitions_become_internal() {
        let ir = "define spir_kernel void @k(i32 %n) {\n  call spir_func void @__clang_ocl_kern_imp_k(i32 %n)\n  ret void\n}\n\
                  define spir_func void @__clang_ocl_kern_imp_k(i32 %n) #1 {\n  ret void\n}\n\
                  declare spir_func void @__clang_ocl_kern_imp_other(i32)\n\
                  define spir_func float @helper(float %a) {\n  ret float %a\n}\n";
        let out = internalise_kernel_bodies(ir);
        assert!(out.contains("define internal spir_func void @__clang_ocl_kern_imp_k(i32 %n) #1 {"));
        assert!(out.contains("  call spir_func void @__clang_ocl_kern_imp_k(i32 %n)\n"));
        assert!(out.contains("declare spir_func void @__clang_ocl_kern_imp_other(i32)\n"));
        assert!(out.contains("define spir_func float @helper"));
        assert_eq!(out.len(), ir.len() + "internal ".len());
    }
}
