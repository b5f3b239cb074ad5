//! `exp`, `exp2`, `exp10`, `log`, `log2`, `log10`, `pow`, `powr` of `f32` lanes in `f64`
//! (see [`super::core`]; `exp` in `f32` with FMA, see [`super::core32`]). NaN, and for the logarithms and powers every operand outside
//! the positive normal finite numbers (subnormal `x` too: rare, and the bit split of
//! `log_parts` needs a normal `f32`), take the scalar path, which owns the special values.

use std::f64::consts::{LN_2, LOG10_2, LOG10_E, LOG2_10, LOG2_E};

use super::core::{exp2, log_parts, mad};
use super::core32::exp_32;
use super::{Binary, Unary};
use crate::builtins::float::f32fns;

/// `e^x` in `f32` when compiled with FMA ([`super::core32`]), else as `exp2`.
pub(super) struct Exp;
impl Unary for Exp {
    #[inline(always)]
    fn easy(x: f32) -> bool {
        !x.is_nan()
    }
    #[inline(always)]
    fn fast<const F: bool>(x: f32) -> f32 {
        if F {
            exp_32(x)
        } else {
            exp2::<F>(f64::from(x) * LOG2_E) as f32
        }
    }
    fn slow(x: f32) -> f32 {
        f32fns::exp(x)
    }
}

macro_rules! exp_like {
    ($name:ident, $scale:expr, $slow:path) => {
        pub(super) struct $name;
        impl Unary for $name {
            #[inline(always)]
            fn easy(x: f32) -> bool {
                !x.is_nan()
            }
            #[inline(always)]
            fn fast<const F: bool>(x: f32) -> f32 {
                exp2::<F>(f64::from(x) * $scale) as f32
            }
            fn slow(x: f32) -> f32 {
                $slow(x)
            }
        }
    };
}
exp_like!(Exp2, 1.0, f32fns::exp2);
exp_like!(Exp10, LOG2_10, f32fns::exp10);

/// Positive, normal and finite: the operands [`log_parts`] splits.
#[inline(always)]
fn positive_finite(x: f32) -> bool {
    (f32::MIN_POSITIVE..f32::INFINITY).contains(&x)
}

macro_rules! log_like {
    ($name:ident, $e_scale:expr, $m_scale:expr, $slow:path) => {
        pub(super) struct $name;
        impl Unary for $name {
            #[inline(always)]
            fn easy(x: f32) -> bool {
                positive_finite(x)
            }
            #[inline(always)]
            fn fast<const F: bool>(x: f32) -> f32 {
                let (e, lnm) = log_parts::<F>(x);
                mad::<F>(e, $e_scale, lnm * $m_scale) as f32
            }
            fn slow(x: f32) -> f32 {
                $slow(x)
            }
        }
    };
}
log_like!(Log, LN_2, 1.0, f32fns::log);
log_like!(Log2, 1.0, LOG2_E, f32fns::log2);
log_like!(Log10, LOG10_2, LOG10_E, f32fns::log10);

/// `2^(y log2 x)` for positive finite `x` and finite `y`, where `pow` and `powr` agree.
#[inline(always)]
fn pow_core<const F: bool>(x: f32, y: f32) -> f32 {
    let (e, lnm) = log_parts::<F>(x);
    let l2 = mad::<F>(lnm, LOG2_E, e);
    exp2::<F>(f64::from(y) * l2) as f32
}

macro_rules! pow_like {
    ($name:ident, $slow:path) => {
        pub(super) struct $name;
        impl Binary for $name {
            #[inline(always)]
            fn easy(x: f32, y: f32) -> bool {
                positive_finite(x) && y.is_finite()
            }
            #[inline(always)]
            fn fast<const F: bool>(x: f32, y: f32) -> f32 {
                pow_core::<F>(x, y)
            }
            fn slow(x: f32, y: f32) -> f32 {
                $slow(x, y)
            }
        }
    };
}
pow_like!(Pow, f32fns::pow);
pow_like!(Powr, f32fns::powr);
