//! Test support for the passes over finished Cranelift functions (`thread`,
//! `vconst_fold`): building a function for the host and verifying it.

use cranelift_frontend::FunctionBuilder;

/// Seals and finalizes the function `b` builds for the host; its settings, for the
/// verifier.
pub(super) fn finish(mut b: FunctionBuilder) -> cranelift_codegen::settings::Flags {
    b.seal_all_blocks();
    let flags = cranelift_codegen::settings::Flags::new(cranelift_codegen::settings::builder());
    let isa = cranelift_native::builder()
        .expect("host ISA")
        .finish(flags.clone())
        .expect("host ISA");
    b.finalize(isa.frontend_config());
    flags
}
