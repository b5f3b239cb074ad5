//! Truncated instruction streams are refused with `Malformed` and a message, never a
//! panic (rspirv's decoder slices past the end on such input).

use cranecl_jit::{validate, CompileErrorKind};

/// A SPIR-V 1.0 header followed by `rest`.
fn module(rest: &[u32]) -> Vec<u32> {
    let mut w = vec![0x0723_0203, 0x0001_0000, 0, 100, 0];
    w.extend_from_slice(rest);
    w
}

#[test]
fn instruction_longer_than_the_module_is_malformed() {
    // OpExtInstImport claiming 9 words with only 3 present: the decoder would read a
    // string past the end.
    let words = module(&[(9 << 16) | 11, 1, u32::from_le_bytes(*b"Open")]);
    let err = validate(&words).unwrap_err();
    assert_eq!(err.kind, CompileErrorKind::Malformed);
    assert!(err.message.contains("claims 9 words"), "{}", err.message);
}

#[test]
fn zero_word_count_is_malformed() {
    let words = module(&[17, 17]);
    let err = validate(&words).unwrap_err();
    assert_eq!(err.kind, CompileErrorKind::Malformed);
    assert!(err.message.contains("word count of 0"), "{}", err.message);
}

#[test]
fn declared_named_barrier_capability_is_refused_by_name() {
    // OpCapability NamedBarrier (59): the device has no named barriers.
    let words = module(&[(2 << 16) | 17, 59, (3 << 16) | 14, 2, 2]);
    let err = validate(&words).unwrap_err();
    assert!(err.message.contains("NamedBarrier"), "{}", err.message);
}
