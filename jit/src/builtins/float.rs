//! Floating-point functions of OpenCL.std (OpenCL C 6.15.2 math, 6.15.4 common,
//! 6.15.5 geometric on scalars) for `f32` and `f64`.

use super::{native, ClOp, Registry};

pub(crate) extern "C" fn sqrt_f32(x: f32) -> f32 {
    x.sqrt()
}
pub(crate) extern "C" fn sqrt_f64(x: f64) -> f64 {
    x.sqrt()
}

/// Registers the float functions.
pub(super) fn register(r: &mut Registry) {
    use super::Scalar::{F32, F64};
    r.add(ClOp::sqrt, F32, native!("sqrt_f32", sqrt_f32, [F32] -> F32));
    r.add(ClOp::sqrt, F64, native!("sqrt_f64", sqrt_f64, [F64] -> F64));
}
