//! Shared `f64` kernels of the vector `f32` functions: written branch-free (selects,
//! bit operations, no calls) so that LLVM vectorises a loop over the lanes of a block.
//!
//! Each kernel is accurate to far better than an `f32` needs (relative error around
//! 2^-31 or less), so that the single rounding to `f32` at the end dominates. `F` says
//! whether the caller was compiled with FMA: `mad` is then fused, else a multiply and an
//! add (the error budget allows either; a software `fma` would be far slower).

/// `a * b + c`, fused when the block was compiled with FMA.
#[inline(always)]
pub(super) fn mad<const F: bool>(a: f64, b: f64, c: f64) -> f64 {
    if F {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Horner evaluation of `c[0] + z c[1] + z^2 c[2] + ...`.
#[inline(always)]
pub(super) fn horner<const F: bool, const N: usize>(z: f64, c: &[f64; N]) -> f64 {
    let mut p = c[N - 1];
    let mut i = N - 1;
    while i > 0 {
        i -= 1;
        p = mad::<F>(p, z, c[i]);
    }
    p
}

/// Estrin evaluation of the same polynomial (N = 4, 8 or 12; written out, since a
/// generic loop defeats LLVM's vectorisation of the lane loop): pairs `c[2i] + c[2i+1]
/// x`, then pairs of those with `x^2`, ...: depth 2 to 4 instead of N - 1. One call of
/// a routine is a single dependency chain per register, so its latency is what a
/// sub-group waits for.
#[inline(always)]
pub(super) fn estrin<const F: bool, const N: usize>(x: f64, c: &[f64; N]) -> f64 {
    let pair = |i: usize| mad::<F>(c[i + 1], x, c[i]);
    let x2 = x * x;
    match N {
        4 => mad::<F>(pair(2), x2, pair(0)),
        8 => {
            let x4 = x2 * x2;
            let lo = mad::<F>(pair(2), x2, pair(0));
            let hi = mad::<F>(pair(6), x2, pair(4));
            mad::<F>(hi, x4, lo)
        }
        12 => {
            let x4 = x2 * x2;
            let x8 = x4 * x4;
            let q0 = mad::<F>(pair(2), x2, pair(0));
            let q1 = mad::<F>(pair(6), x2, pair(4));
            let q2 = mad::<F>(pair(10), x2, pair(8));
            mad::<F>(q2, x8, mad::<F>(q1, x4, q0))
        }
        _ => horner::<F, N>(x, c),
    }
}

/// 1.5 * 2^52: adding and subtracting it rounds an `f64` below 2^51 to an integer
/// (ties to even); the low bits of the sum are that integer in two's complement.
pub(super) const MAGIC: f64 = 6_755_399_441_055_744.0;

/// 2^f on [-1/2, 1/2], degree 7, fitted (Lawson-weighted least squares toward
/// minimax) for relative error: 2^-34.5.
const EXP2_C: [f64; 8] = [
    0.999_999_999_961_542_7,
    0.693_147_180_722_062_5,
    0.240_226_511_993_112_68,
    0.055_504_103_742_973_51,
    0.009_618_027_129_881_846,
    0.001_333_390_567_440_529_7,
    0.000_154_693_242_578_398,
    1.520_581_401_563_634_4e-5,
];

/// `2^t` to about 2^-34 relative. `t` is clamped to [-200, 200], far outside the `f32`
/// range both ways, so the `f32` rounding of the result gives 0 or infinity there; a
/// NaN `t` gives garbage (callers route NaN to the scalar path or select it away).
#[inline(always)]
pub(super) fn exp2<const F: bool>(t: f64) -> f64 {
    let t = if t > 200.0 { 200.0 } else { t };
    let t = if t < -200.0 { -200.0 } else { t };
    let k = t + MAGIC;
    let n = k - MAGIC;
    let f = t - n; // exact, |f| <= 1/2
    let p = estrin::<F, 8>(f, &EXP2_C);
    // n is in [-200, 200]: 2^n is a normal f64.
    let ni = (k.to_bits() as i64).wrapping_sub(MAGIC.to_bits() as i64);
    p * f64::from_bits((ni.wrapping_add(1023) as u64) << 52)
}

/// `(ln(1 + t) - t) / t^2` on `t` in [sqrt(1/2) - 1, sqrt(2) - 1], degree 11, fitted
/// (Lawson-weighted least squares toward minimax) so that `t + t^2 Q(t)` has relative
/// error 2^-35.4: no division, unlike the `atanh` series.
const LN_Q: [f64; 12] = [
    -0.500_000_000_075_553_3,
    0.333_333_341_072_184_6,
    -0.249_999_970_296_763_05,
    0.199_998_925_668_038_29,
    -0.166_668_143_263_482_56,
    0.142_906_953_171_975_74,
    -0.124_999_881_664_245_67,
    0.110_095_554_839_927_97,
    -0.099_002_890_186_479_86,
    0.099_942_070_185_007_66,
    -0.099_785_502_706_218_08,
    0.055_058_236_442_405_25,
];

/// The bits of the `f32` below `sqrt(1/2)`: the lower end of the mantissa range.
const SQRT_HALF_BITS: i32 = 0x3f35_04f3;

/// `(e, ln m)` with `x = 2^e m`, `m` in [sqrt(1/2), sqrt(2)), for a positive normal
/// finite `f32` `x` (subnormals are not easy operands of the callers). `ln m` is
/// accurate to about 2^-35 relative; `e` is an exact integer. The split is integer
/// arithmetic on the `f32` bits (subtract the bits of sqrt(1/2): the exponent field is
/// then `e`, the mantissa field plus those bits is `m`), shorter than a compare and
/// select on the `f64` (the latency of `pow`).
#[inline(always)]
pub(super) fn log_parts<const F: bool>(x: f32) -> (f64, f64) {
    let k = (x.to_bits() as i32).wrapping_sub(SQRT_HALF_BITS);
    let e = f64::from(k >> 23);
    let m = f32::from_bits(((k & 0x007f_ffff) + SQRT_HALF_BITS) as u32);
    let t = f64::from(m - 1.0); // exact (Sterbenz)
    (e, mad::<F>(t * t, estrin::<F, 12>(t, &LN_Q), t))
}

/// `sin` and `cos` of `|r| <= pi/4 (1 + 2^-20)`: `r + r^3 S(r^2)` and `1 + r^2 C(r^2)`,
/// fitted (Lawson-weighted least squares toward minimax) for relative error 2^-37.5 and
/// 2^-33.8 on `|r| <= 1.001 pi/4` (fdlibm's `__kernel_sindf`/`__kernel_cosdf` degrees).
#[inline(always)]
pub(super) fn sin_cos_poly<const F: bool>(r: f64) -> (f64, f64) {
    const S: [f64; 4] = [
        -0.166_666_666_409_484_74,
        0.008_333_329_310_490_311,
        -0.000_198_393_119_514_317_06,
        2.718_105_543_431_062e-6,
    ];
    const C: [f64; 4] = [
        -0.499_999_996_961_805_75,
        0.041_666_620_416_371_945,
        -0.001_388_668_117_069_671_3,
        2.438_338_074_552_985_8e-5,
    ];
    let z = r * r;
    let s = mad::<F>(r * z, estrin::<F, 4>(z, &S), r);
    let c = mad::<F>(z, estrin::<F, 4>(z, &C), 1.0);
    (s, c)
}

/// 2/pi and pi/2 in two parts: the first 25 bits of pi/2 (so `n * PIO2_1` is exact for
/// `n < 2^28`) and the rest, as in fdlibm's `__rem_pio2f`.
const INV_PIO2: f64 = std::f64::consts::FRAC_2_PI;
const PIO2_1: f64 = f64::from_bits(0x3ff9_21fb_5000_0000);
const PIO2_1T: f64 = f64::from_bits(0x3e51_10b4_611a_6263);

/// Largest `|x|` the trigonometric fast path reduces (Cody-Waite with 25 + 53 bits of
/// pi/2: `n < 2^20`, reduction error below 2^-57 absolute).
pub(super) const TRIG_MAX: f32 = 1_048_576.0;

/// `(r, n mod 4)` with `a = n pi/2 + r`, `|r| <= pi/4 (1 + 2^-20)`, for `0 <= a <= TRIG_MAX`.
#[inline(always)]
pub(super) fn reduce_pio2<const F: bool>(a: f64) -> (f64, u64) {
    let k = mad::<F>(a, INV_PIO2, MAGIC);
    let n = k - MAGIC;
    let r = mad::<F>(-n, PIO2_1, a); // exact: n * PIO2_1 has at most 45 bits
    let r = mad::<F>(-n, PIO2_1T, r);
    (r, k.to_bits() & 3)
}
