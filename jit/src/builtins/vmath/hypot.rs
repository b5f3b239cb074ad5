//! `hypot` of `f32` lanes in `f64` (pyopencl's complex `abs`, `cfloat_abs`, is one
//! call per element): the squares of two `f32` are exact in `f64` and cannot overflow
//! or underflow there, so `sqrt(x^2 + y^2)` rounds twice in `f64` and once to `f32`:
//! within about 0.5 ulp for every finite operand, subnormals included (OpenCL allows
//! 4). Infinite and NaN operands take the scalar path (an infinity beats a NaN).

use super::Binary;
use crate::builtins::float::f32fns;

/// `sqrt(x^2 + y^2)` without intermediate overflow.
pub(super) struct Hypot;
impl Binary for Hypot {
    #[inline(always)]
    fn easy(x: f32, y: f32) -> bool {
        x.is_finite() && y.is_finite()
    }
    #[inline(always)]
    fn fast<const F: bool>(x: f32, y: f32) -> f32 {
        let (x, y) = (f64::from(x), f64::from(y));
        let s = if F {
            x.mul_add(x, y * y)
        } else {
            x * x + y * y
        };
        s.sqrt() as f32
    }
    fn slow(x: f32, y: f32) -> f32 {
        f32fns::hypot(x, y)
    }
}
