//! Cheap `f64` kernels for hot `f32` functions: `exp`, `exp2`, `exp10`, `log`, `log2`,
//! `log10`, and the `pow` family through `exp2`/`log2`.
//!
//! The `f32` built-ins round an `f64` result once; these kernels make that `f64` result
//! only as accurate as an `f32` needs (relative error around 2^-30, against the 2^-24 of
//! an `f32` ulp), which short polynomials deliver several times faster than the
//! general-purpose `libm` functions (measured: `exp` 30% and `pow` 2.5 times cheaper; the
//! trigonometric functions gained nothing and stay with `libm`). They accept any `f64`
//! that is an `f32` value (so no `f64` subnormals) or, for `exp2`, any exponent. Every
//! special value is handled explicitly. Not for `f64` results.

use std::f64::consts::{LN_2, LOG10_E, LOG2_10, LOG2_E, SQRT_2};

/// Adding and subtracting 1.5 * 2^52 rounds an f64 below 2^51 to an integer (to nearest,
/// ties to even) without a libm call.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;

fn round_to_int(t: f64) -> f64 {
    (t + ROUND_MAGIC) - ROUND_MAGIC
}

/// `ln(2)^k / k!` for k = 0..=8: Taylor coefficients of 2^f. For |f| <= 1/2 the omitted
/// terms are below 2^-31 relative.
const EXP2_C: [f64; 9] = [
    1.0,
    LN_2,
    0.240_226_506_959_100_72,
    0.055_504_108_664_821_58,
    0.009_618_129_107_628_477,
    0.001_333_355_814_642_844_3,
    0.000_154_035_303_933_816_1,
    1.525_273_380_405_984_1e-5,
    1.321_548_679_014_431e-6,
];

/// `2^t`, to about 2^-31 relative, for results in or near the f32 range.
pub(crate) fn exp2(t: f64) -> f64 {
    if t.is_nan() {
        return t;
    }
    // 2^130 and 2^-160 are far outside the f32 range: the f32 result is inf or 0.
    if t > 130.0 {
        return f64::INFINITY;
    }
    if t < -160.0 {
        return 0.0;
    }
    let n = round_to_int(t);
    let f = t - n; // exact, |f| <= 1/2
    let c = &EXP2_C;
    let p = c[0]
        + f * (c[1]
            + f * (c[2]
                + f * (c[3] + f * (c[4] + f * (c[5] + f * (c[6] + f * (c[7] + f * c[8])))))));
    // n is in [-160, 130]: 2^n is a normal f64.
    p * f64::from_bits(((n as i64 + 1023) as u64) << 52)
}

/// `e^x`: `x log2(e)` is off by at most 150 * 2^-53 absolute where the result is an
/// f32, about 2^-46 relative in the result.
pub(crate) fn exp(x: f64) -> f64 {
    exp2(x * LOG2_E)
}

/// `10^x`, as [`exp`].
pub(crate) fn exp10(x: f64) -> f64 {
    exp2(x * LOG2_10)
}

/// `ln(m)` for `m` in [sqrt(1/2), sqrt(2)]: `2 atanh(s)` with `s = (m-1)/(m+1)`, |s| <=
/// 0.172, summed to s^15 (omitted terms below 2^-44 relative).
fn ln_reduced(m: f64) -> f64 {
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    let series = 1.0
        + s2 * (1.0 / 3.0
            + s2 * (1.0 / 5.0
                + s2 * (1.0 / 7.0
                    + s2 * (1.0 / 9.0
                        + s2 * (1.0 / 11.0 + s2 * (1.0 / 13.0 + s2 * (1.0 / 15.0)))))));
    2.0 * s * series
}

/// Splits a positive normal `x` into `e` and `m` in [sqrt(1/2), sqrt(2)] with `x = m 2^e`.
fn split(x: f64) -> (f64, f64) {
    let bits = x.to_bits();
    let e = ((bits >> 52) & 0x7ff) as i64 - 1023;
    let m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    if m > SQRT_2 {
        (e as f64 + 1.0, m * 0.5)
    } else {
        (e as f64, m)
    }
}

/// Special values shared by the logarithms: `Some(result)` for NaN, negatives, zeros and
/// +inf.
fn log_special(x: f64) -> Option<f64> {
    if x.is_nan() || x < 0.0 {
        Some(f64::NAN)
    } else if x == 0.0 {
        Some(f64::NEG_INFINITY)
    } else if x.is_infinite() {
        Some(x)
    } else {
        None
    }
}

/// Natural logarithm; no cancellation: for e != 0, |ln m| < ln(2)/2 < |e ln 2|.
pub(crate) fn log(x: f64) -> f64 {
    if let Some(v) = log_special(x) {
        return v;
    }
    let (e, m) = split(x);
    e * LN_2 + ln_reduced(m)
}

/// Base-2 logarithm.
pub(crate) fn log2(x: f64) -> f64 {
    if let Some(v) = log_special(x) {
        return v;
    }
    let (e, m) = split(x);
    e + ln_reduced(m) * LOG2_E
}

/// Base-10 logarithm.
pub(crate) fn log10(x: f64) -> f64 {
    log(x) * LOG10_E
}
