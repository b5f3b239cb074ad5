//! `f32` kernels of `sin`, `cos` and `exp` for the compilations with FMA: sixteen lanes
//! per 512-bit register instead of the eight of the `f64` kernels of [`super::core`],
//! and no conversions, so a sub-group of 16 costs one block of a third of the
//! instructions (clbench `math`: `sin` and `exp` were two thirds of its time).
//!
//! Accuracy rests on fused multiply-adds (the callers use these only with `F`):
//! - Reduction by pi/2 in three `f32` parts (Cody-Waite with FMA): the first step
//!   `a - n P1` is exact (a multiple of 2^-24 below 1), the later two round once each,
//!   so `r` is within about one ulp of `a - n pi/2`; `n pi/2` itself is 72 bits of pi/2,
//!   enough for every `f32` up to [`TRIG32_MAX`] (checked by the exhaustive test).
//! - `sin r`, `cos r` on `|r| <= pi/4`: Cephes' `sinf`/`cosf` polynomials, evaluated
//!   with FMA: under 2 ulp with the reduction (OpenCL allows 4).
//! - `exp x = 2^n e^r`: `r = x - n ln 2` in two parts (the first exact), `e^r` by a
//!   degree-7 polynomial (Cephes' `expf`), scaled by two exact powers of two so that
//!   subnormal results round once: about 1 ulp (OpenCL allows 3).
//!
//! The results are compared against `f64` references over every `f32` operand by the
//! ignored `exhaustive_unary` test and on random operands by the `vmath_*` tests.

/// 1.5 * 2^23: adding and subtracting it rounds an `f32` below 2^22 to an integer (ties
/// to even); the low bits of the sum are that integer in two's complement.
const MAGIC32: f32 = 12_582_912.0;

/// pi/2 in three `f32` parts: `P1 = f32(pi/2)`, `P2 = f32(pi/2 - P1)`,
/// `P3 = f32(pi/2 - P1 - P2)`.
const PIO2_1: f32 = 1.570_796_4;
const PIO2_2: f32 = -4.371_139e-8;
const PIO2_3: f32 = -1.715_124_5e-15;

/// Largest `|x|` the `f32` reduction handles: `x 2/pi` stays below 2^22 (the rounding
/// trick) and the 72 bits of pi/2 keep `r` accurate (the exhaustive test covers every
/// operand up to here). Larger arguments take the scalar path.
pub(super) const TRIG32_MAX: f32 = 1_048_576.0;

/// `(r, n mod 4)` with `a = n pi/2 + r`, `|r| <= pi/4 (1 + 2^-22)`, for
/// `0 <= a <= TRIG32_MAX` (with FMA).
#[inline(always)]
pub(super) fn reduce_pio2_32(a: f32) -> (f32, u32) {
    let k = a * std::f32::consts::FRAC_2_PI + MAGIC32;
    let n = k - MAGIC32;
    let r = (-n).mul_add(PIO2_1, a); // exact (module doc)
    let r = (-n).mul_add(PIO2_2, r);
    let r = (-n).mul_add(PIO2_3, r);
    (r, k.to_bits() & 3)
}

/// `sin r` and `cos r` for `|r| <= pi/4 (1 + 2^-22)` (Cephes' `sinf`/`cosf` kernels).
#[inline(always)]
pub(super) fn sin_cos_32(r: f32) -> (f32, f32) {
    let z = r * r;
    let ps = (-1.951_529_6e-4f32)
        .mul_add(z, 8.332_161e-3)
        .mul_add(z, -1.666_665_5e-1);
    let s = (r * z).mul_add(ps, r);
    let pc = 2.443_315_7e-5f32
        .mul_add(z, -1.388_731_6e-3)
        .mul_add(z, 4.166_664_6e-2);
    let c = (z * z).mul_add(pc, (-0.5f32).mul_add(z, 1.0));
    (s, c)
}

/// ln 2 in two parts: `f32(ln 2)` and the rest.
const LN2_HI: f32 = std::f32::consts::LN_2;
const LN2_LO: f32 = -1.904_654_2e-9;

/// `e^x` for every non-NaN `x` (with FMA): `x` is clamped to `[-104, 89]`, beyond
/// which the result rounds to 0 or infinity anyway.
#[inline(always)]
pub(super) fn exp_32(x: f32) -> f32 {
    let x = if x > 89.0 { 89.0 } else { x };
    let x = if x < -104.0 { -104.0 } else { x };
    let k = x * std::f32::consts::LOG2_E + MAGIC32;
    let n = k - MAGIC32; // in [-150, 128]
    let r = (-n).mul_add(LN2_HI, x);
    let r = (-n).mul_add(LN2_LO, r);
    let p = 1.987_569_1e-4f32
        .mul_add(r, 1.398_2e-3)
        .mul_add(r, 8.333_452e-3)
        .mul_add(r, 4.166_579_6e-2)
        .mul_add(r, 1.666_666_5e-1)
        .mul_add(r, 0.5); // Cephes: 5.0000001201e-1, which is 0.5 in f32
    let e = (r * r).mul_add(p, r) + 1.0;
    // 2^n as two normal factors (n/2 and the rest, each in [-75, 64]): `e 2^h` is
    // exact, the second product rounds once, also to a subnormal or infinity.
    let ni = (k.to_bits() as i32).wrapping_sub(MAGIC32.to_bits() as i32);
    let h = ni >> 1;
    let s1 = f32::from_bits(((h + 127) as u32) << 23);
    let s2 = f32::from_bits(((ni - h + 127) as u32) << 23);
    e * s1 * s2
}
