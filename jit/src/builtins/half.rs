//! IEEE binary16 (`half`) conversions for `vload_half*` / `vstore_half*` (OpenCL.std
//! 173-181) and `OpFConvert` to or from 16-bit floats, found through
//! [`super::half_from`] and [`super::half_to`].
//!
//! Half values travel as their 16 bits in an `I16`. Widening is exact. Narrowing rounds
//! once, directly from the source type, in any of the four SPIR-V rounding modes (an `f64`
//! is not narrowed through `f32`, which would round twice). Overflow follows IEEE 754: to
//! infinity when rounding away, to ±65504 when rounding toward zero. NaNs stay quiet NaNs
//! with the top payload bits kept.

use super::{native, Registry, Scalar};
use rspirv::spirv::FPRoundingMode;

/// Largest finite half, as bits.
const HALF_MAX: u16 = 0x7bff;
/// Positive infinity, as bits.
const HALF_INF: u16 = 0x7c00;

/// Rounds `x` to half in `mode`, returning the bits.
pub(super) fn to_half(x: f64, mode: FPRoundingMode) -> u16 {
    let sign: u16 = if x.is_sign_negative() { 0x8000 } else { 0 };
    if x.is_nan() {
        // Quiet NaN, keeping the top 9 payload bits.
        return sign | 0x7e00 | ((x.to_bits() >> 42) as u16 & 0x01ff);
    }
    let negative = sign != 0;
    // Where a finite value too large for half goes in this mode.
    let overflow = match (mode, negative) {
        (FPRoundingMode::RTE, _) => HALF_INF,
        (FPRoundingMode::RTZ, _) => HALF_MAX,
        (FPRoundingMode::RTP, false) | (FPRoundingMode::RTN, true) => HALF_INF,
        (FPRoundingMode::RTP, true) | (FPRoundingMode::RTN, false) => HALF_MAX,
    };
    let a = x.abs();
    if a.is_infinite() {
        return sign | HALF_INF;
    }
    if a >= 65536.0 {
        return sign | overflow;
    }
    if a == 0.0 {
        return sign;
    }
    // Quantum of the half binade holding `a` (subnormals share the lowest one): scaling
    // by it is exact, leaving the value as an integer significand plus a fraction.
    let e = libm::ilogb(a).max(-14);
    let m = libm::scalbn(a, 10 - e);
    let m = match (mode, negative) {
        (FPRoundingMode::RTE, _) => m.round_ties_even(),
        (FPRoundingMode::RTZ, _) => m.trunc(),
        (FPRoundingMode::RTP, false) | (FPRoundingMode::RTN, true) => m.ceil(),
        (FPRoundingMode::RTP, true) | (FPRoundingMode::RTN, false) => m.trunc(),
    };
    // The encoding is continuous: a significand that rounded up to 2048 carries into the
    // exponent field, and subnormals (e = -14, m < 1024) come out as m itself.
    let bits = (((e + 15) << 10) + m as i32 - 1024) as u16;
    if bits >= HALF_INF {
        return sign | overflow;
    }
    sign | bits
}

/// The value of half bits `h`.
pub(super) fn from_half(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((h >> 10) & 0x1f);
    let mant = f64::from(h & 0x03ff);
    match exp {
        0 => sign * libm::scalbn(mant, -24),
        31 if mant == 0.0 => sign * f64::INFINITY,
        31 => {
            // Quiet NaN carrying the payload in its top bits.
            let bits = 0x7ff8_0000_0000_0000u64 | (u64::from(h & 0x01ff) << 42);
            f64::from_bits(bits | (u64::from(h & 0x8000) << 48))
        }
        _ => sign * libm::scalbn(1024.0 + mant, exp - 25),
    }
}

/// Half bits to `f32` (exact).
pub(crate) extern "C" fn half_to_f32(h: i16) -> f32 {
    from_half(h as u16) as f32
}
/// Half bits to `f64` (exact).
pub(crate) extern "C" fn half_to_f64(h: i16) -> f64 {
    from_half(h as u16)
}

/// Defines the narrowing functions for one source type and rounding mode.
macro_rules! narrow {
    ($($name:ident: $t:ty, $mode:ident;)*) => {$(
        /// Rounds to half in the mode its name gives; returns the bits.
        pub(crate) extern "C" fn $name(x: $t) -> i16 {
            to_half(f64::from(x), FPRoundingMode::$mode) as i16
        }
    )*};
}
narrow! {
    f32_to_half_rte: f32, RTE;
    f32_to_half_rtz: f32, RTZ;
    f32_to_half_rtp: f32, RTP;
    f32_to_half_rtn: f32, RTN;
    f64_to_half_rte: f64, RTE;
    f64_to_half_rtz: f64, RTZ;
    f64_to_half_rtp: f64, RTP;
    f64_to_half_rtn: f64, RTN;
}

/// Registers the conversions.
pub(super) fn register(r: &mut Registry) {
    use FPRoundingMode::{RTE, RTN, RTP, RTZ};
    r.add_half_from(
        Scalar::F32,
        native!("half_to_f32", half_to_f32, [I16] -> F32),
    );
    r.add_half_from(
        Scalar::F64,
        native!("half_to_f64", half_to_f64, [I16] -> F64),
    );
    let narrowing = [
        (
            Scalar::F32,
            RTE,
            native!("f32_to_half_rte", f32_to_half_rte, [F32] -> I16),
        ),
        (
            Scalar::F32,
            RTZ,
            native!("f32_to_half_rtz", f32_to_half_rtz, [F32] -> I16),
        ),
        (
            Scalar::F32,
            RTP,
            native!("f32_to_half_rtp", f32_to_half_rtp, [F32] -> I16),
        ),
        (
            Scalar::F32,
            RTN,
            native!("f32_to_half_rtn", f32_to_half_rtn, [F32] -> I16),
        ),
        (
            Scalar::F64,
            RTE,
            native!("f64_to_half_rte", f64_to_half_rte, [F64] -> I16),
        ),
        (
            Scalar::F64,
            RTZ,
            native!("f64_to_half_rtz", f64_to_half_rtz, [F64] -> I16),
        ),
        (
            Scalar::F64,
            RTP,
            native!("f64_to_half_rtp", f64_to_half_rtp, [F64] -> I16),
        ),
        (
            Scalar::F64,
            RTN,
            native!("f64_to_half_rtn", f64_to_half_rtn, [F64] -> I16),
        ),
    ];
    for (ty, mode, f) in narrowing {
        r.add_half_to(ty, mode, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_round_trip() {
        for h in 0u16..=0xffff {
            let f = half_to_f32(h as i16);
            if f.is_nan() {
                continue;
            }
            assert_eq!(f32_to_half_rte(f) as u16, h, "half {h:#06x} -> {f}");
            assert_eq!(f32_to_half_rtz(f) as u16, h);
            assert_eq!(f32_to_half_rtp(f) as u16, h);
            assert_eq!(f32_to_half_rtn(f) as u16, h);
        }
    }

    #[test]
    fn half_rounding_modes() {
        // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10).
        let x = 1.0f32 + 2f32.powi(-11);
        assert_eq!(f32_to_half_rte(x) as u16, 0x3c00);
        assert_eq!(f32_to_half_rtp(x) as u16, 0x3c01);
        assert_eq!(f32_to_half_rtz(x) as u16, 0x3c00);
        assert_eq!(f32_to_half_rtn(-x) as u16, 0xbc01);
        assert_eq!(f32_to_half_rte(1e6) as u16, 0x7c00);
        assert_eq!(f32_to_half_rtz(1e6) as u16, 0x7bff);
        assert_eq!(f32_to_half_rte(f32::from_bits(1)) as u16, 0);
        assert_eq!(f32_to_half_rtp(f32::from_bits(1)) as u16, 1);
    }

    /// Every finite half value in increasing order, as (value, bits), from -65504 to 65504.
    fn sorted_halves() -> Vec<(f64, u16)> {
        let mut v: Vec<(f64, u16)> = (0..=0xffffu16)
            .filter(|h| h & 0x7c00 != 0x7c00)
            .filter(|&h| h != 0x8000) // -0 equals +0; keep one
            .map(|h| (from_half(h), h))
            .collect();
        v.sort_by(|a, b| a.0.partial_cmp(&b.0).unwrap());
        v
    }

    /// Reference rounding by search among all half values.
    fn reference(x: f64, mode: FPRoundingMode, halves: &[(f64, u16)]) -> u16 {
        let neg = x.is_sign_negative();
        let sign = if neg { 0x8000 } else { 0 };
        if x == 0.0 {
            return sign;
        }
        let i = halves.partition_point(|&(v, _)| v <= x);
        // halves[i-1] <= x < halves[i] (with the ends meaning overflow).
        let below = if i == 0 { None } else { Some(halves[i - 1]) };
        let above = halves.get(i).copied();
        if let Some((v, h)) = below {
            if v == x {
                return h;
            }
        }
        let inf_or = |h: Option<(f64, u16)>, fallback: u16| h.map_or(fallback, |p| p.1);
        let zero_fix = |h: u16| if h & 0x7fff == 0 { sign } else { h };
        let toward_zero = if neg { above } else { below };
        let r = match mode {
            FPRoundingMode::RTZ => inf_or(toward_zero, sign | HALF_MAX),
            FPRoundingMode::RTP => inf_or(above, HALF_INF),
            FPRoundingMode::RTN => inf_or(below, 0x8000 | HALF_INF),
            FPRoundingMode::RTE => {
                // Overflow threshold: halfway between 65504 and 65536.
                if x.abs() >= 65520.0 {
                    return sign | HALF_INF;
                }
                match (below, above) {
                    (Some(b), Some(a)) => {
                        let (db, da) = (x - b.0, a.0 - x);
                        if db < da || (db == da && b.1 & 1 == 0) {
                            b.1
                        } else {
                            a.1
                        }
                    }
                    (Some(only), None) | (None, Some(only)) => only.1,
                    (None, None) => unreachable!("halves is not empty"),
                }
            }
        };
        zero_fix(r)
    }

    #[test]
    fn every_half_widens_exactly_and_round_trips() {
        for h in 0..=0xffffu16 {
            let x = half_to_f32(h as i16);
            let back = f32_to_half_rte(x) as u16;
            if h & 0x7c00 == 0x7c00 && h & 0x03ff != 0 {
                assert!(x.is_nan());
                assert_eq!(back & 0x7e00, 0x7e00, "NaN {h:#x} stays NaN");
                assert_eq!(back & 0x01ff, h & 0x01ff, "payload of {h:#x}");
            } else {
                assert_eq!(back, h, "{h:#06x} -> {x:e} -> {back:#06x}");
                assert_eq!(f64::from(x), half_to_f64(h as i16));
            }
        }
        assert_eq!(half_to_f32(0x3c00), 1.0);
        assert_eq!(half_to_f32(0x0001), 2f32.powi(-24));
        assert_eq!(half_to_f32(0x7bff), 65504.0);
        assert_eq!(half_to_f32(0xfc00u16 as i16), f32::NEG_INFINITY);
    }

    #[test]
    fn narrowing_matches_a_search_in_every_mode() {
        let halves = sorted_halves();
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut inputs: Vec<f64> = vec![
            65504.0,
            65519.99,
            65520.0,
            65535.0,
            65536.0,
            1e10,
            2f64.powi(-24),
            2f64.powi(-25),
            2f64.powi(-25) * 1.0000001,
            2f64.powi(-26),
            1e-30,
            1.0 + 2f64.powi(-11),
            1.0 + 2f64.powi(-11) + 2f64.powi(-40),
            1.0 + 3.0 * 2f64.powi(-11),
            2f64.powi(-14) * (1.0 - 2f64.powi(-12)),
        ];
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Magnitudes around the half range: 2^-30 .. 2^17.
            let e = (state % 48) as i32 - 30;
            let m = 1.0 + (state >> 16) as f64 / 2f64.powi(48);
            inputs.push(libm::scalbn(m, e));
        }
        let more: Vec<f64> = inputs.iter().map(|x| -x).collect();
        inputs.extend(more);
        for x in inputs {
            for (mode, f64fn, f32fn) in [
                (
                    FPRoundingMode::RTE,
                    f64_to_half_rte as extern "C" fn(f64) -> i16,
                    f32_to_half_rte as extern "C" fn(f32) -> i16,
                ),
                (FPRoundingMode::RTZ, f64_to_half_rtz, f32_to_half_rtz),
                (FPRoundingMode::RTP, f64_to_half_rtp, f32_to_half_rtp),
                (FPRoundingMode::RTN, f64_to_half_rtn, f32_to_half_rtn),
            ] {
                let want = reference(x, mode, &halves);
                assert_eq!(f64fn(x) as u16, want, "f64 {x:e} {mode:?}");
                let x32 = x as f32;
                let want32 = reference(f64::from(x32), mode, &halves);
                assert_eq!(f32fn(x32) as u16, want32, "f32 {x32:e} {mode:?}");
            }
        }
    }

    #[test]
    fn narrowing_special_values() {
        assert_eq!(f32_to_half_rte(f32::INFINITY) as u16, 0x7c00);
        assert_eq!(f32_to_half_rtz(f32::NEG_INFINITY) as u16, 0xfc00);
        assert_eq!(f32_to_half_rtz(1e6) as u16, 0x7bff);
        assert_eq!(f32_to_half_rtp(-1e6) as u16, 0xfbff);
        assert_eq!(f32_to_half_rtn(-1e6) as u16, 0xfc00);
        assert_eq!(f32_to_half_rte(-0.0) as u16, 0x8000);
        assert_eq!(f32_to_half_rtp(1e-30) as u16, 0x0001);
        assert_eq!(f32_to_half_rtn(1e-30) as u16, 0x0000);
        assert_eq!(f32_to_half_rtn(-1e-30) as u16, 0x8001);
        assert_eq!(f64_to_half_rte(f64::NAN) as u16 & 0x7e00, 0x7e00);
        // Rounding directly from f64 avoids the double rounding through f32.
        let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
        assert_eq!(f64_to_half_rte(x) as u16, 0x3c01);
        assert_eq!(f32_to_half_rte(x as f32) as u16, 0x3c00);
    }
}
