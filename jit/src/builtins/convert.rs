//! Numeric conversions with an explicit rounding mode, for `OpConvertSToF`/`OpConvertUToF`/
//! `OpFConvert` with an `FPRoundingMode` decoration (OpenCL C `convert_float_rtz(long)`,
//! `convert_float_rtp(double)`, ...) and `OpConvertFToS`/`OpConvertFToU` with a rounding
//! mode and/or `SaturatedConversion` (`convert_int_sat_rtn(float)`, ...). Found through
//! [`super::convert`].
//!
//! Cranelift converts integers to floats only to nearest and has no directed-rounding
//! float demotion, so these are done here: the nearest result is computed, compared with
//! the exact source value, and stepped by one ulp when the mode asks for the other
//! neighbour. Float to integer conversions round in the requested mode and then saturate
//! (NaN gives 0), which also serves the non-saturating forms, whose out-of-range results
//! OpenCL leaves undefined (Cranelift's trapping `fcvt_to_sint` must not be used there).

use super::{native, Registry, Scalar};
use rspirv::spirv::FPRoundingMode;

const RTE: u32 = FPRoundingMode::RTE as u32;
const RTZ: u32 = FPRoundingMode::RTZ as u32;
const RTP: u32 = FPRoundingMode::RTP as u32;
const RTN: u32 = FPRoundingMode::RTN as u32;

/// Integer ABI types (always the signed Rust type of the width; the conversion's own
/// signedness decides how the bits are read or produced).
pub(crate) trait AbiInt: Copy {
    /// The value of these bits, read as signed or unsigned.
    fn value(self, signed: bool) -> i128;
    /// The low bits of `v`.
    fn from_value(v: i128) -> Self;
    /// Range of the type when read as signed or unsigned.
    fn range(signed: bool) -> (i128, i128);
}

macro_rules! abi_int {
    ($($s:ty, $u:ty);*) => {$(
        impl AbiInt for $s {
            fn value(self, signed: bool) -> i128 {
                if signed { self as i128 } else { self as $u as i128 }
            }
            fn from_value(v: i128) -> Self {
                v as $s
            }
            fn range(signed: bool) -> (i128, i128) {
                if signed {
                    (<$s>::MIN as i128, <$s>::MAX as i128)
                } else {
                    (0, <$u>::MAX as i128)
                }
            }
        }
    )*};
}
abi_int!(i8, u8; i16, u16; i32, u32; i64, u64);

/// Steps the nearest float `$f` (of an exact value compared through `$cmp`, which gives
/// `f` versus exact) to the neighbour that mode `$mode` asks for.
macro_rules! directed {
    ($f:expr, $cmp:expr, $mode:expr) => {{
        let f = $f;
        match ($mode, $cmp) {
            (RTP, std::cmp::Ordering::Less) => f.next_up(),
            (RTN, std::cmp::Ordering::Greater) => f.next_down(),
            (RTZ, std::cmp::Ordering::Greater) if f > 0.0 => f.next_down(),
            (RTZ, std::cmp::Ordering::Less) if f < 0.0 => f.next_up(),
            _ => f,
        }
    }};
}

/// `f` (finite, integral, or infinite) compared with the integer `exact`.
fn cmp_int(f: f64, exact: i128) -> std::cmp::Ordering {
    if f.is_infinite() {
        return if f > 0.0 {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Less
        };
    }
    // |f| <= 2^64 here, so the cast is exact.
    (f as i128).cmp(&exact)
}

/// Integer (read as signed if `SIGNED`) to `f32`, rounded in mode `MODE`.
pub(crate) extern "C" fn int_to_f32<T: AbiInt, const SIGNED: bool, const MODE: u32>(v: T) -> f32 {
    let exact = v.value(SIGNED);
    let f = exact as f32; // to nearest, ties to even
    directed!(f, cmp_int(f64::from(f), exact), MODE)
}

/// Integer (read as signed if `SIGNED`) to `f64`, rounded in mode `MODE`.
pub(crate) extern "C" fn int_to_f64<T: AbiInt, const SIGNED: bool, const MODE: u32>(v: T) -> f64 {
    let exact = v.value(SIGNED);
    let f = exact as f64;
    directed!(f, cmp_int(f, exact), MODE)
}

/// `f64` to `f32` rounded in mode `MODE` (also into the subnormal range and at overflow:
/// RTZ gives ±FLT_MAX, not infinity).
pub(crate) extern "C" fn f64_to_f32<const MODE: u32>(x: f64) -> f32 {
    let f = x as f32;
    if x.is_nan() || x.is_infinite() {
        return f;
    }
    let cmp = f64::from(f)
        .partial_cmp(&x)
        .unwrap_or(std::cmp::Ordering::Equal);
    directed!(f, cmp, MODE)
}

/// Float (as f64, exact for f32 sources) to integer: rounded in mode `MODE`, then clamped
/// to the destination range; NaN gives 0.
pub(crate) extern "C" fn float_to_int<
    F: Into<f64> + Copy,
    T: AbiInt,
    const SIGNED: bool,
    const MODE: u32,
>(
    x: F,
) -> T {
    let x: f64 = x.into();
    if x.is_nan() {
        return T::from_value(0);
    }
    let r = match MODE {
        RTZ => x.trunc(),
        RTP => x.ceil(),
        RTN => x.floor(),
        _ => x.round_ties_even(),
    };
    let (min, max) = T::range(SIGNED);
    // min/max as f64 may round (2^63 - 1 -> 2^63), but r is integral, so comparing with
    // them and casting in between is exact.
    let v = if r <= min as f64 {
        min
    } else if r >= max as f64 {
        max
    } else {
        r as i128
    };
    T::from_value(v)
}

/// Registers every conversion: all integer widths and signedness to both float types, f64
/// to f32, and both float types to all integer widths and signedness, each in four modes.
pub(super) fn register(r: &mut Registry) {
    use FPRoundingMode as M;
    /// Registers `$f::<generics.., MODE>` for the four modes under `$name_rte` etc.
    macro_rules! modes {
        ($key:expr, $name:expr, $f:ident, [$($g:ty),*], [$($gc:expr),*], [$($p:ident),*] -> $ret:ident) => {
            r.add_convert($key, M::RTE, native!(concat!($name, "_rte"), $f::<$($g,)* $($gc,)* RTE>, [$($p),*] -> $ret));
            r.add_convert($key, M::RTZ, native!(concat!($name, "_rtz"), $f::<$($g,)* $($gc,)* RTZ>, [$($p),*] -> $ret));
            r.add_convert($key, M::RTP, native!(concat!($name, "_rtp"), $f::<$($g,)* $($gc,)* RTP>, [$($p),*] -> $ret));
            r.add_convert($key, M::RTN, native!(concat!($name, "_rtn"), $f::<$($g,)* $($gc,)* RTN>, [$($p),*] -> $ret));
        };
    }
    /// Integer type `$abi` (`$k`), read as signed/unsigned (`$s`, tag `$tag`), to floats
    /// and from floats.
    macro_rules! int_side {
        ($($abi:ty, $k:ident, $s:literal, $tag:literal);*) => {$(
            modes!((Scalar::$k, $s, Scalar::F32, false), concat!("cvt_", $tag, "_f32"),
                int_to_f32, [$abi], [$s], [$k] -> F32);
            modes!((Scalar::$k, $s, Scalar::F64, false), concat!("cvt_", $tag, "_f64"),
                int_to_f64, [$abi], [$s], [$k] -> F64);
            modes!((Scalar::F32, false, Scalar::$k, $s), concat!("cvt_f32_", $tag, "_sat"),
                float_to_int, [f32, $abi], [$s], [F32] -> $k);
            modes!((Scalar::F64, false, Scalar::$k, $s), concat!("cvt_f64_", $tag, "_sat"),
                float_to_int, [f64, $abi], [$s], [F64] -> $k);
        )*};
    }
    int_side!(
        i8, I8, true, "s8"; i8, I8, false, "u8";
        i16, I16, true, "s16"; i16, I16, false, "u16";
        i32, I32, true, "s32"; i32, I32, false, "u32";
        i64, I64, true, "s64"; i64, I64, false, "u64"
    );
    modes!((Scalar::F64, false, Scalar::F32, false), "cvt_f64_f32", f64_to_f32, [], [], [F64] -> F32);
}

#[cfg(test)]
mod tests {
    use super::super::convert as lookup;
    use super::*;

    fn modes() -> [FPRoundingMode; 4] {
        [
            FPRoundingMode::RTE,
            FPRoundingMode::RTZ,
            FPRoundingMode::RTP,
            FPRoundingMode::RTN,
        ]
    }

    /// Checks that `got` is the neighbour of `exact` that `mode` selects, given the nearest
    /// representable values below (`lo`) and above (`hi`) it (equal when exact).
    fn check_directed(
        got: f64,
        lo: f64,
        hi: f64,
        exact_is_lo: bool,
        mode: FPRoundingMode,
        nearest: f64,
    ) {
        if exact_is_lo {
            assert_eq!(got, lo);
            return;
        }
        let want = match mode {
            FPRoundingMode::RTE => nearest,
            FPRoundingMode::RTP => hi,
            FPRoundingMode::RTN => lo,
            FPRoundingMode::RTZ => {
                if hi <= 0.0 {
                    hi
                } else {
                    lo
                }
            }
        };
        assert_eq!(got, want, "mode {mode:?}: lo {lo:e} hi {hi:e}");
    }

    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    #[test]
    fn integers_to_float_round_in_every_mode() {
        let mut state = 0x9999_1234_5678_0001u64;
        let mut values: Vec<i64> = vec![
            0,
            1,
            -1,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
            (1 << 24) + 1,
            -(1 << 24) - 1,
            (1 << 53) + 1,
            -(1 << 53) - 1,
            i64::from(i32::MAX),
            i64::from(i32::MIN),
        ];
        for _ in 0..100_000 {
            let v = xorshift(&mut state) as i64;
            values.push(v >> (xorshift(&mut state) % 64));
        }
        for &v in &values {
            for mode in modes() {
                for signed in [true, false] {
                    let exact: i128 = if signed { v as i128 } else { v as u64 as i128 };
                    // f32 neighbours of the exact value.
                    let n32 = exact as f32;
                    let (lo32, hi32) = match cmp_int(f64::from(n32), exact) {
                        std::cmp::Ordering::Equal => (n32, n32),
                        std::cmp::Ordering::Less => (n32, n32.next_up()),
                        std::cmp::Ordering::Greater => (n32.next_down(), n32),
                    };
                    let f = lookup(Scalar::I64, signed, Scalar::F32, false, mode).unwrap();
                    assert_eq!(f.params, &[Scalar::I64]);
                    // SAFETY: [I64] -> F32.
                    let f: extern "C" fn(i64) -> f32 = unsafe { std::mem::transmute(f.addr) };
                    check_directed(
                        f64::from(f(v)),
                        f64::from(lo32),
                        f64::from(hi32),
                        lo32 == hi32,
                        mode,
                        f64::from(n32),
                    );
                    let n64 = exact as f64;
                    let (lo64, hi64) = match cmp_int(n64, exact) {
                        std::cmp::Ordering::Equal => (n64, n64),
                        std::cmp::Ordering::Less => (n64, n64.next_up()),
                        std::cmp::Ordering::Greater => (n64.next_down(), n64),
                    };
                    let g = lookup(Scalar::I64, signed, Scalar::F64, false, mode).unwrap();
                    // SAFETY: [I64] -> F64.
                    let g: extern "C" fn(i64) -> f64 = unsafe { std::mem::transmute(g.addr) };
                    check_directed(g(v), lo64, hi64, lo64 == hi64, mode, n64);
                    // 32-bit sources to f32.
                    let v32 = v as i32;
                    let e32: i128 = if signed {
                        v32 as i128
                    } else {
                        v32 as u32 as i128
                    };
                    let n = e32 as f32;
                    let (lo, hi) = match cmp_int(f64::from(n), e32) {
                        std::cmp::Ordering::Equal => (n, n),
                        std::cmp::Ordering::Less => (n, n.next_up()),
                        std::cmp::Ordering::Greater => (n.next_down(), n),
                    };
                    let h = lookup(Scalar::I32, signed, Scalar::F32, false, mode).unwrap();
                    // SAFETY: [I32] -> F32.
                    let h: extern "C" fn(i32) -> f32 = unsafe { std::mem::transmute(h.addr) };
                    check_directed(
                        f64::from(h(v32)),
                        f64::from(lo),
                        f64::from(hi),
                        lo == hi,
                        mode,
                        f64::from(n),
                    );
                }
            }
        }
        // Spelled out: 2^24 + 1 is between two floats.
        let f = lookup(Scalar::I32, true, Scalar::F32, false, FPRoundingMode::RTP).unwrap();
        // SAFETY: [I32] -> F32.
        let f: extern "C" fn(i32) -> f32 = unsafe { std::mem::transmute(f.addr) };
        assert_eq!(f(16_777_217), 16_777_218.0);
        assert_eq!(f(-16_777_217), -16_777_216.0);
        let u = lookup(Scalar::I64, false, Scalar::F32, false, FPRoundingMode::RTZ).unwrap();
        // SAFETY: [I64] -> F32.
        let u: extern "C" fn(i64) -> f32 = unsafe { std::mem::transmute(u.addr) };
        assert_eq!(u(-1), 18_446_742_974_197_923_840.0); // u64::MAX toward zero
    }

    #[test]
    fn f64_to_f32_rounds_in_every_mode() {
        let mut state = 0x5555_1234_5678_0003u64;
        let mut values = vec![
            0.0,
            -0.0,
            1e-50,
            -1e-50,
            1e300,
            -1e300,
            3.4028235677973366e38,
            1.0 + 1e-12,
            f64::from(f32::MAX),
            f64::from(f32::MIN_POSITIVE) * 0.75,
            0.1,
            -0.1,
        ];
        for _ in 0..200_000 {
            let b = xorshift(&mut state);
            // Exponents around the f32 range.
            let e = (b % 300) as i32 - 160;
            values.push(
                libm::scalbn(1.0 + (b >> 12) as f64 / 2f64.powi(52), e)
                    * if b & 1 == 0 { 1.0 } else { -1.0 },
            );
        }
        for &x in &values {
            for mode in modes() {
                let f = lookup(Scalar::F64, false, Scalar::F32, false, mode).unwrap();
                // SAFETY: [F64] -> F32.
                let f: extern "C" fn(f64) -> f32 = unsafe { std::mem::transmute(f.addr) };
                let got = f(x);
                let n = x as f32;
                let (lo, hi) = match f64::from(n).partial_cmp(&x).unwrap() {
                    std::cmp::Ordering::Equal => (n, n),
                    std::cmp::Ordering::Less => (n, n.next_up()),
                    std::cmp::Ordering::Greater => (n.next_down(), n),
                };
                if lo == hi {
                    assert_eq!(got.to_bits(), n.to_bits(), "{x:e} exact");
                    continue;
                }
                let want = match mode {
                    FPRoundingMode::RTE => n,
                    FPRoundingMode::RTP => hi,
                    FPRoundingMode::RTN => lo,
                    FPRoundingMode::RTZ => {
                        if x > 0.0 {
                            lo
                        } else {
                            hi
                        }
                    }
                };
                // Zero results keep the source's sign.
                let want = if want == 0.0 {
                    0.0f32.copysign(x as f32)
                } else {
                    want
                };
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{x:e} {mode:?}: {got:e} vs {want:e}"
                );
            }
        }
        let rtz = lookup(Scalar::F64, false, Scalar::F32, false, FPRoundingMode::RTZ).unwrap();
        // SAFETY: [F64] -> F32.
        let rtz: extern "C" fn(f64) -> f32 = unsafe { std::mem::transmute(rtz.addr) };
        assert_eq!(rtz(1e300), f32::MAX);
        assert_eq!(rtz(-1e300), f32::MIN);
        assert_eq!(rtz(f64::INFINITY), f32::INFINITY);
        assert!(rtz(f64::NAN).is_nan());
    }

    #[test]
    fn floats_to_integers_round_and_saturate() {
        let check = |x: f64, bits: u32, signed: bool, mode: FPRoundingMode, got: i128| {
            let (min, max): (i128, i128) = if signed {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            } else {
                (0, (1i128 << bits) - 1)
            };
            let want = if x.is_nan() {
                0
            } else {
                let r = match mode {
                    FPRoundingMode::RTE => x.round_ties_even(),
                    FPRoundingMode::RTZ => x.trunc(),
                    FPRoundingMode::RTP => x.ceil(),
                    FPRoundingMode::RTN => x.floor(),
                };
                if r.is_infinite() {
                    if r > 0.0 {
                        max
                    } else {
                        min
                    }
                } else {
                    // Exact for |r| < 2^127.
                    (r.clamp(-1e38, 1e38) as i128).clamp(min, max)
                }
            };
            assert_eq!(
                got,
                want,
                "{x:e} -> {}{bits} {mode:?}",
                if signed { "s" } else { "u" }
            );
        };
        let mut state = 0x7777_1234_5678_0005u64;
        let mut values = vec![
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            0.5,
            1.5,
            2.5,
            -0.5,
            -1.5,
            -2.5,
            127.5,
            128.0,
            255.5,
            -128.5,
            9.223_372_036_854_776e18,
            -9.223_372_036_854_776e18,
            1.8446744073709552e19,
            2147483647.5,
            -2147483648.5,
            4294967295.4,
            1e30,
            -1e30,
        ];
        for _ in 0..20_000 {
            let b = xorshift(&mut state);
            let e = (b % 70) as i32 - 4;
            values.push(
                libm::scalbn((b >> 11) as f64 / 2f64.powi(53), e)
                    * if b & 1 == 0 { 1.0 } else { -1.0 },
            );
        }
        for &x in &values {
            for mode in modes() {
                for signed in [true, false] {
                    let f8 = lookup(Scalar::F64, false, Scalar::I8, signed, mode).unwrap();
                    let f16 = lookup(Scalar::F64, false, Scalar::I16, signed, mode).unwrap();
                    let f32 = lookup(Scalar::F64, false, Scalar::I32, signed, mode).unwrap();
                    let f64_ = lookup(Scalar::F64, false, Scalar::I64, signed, mode).unwrap();
                    let g32 = lookup(Scalar::F32, false, Scalar::I32, signed, mode).unwrap();
                    // SAFETY: the signatures registered for these keys.
                    unsafe {
                        let f8: extern "C" fn(f64) -> i8 = std::mem::transmute(f8.addr);
                        let f16: extern "C" fn(f64) -> i16 = std::mem::transmute(f16.addr);
                        let f32: extern "C" fn(f64) -> i32 = std::mem::transmute(f32.addr);
                        let f64_: extern "C" fn(f64) -> i64 = std::mem::transmute(f64_.addr);
                        let g32: extern "C" fn(f32) -> i32 = std::mem::transmute(g32.addr);
                        let read = |v: i128, bits: u32| -> i128 {
                            if signed {
                                v
                            } else {
                                v & ((1i128 << bits) - 1)
                            }
                        };
                        check(x, 8, signed, mode, read(i128::from(f8(x)), 8));
                        check(x, 16, signed, mode, read(i128::from(f16(x)), 16));
                        check(x, 32, signed, mode, read(i128::from(f32(x)), 32));
                        check(x, 64, signed, mode, read(i128::from(f64_(x)), 64));
                        let x32 = x as f32;
                        check(
                            f64::from(x32),
                            32,
                            signed,
                            mode,
                            read(i128::from(g32(x32)), 32),
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_combination_is_registered() {
        let ints = [Scalar::I8, Scalar::I16, Scalar::I32, Scalar::I64];
        for mode in modes() {
            for &i in &ints {
                for signed in [true, false] {
                    for fl in [Scalar::F32, Scalar::F64] {
                        let a = lookup(i, signed, fl, false, mode).expect("int -> float");
                        assert_eq!((a.params, a.ret), (&[i][..], fl));
                        let b = lookup(fl, false, i, signed, mode).expect("float -> int");
                        assert_eq!((b.params, b.ret), (&[fl][..], i));
                        // Signedness of a float side is ignored.
                        assert_eq!(
                            lookup(fl, true, i, signed, mode).map(|f| f.symbol),
                            Some(b.symbol)
                        );
                    }
                }
            }
            assert!(lookup(Scalar::F64, false, Scalar::F32, false, mode).is_some());
        }
    }
}
