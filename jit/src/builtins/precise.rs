//! `f64` algorithms that the `libm` crate lacks, or has with too little accuracy for the
//! OpenCL limits: `sinpi`/`cospi`/`tanpi` (exact argument reduction), the `*pi` inverse
//! trigonometric functions, `exp10`, `rootn`, `powr` and `atan2pi` special cases.
//!
//! The `f32` built-ins evaluate these in `f64` and round once, so each function here is
//! written for `f64` only and handles every special value the OpenCL C specification
//! (section 7.5.1, "Additional Requirements Beyond ISO/IEC 9899:TC2") lists.
//! Error bounds assume `libm`'s `f64` functions are within 1 ulp.

use std::f64::consts::PI;

/// Low part of π: `PI + PI_LO` is π to about 107 bits.
const PI_LO: f64 = 1.224_646_799_147_353_2e-16;
/// 1/π split in two: `INV_PI + INV_PI_LO` is 1/π to about 107 bits.
const INV_PI: f64 = std::f64::consts::FRAC_1_PI;
const INV_PI_LO: f64 = -1.967_867_667_518_248_6e-17;
/// ln(10) split in two.
const LN10: f64 = std::f64::consts::LN_10;
const LN10_LO: f64 = -2.170_756_223_382_249_4e-16;
/// ln(2) split in two.
const LN2: f64 = std::f64::consts::LN_2;
const LN2_LO: f64 = 2.319_046_813_846_299_6e-17;

/// `π·t` as a double-double `(hi, lo)`, for `|t| <= 0.25`.
fn pi_times(t: f64) -> (f64, f64) {
    let hi = PI * t;
    let lo = PI.mul_add(t, -hi) + PI_LO * t;
    (hi, lo)
}

/// `sin(π·t)` for `0 <= t <= 0.25`. With `DD` the rounding error of `π·t` is corrected
/// (needed for f64 results); without, the result is good to about 2^-52 relative, plenty
/// for f32 results and half the cost.
fn sin_pi_kernel<const DD: bool>(t: f64) -> f64 {
    if !DD {
        return libm::sin(PI * t);
    }
    let (hi, lo) = pi_times(t);
    libm::cos(hi).mul_add(lo, libm::sin(hi))
}

/// `cos(π·t)` for `0 <= t <= 0.25` (see [`sin_pi_kernel`] for `DD`).
fn cos_pi_kernel<const DD: bool>(t: f64) -> f64 {
    if !DD {
        return libm::cos(PI * t);
    }
    let (hi, lo) = pi_times(t);
    (-libm::sin(hi)).mul_add(lo, libm::cos(hi))
}

/// `tan(π·t)` for `0 <= t <= 0.25` (see [`sin_pi_kernel`] for `DD`).
fn tan_pi_kernel<const DD: bool>(t: f64) -> f64 {
    if !DD {
        return libm::tan(PI * t);
    }
    let (hi, lo) = pi_times(t);
    let th = libm::tan(hi);
    // d/dh tan(h) = 1 + tan²(h).
    th.mul_add(th, 1.0).mul_add(lo, th)
}

/// Above this magnitude every `f64` is an even integer.
const EVEN_INTEGERS: f64 = 9_007_199_254_740_992.0; // 2^53

/// Reduces `a >= 0` (finite, below 2^53) to `r = a - 2k` in `[-1, 1]`, exactly.
fn reduce_mod2(a: f64) -> f64 {
    // a/2 is exact for a >= 2^-1021; for smaller a, round() gives 0 either way.
    a - 2.0 * (a * 0.5).round()
}

/// `sin(πx)`, within about 1 ulp; exact zeros at integers (`+0` for positive, `-0` for
/// negative integers).
pub(crate) fn sinpi(x: f64) -> f64 {
    sinpi_impl::<true>(x)
}

/// [`sinpi`] with a result accurate enough for rounding to f32.
pub(crate) fn sinpi_for_f32(x: f64) -> f64 {
    sinpi_impl::<false>(x)
}

fn sinpi_impl<const DD: bool>(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let ax = x.abs();
    let v = if ax >= EVEN_INTEGERS / 2.0 {
        0.0 // every f64 of this size is an integer
    } else {
        let r = reduce_mod2(ax);
        // sin(π r) = sign(r) sin(π |r|), and sin(π t) = sin(π (1 - t)): fold to [0, 0.5].
        let t = r.abs();
        let t = if t > 0.5 { 1.0 - t } else { t };
        let s = if t <= 0.25 {
            sin_pi_kernel::<DD>(t)
        } else {
            cos_pi_kernel::<DD>(0.5 - t)
        };
        if r < 0.0 {
            -s
        } else {
            s
        }
    };
    if v == 0.0 {
        // sinpi(n) is +0 for positive and -0 for negative integers n.
        return 0.0f64.copysign(x);
    }
    if x.is_sign_negative() {
        -v
    } else {
        v
    }
}

/// `cos(πx)`, within about 1 ulp; exactly `+0` at half-integers and `±1` at integers.
pub(crate) fn cospi(x: f64) -> f64 {
    cospi_impl::<true>(x)
}

/// [`cospi`] with a result accurate enough for rounding to f32.
pub(crate) fn cospi_for_f32(x: f64) -> f64 {
    cospi_impl::<false>(x)
}

fn cospi_impl<const DD: bool>(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let ax = x.abs();
    if ax >= EVEN_INTEGERS {
        return 1.0;
    }
    let t = reduce_mod2(ax).abs();
    // cos(π t) = -cos(π (1 - t)) folds [0, 1] to [0, 0.5].
    let (t, negate) = if t > 0.5 { (1.0 - t, true) } else { (t, false) };
    if t == 0.5 {
        return 0.0;
    }
    let c = if t <= 0.25 {
        cos_pi_kernel::<DD>(t)
    } else {
        sin_pi_kernel::<DD>(0.5 - t)
    };
    if negate {
        -c
    } else {
        c
    }
}

/// `tan(πx)`, within about 2 ulp, with the OpenCL special values: `tanpi(n)` is
/// `copysign(0, n)` for even and `-copysign(0, n)` for odd `n`; `tanpi(n + 0.5)` is `+∞`
/// for even and `-∞` for odd `n`.
pub(crate) fn tanpi(x: f64) -> f64 {
    tanpi_impl::<true>(x)
}

/// [`tanpi`] with a result accurate enough for rounding to f32.
pub(crate) fn tanpi_for_f32(x: f64) -> f64 {
    tanpi_impl::<false>(x)
}

fn tanpi_impl<const DD: bool>(x: f64) -> f64 {
    if !x.is_finite() {
        return f64::NAN;
    }
    let ax = x.abs();
    if ax >= EVEN_INTEGERS {
        return 0.0f64.copysign(x);
    }
    let k = ax.round();
    let r = ax - k; // exact, in [-0.5, 0.5]
    if r == 0.0 {
        let odd = (k as u64) & 1 == 1;
        return if odd != x.is_sign_negative() {
            -0.0
        } else {
            0.0
        };
    }
    if r.abs() == 0.5 {
        let n = x.floor();
        let odd = (n as i64) & 1 == 1;
        return if odd {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    let t = r.abs();
    let v = if t <= 0.25 {
        tan_pi_kernel::<DD>(t)
    } else {
        1.0 / tan_pi_kernel::<DD>(0.5 - t)
    };
    // tan is odd: sign from r and from x.
    if (r < 0.0) != x.is_sign_negative() {
        -v
    } else {
        v
    }
}

/// `a / π` with a double-double reciprocal (one extra rounding at most).
fn div_pi(a: f64) -> f64 {
    if a == 0.0 {
        return a; // keeps the sign of zero
    }
    a.mul_add(INV_PI, a * INV_PI_LO)
}

/// `asin(x) / π`.
pub(crate) fn asinpi(x: f64) -> f64 {
    div_pi(libm::asin(x))
}

/// `acos(x) / π`.
pub(crate) fn acospi(x: f64) -> f64 {
    div_pi(libm::acos(x))
}

/// `atan(x) / π`; exactly `±0.5` at `±∞`.
pub(crate) fn atanpi(x: f64) -> f64 {
    if x.is_infinite() {
        return 0.5f64.copysign(x);
    }
    div_pi(libm::atan(x))
}

/// `atan2(y, x) / π` with the exact special values of OpenCL C 7.5.1.
pub(crate) fn atan2pi(y: f64, x: f64) -> f64 {
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    if y == 0.0 {
        // atan2pi(±0, +0 or x > 0) = ±0; atan2pi(±0, -0 or x < 0) = ±1.
        return if x.is_sign_negative() {
            1.0f64.copysign(y)
        } else {
            0.0f64.copysign(y)
        };
    }
    if x == 0.0 {
        return 0.5f64.copysign(y);
    }
    match (y.is_infinite(), x.is_infinite()) {
        (true, true) => {
            let v: f64 = if x > 0.0 { 0.25 } else { 0.75 };
            v.copysign(y)
        }
        (false, true) => {
            if x > 0.0 {
                0.0f64.copysign(y)
            } else {
                1.0f64.copysign(y)
            }
        }
        (true, false) => 0.5f64.copysign(y),
        (false, false) => div_pi(libm::atan2(y, x)),
    }
}

/// `10^x` within about 1.5 ulp: `exp(x ln 10)` with the product kept as a double-double.
pub(crate) fn exp10(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    // f64::MAX is 10^308.2547; half the smallest subnormal is 10^-323.6.
    if x > 308.3 {
        return f64::INFINITY;
    }
    if x < -323.7 {
        return 0.0;
    }
    if x == x.trunc() && x.abs() <= 22.0 {
        // 10^n is exact in f64 for 0 <= n <= 22; powi multiplies exactly there.
        if x >= 0.0 {
            return 10f64.powi(x as i32);
        }
        // One correctly rounded division of exact values.
        return 1.0 / 10f64.powi(-x as i32);
    }
    let hi = x * LN10;
    let lo = x.mul_add(LN10, -hi) + x * LN10_LO;
    if hi > 709.0 {
        // exp(h) = 2 exp(h - ln 2) keeps exp() below its overflow threshold; the
        // subtraction's rounding error goes into the low part (Fast2Sum, |hi| > ln 2).
        let s = hi - LN2;
        let err = (hi - s) - LN2;
        let lo = lo + err - LN2_LO;
        let e = libm::exp(s);
        if e.is_infinite() {
            return e;
        }
        return 2.0 * e.mul_add(lo, e);
    }
    // In the subnormal range exp(hi) is within about 1 ulp (absolute) and e*lo is exact
    // enough relative to it, so no rescaling is needed.
    let e = libm::exp(hi);
    e.mul_add(lo, e)
}

/// `x^(1/n)` with the OpenCL special cases, within about 3 ulp.
pub(crate) fn rootn(x: f64, n: i32) -> f64 {
    rootn_impl::<false>(x, n)
}

/// [`rootn`] of an f32 argument with a result accurate enough for rounding to f32:
/// `2^(log2|x| / n)` in f64 (|log2 x| <= 150, so the exponent's absolute error stays
/// below 2^-44, far under an f32 ulp), at a fraction of the cost.
pub(crate) fn rootn_for_f32(x: f64, n: i32) -> f64 {
    rootn_impl::<true>(x, n)
}

fn rootn_impl<const FOR_F32: bool>(x: f64, n: i32) -> f64 {
    if n == 0 || x.is_nan() {
        return f64::NAN;
    }
    let odd = n & 1 == 1;
    if x < 0.0 && !odd {
        return f64::NAN;
    }
    if x == 0.0 {
        return match (n > 0, odd) {
            (true, true) => x,
            (true, false) => 0.0,
            (false, true) => f64::INFINITY.copysign(x),
            (false, false) => f64::INFINITY,
        };
    }
    if x.is_infinite() {
        // Only +∞ reaches here for even n.
        return if n > 0 { x } else { 0.0f64.copysign(x) };
    }
    match n {
        1 => return x,
        -1 => return 1.0 / x,
        2 => return x.sqrt(),
        3 => return libm::cbrt(x),
        _ => {}
    }
    let ax = x.abs();
    if FOR_F32 {
        let r = super::fast32::exp2(super::fast32::log2(ax) / f64::from(n));
        return if x < 0.0 { -r } else { r };
    }
    // ax = m * 2^e with m in [1, 2); e = q n + s with 0 <= s < |n|;
    // ax^(1/n) = 2^q * 2^(s/n) * m^(1/n), each factor accurate.
    let (frac, exp) = libm::frexp(ax);
    let m = frac * 2.0;
    let e = exp - 1;
    let q = e.div_euclid(n);
    let s = e.rem_euclid(n);
    let n_f = f64::from(n);
    let c = libm::exp2(f64::from(s) / n_f) * libm::pow(m, 1.0 / n_f);
    let r = libm::scalbn(c, q);
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// `pow(x, y)` for `x >= 0` with the OpenCL `powr` special cases (NaN for `x < 0`,
/// `powr(±0, ±0)`, `powr(+∞, ±0)` and `powr(1, ±∞)`).
pub(crate) fn powr(x: f64, y: f64) -> f64 {
    powr_impl::<false>(x, y)
}

/// [`powr`] of f32 arguments, accurate enough for rounding to f32 (see [`pow_for_f32`]).
pub(crate) fn powr_for_f32(x: f64, y: f64) -> f64 {
    powr_impl::<true>(x, y)
}

fn powr_impl<const FOR_F32: bool>(x: f64, y: f64) -> f64 {
    if x.is_nan() || y.is_nan() || x < 0.0 {
        return f64::NAN;
    }
    if x == 0.0 {
        return if y == 0.0 {
            f64::NAN
        } else if y < 0.0 {
            f64::INFINITY
        } else {
            0.0
        };
    }
    if x.is_infinite() {
        return if y == 0.0 {
            f64::NAN
        } else if y < 0.0 {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if x == 1.0 {
        return if y.is_infinite() { f64::NAN } else { 1.0 };
    }
    if y == 0.0 {
        return 1.0;
    }
    if FOR_F32 {
        return pow_core_for_f32(x, y);
    }
    libm::pow(x, y)
}

/// `|x|^y` for finite `x != 0` and non-NaN `y`, good to about 2^-44 relative wherever
/// the result is an f32 (normal or subnormal): `2^(y log2|x|)` in f64. For `|y log2|x||`
/// up to 150 the exponent's absolute error is below 2^-44; beyond, the result over- or
/// underflows f32 anyway.
fn pow_core_for_f32(x: f64, y: f64) -> f64 {
    super::fast32::exp2(y * super::fast32::log2(x.abs()))
}

/// Whether `y` is an odd integer (|y| < 2^53, the range where odd integers exist).
fn is_odd_integer(y: f64) -> bool {
    y.abs() < EVEN_INTEGERS && y == y.trunc() && (y as i64) & 1 == 1
}

/// C99 `pow` of f32 arguments (exact special cases of ISO C F.9.4.4, which OpenCL
/// adopts), with a result accurate enough for rounding to f32; 2-3 times faster than
/// `libm::pow`.
pub(crate) fn pow_for_f32(x: f64, y: f64) -> f64 {
    if y == 0.0 || x == 1.0 {
        return 1.0; // even for NaN operands
    }
    if x.is_nan() || y.is_nan() {
        return f64::NAN;
    }
    let odd = is_odd_integer(y);
    if x == 0.0 {
        return match (y < 0.0, odd) {
            (true, true) => f64::INFINITY.copysign(x),
            (true, false) => f64::INFINITY,
            (false, true) => x,
            (false, false) => 0.0,
        };
    }
    if x.is_infinite() {
        let magnitude = if y < 0.0 { 0.0 } else { f64::INFINITY };
        return if x < 0.0 && odd {
            -magnitude
        } else {
            magnitude
        };
    }
    if y.is_infinite() {
        let ax = x.abs();
        return if ax == 1.0 {
            1.0
        } else if (ax < 1.0) == (y < 0.0) {
            f64::INFINITY
        } else {
            0.0
        };
    }
    if x < 0.0 && y != y.trunc() {
        return f64::NAN;
    }
    let r = pow_core_for_f32(x, y);
    if x < 0.0 && odd {
        -r
    } else {
        r
    }
}

/// `pown(x, n)` of an f32 argument, accurate enough for rounding to f32 (see
/// [`pow_for_f32`]); `pown(x, 0)` is 1 for every `x`.
pub(crate) fn pown_for_f32(x: f64, n: i32) -> f64 {
    pow_for_f32(x, f64::from(n))
}

/// `1/sqrt(x)`: two correctly rounded steps, within 1.5 ulp.
pub(crate) fn rsqrt(x: f64) -> f64 {
    1.0 / x.sqrt()
}

/// `acosh(x)`: NaN below 1. (`libm::acosh` returns finite garbage for `-2^26 < x <= -2`,
/// where its `log(2x - 1/(x + sqrt(x² - 1)))` branch sees a positive argument.)
pub(crate) fn acosh(x: f64) -> f64 {
    if x < 1.0 {
        return f64::NAN;
    }
    libm::acosh(x)
}
