//! Tests of the built-in table and of the integer and float functions against host
//! references.

use super::*;

#[test]
fn table_resolves_sqrt() {
    let f = opencl_std(ClOp::sqrt as u32, Scalar::F32).expect("sqrt f32");
    assert_eq!(f.params, &[Scalar::F32]);
    assert!(all_symbols().iter().any(|(s, _)| *s == f.symbol));
}
