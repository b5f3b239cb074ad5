//! `tanh` and `erf` of `f32` lanes in `f64`; NaN takes the scalar path.

use std::f64::consts::LOG2_E;

use super::core::{estrin, exp2, horner, mad};
use super::Unary;
use crate::builtins::float::f32fns;

const SIGN: u32 = 0x8000_0000;

/// `expm1(u)/u - 1` Taylor coefficients `1/k!`, k = 2..=13: truncation below 2^-34
/// relative for `|u| <= 1.1`.
const EXPM1_C: [f64; 12] = [
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5040.0,
    1.0 / 40_320.0,
    1.0 / 362_880.0,
    1.0 / 3_628_800.0,
    1.0 / 39_916_800.0,
    1.0 / 479_001_600.0,
    1.0 / 6_227_020_800.0,
];

/// `tanh x` (odd): `em / (em + 2)` with `em = expm1(2|x|)`.
pub(super) struct Tanh;
impl Unary for Tanh {
    #[inline(always)]
    fn easy(x: f32) -> bool {
        !x.is_nan()
    }
    #[inline(always)]
    fn fast<const F: bool>(x: f32) -> f32 {
        let a = f64::from(x.abs());
        let u = 2.0 * a;
        // expm1(u): the series below 1.1 (no cancellation near 0), e^u - 1 above (e^u
        // >= 3: the subtraction loses under 2 bits); then one division.
        let series = mad::<F>(u * u, estrin::<F, 12>(u, &EXPM1_C), u);
        let em = if a < 0.55 {
            series
        } else {
            exp2::<F>(u * LOG2_E) - 1.0
        };
        let t = em / (em + 2.0);
        f32::from_bits((t as f32).to_bits() | (x.to_bits() & SIGN))
    }
    fn slow(x: f32) -> f32 {
        f32fns::tanh(x)
    }
}

/// Below this `|x|`, `erf` takes the series; above it the scalar path (the series would
/// need too many terms; `erf` is 1 in `f32` from about 3.92 on).
const ERF_SERIES_MAX: f32 = 2.0;

/// `erf x = 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) / (1 3 5 ... (2n+1))`: every term
/// positive (no cancellation); 27 terms leave below 2^-40 for `|x| <= 2`. The
/// coefficients are `2/sqrt(pi) 2^n / (2n+1)!!`.
const ERF_C: [f64; 27] = erf_coefficients();

const fn erf_coefficients() -> [f64; 27] {
    let mut c = [0.0; 27];
    let mut v = std::f64::consts::FRAC_2_SQRT_PI;
    let mut n = 0;
    while n < 27 {
        c[n] = v;
        v = v * 2.0 / (2 * n + 3) as f64;
        n += 1;
    }
    c
}

/// `erf x` (odd) for `|x| < ERF_SERIES_MAX`.
pub(super) struct Erf;
impl Unary for Erf {
    #[inline(always)]
    fn easy(x: f32) -> bool {
        x.abs() < ERF_SERIES_MAX
    }
    #[inline(always)]
    fn fast<const F: bool>(x: f32) -> f32 {
        let a = f64::from(x.abs());
        let z = a * a;
        let s = a * horner::<F, 27>(z, &ERF_C);
        let r = s * exp2::<F>(-z * LOG2_E);
        f32::from_bits((r as f32).to_bits() | (x.to_bits() & SIGN))
    }
    fn slow(x: f32) -> f32 {
        f32fns::erf(x)
    }
}
