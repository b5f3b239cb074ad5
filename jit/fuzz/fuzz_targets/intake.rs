//! Fuzzes the SPIR-V intake: any bytes, as words, go through decoding, the
//! validator and (when accepted) code generation. A panic (an internal compiler
//! error) or a crash is a finding; refusals with `Malformed` or `Unsupported` are
//! the expected outcome for garbage. Kernels are not run: a valid mutant may have
//! undefined behaviour (`jit/tests/mutation.rs` runs them in child processes).
//!
//! Run from `jit/fuzz`:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run intake corpus/intake ../tests/seeds`

#![no_main]

use cranecl_jit::{CompileErrorKind, CompileOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let words: Vec<u32> = data
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if cranecl_jit::validate(&words).is_err() {
        return;
    }
    if let Err(e) = cranecl_jit::compile(&words, &CompileOptions::default()) {
        assert_ne!(
            e.kind,
            CompileErrorKind::Codegen,
            "internal compiler error on a validated module: {}",
            e.message
        );
    }
});
