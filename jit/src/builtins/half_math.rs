//! OpenCL.std functions on `half` that are not "compute in `f32`, round once", found
//! through [`super::half_std`].
//!
//! The code generator evaluates half math by widening to `f32` (exact), calling the
//! `f32` implementation and rounding the result to half once; that is within the half
//! ulp limits everywhere, and exact where OpenCL requires it, except for:
//! - `fma`: `f32` would round `a * b + c` twice; done in `f64` with round-to-odd, then
//!   rounded to half once (`[I16, I16, I16] -> I16`, half bits);
//! - `nextafter`: steps in half units (`[I16, I16] -> I16`);
//! - `modf`, `fract`, `sincos`: their second result goes through a `half*`
//!   (`[F32, Ptr] -> F32`, the pointer receiving half bits rounded to nearest even; the
//!   returned `f32` is rounded by the caller); `fract` clamps below 1 in half units.

use super::half::{from_half, to_half};
use super::{native, ClOp, Registry};
use rspirv::spirv::FPRoundingMode;

/// The largest half below 1 (`0x1.ffcp-1`), as `f32`.
const HALF_BELOW_ONE: f32 = 1.0 - 1.0 / 2048.0;

/// Writes half bits through an out-parameter address from generated code.
///
/// # Safety
/// `p` is null (the write is skipped) or valid for a write of 2 bytes; no alignment is
/// assumed.
unsafe fn store_half(p: *mut u16, x: f32) {
    if !p.is_null() {
        // SAFETY: non-null, and the caller guarantees it is valid for a 2-byte write.
        unsafe { p.write_unaligned(to_half(f64::from(x), FPRoundingMode::RTE)) }
    }
}

/// `a * b + c` on half bits, rounded once to nearest even.
pub(crate) extern "C" fn fma_half(a: i16, b: i16, c: i16) -> i16 {
    let (a, b, c) = (
        from_half(a as u16),
        from_half(b as u16),
        from_half(c as u16),
    );
    // The product of two halves is exact in f64 (22 significant bits).
    let p = a * b;
    let s = p + c;
    if !s.is_finite() || !p.is_finite() || !c.is_finite() {
        return to_half(s, FPRoundingMode::RTE) as i16;
    }
    // The rounding error of the sum (TwoSum), then round to odd: a sticky last bit, so
    // that the final rounding to 11 bits cannot double-round.
    let bb = s - p;
    let err = (p - (s - bb)) + (c - bb);
    let s = if err != 0.0 && s.to_bits() & 1 == 0 {
        // Step towards the exact value: the neighbour with an odd last bit.
        let away = (err > 0.0) == (s > 0.0);
        f64::from_bits(if away {
            s.to_bits() + 1
        } else {
            s.to_bits() - 1
        })
    } else {
        s
    };
    to_half(s, FPRoundingMode::RTE) as i16
}

/// The next half after `x` in the direction of `y` (half bits).
pub(crate) extern "C" fn nextafter_half(x: i16, y: i16) -> i16 {
    let (xf, yf) = (from_half(x as u16), from_half(y as u16));
    if xf.is_nan() {
        return x;
    }
    if yf.is_nan() {
        return y;
    }
    if xf == yf {
        return y;
    }
    let bits = x as u16;
    if xf == 0.0 {
        // The smallest subnormal with the sign of the direction.
        return if yf > 0.0 { 1 } else { 0x8001u16 as i16 };
    }
    // Away from zero increments the magnitude.
    let away = (yf > xf) == (xf > 0.0);
    (if away { bits + 1 } else { bits - 1 }) as i16
}

/// Fractional part with the sign of `x`, storing the integral part as half bits.
///
/// # Safety
/// `iptr` is null or valid for a write of 2 bytes.
pub(crate) unsafe extern "C" fn modf_half(x: f32, iptr: *mut u16) -> f32 {
    let t = x.trunc();
    // SAFETY: forwarded from this function's contract.
    unsafe { store_half(iptr, t) };
    if x.is_infinite() {
        0.0f32.copysign(x)
    } else {
        (x - t).copysign(x)
    }
}

/// `min(x - floor(x), 0x1.ffcp-1)`, storing `floor(x)` as half bits.
///
/// # Safety
/// `iptr` is null or valid for a write of 2 bytes.
pub(crate) unsafe extern "C" fn fract_half(x: f32, iptr: *mut u16) -> f32 {
    let fl = x.floor();
    // SAFETY: forwarded from this function's contract.
    unsafe { store_half(iptr, fl) };
    if x.is_nan() {
        x
    } else if x.is_infinite() {
        0.0f32.copysign(x)
    } else if x == 0.0 {
        x
    } else {
        (x - fl).min(HALF_BELOW_ONE)
    }
}

/// Returns `sin(x)`, storing `cos(x)` as half bits.
///
/// # Safety
/// `cosval` is null or valid for a write of 2 bytes.
pub(crate) unsafe extern "C" fn sincos_half(x: f32, cosval: *mut u16) -> f32 {
    let (s, c) = libm::sincos(f64::from(x));
    // SAFETY: forwarded from this function's contract.
    unsafe { store_half(cosval, c as f32) };
    s as f32
}

/// Registers the functions.
pub(super) fn register(r: &mut Registry) {
    r.add_half_std(
        ClOp::fma,
        native!("fma_half", fma_half, [I16, I16, I16] -> I16),
    );
    r.add_half_std(
        ClOp::nextafter,
        native!("nextafter_half", nextafter_half, [I16, I16] -> I16),
    );
    r.add_half_std(
        ClOp::modf,
        native!("modf_half", modf_half, [F32, Ptr] -> F32),
    );
    r.add_half_std(
        ClOp::fract,
        native!("fract_half", fract_half, [F32, Ptr] -> F32),
    );
    r.add_half_std(
        ClOp::sincos,
        native!("sincos_half", sincos_half, [F32, Ptr] -> F32),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtins::half::half_to_f32;

    /// `a * b + c` rounded to half with exact integer arithmetic: every half is a
    /// multiple of 2^-24, so the exact result is an integer number of 2^-48 units.
    fn fma_reference(a: u16, b: u16, c: u16) -> f64 {
        let units = |h: u16| (from_half(h) * 2f64.powi(24)) as i128;
        let exact = units(a) * units(b) + (units(c) << 24);
        let m = exact.unsigned_abs();
        if m == 0 {
            return 0.0;
        }
        let top = 127 - m.leading_zeros() as i32;
        // The half quantum of this binade (subnormals share the lowest), in units.
        let shift = (top - 48).max(-14) - 10 + 48;
        let q = 1u128 << shift;
        let (quot, rem) = (m / q, m % q);
        let up = rem > q / 2 || (rem == q / 2 && quot & 1 == 1);
        let v = (quot + u128::from(up)) as f64 * 2f64.powi(shift - 48);
        let v = if exact < 0 { -v } else { v };
        from_half(to_half(v, FPRoundingMode::RTE))
    }

    #[test]
    fn fma_half_rounds_once() {
        // (1 + 2^-10)^2 + 2^-11 = 1 + 2^-9 + 2^-11 + 2^-20: just above a tie, rounds
        // up; f32 keeps the 2^-20, but rounding a*b first in half would lose it.
        let x = 0x3c01u16;
        let c = to_half(2f64.powi(-11), FPRoundingMode::RTE);
        assert_eq!(
            from_half(fma_half(x as i16, x as i16, c as i16) as u16),
            fma_reference(x, x, c)
        );
        // A tie in f64 after the sum that is not a tie exactly: round to odd decides.
        let big = to_half(2048.0, FPRoundingMode::RTE);
        let tiny = 0x0001u16; // 2^-24
        let one = 0x3c00u16;
        // 2048 * 1 + (-2^-24): just below 2048, rounds to 2048.
        let got = fma_half(big as i16, one as i16, (tiny | 0x8000) as i16) as u16;
        assert_eq!(from_half(got), 2048.0);
        // A deterministic sample of finite operands against exact arithmetic.
        let mut state = 0x1234_5678u32;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            // Finite halves only.
            let h = (state & 0xffff) as u16;
            if h & 0x7c00 == 0x7c00 {
                h & 0xbbff
            } else {
                h
            }
        };
        for _ in 0..200_000 {
            let (a, b, c) = (next(), next(), next());
            let got = from_half(fma_half(a as i16, b as i16, c as i16) as u16);
            let want = fma_reference(a, b, c);
            assert!(
                got == want,
                "fma({a:#06x}, {b:#06x}, {c:#06x}) = {got}, want {want}"
            );
        }
    }

    #[test]
    fn nextafter_half_steps_one_half_ulp() {
        assert_eq!(nextafter_half(0x3c00, 0x4000) as u16, 0x3c01);
        assert_eq!(nextafter_half(0x3c00, 0) as u16, 0x3bff);
        assert_eq!(nextafter_half(0, 0x3c00) as u16, 0x0001);
        assert_eq!(nextafter_half(0, 0xbc00u16 as i16) as u16, 0x8001);
        assert_eq!(nextafter_half(0x8001u16 as i16, 0x3c00) as u16, 0x8000);
        assert_eq!(nextafter_half(0x7bff, 0x7c00) as u16, 0x7c00);
        assert_eq!(nextafter_half(0x3c00, 0x3c00) as u16, 0x3c00);
        assert!(half_to_f32(nextafter_half(0x7e00, 0x3c00)).is_nan());
    }

    #[test]
    fn fract_half_stays_below_one() {
        let mut ip = 0u16;
        // The smallest negative subnormal: x - floor(x) = 1 - 2^-24, not a half below 1.
        // SAFETY: `ip` is a valid u16.
        let f = unsafe { fract_half(-(2f32.powi(-24)), &mut ip) };
        assert_eq!(f, HALF_BELOW_ONE);
        assert_eq!(ip, 0xbc00);
        // SAFETY: as above.
        let f = unsafe { modf_half(-2.5, &mut ip) };
        assert_eq!((f, ip), (-0.5, 0xc000));
    }
}
