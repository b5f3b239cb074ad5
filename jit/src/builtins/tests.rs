//! Tests of the built-in table and of the integer and float functions against host
//! references: 256-bit mpmath values (testdata/reference.txt) for the transcendental
//! functions, exact 128-bit integer arithmetic for the integer functions, and the special
//! values of OpenCL C 7.5.1.
//!
//! Every function is called through [`opencl_std`], so the table's signatures are tested
//! together with the implementations.

use super::*;
use std::collections::HashSet;

/// Resolves `op` for `ty`, checks the signature, and casts the address to `F`.
///
/// # Safety
/// `F` must be the `extern "C"` signature matching `params -> ret`.
unsafe fn get<F: Copy>(op: ClOp, ty: Scalar, params: &[Scalar], ret: Scalar) -> F {
    let f = opencl_std(op as u32, ty).unwrap_or_else(|| panic!("{op:?} not provided for {ty:?}"));
    assert_eq!(f.params, params, "{op:?} {ty:?} params");
    assert_eq!(f.ret, ret, "{op:?} {ty:?} result");
    assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*const u8>());
    // SAFETY: the caller names the signature the table entry was just checked to have.
    unsafe { std::mem::transmute_copy::<*const u8, F>(&f.addr) }
}

type F32x1 = extern "C" fn(f32) -> f32;
type F32x2 = extern "C" fn(f32, f32) -> f32;
type F32x3 = extern "C" fn(f32, f32, f32) -> f32;
type F64x1 = extern "C" fn(f64) -> f64;
type F64x2 = extern "C" fn(f64, f64) -> f64;
type F64x3 = extern "C" fn(f64, f64, f64) -> f64;

fn f32_1(op: ClOp) -> F32x1 {
    // SAFETY: F32x1 is the signature for [F32] -> F32.
    unsafe { get(op, Scalar::F32, &[Scalar::F32], Scalar::F32) }
}
fn f32_2(op: ClOp) -> F32x2 {
    // SAFETY: F32x2 is the signature for [F32, F32] -> F32.
    unsafe { get(op, Scalar::F32, &[Scalar::F32; 2], Scalar::F32) }
}
fn f32_3(op: ClOp) -> F32x3 {
    // SAFETY: as above, three operands.
    unsafe { get(op, Scalar::F32, &[Scalar::F32; 3], Scalar::F32) }
}
fn f64_1(op: ClOp) -> F64x1 {
    // SAFETY: F64x1 is the signature for [F64] -> F64.
    unsafe { get(op, Scalar::F64, &[Scalar::F64], Scalar::F64) }
}
fn f64_2(op: ClOp) -> F64x2 {
    // SAFETY: F64x2 is the signature for [F64, F64] -> F64.
    unsafe { get(op, Scalar::F64, &[Scalar::F64; 2], Scalar::F64) }
}
fn f64_3(op: ClOp) -> F64x3 {
    // SAFETY: as above, three operands.
    unsafe { get(op, Scalar::F64, &[Scalar::F64; 3], Scalar::F64) }
}

/// Same value, same sign of zero, or both NaN.
fn same32(a: f32, b: f32) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}
fn same64(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits()
}

// ---------------------------------------------------------------------------------------
// The table

/// Float ops with their operand types (F = the float type itself).
const FLOAT_UNARY: &[ClOp] = &[
    ClOp::acos,
    ClOp::acosh,
    ClOp::acospi,
    ClOp::asin,
    ClOp::asinh,
    ClOp::asinpi,
    ClOp::atan,
    ClOp::atanh,
    ClOp::atanpi,
    ClOp::cbrt,
    ClOp::ceil,
    ClOp::cos,
    ClOp::cosh,
    ClOp::cospi,
    ClOp::erfc,
    ClOp::erf,
    ClOp::exp,
    ClOp::exp2,
    ClOp::exp10,
    ClOp::expm1,
    ClOp::fabs,
    ClOp::floor,
    ClOp::lgamma,
    ClOp::log,
    ClOp::log2,
    ClOp::log10,
    ClOp::log1p,
    ClOp::logb,
    ClOp::rint,
    ClOp::round,
    ClOp::rsqrt,
    ClOp::sin,
    ClOp::sinh,
    ClOp::sinpi,
    ClOp::sqrt,
    ClOp::tan,
    ClOp::tanh,
    ClOp::tanpi,
    ClOp::tgamma,
    ClOp::trunc,
    ClOp::half_cos,
    ClOp::half_exp,
    ClOp::half_exp2,
    ClOp::half_exp10,
    ClOp::half_log,
    ClOp::half_log2,
    ClOp::half_log10,
    ClOp::half_recip,
    ClOp::half_rsqrt,
    ClOp::half_sin,
    ClOp::half_sqrt,
    ClOp::half_tan,
    ClOp::native_cos,
    ClOp::native_exp,
    ClOp::native_exp2,
    ClOp::native_exp10,
    ClOp::native_log,
    ClOp::native_log2,
    ClOp::native_log10,
    ClOp::native_recip,
    ClOp::native_rsqrt,
    ClOp::native_sin,
    ClOp::native_sqrt,
    ClOp::native_tan,
    ClOp::degrees,
    ClOp::radians,
    ClOp::sign,
    ClOp::length,
    ClOp::normalize,
    ClOp::fast_length,
    ClOp::fast_normalize,
];
const FLOAT_BINARY: &[ClOp] = &[
    ClOp::atan2,
    ClOp::atan2pi,
    ClOp::copysign,
    ClOp::fdim,
    ClOp::fmax,
    ClOp::fmin,
    ClOp::fmod,
    ClOp::hypot,
    ClOp::maxmag,
    ClOp::minmag,
    ClOp::nextafter,
    ClOp::pow,
    ClOp::powr,
    ClOp::remainder,
    ClOp::half_divide,
    ClOp::half_powr,
    ClOp::native_divide,
    ClOp::native_powr,
    ClOp::fmax_common,
    ClOp::fmin_common,
    ClOp::step,
    ClOp::distance,
    ClOp::fast_distance,
];
const FLOAT_TERNARY: &[ClOp] = &[
    ClOp::fma,
    ClOp::mad,
    ClOp::fclamp,
    ClOp::mix,
    ClOp::smoothstep,
    ClOp::bitselect,
];

const INT_UNARY: &[ClOp] = &[
    ClOp::s_abs,
    ClOp::u_abs,
    ClOp::clz,
    ClOp::ctz,
    ClOp::popcount,
];
const INT_BINARY: &[ClOp] = &[
    ClOp::s_abs_diff,
    ClOp::u_abs_diff,
    ClOp::s_add_sat,
    ClOp::u_add_sat,
    ClOp::s_sub_sat,
    ClOp::u_sub_sat,
    ClOp::s_hadd,
    ClOp::u_hadd,
    ClOp::s_rhadd,
    ClOp::u_rhadd,
    ClOp::s_mul_hi,
    ClOp::u_mul_hi,
    ClOp::s_max,
    ClOp::u_max,
    ClOp::s_min,
    ClOp::u_min,
    ClOp::rotate,
];
const INT_TERNARY: &[ClOp] = &[
    ClOp::s_clamp,
    ClOp::u_clamp,
    ClOp::s_mad_hi,
    ClOp::u_mad_hi,
    ClOp::s_mad_sat,
    ClOp::u_mad_sat,
    ClOp::bitselect,
];

fn expect_entry(op: ClOp, key: Scalar, params: &[Scalar], ret: Scalar) {
    let f = opencl_std(op as u32, key).unwrap_or_else(|| panic!("{op:?} missing for {key:?}"));
    assert_eq!(f.params, params, "{op:?} for {key:?}");
    assert_eq!(f.ret, ret, "{op:?} for {key:?}");
    assert!(f.symbol.starts_with("cranecl_"), "{}", f.symbol);
    assert!(!f.addr.is_null());
}

#[test]
fn table_has_every_float_function() {
    use Scalar::*;
    for ty in [F32, F64] {
        for &op in FLOAT_UNARY {
            expect_entry(op, ty, &[ty], ty);
        }
        for &op in FLOAT_BINARY {
            expect_entry(op, ty, &[ty, ty], ty);
        }
        for &op in FLOAT_TERNARY {
            expect_entry(op, ty, &[ty, ty, ty], ty);
        }
        for op in [
            ClOp::fract,
            ClOp::frexp,
            ClOp::lgamma_r,
            ClOp::modf,
            ClOp::sincos,
        ] {
            expect_entry(op, ty, &[ty, Ptr], ty);
        }
        expect_entry(ClOp::remquo, ty, &[ty, ty, Ptr], ty);
        for op in [ClOp::ldexp, ClOp::pown, ClOp::rootn] {
            expect_entry(op, ty, &[ty, I32], ty);
        }
        expect_entry(ClOp::ilogb, ty, &[ty], I32);
    }
    expect_entry(ClOp::nan, F32, &[I32], F32);
    expect_entry(ClOp::nan, F64, &[I64], F64);
    // Vector-only and code-generator-owned instructions are absent.
    for op in [
        ClOp::cross,
        ClOp::select,
        ClOp::vloadn,
        ClOp::shuffle,
        ClOp::printf,
    ] {
        assert!(opencl_std(op as u32, F32).is_none(), "{op:?}");
    }
}

#[test]
fn table_has_every_integer_function() {
    use Scalar::*;
    for ty in [I8, I16, I32, I64] {
        for &op in INT_UNARY {
            expect_entry(op, ty, &[ty], ty);
        }
        for &op in INT_BINARY {
            expect_entry(op, ty, &[ty, ty], ty);
        }
        for &op in INT_TERNARY {
            expect_entry(op, ty, &[ty, ty, ty], ty);
        }
    }
    for (wide, narrow) in [(I16, I8), (I32, I16), (I64, I32)] {
        expect_entry(ClOp::s_upsample, wide, &[narrow, narrow], wide);
        expect_entry(ClOp::u_upsample, wide, &[narrow, narrow], wide);
    }
    assert!(opencl_std(ClOp::s_upsample as u32, I8).is_none());
    for op in [ClOp::s_mul24, ClOp::u_mul24] {
        expect_entry(op, I32, &[I32, I32], I32);
    }
    for op in [ClOp::s_mad24, ClOp::u_mad24] {
        expect_entry(op, I32, &[I32, I32, I32], I32);
    }
    // Float-only ops have no integer entries and vice versa.
    assert!(opencl_std(ClOp::sqrt as u32, I32).is_none());
    assert!(opencl_std(ClOp::s_max as u32, F32).is_none());
}

#[test]
fn symbols_are_unique_and_cover_the_table() {
    let syms = all_symbols();
    let mut names = HashSet::new();
    // (Two names may share an address: an optimised build folds identical bodies,
    // e.g. `length` of a scalar float is `fabs`.)
    for (name, _) in &syms {
        assert!(names.insert(*name), "duplicate symbol {name}");
        assert!(name.starts_with("cranecl_"));
    }
    for ((_, _), f) in &table().map {
        assert!(
            syms.iter().any(|(n, a)| *n == f.symbol && *a == f.addr),
            "{} not in all_symbols",
            f.symbol
        );
    }
    assert!(syms.len() > 250, "only {} symbols", syms.len());
}

// ---------------------------------------------------------------------------------------
// Float accuracy against mpmath references

/// OpenCL 3.0 full-profile ulp limits (OpenCL C 7.4), same for f32 and f64 here.
fn ulp_limit(name: &str) -> f64 {
    match name {
        "cbrt" | "log1p" | "rsqrt" => 2.0,
        "exp" | "exp2" | "exp10" | "expm1" | "log" | "log2" | "log10" => 3.0,
        "acos" | "acosh" | "asin" | "asinh" | "cos" | "cosh" | "cospi" | "hypot" | "sin"
        | "sinh" | "sinpi" => 4.0,
        "acospi" | "asinpi" | "atan" | "atanh" | "atanpi" | "tan" | "tanh" => 5.0,
        "atan2" | "atan2pi" | "tanpi" => 6.0,
        "erf" | "erfc" | "pow" | "pown" | "powr" | "rootn" | "tgamma" => 16.0,
        // OpenCL sets no limit for lgamma; hold it to something sane away from its zeros.
        "lgamma" => 64.0,
        other => panic!("no limit for {other}"),
    }
}

fn op_named(name: &str) -> ClOp {
    match name {
        "acos" => ClOp::acos,
        "acosh" => ClOp::acosh,
        "acospi" => ClOp::acospi,
        "asin" => ClOp::asin,
        "asinh" => ClOp::asinh,
        "asinpi" => ClOp::asinpi,
        "atan" => ClOp::atan,
        "atanh" => ClOp::atanh,
        "atanpi" => ClOp::atanpi,
        "cbrt" => ClOp::cbrt,
        "cos" => ClOp::cos,
        "cosh" => ClOp::cosh,
        "cospi" => ClOp::cospi,
        "erf" => ClOp::erf,
        "erfc" => ClOp::erfc,
        "exp" => ClOp::exp,
        "exp2" => ClOp::exp2,
        "exp10" => ClOp::exp10,
        "expm1" => ClOp::expm1,
        "log" => ClOp::log,
        "log2" => ClOp::log2,
        "log10" => ClOp::log10,
        "log1p" => ClOp::log1p,
        "rsqrt" => ClOp::rsqrt,
        "sin" => ClOp::sin,
        "sinh" => ClOp::sinh,
        "sinpi" => ClOp::sinpi,
        "tan" => ClOp::tan,
        "tanh" => ClOp::tanh,
        "tanpi" => ClOp::tanpi,
        "tgamma" => ClOp::tgamma,
        "lgamma" => ClOp::lgamma,
        "atan2" => ClOp::atan2,
        "atan2pi" => ClOp::atan2pi,
        "hypot" => ClOp::hypot,
        "pow" => ClOp::pow,
        "powr" => ClOp::powr,
        "pown" => ClOp::pown,
        "rootn" => ClOp::rootn,
        other => panic!("unknown function {other} in reference.txt"),
    }
}

/// Error of an f32 result in ulps of the (f64-rounded, exact enough) reference, as the
/// CTS measures it; an infinite result is exact only if the reference rounds to it.
fn ulps_f32(got: f32, reference: f64) -> f64 {
    if got.is_nan() || reference.is_nan() {
        return if got.is_nan() && reference.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if got.is_infinite() || reference.is_infinite() {
        return if got == reference as f32 {
            0.0
        } else {
            f64::INFINITY
        };
    }
    let e = if reference == 0.0 {
        -126
    } else {
        (libm::ilogb(reference)).max(-126)
    };
    let ulp = libm::scalbn(1.0, e - 23);
    (f64::from(got) - reference).abs() / ulp
}

/// Distance in representable f64 values between `got` and the correctly rounded
/// reference (the error is within this plus one half ulp).
fn ulps_f64(got: f64, reference: f64) -> f64 {
    if got.is_nan() || reference.is_nan() {
        return if got.is_nan() && reference.is_nan() {
            0.0
        } else {
            f64::INFINITY
        };
    }
    if got == reference {
        return 0.0;
    }
    if got.is_infinite() || reference.is_infinite() {
        return f64::INFINITY;
    }
    let ord = |x: f64| {
        let b = x.to_bits() as i64;
        if b < 0 {
            i64::MIN - b
        } else {
            b
        }
    };
    (i128::from(ord(got)) - i128::from(ord(reference))).unsigned_abs() as f64
}

#[test]
fn float_functions_meet_opencl_ulp_limits() {
    let data = include_str!("testdata/reference.txt");
    let mut worst: Vec<(String, f64, String)> = Vec::new();
    let mut failures = Vec::new();
    let mut checked = 0;
    for line in data.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let (name, ty) = (w[0], w[1]);
        let op = op_named(name);
        let reference = f64::from_bits(u64::from_str_radix(w[w.len() - 1], 16).unwrap());
        let int_arg = matches!(name, "pown" | "rootn");
        let (err, args) = if ty == "f32" {
            let a = f32::from_bits(u32::from_str_radix(w[2], 16).unwrap());
            let got = if int_arg {
                let n: i32 = w[3].parse().unwrap();
                // SAFETY: [F32, I32] -> F32.
                let f: extern "C" fn(f32, i32) -> f32 =
                    unsafe { get(op, Scalar::F32, &[Scalar::F32, Scalar::I32], Scalar::F32) };
                f(a, n)
            } else if w.len() == 5 {
                f32_2(op)(a, f32::from_bits(u32::from_str_radix(w[3], 16).unwrap()))
            } else {
                f32_1(op)(a)
            };
            (
                ulps_f32(got, reference),
                format!("{:?} -> {got:e}", &w[2..w.len() - 1]),
            )
        } else {
            let a = f64::from_bits(u64::from_str_radix(w[2], 16).unwrap());
            let got = if int_arg {
                let n: i32 = w[3].parse().unwrap();
                // SAFETY: [F64, I32] -> F64.
                let f: extern "C" fn(f64, i32) -> f64 =
                    unsafe { get(op, Scalar::F64, &[Scalar::F64, Scalar::I32], Scalar::F64) };
                f(a, n)
            } else if w.len() == 5 {
                f64_2(op)(a, f64::from_bits(u64::from_str_radix(w[3], 16).unwrap()))
            } else {
                f64_1(op)(a)
            };
            (
                ulps_f64(got, reference),
                format!("{:?} -> {got:e}", &w[2..w.len() - 1]),
            )
        };
        checked += 1;
        let key = format!("{name} {ty}");
        match worst.iter_mut().find(|(k, _, _)| *k == key) {
            Some(entry) if entry.1 < err => *entry = (key.clone(), err, args.clone()),
            Some(_) => {}
            None => worst.push((key.clone(), err, args.clone())),
        }
        if err > ulp_limit(name) {
            failures.push(format!(
                "{key}: {err:.2} ulp at {args}, reference {reference:e}"
            ));
        }
    }
    for (k, e, at) in &worst {
        println!("{k:>14}: max {e:.3} ulp at {at}");
    }
    assert!(checked > 10_000, "only {checked} reference points");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// Float special values (OpenCL C 7.5.1) and exact functions

#[test]
fn pi_trig_special_values() {
    let (sinpi, cospi, tanpi) = (f64_1(ClOp::sinpi), f64_1(ClOp::cospi), f64_1(ClOp::tanpi));
    let (sinpi32, cospi32, tanpi32) = (f32_1(ClOp::sinpi), f32_1(ClOp::cospi), f32_1(ClOp::tanpi));
    for n in [
        0.0f64,
        1.0,
        2.0,
        3.0,
        7.0,
        1e6 + 1.0,
        4503599627370497.0,
        1e300,
    ] {
        assert!(same64(sinpi(n), 0.0), "sinpi({n})");
        assert!(same64(sinpi(-n), -0.0), "sinpi(-{n})");
        if (n as f32).is_finite() {
            assert!(same32(sinpi32(n as f32), 0.0));
            assert!(same32(sinpi32(-n as f32), -0.0));
        }
        let odd = n < 9e15 && (n as u64) % 2 == 1;
        let c = if odd { -1.0 } else { 1.0 };
        assert_eq!(cospi(n), c, "cospi({n})");
        assert_eq!(cospi(-n), c, "cospi(-{n})");
        let t = if odd { -0.0 } else { 0.0 };
        assert!(same64(tanpi(n), t), "tanpi({n}) = {}", tanpi(n));
        assert!(same64(tanpi(-n), -t), "tanpi(-{n}) = {}", tanpi(-n));
    }
    for h in [0.5f64, 1.5, 2.5, -0.5, -1.5, 1e10 + 0.5] {
        assert!(same64(cospi(h), 0.0), "cospi({h})");
        assert!(same32(cospi32(h as f32), 0.0) || h.abs() > 1e7);
        let n = h.floor();
        let inf = if (n as i64) % 2 == 0 {
            f64::INFINITY
        } else {
            f64::NEG_INFINITY
        };
        assert_eq!(tanpi(h), inf, "tanpi({h})");
    }
    assert_eq!(sinpi(0.5), 1.0);
    assert_eq!(sinpi(-0.5), -1.0);
    assert_eq!(sinpi(1.5), -1.0);
    assert_eq!(tanpi(0.25), 1.0);
    assert_eq!(tanpi(-0.25), -1.0);
    assert_eq!(tanpi32(0.75), -1.0);
    assert!((sinpi(1.0 / 6.0) - 0.5).abs() <= f64::EPSILON / 2.0);
    assert!((cospi(1.0 / 3.0) - 0.5).abs() <= f64::EPSILON / 2.0);
    for f in [sinpi, cospi, tanpi] {
        assert!(f(f64::INFINITY).is_nan() && f(f64::NEG_INFINITY).is_nan() && f(f64::NAN).is_nan());
    }
    // Denormal arguments: sinpi(x) = pi x.
    let d = f64::from_bits(1000);
    assert_eq!(sinpi(d), std::f64::consts::PI * d);
    assert!(same32(tanpi32(-0.0), -0.0));
}

#[test]
fn inverse_pi_trig_special_values() {
    let atan2pi = f64_2(ClOp::atan2pi);
    let inf = f64::INFINITY;
    assert!(same64(atan2pi(0.0, 0.0), 0.0));
    assert!(same64(atan2pi(-0.0, 0.0), -0.0));
    assert_eq!(atan2pi(0.0, -0.0), 1.0);
    assert_eq!(atan2pi(-0.0, -0.0), -1.0);
    assert_eq!(atan2pi(0.0, -3.0), 1.0);
    assert_eq!(atan2pi(-0.0, -3.0), -1.0);
    assert!(same64(atan2pi(-0.0, 3.0), -0.0));
    assert_eq!(atan2pi(2.0, 0.0), 0.5);
    assert_eq!(atan2pi(-2.0, -0.0), -0.5);
    assert_eq!(atan2pi(2.0, -inf), 1.0);
    assert!(same64(atan2pi(-2.0, inf), -0.0));
    assert_eq!(atan2pi(inf, 5.0), 0.5);
    assert_eq!(atan2pi(inf, -inf), 0.75);
    assert_eq!(atan2pi(-inf, inf), -0.25);
    assert_eq!(atan2pi(1.0, 1.0), 0.25);
    assert_eq!(f64_1(ClOp::acospi)(-1.0), 1.0);
    assert_eq!(f64_1(ClOp::acospi)(0.0), 0.5);
    assert!(same64(f64_1(ClOp::acospi)(1.0), 0.0));
    assert_eq!(f64_1(ClOp::asinpi)(1.0), 0.5);
    assert!(same64(f64_1(ClOp::asinpi)(-0.0), -0.0));
    assert_eq!(f64_1(ClOp::atanpi)(-inf), -0.5);
    assert_eq!(f32_1(ClOp::atanpi)(f32::INFINITY), 0.5);
    assert_eq!(f32_1(ClOp::atanpi)(1.0), 0.25);
}

#[test]
fn exp10_is_exact_at_integers_and_handles_range_ends() {
    let exp10 = f64_1(ClOp::exp10);
    for n in -22..=22 {
        let exact: f64 = format!("1e{n}").parse().unwrap();
        assert_eq!(exp10(f64::from(n)), exact, "exp10({n})");
    }
    assert_eq!(f32_1(ClOp::exp10)(10.0), 1e10);
    assert_eq!(exp10(309.0), f64::INFINITY);
    assert_eq!(exp10(-400.0), 0.0);
    assert_eq!(exp10(f64::NEG_INFINITY), 0.0);
    assert!(exp10(f64::NAN).is_nan());
    let big = exp10(308.25);
    assert!(big.is_finite() && (big / 1.778_279_410_038_922_8e308 - 1.0).abs() < 1e-15);
    let sub = exp10(-320.5);
    assert!((sub / 3.16e-321 - 1.0).abs() < 2e-3, "{sub:e}");
}

#[test]
fn pown_rootn_powr_special_values() {
    // SAFETY: [F64, I32] -> F64.
    let pown: extern "C" fn(f64, i32) -> f64 = unsafe {
        get(
            ClOp::pown,
            Scalar::F64,
            &[Scalar::F64, Scalar::I32],
            Scalar::F64,
        )
    };
    // SAFETY: [F64, I32] -> F64.
    let rootn: extern "C" fn(f64, i32) -> f64 = unsafe {
        get(
            ClOp::rootn,
            Scalar::F64,
            &[Scalar::F64, Scalar::I32],
            Scalar::F64,
        )
    };
    // SAFETY: [F32, I32] -> F32.
    let rootn32: extern "C" fn(f32, i32) -> f32 = unsafe {
        get(
            ClOp::rootn,
            Scalar::F32,
            &[Scalar::F32, Scalar::I32],
            Scalar::F32,
        )
    };
    let powr = f64_2(ClOp::powr);
    let inf = f64::INFINITY;
    assert_eq!(pown(f64::NAN, 0), 1.0);
    assert_eq!(pown(-0.0, -3), -inf);
    assert_eq!(pown(-0.0, -2), inf);
    assert!(same64(pown(-0.0, 3), -0.0));
    assert!(same64(pown(-0.0, 2), 0.0));
    assert_eq!(pown(-2.0, 3), -8.0);
    assert_eq!(pown(3.0, 40), 12157665459056928801.0);
    assert_eq!(pown(2.0, -1074), f64::from_bits(1));

    assert!(rootn(1.0, 0).is_nan());
    assert!(rootn(-8.0, 2).is_nan());
    assert_eq!(rootn(-8.0, 3), -2.0);
    assert_eq!(rootn(-0.0, -3), -inf);
    assert_eq!(rootn(-0.0, -2), inf);
    assert!(same64(rootn(-0.0, 3), -0.0));
    assert!(same64(rootn(-0.0, 4), 0.0));
    assert_eq!(rootn(-inf, 3), -inf);
    assert!(same64(rootn(-inf, -3), -0.0));
    assert_eq!(rootn(inf, -2), 0.0);
    assert_eq!(rootn(81.0, 4), 3.0);
    assert_eq!(rootn(1024.0, 10), 2.0);
    assert_eq!(rootn(0.25, -2), 2.0);
    assert_eq!(rootn(f64::MAX, 1), f64::MAX);
    assert_eq!(rootn32(-32.0, 5), -2.0);
    assert_eq!(rootn32(1e-40, 1), 1e-40);
    assert_eq!(rootn(f64::from_bits(1), 3), 2f64.powi(-358)); // 2^-1074 = (2^-358)^3
    assert_eq!(rootn(f64::from_bits(1), -6), 2f64.powi(179));
    assert_eq!(rootn(2f64.powi(-1000), 5), 2f64.powi(-200));

    for (x, y) in [
        (-1.0, 2.0),
        (0.0, 0.0),
        (-0.0, -0.0),
        (inf, 0.0),
        (1.0, inf),
        (1.0, -inf),
    ] {
        assert!(powr(x, y).is_nan(), "powr({x}, {y})");
    }
    assert_eq!(powr(0.0, -1.0), inf);
    assert_eq!(powr(-0.0, -inf), inf);
    assert!(same64(powr(0.0, 3.0), 0.0));
    assert_eq!(powr(1.0, 1e300), 1.0);
    assert_eq!(powr(5.0, 0.0), 1.0);
    assert_eq!(powr(inf, -1.0), 0.0);
    assert_eq!(powr(inf, 2.0), inf);
    assert_eq!(powr(4.0, 0.5), 2.0);
    assert!(f32_2(ClOp::powr)(f32::NAN, 0.0).is_nan());
}

#[test]
fn min_max_mag_fdim_and_nan_handling() {
    for (fmax, fmin) in [
        (f64_2(ClOp::fmax), f64_2(ClOp::fmin)),
        (f64_2(ClOp::fmax_common), f64_2(ClOp::fmin_common)),
    ] {
        assert_eq!(fmax(f64::NAN, 2.0), 2.0);
        assert_eq!(fmax(2.0, f64::NAN), 2.0);
        assert_eq!(fmin(f64::NAN, -2.0), -2.0);
        assert!(fmax(f64::NAN, f64::NAN).is_nan());
        assert!(same64(fmax(-0.0, 0.0), 0.0) && same64(fmax(0.0, -0.0), 0.0));
        assert!(same64(fmin(-0.0, 0.0), -0.0) && same64(fmin(0.0, -0.0), -0.0));
        assert_eq!(fmax(-3.0, 1.0), 1.0);
        assert_eq!(fmin(-3.0, 1.0), -3.0);
    }
    let (maxmag, minmag) = (f32_2(ClOp::maxmag), f32_2(ClOp::minmag));
    assert_eq!(maxmag(-3.0, 2.0), -3.0);
    assert_eq!(minmag(-3.0, 2.0), 2.0);
    assert_eq!(maxmag(-2.0, 2.0), 2.0);
    assert_eq!(minmag(-2.0, 2.0), -2.0);
    assert_eq!(maxmag(f32::NAN, 1.0), 1.0);
    let fdim = f32_2(ClOp::fdim);
    assert_eq!(fdim(5.0, 3.0), 2.0);
    assert!(same32(fdim(3.0, 5.0), 0.0));
    assert!(fdim(f32::NAN, 1.0).is_nan() && fdim(1.0, f32::NAN).is_nan());
    let fclamp = f32_3(ClOp::fclamp);
    assert_eq!(fclamp(5.0, -1.0, 1.0), 1.0);
    assert_eq!(fclamp(-5.0, -1.0, 1.0), -1.0);
    assert_eq!(fclamp(0.5, -1.0, 1.0), 0.5);
}

#[test]
fn rounding_and_decomposition() {
    let (rint, round, trunc) = (f32_1(ClOp::rint), f32_1(ClOp::round), f32_1(ClOp::trunc));
    for (x, ri, ro, tr) in [
        (2.5f32, 2.0, 3.0, 2.0),
        (3.5, 4.0, 4.0, 3.0),
        (-2.5, -2.0, -3.0, -2.0),
        (-0.4, -0.0, -0.0, -0.0),
        (0.5, 0.0, 1.0, 0.0),
        (8388609.0, 8388609.0, 8388609.0, 8388609.0),
    ] {
        assert!(same32(rint(x), ri), "rint({x})");
        assert!(same32(round(x), ro), "round({x})");
        assert!(same32(trunc(x), tr), "trunc({x})");
    }
    assert_eq!(f64_1(ClOp::rint)(0.5000000000000001), 1.0);

    // SAFETY: [F32, Ptr] -> F32 with an f32 out-parameter.
    let fract: unsafe extern "C" fn(f32, *mut f32) -> f32 = unsafe {
        get(
            ClOp::fract,
            Scalar::F32,
            &[Scalar::F32, Scalar::Ptr],
            Scalar::F32,
        )
    };
    let mut ip = 0.0f32;
    // SAFETY: ip is a valid f32 out-parameter.
    let call = |x: f32, ip: &mut f32| unsafe { fract(x, ip) };
    assert_eq!(call(-1e-30, &mut ip), 0.999_999_94);
    assert_eq!(ip, -1.0);
    assert_eq!(call(2.75, &mut ip), 0.75);
    assert_eq!(ip, 2.0);
    assert!(same32(call(-0.0, &mut ip), -0.0) && same32(ip, -0.0));
    assert!(same32(call(f32::NEG_INFINITY, &mut ip), -0.0) && ip == f32::NEG_INFINITY);
    assert!(call(f32::NAN, &mut ip).is_nan() && ip.is_nan());

    // SAFETY: [F64, Ptr] -> F64 with an f64 out-parameter.
    let modf: unsafe extern "C" fn(f64, *mut f64) -> f64 = unsafe {
        get(
            ClOp::modf,
            Scalar::F64,
            &[Scalar::F64, Scalar::Ptr],
            Scalar::F64,
        )
    };
    let mut ip = 0.0f64;
    // SAFETY: ip is a valid f64 out-parameter.
    unsafe {
        assert_eq!(modf(-3.25, &mut ip), -0.25);
        assert_eq!(ip, -3.0);
        assert!(same64(modf(-4.0, &mut ip), -0.0));
        assert!(same64(modf(f64::INFINITY, &mut ip), 0.0) && ip == f64::INFINITY);
        // A null out-parameter is ignored rather than written.
        assert_eq!(modf(1.5, std::ptr::null_mut()), 0.5);
    }

    // SAFETY: [F32, Ptr] -> F32 with an i32 out-parameter.
    let frexp: unsafe extern "C" fn(f32, *mut i32) -> f32 = unsafe {
        get(
            ClOp::frexp,
            Scalar::F32,
            &[Scalar::F32, Scalar::Ptr],
            Scalar::F32,
        )
    };
    let mut e = 0i32;
    // SAFETY: e is a valid i32 out-parameter.
    unsafe {
        assert_eq!(frexp(12.0, &mut e), 0.75);
        assert_eq!(e, 4);
        let denorm = f32::from_bits(1); // 2^-149
        assert_eq!(frexp(denorm, &mut e), 0.5);
        assert_eq!(e, -148);
        assert!(same32(frexp(-0.0, &mut e), -0.0) && e == 0);
        assert_eq!(frexp(f32::INFINITY, &mut e), f32::INFINITY);
        assert_eq!(e, 0);
    }

    // SAFETY: [F32, I32] -> F32.
    let ldexp: extern "C" fn(f32, i32) -> f32 = unsafe {
        get(
            ClOp::ldexp,
            Scalar::F32,
            &[Scalar::F32, Scalar::I32],
            Scalar::F32,
        )
    };
    // SAFETY: [F64, I32] -> F64.
    let ldexp64: extern "C" fn(f64, i32) -> f64 = unsafe {
        get(
            ClOp::ldexp,
            Scalar::F64,
            &[Scalar::F64, Scalar::I32],
            Scalar::F64,
        )
    };
    assert_eq!(ldexp(1.0, -149), f32::from_bits(1));
    assert_eq!(ldexp(1.0, -150), 0.0); // tie to even: 0
    assert_eq!(ldexp(1.5, -149), f32::from_bits(2)); // 1.5 ulp rounds to 2
    assert_eq!(ldexp(f32::from_bits(3), -1), f32::from_bits(2)); // 1.5 -> 2 (even)
    assert_eq!(ldexp(f32::from_bits(1), 149), 1.0);
    assert_eq!(ldexp(1.0, 128), f32::INFINITY);
    assert_eq!(ldexp(f32::MIN_POSITIVE, i32::MAX), f32::INFINITY);
    assert!(same32(ldexp(-1.0, i32::MIN), -0.0));
    assert_eq!(ldexp64(f64::from_bits(3), -1), f64::from_bits(2));
    assert_eq!(ldexp64(1.0, -1074), f64::from_bits(1));
    assert_eq!(ldexp64(f64::from_bits(1), 2097), 2f64.powi(1023));
    assert_eq!(ldexp64(1.0, 1024), f64::INFINITY);

    // SAFETY: [F32] -> I32.
    let ilogb: extern "C" fn(f32) -> i32 =
        unsafe { get(ClOp::ilogb, Scalar::F32, &[Scalar::F32], Scalar::I32) };
    assert_eq!(ilogb(8.0), 3);
    assert_eq!(ilogb(f32::from_bits(1)), -149);
    assert_eq!(ilogb(0.0), i32::MIN);
    assert_eq!(ilogb(f32::NAN), i32::MAX);
    assert_eq!(ilogb(f32::INFINITY), i32::MAX);
    let logb = f64_1(ClOp::logb);
    assert_eq!(logb(0.0), f64::NEG_INFINITY);
    assert_eq!(logb(-f64::INFINITY), f64::INFINITY);
    assert_eq!(logb(f64::from_bits(1)), -1074.0);
    assert_eq!(logb(-0.1), -4.0);
}

#[test]
fn remainders_are_exact() {
    let (fmod, remainder) = (f64_2(ClOp::fmod), f64_2(ClOp::remainder));
    assert_eq!(fmod(5.5, 2.0), 1.5);
    assert_eq!(fmod(-5.5, 2.0), -1.5);
    assert!(same64(fmod(-4.0, 2.0), -0.0));
    assert_eq!(fmod(1e300, 3.0), 1e300 % 3.0);
    assert!(fmod(1.0, 0.0).is_nan() && fmod(f64::INFINITY, 1.0).is_nan());
    assert_eq!(fmod(1.0, f64::INFINITY), 1.0);
    assert_eq!(remainder(5.0, 2.0), 1.0);
    assert_eq!(remainder(7.0, 2.0), -1.0);
    let fmod32 = f32_2(ClOp::fmod);
    assert_eq!(fmod32(f32::MAX, f32::from_bits(1)), 0.0);
    assert_eq!(fmod32(7.5, 2.0), 1.5);

    // SAFETY: [F32, F32, Ptr] -> F32 with an i32 out-parameter.
    let remquo: unsafe extern "C" fn(f32, f32, *mut i32) -> f32 = unsafe {
        get(
            ClOp::remquo,
            Scalar::F32,
            &[Scalar::F32, Scalar::F32, Scalar::Ptr],
            Scalar::F32,
        )
    };
    let mut q = 99i32;
    // SAFETY: q is a valid i32 out-parameter.
    unsafe {
        assert_eq!(remquo(10.0, 3.0, &mut q), 1.0);
        assert_eq!(q, 3);
        assert_eq!(remquo(-11.0, 3.0, &mut q), 1.0);
        assert_eq!(q, -4);
        // Quotient 1000 / 1 = 1000: the low 7 bits (1000 & 127 = 104) are kept.
        assert_eq!(remquo(1000.0, 1.0, &mut q), 0.0);
        assert_eq!(q & 127, 1000 & 127);
        assert!(remquo(1.0, 0.0, &mut q).is_nan());
        assert_eq!(q, 0);
    }
}

#[test]
fn fma_is_fused_and_mad_is_not() {
    let (fma, mad) = (f64_3(ClOp::fma), f64_3(ClOp::mad));
    let a = 1.0 + f64::EPSILON;
    // a*a = 1 + 2e + e^2: the e^2 term survives only in the fused form.
    assert_eq!(
        fma(a, a, -(1.0 + 2.0 * f64::EPSILON)),
        f64::EPSILON * f64::EPSILON
    );
    assert_eq!(mad(a, a, -(1.0 + 2.0 * f64::EPSILON)), 0.0);
    let fma32 = f32_3(ClOp::fma);
    let b = 1.0 + f32::EPSILON;
    assert_eq!(
        fma32(b, b, -(1.0 + 2.0 * f32::EPSILON)),
        f32::EPSILON * f32::EPSILON
    );
}

#[test]
fn nan_payload_and_common_functions() {
    // SAFETY: [I32] -> F32.
    let nan32: extern "C" fn(i32) -> f32 =
        unsafe { get(ClOp::nan, Scalar::F32, &[Scalar::I32], Scalar::F32) };
    // SAFETY: [I64] -> F64.
    let nan64: extern "C" fn(i64) -> f64 =
        unsafe { get(ClOp::nan, Scalar::F64, &[Scalar::I64], Scalar::F64) };
    assert!(nan32(0).is_nan() && nan32(-1).is_nan());
    assert_eq!(nan32(0x1234).to_bits(), 0x7fc0_1234);
    assert_eq!(nan64(0x1234_5678_9abc).to_bits(), 0x7ff8_1234_5678_9abc);

    let sign = f32_1(ClOp::sign);
    assert_eq!(sign(3.0), 1.0);
    assert_eq!(sign(-1e-40), -1.0);
    assert!(same32(sign(-0.0), -0.0) && same32(sign(0.0), 0.0));
    assert!(same32(sign(f32::NAN), 0.0));
    let step = f32_2(ClOp::step);
    assert_eq!(step(1.0, 0.5), 0.0);
    assert_eq!(step(1.0, 1.0), 1.0);
    let smoothstep = f32_3(ClOp::smoothstep);
    assert_eq!(smoothstep(0.0, 1.0, -1.0), 0.0);
    assert_eq!(smoothstep(0.0, 1.0, 2.0), 1.0);
    assert_eq!(smoothstep(0.0, 2.0, 1.0), 0.5);
    assert_eq!(smoothstep(0.0, 4.0, 1.0), 0.156_25);
    let mix = f64_3(ClOp::mix);
    assert_eq!(mix(2.0, 4.0, 0.25), 2.5);
    assert_eq!(f32_1(ClOp::degrees)(std::f32::consts::PI), 180.0);
    assert_eq!(f64_1(ClOp::radians)(180.0), std::f64::consts::PI);
    assert_eq!(f32_1(ClOp::radians)(90.0), std::f32::consts::FRAC_PI_2);
    assert_eq!(f32_1(ClOp::degrees)(f32::MAX), f32::INFINITY);
    let bitselect = f32_3(ClOp::bitselect);
    assert_eq!(bitselect(1.0, -1.0, f32::from_bits(0x8000_0000)), -1.0);
    assert_eq!(f32_1(ClOp::normalize)(-5.0), -1.0);
    assert!(same32(f32_1(ClOp::normalize)(-0.0), -0.0));
    assert_eq!(f32_1(ClOp::fast_normalize)(f32::INFINITY), 1.0);
    assert_eq!(f32_2(ClOp::distance)(-1.0, 2.0), 3.0);
    assert_eq!(f64_1(ClOp::length)(-2.0), 2.0);
    assert_eq!(f32_1(ClOp::rsqrt)(4.0), 0.5);
    assert_eq!(f32_1(ClOp::rsqrt)(-0.0), f32::NEG_INFINITY);
    assert_eq!(f64_1(ClOp::native_recip)(4.0), 0.25);
    assert_eq!(f32_2(ClOp::half_divide)(1.0, 4.0), 0.25);
    assert_eq!(f64_2(ClOp::nextafter)(1.0, 2.0), 1.0 + f64::EPSILON);
    assert_eq!(f32_2(ClOp::nextafter)(0.0, -1.0), -f32::from_bits(1));
    assert_eq!(f32_2(ClOp::copysign)(2.0, -0.0), -2.0);
}

#[test]
fn out_parameter_functions() {
    // SAFETY: [F32, Ptr] -> F32 with an f32 out-parameter.
    let sincos: unsafe extern "C" fn(f32, *mut f32) -> f32 = unsafe {
        get(
            ClOp::sincos,
            Scalar::F32,
            &[Scalar::F32, Scalar::Ptr],
            Scalar::F32,
        )
    };
    // SAFETY: [F64, Ptr] -> F64 with an i32 out-parameter.
    let lgamma_r: unsafe extern "C" fn(f64, *mut i32) -> f64 = unsafe {
        get(
            ClOp::lgamma_r,
            Scalar::F64,
            &[Scalar::F64, Scalar::Ptr],
            Scalar::F64,
        )
    };
    let mut c = 0.0f32;
    let mut s = 0i32;
    // SAFETY: valid out-parameters.
    unsafe {
        let x = 0.7f32;
        assert_eq!(sincos(x, &mut c), f32_1(ClOp::sin)(x));
        assert_eq!(c, f32_1(ClOp::cos)(x));
        assert!((lgamma_r(-0.5, &mut s) - 1.265_512_123_484_645_4).abs() < 1e-14);
        assert_eq!(s, -1);
        assert!((lgamma_r(3.0, &mut s) - 2f64.ln()).abs() < 1e-15);
        assert_eq!(s, 1);
    }
}

/// Exhaustive-style check of the correctly rounded f32 functions against f64 arithmetic,
/// which is exact (or singly rounded) for them, over a spread of bit patterns.
#[test]
fn exact_f32_functions_match_f64_arithmetic() {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as u32
    };
    let (fmod, remainder, fdim, sqrt) = (
        f32_2(ClOp::fmod),
        f32_2(ClOp::remainder),
        f32_2(ClOp::fdim),
        f32_1(ClOp::sqrt),
    );
    let (divide, hypot) = (f32_2(ClOp::native_divide), f32_2(ClOp::hypot));
    // SAFETY: [F32, I32] -> F32.
    let ldexp: extern "C" fn(f32, i32) -> f32 = unsafe {
        get(
            ClOp::ldexp,
            Scalar::F32,
            &[Scalar::F32, Scalar::I32],
            Scalar::F32,
        )
    };
    for _ in 0..200_000 {
        let x = f32::from_bits(next());
        let y = f32::from_bits(next());
        let (xd, yd) = (f64::from(x), f64::from(y));
        assert!(
            same32(fmod(x, y), libm::fmod(xd, yd) as f32),
            "fmod({x:e}, {y:e})"
        );
        assert!(
            same32(remainder(x, y), libm::remainder(xd, yd) as f32),
            "remainder({x:e}, {y:e})"
        );
        assert!(same32(sqrt(x), xd.sqrt() as f32), "sqrt({x:e})");
        assert!(same32(divide(x, y), x / y));
        if !(x.is_nan() || y.is_nan()) {
            let d = if x > y { x - y } else { 0.0 };
            assert!(same32(fdim(x, y), d));
        }
        let h = hypot(x, y);
        assert!(same32(h, libm::hypot(xd, yd) as f32), "hypot({x:e}, {y:e})");
        let n = (next() % 600) as i32 - 300;
        let reference = libm::scalbn(xd, n) as f32;
        assert!(same32(ldexp(x, n), reference), "ldexp({x:e}, {n})");
    }
}

// ---------------------------------------------------------------------------------------
// Integers: every function against exact 128-bit arithmetic

/// Exact reference of an integer op for a `bits`-wide element; operands and result are
/// the raw bits (low `bits` of each u64).
fn int_reference(op: ClOp, bits: u32, a: u64, b: u64, c: u64) -> u64 {
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let s = |v: u64| -> i128 { ((v << (64 - bits)) as i64 >> (64 - bits)) as i128 };
    let u = |v: u64| -> i128 { (v & mask) as i128 };
    let smin = -(1i128 << (bits - 1));
    let smax = (1i128 << (bits - 1)) - 1;
    let umax = (1i128 << bits) - 1;
    let wrap = |v: i128| -> u64 { (v as u64) & mask };
    let r: i128 = match op {
        ClOp::s_abs => s(a).abs(),
        ClOp::u_abs => u(a),
        ClOp::s_abs_diff => (s(a) - s(b)).abs(),
        ClOp::u_abs_diff => (u(a) - u(b)).abs(),
        ClOp::s_add_sat => (s(a) + s(b)).clamp(smin, smax),
        ClOp::u_add_sat => (u(a) + u(b)).clamp(0, umax),
        ClOp::s_sub_sat => (s(a) - s(b)).clamp(smin, smax),
        ClOp::u_sub_sat => (u(a) - u(b)).clamp(0, umax),
        ClOp::s_hadd => (s(a) + s(b)).div_euclid(2),
        ClOp::u_hadd => (u(a) + u(b)) / 2,
        ClOp::s_rhadd => (s(a) + s(b) + 1).div_euclid(2),
        ClOp::u_rhadd => (u(a) + u(b) + 1) / 2,
        ClOp::s_clamp => s(a).max(s(b)).min(s(c)),
        ClOp::u_clamp => u(a).max(u(b)).min(u(c)),
        ClOp::clz => (0..bits).rev().take_while(|&i| a >> i & 1 == 0).count() as i128,
        ClOp::ctz => (0..bits).take_while(|&i| a >> i & 1 == 0).count() as i128,
        ClOp::popcount => (a & mask).count_ones() as i128,
        ClOp::s_mul_hi => (s(a) * s(b)) >> bits,
        ClOp::u_mul_hi => ((u(a) as u128 * u(b) as u128) >> bits) as i128,
        ClOp::s_mad_hi => ((s(a) * s(b)) >> bits) + s(c),
        ClOp::u_mad_hi => ((u(a) as u128 * u(b) as u128) >> bits) as i128 + u(c),
        ClOp::s_mad_sat => (s(a) * s(b) + s(c)).clamp(smin, smax),
        ClOp::u_mad_sat => (u(a) as u128 * u(b) as u128 + u(c) as u128).min(umax as u128) as i128,
        ClOp::s_max => s(a).max(s(b)),
        ClOp::u_max => u(a).max(u(b)),
        ClOp::s_min => s(a).min(s(b)),
        ClOp::u_min => u(a).min(u(b)),
        ClOp::rotate => {
            let k = (b & mask) % u64::from(bits);
            let v = a & mask;
            if k == 0 {
                v as i128
            } else {
                (((v << k) | (v >> (u64::from(bits) - k))) & mask) as i128
            }
        }
        ClOp::bitselect => ((a & !c) | (b & c)) as i128,
        other => panic!("no reference for {other:?}"),
    };
    wrap(r)
}

/// Edge values for a `bits`-wide element, as raw bits.
fn int_edges(bits: u32) -> Vec<u64> {
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let min = 1u64 << (bits - 1);
    let mut v = vec![
        0,
        1,
        2,
        3,
        mask,
        mask - 1,
        min,
        min - 1,
        min + 1,
        mask >> 2,
        0x55 & mask,
    ];
    v.push(u64::from(bits));
    v.push(u64::from(bits) + 1);
    v.push(0xdead_beef_cafe_f00d & mask);
    v
}

/// Runs every integer op of one width on edge values and pseudo-random operands.
macro_rules! check_int_width {
    ($name:ident, $t:ty, $key:ident, $bits:expr, $random:expr) => {
        #[test]
        fn $name() {
            let bits: u32 = $bits;
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            let mut state = 0x2545_f491_4f6c_dd1du64 ^ u64::from(bits);
            let mut next = move || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // Favour small magnitudes now and then so saturation and non-saturation
                // both occur.
                let v = state;
                if v & 3 == 0 {
                    (v >> 8) & 0xff
                } else {
                    v
                }
            };
            let mut operands: Vec<(u64, u64, u64)> = Vec::new();
            let edges = int_edges(bits);
            for &a in &edges {
                for &b in &edges {
                    for &c in &edges[..6] {
                        operands.push((a, b, c));
                    }
                }
            }
            for _ in 0..$random {
                operands.push((next() & mask, next() & mask, next() & mask));
            }
            if bits == 8 {
                // Every pair of 8-bit operands (the third from a pseudo-random stream).
                for a in 0..256u64 {
                    for b in 0..256u64 {
                        operands.push((a, b, next() & mask));
                    }
                }
            }
            let k = Scalar::$key;
            for &op in INT_UNARY {
                // SAFETY: [T] -> T.
                let f: extern "C" fn($t) -> $t = unsafe { get(op, k, &[k], k) };
                for &(a, _, _) in &operands {
                    let got = f(a as $t) as u64 & mask;
                    assert_eq!(got, int_reference(op, bits, a, 0, 0), "{op:?}({a:#x})");
                }
            }
            for &op in INT_BINARY {
                // SAFETY: [T, T] -> T.
                let f: extern "C" fn($t, $t) -> $t = unsafe { get(op, k, &[k, k], k) };
                for &(a, b, _) in &operands {
                    let got = f(a as $t, b as $t) as u64 & mask;
                    assert_eq!(
                        got,
                        int_reference(op, bits, a, b, 0),
                        "{op:?}({a:#x}, {b:#x})"
                    );
                }
            }
            for &op in INT_TERNARY {
                // SAFETY: [T, T, T] -> T.
                let f: extern "C" fn($t, $t, $t) -> $t = unsafe { get(op, k, &[k, k, k], k) };
                for &(a, b, c) in &operands {
                    if matches!(op, ClOp::s_clamp | ClOp::u_clamp) {
                        // OpenCL leaves lo > hi undefined.
                        let signed = op == ClOp::s_clamp;
                        let lo_gt_hi = if signed {
                            (b << (64 - bits)) as i64 > (c << (64 - bits)) as i64
                        } else {
                            b > c
                        };
                        if lo_gt_hi {
                            continue;
                        }
                    }
                    let got = f(a as $t, b as $t, c as $t) as u64 & mask;
                    let want = int_reference(op, bits, a, b, c);
                    assert_eq!(got, want, "{op:?}({a:#x}, {b:#x}, {c:#x})");
                }
            }
        }
    };
}

check_int_width!(int_functions_i8, i8, I8, 8, 20_000);
check_int_width!(int_functions_i16, i16, I16, 16, 20_000);
check_int_width!(int_functions_i32, i32, I32, 32, 20_000);
check_int_width!(int_functions_i64, i64, I64, 64, 20_000);

#[test]
fn integer_edge_cases_spelled_out() {
    use Scalar::*;
    // SAFETY: the signatures match the checked table entries.
    unsafe {
        let add_sat: extern "C" fn(i32, i32) -> i32 = get(ClOp::s_add_sat, I32, &[I32, I32], I32);
        assert_eq!(add_sat(i32::MAX, 1), i32::MAX);
        assert_eq!(add_sat(i32::MIN, -1), i32::MIN);
        let uadd_sat: extern "C" fn(i8, i8) -> i8 = get(ClOp::u_add_sat, I8, &[I8, I8], I8);
        assert_eq!(uadd_sat(-56, 100) as u8, 255); // 200 + 100 saturates at 255
        let abs: extern "C" fn(i64) -> i64 = get(ClOp::s_abs, I64, &[I64], I64);
        assert_eq!(abs(i64::MIN) as u64, 1u64 << 63);
        let clz: extern "C" fn(i16) -> i16 = get(ClOp::clz, I16, &[I16], I16);
        assert_eq!(clz(0), 16);
        let ctz: extern "C" fn(i64) -> i64 = get(ClOp::ctz, I64, &[I64], I64);
        assert_eq!(ctz(0), 64);
        let mul_hi: extern "C" fn(i64, i64) -> i64 = get(ClOp::u_mul_hi, I64, &[I64, I64], I64);
        assert_eq!(mul_hi(-1, -1) as u64, u64::MAX - 1);
        let smul_hi: extern "C" fn(i64, i64) -> i64 = get(ClOp::s_mul_hi, I64, &[I64, I64], I64);
        assert_eq!(smul_hi(i64::MIN, i64::MIN), 1 << 62);
        assert_eq!(smul_hi(-1, 1), -1);
        let rotate: extern "C" fn(i8, i8) -> i8 = get(ClOp::rotate, I8, &[I8, I8], I8);
        assert_eq!(rotate(0x81u8 as i8, 9), 0x03);
        assert_eq!(rotate(0x81u8 as i8, -1), 0xc0u8 as i8);
        let upsample: extern "C" fn(i8, i8) -> i16 = get(ClOp::s_upsample, I16, &[I8, I8], I16);
        assert_eq!(upsample(-1, 0x80u8 as i8), 0xff80u16 as i16);
        let upsample64: extern "C" fn(i32, i32) -> i64 =
            get(ClOp::u_upsample, I64, &[I32, I32], I64);
        assert_eq!(upsample64(0x1234_5678, -1) as u64, 0x1234_5678_ffff_ffff);
        let mul24: extern "C" fn(i32, i32) -> i32 = get(ClOp::s_mul24, I32, &[I32, I32], I32);
        assert_eq!(mul24(-3, 0x7f_ffff), -3 * 0x7f_ffff);
        assert_eq!(mul24(0x80_0000, 1), -0x80_0000); // bit 23 is the sign
        let umad24: extern "C" fn(i32, i32, i32) -> i32 =
            get(ClOp::u_mad24, I32, &[I32, I32, I32], I32);
        assert_eq!(umad24(0xff_ffff, 2, 1) as u32, 0x1ff_ffff);
        let mad_sat: extern "C" fn(i16, i16, i16) -> i16 =
            get(ClOp::s_mad_sat, I16, &[I16, I16, I16], I16);
        assert_eq!(mad_sat(300, 300, -10), i16::MAX);
        assert_eq!(mad_sat(-300, 300, 10), i16::MIN);
        assert_eq!(mad_sat(100, 100, i16::MIN), -22768);
        let umad_sat: extern "C" fn(i64, i64, i64) -> i64 =
            get(ClOp::u_mad_sat, I64, &[I64, I64, I64], I64);
        assert_eq!(umad_sat(-1, -1, -1) as u64, u64::MAX);
        let hadd: extern "C" fn(i32, i32) -> i32 = get(ClOp::u_hadd, I32, &[I32, I32], I32);
        assert_eq!(hadd(-1, -1) as u32, u32::MAX);
        let rhadd: extern "C" fn(i32, i32) -> i32 = get(ClOp::s_rhadd, I32, &[I32, I32], I32);
        assert_eq!(rhadd(i32::MAX, i32::MAX), i32::MAX);
        assert_eq!(rhadd(-3, 0), -1);
    }
}

// ---------------------------------------------------------------------------------------
// Vector geometric functions

#[test]
fn geometric_vector_entries_resolve() {
    use Scalar::*;
    for ty in [F32, F64] {
        for width in 2..=4 {
            for op in [ClOp::length, ClOp::fast_length] {
                let f = geometric(op as u32, ty, width).expect("length");
                assert_eq!((f.params, f.ret), (&[Ptr][..], ty));
            }
            for op in [
                ClOp::distance,
                ClOp::fast_distance,
                ClOp::normalize,
                ClOp::fast_normalize,
            ] {
                let f = geometric(op as u32, ty, width).expect("distance/normalize");
                assert_eq!((f.params, f.ret), (&[Ptr, Ptr][..], ty));
                assert!(all_symbols()
                    .iter()
                    .any(|(s, a)| *s == f.symbol && *a == f.addr));
            }
        }
        assert!(geometric(ClOp::length as u32, ty, 8).is_none());
        assert_eq!(
            geometric(ClOp::length as u32, ty, 1).map(|f| f.symbol),
            opencl_std(ClOp::length as u32, ty).map(|f| f.symbol)
        );
    }
}

#[test]
fn geometric_vector_functions_avoid_overflow_and_handle_specials() {
    use Scalar::*;
    // SAFETY: signatures as registered: [Ptr] -> T and [Ptr, Ptr] -> T.
    let (len3, len4_64, dist2, norm3, norm2_64) = unsafe {
        (
            std::mem::transmute::<*const u8, unsafe extern "C" fn(*const f32) -> f32>(
                geometric(ClOp::length as u32, F32, 3).unwrap().addr,
            ),
            std::mem::transmute::<*const u8, unsafe extern "C" fn(*const f64) -> f64>(
                geometric(ClOp::length as u32, F64, 4).unwrap().addr,
            ),
            std::mem::transmute::<*const u8, unsafe extern "C" fn(*const f32, *const f32) -> f32>(
                geometric(ClOp::distance as u32, F32, 2).unwrap().addr,
            ),
            std::mem::transmute::<*const u8, unsafe extern "C" fn(*const f32, *mut f32) -> f32>(
                geometric(ClOp::normalize as u32, F32, 3).unwrap().addr,
            ),
            std::mem::transmute::<*const u8, unsafe extern "C" fn(*const f64, *mut f64) -> f64>(
                geometric(ClOp::normalize as u32, F64, 2).unwrap().addr,
            ),
        )
    };
    // SAFETY: every pointer below addresses enough components.
    unsafe {
        assert_eq!(len3([3.0f32, 4.0, 12.0].as_ptr()), 13.0);
        assert_eq!(len3([3e30f32, 4e30, 12e30].as_ptr()), 13e30);
        assert_eq!(len3([3e-40f32, 4e-40, 0.0].as_ptr()), 5e-40);
        assert_eq!(len3([f32::MAX, f32::MAX, 0.0].as_ptr()), f32::INFINITY);
        assert_eq!(len3([f32::NAN, f32::INFINITY, 0.0].as_ptr()), f32::INFINITY);
        assert!(len3([f32::NAN, 1.0, 0.0].as_ptr()).is_nan());
        let big = len4_64([1e300, 1e300, 1e300, 1e300].as_ptr());
        assert_eq!(big, 2e300);
        let tiny = len4_64([3e-320, 4e-320, 0.0, 0.0].as_ptr());
        assert!((tiny / 5e-320 - 1.0).abs() < 1e-3, "{tiny:e}");
        assert_eq!(len4_64([1e-300, 1e300, 0.0, -0.0].as_ptr()), 1e300);
        assert_eq!(dist2([1.0f32, 1.0].as_ptr(), [4.0f32, 5.0].as_ptr()), 5.0);
        assert_eq!(
            dist2([f32::MAX, 0.0].as_ptr(), [-f32::MAX, 0.0].as_ptr()),
            f32::INFINITY
        );

        let mut out = [0.0f32; 3];
        let p = 2f32.powi(100);
        assert_eq!(
            norm3([3.0 * p, 0.0, -4.0 * p].as_ptr(), out.as_mut_ptr()),
            5.0 * p
        );
        assert_eq!(out, [0.6, 0.0, -0.8]);
        norm3([1e-45f32, 0.0, 0.0].as_ptr(), out.as_mut_ptr());
        assert_eq!(out, [1.0, 0.0, 0.0]);
        norm3([0.0f32, -0.0, 0.0].as_ptr(), out.as_mut_ptr());
        assert!(same32(out[0], 0.0) && same32(out[1], -0.0));
        norm3(
            [f32::NEG_INFINITY, 2.0, f32::INFINITY].as_ptr(),
            out.as_mut_ptr(),
        );
        let h = std::f32::consts::FRAC_1_SQRT_2;
        assert_eq!(out, [-h, 0.0, h]);
        norm3([f32::NAN, 2.0, 1.0].as_ptr(), out.as_mut_ptr());
        assert!(out.iter().all(|x| x.is_nan()));
        // In place.
        let mut v = [0.0f64, -7e-310];
        norm2_64(v.as_ptr(), v.as_mut_ptr());
        assert_eq!(v, [0.0, -1.0]);
        let mut v = [1e308f64, 1e308];
        norm2_64(v.as_ptr(), v.as_mut_ptr());
        for x in v {
            assert!(ulps_f64(x, std::f64::consts::FRAC_1_SQRT_2) <= 1.0, "{x}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Broad sweep against the C library's double-precision functions (an implementation
// independent of the `libm` crate) over a million f32 inputs spread over every binade.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod host_libm {
    #[link(name = "m")]
    extern "C" {
        pub fn acos(x: f64) -> f64;
        pub fn acosh(x: f64) -> f64;
        pub fn asin(x: f64) -> f64;
        pub fn asinh(x: f64) -> f64;
        pub fn atan(x: f64) -> f64;
        pub fn atanh(x: f64) -> f64;
        pub fn cbrt(x: f64) -> f64;
        pub fn cos(x: f64) -> f64;
        pub fn cosh(x: f64) -> f64;
        pub fn erf(x: f64) -> f64;
        pub fn erfc(x: f64) -> f64;
        pub fn exp(x: f64) -> f64;
        pub fn exp2(x: f64) -> f64;
        pub fn exp10(x: f64) -> f64;
        pub fn expm1(x: f64) -> f64;
        pub fn log(x: f64) -> f64;
        pub fn log2(x: f64) -> f64;
        pub fn log10(x: f64) -> f64;
        pub fn log1p(x: f64) -> f64;
        pub fn sin(x: f64) -> f64;
        pub fn sinh(x: f64) -> f64;
        pub fn tan(x: f64) -> f64;
        pub fn tanh(x: f64) -> f64;
        pub fn tgamma(x: f64) -> f64;
        pub fn lgamma(x: f64) -> f64;
        pub fn atan2(y: f64, x: f64) -> f64;
        pub fn hypot(x: f64, y: f64) -> f64;
        pub fn pow(x: f64, y: f64) -> f64;
        pub fn fmod(x: f64, y: f64) -> f64;
        pub fn remainder(x: f64, y: f64) -> f64;
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn f32_functions_agree_with_host_libm_over_all_binades() {
    type Host = unsafe extern "C" fn(f64) -> f64;
    let cases: [(ClOp, Host, f64); 24] = [
        (ClOp::acos, host_libm::acos, 4.0),
        (ClOp::acosh, host_libm::acosh, 4.0),
        (ClOp::asin, host_libm::asin, 4.0),
        (ClOp::asinh, host_libm::asinh, 4.0),
        (ClOp::atan, host_libm::atan, 5.0),
        (ClOp::atanh, host_libm::atanh, 5.0),
        (ClOp::cbrt, host_libm::cbrt, 2.0),
        (ClOp::cos, host_libm::cos, 4.0),
        (ClOp::cosh, host_libm::cosh, 4.0),
        (ClOp::erf, host_libm::erf, 16.0),
        (ClOp::erfc, host_libm::erfc, 16.0),
        (ClOp::exp, host_libm::exp, 3.0),
        (ClOp::exp2, host_libm::exp2, 3.0),
        (ClOp::exp10, host_libm::exp10, 3.0),
        (ClOp::expm1, host_libm::expm1, 3.0),
        (ClOp::log, host_libm::log, 3.0),
        (ClOp::log2, host_libm::log2, 3.0),
        (ClOp::log10, host_libm::log10, 3.0),
        (ClOp::log1p, host_libm::log1p, 2.0),
        (ClOp::sin, host_libm::sin, 4.0),
        (ClOp::sinh, host_libm::sinh, 4.0),
        (ClOp::tan, host_libm::tan, 5.0),
        (ClOp::tanh, host_libm::tanh, 5.0),
        (ClOp::tgamma, host_libm::tgamma, 16.0),
    ];
    // 2^20 inputs per function: every 4096th bit pattern, offset so the low mantissa bits
    // vary too.
    for (op, host, limit) in cases {
        let f = f32_1(op);
        let mut worst = (0.0f64, 0.0f32);
        for k in 0u32..1 << 20 {
            let x = f32::from_bits(k.wrapping_mul(4096).wrapping_add(k % 4093));
            // SAFETY: a plain C math function of one double.
            let reference = unsafe { host(f64::from(x)) };
            let err = ulps_f32(f(x), reference);
            if err > worst.0 {
                worst = (err, x);
            }
        }
        println!("{op:?}: max {:.3} ulp at {:e}", worst.0, worst.1);
        assert!(
            worst.0 <= limit,
            "{op:?}: {:.2} ulp at {:e}",
            worst.0,
            worst.1
        );
    }
}

/// The f32 pow family (its own f64 core, not libm's pow) over a million operand pairs:
/// random bit patterns and moderate values, against the host's double `pow`.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn f32_pow_family_agrees_with_host_pow() {
    let (pow, powr) = (f32_2(ClOp::pow), f32_2(ClOp::powr));
    // SAFETY: [F32, I32] -> F32.
    let (pown, rootn) = unsafe {
        (
            get::<extern "C" fn(f32, i32) -> f32>(
                ClOp::pown,
                Scalar::F32,
                &[Scalar::F32, Scalar::I32],
                Scalar::F32,
            ),
            get::<extern "C" fn(f32, i32) -> f32>(
                ClOp::rootn,
                Scalar::F32,
                &[Scalar::F32, Scalar::I32],
                Scalar::F32,
            ),
        )
    };
    let mut state = 0xfeed_beef_1234_5678u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut worst = [
        (0.0f64, String::new()),
        (0.0, String::new()),
        (0.0, String::new()),
        (0.0, String::new()),
    ];
    let mut note = |i: usize, err: f64, what: String| {
        if err > worst[i].0 {
            worst[i] = (err, what);
        }
    };
    for k in 0..1_000_000u32 {
        let b = next();
        let (x, y) = if k % 2 == 0 {
            (f32::from_bits(b as u32), f32::from_bits((b >> 32) as u32))
        } else {
            let x = f32::from_bits(0x3000_0000 + (b as u32 % 0x1e00_0000));
            let y = ((b >> 32) as i32 as f32) / 2f32.powi(24) * 40.0;
            (if b & 1 == 0 { x } else { -x }, y)
        };
        let (xd, yd) = (f64::from(x), f64::from(y));
        // SAFETY: plain C math functions.
        let reference = unsafe { host_libm::pow(xd, yd) };
        note(
            0,
            ulps_f32(pow(x, y), reference),
            format!("pow({x:e}, {y:e})"),
        );
        if x >= 0.0
            && !(x == 0.0 && y == 0.0)
            && !(x.is_infinite() && y == 0.0)
            && !(x == 1.0 && y.is_infinite())
        {
            note(
                1,
                ulps_f32(powr(x, y), reference),
                format!("powr({x:e}, {y:e})"),
            );
        }
        let n = (b >> 40) as i32 % 64;
        // SAFETY: as above.
        let reference = unsafe { host_libm::pow(xd, f64::from(n)) };
        note(
            2,
            ulps_f32(pown(x, n), reference),
            format!("pown({x:e}, {n})"),
        );
        if n != 0 && !(x < 0.0 && n % 2 == 0) && x != 0.0 && x.is_finite() {
            // SAFETY: as above.
            let r = unsafe { host_libm::pow(xd.abs(), 1.0 / f64::from(n)) };
            let r = if x < 0.0 { -r } else { r };
            note(3, ulps_f32(rootn(x, n), r), format!("rootn({x:e}, {n})"));
        }
    }
    for (name, (err, at)) in ["pow", "powr", "pown", "rootn"].iter().zip(&worst) {
        println!("{name}: max {err:.3} ulp at {at}");
        assert!(*err <= 16.0, "{name}: {err} ulp at {at}");
    }
}

/// Same sweep for the f64 functions over random bit patterns: the distance to the host's
/// result must stay within the OpenCL limit plus 2 (glibc's own error: its `cbrt` is off by
/// up to 3 ulp where ours is correctly rounded), and NaN/inf results must agree.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn f64_functions_agree_with_host_libm() {
    type Host = unsafe extern "C" fn(f64) -> f64;
    type Host2 = unsafe extern "C" fn(f64, f64) -> f64;
    let unary: [(ClOp, Host, f64); 25] = [
        (ClOp::acos, host_libm::acos, 4.0),
        (ClOp::acosh, host_libm::acosh, 4.0),
        (ClOp::asin, host_libm::asin, 4.0),
        (ClOp::asinh, host_libm::asinh, 4.0),
        (ClOp::atan, host_libm::atan, 5.0),
        (ClOp::atanh, host_libm::atanh, 5.0),
        (ClOp::cbrt, host_libm::cbrt, 2.0),
        (ClOp::cos, host_libm::cos, 4.0),
        (ClOp::cosh, host_libm::cosh, 4.0),
        (ClOp::erf, host_libm::erf, 16.0),
        (ClOp::erfc, host_libm::erfc, 16.0),
        (ClOp::exp, host_libm::exp, 3.0),
        (ClOp::exp2, host_libm::exp2, 3.0),
        (ClOp::exp10, host_libm::exp10, 3.0),
        (ClOp::expm1, host_libm::expm1, 3.0),
        (ClOp::log, host_libm::log, 3.0),
        (ClOp::log2, host_libm::log2, 3.0),
        (ClOp::log10, host_libm::log10, 3.0),
        (ClOp::log1p, host_libm::log1p, 2.0),
        (ClOp::sin, host_libm::sin, 4.0),
        (ClOp::sinh, host_libm::sinh, 4.0),
        (ClOp::tan, host_libm::tan, 5.0),
        (ClOp::tanh, host_libm::tanh, 5.0),
        (ClOp::tgamma, host_libm::tgamma, 16.0),
        (ClOp::lgamma, host_libm::lgamma, f64::INFINITY),
    ];
    let mut state = 0x0123_4567_89ab_cdefu64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    // Random bit patterns are mostly huge or tiny; mix in values of moderate size.
    let mut sample = move || {
        let b = next();
        if b & 1 == 0 {
            f64::from_bits(b)
        } else {
            let e = ((b >> 1) % 80) as i32 - 40;
            f64::from_bits((b >> 12) | 0x3ff0_0000_0000_0000)
                * 2f64.powi(e)
                * if b & 2 == 0 { 1.0 } else { -1.0 }
        }
    };
    let mut failures = Vec::new();
    for (op, host, limit) in unary {
        let f = f64_1(op);
        let mut worst = (0.0f64, 0.0f64);
        for _ in 0..1 << 18 {
            let x = sample();
            // SAFETY: a plain C math function of one double.
            let reference = unsafe { host(x) };
            let got = f(x);
            let err = if op == ClOp::lgamma && reference.is_finite() && got.is_finite() {
                0.0 // no OpenCL limit; only NaN/inf agreement is checked
            } else {
                ulps_f64(got, reference)
            };
            if err > worst.0 {
                worst = (err, x);
            }
        }
        println!("{op:?}: max {:.0} ulp from host at {:e}", worst.0, worst.1);
        if worst.0 > limit + 2.0 {
            failures.push(format!("{op:?}: {} ulp at {:e}", worst.0, worst.1));
        }
    }
    let binary: [(ClOp, Host2, f64); 5] = [
        (ClOp::atan2, host_libm::atan2, 6.0),
        (ClOp::hypot, host_libm::hypot, 4.0),
        (ClOp::pow, host_libm::pow, 16.0),
        (ClOp::fmod, host_libm::fmod, 0.0),
        (ClOp::remainder, host_libm::remainder, 0.0),
    ];
    for (op, host, limit) in binary {
        let f = f64_2(op);
        let mut worst = (0.0f64, 0.0f64, 0.0f64);
        for _ in 0..1 << 18 {
            let (x, y) = (sample(), sample());
            // SAFETY: a plain C math function of two doubles.
            let reference = unsafe { host(x, y) };
            let err = ulps_f64(f(x, y), reference);
            if err > worst.0 {
                worst = (err, x, y);
            }
        }
        println!(
            "{op:?}: max {:.0} ulp from host at ({:e}, {:e})",
            worst.0, worst.1, worst.2
        );
        if worst.0 > limit {
            failures.push(format!(
                "{op:?}: {} ulp at ({:e}, {:e})",
                worst.0, worst.1, worst.2
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn domain_errors_and_poles() {
    let inf = f64::INFINITY;
    let nan_cases: &[(ClOp, f64)] = &[
        (ClOp::acos, 2.0),
        (ClOp::asin, -2.0),
        (ClOp::acosh, 0.5),
        (ClOp::acosh, -5.0),
        (ClOp::acosh, -6603.9),
        (ClOp::acosh, -1e30),
        (ClOp::acospi, 1.5),
        (ClOp::asinpi, -1.5),
        (ClOp::atanh, 2.0),
        (ClOp::log, -1.0),
        (ClOp::log2, -inf),
        (ClOp::log10, -1e-30),
        (ClOp::log1p, -2.0),
        (ClOp::sqrt, -1.0),
        (ClOp::rsqrt, -1.0),
        (ClOp::tgamma, -1.0),
        (ClOp::tgamma, -inf),
        (ClOp::sin, inf),
        (ClOp::cos, -inf),
        (ClOp::tan, inf),
    ];
    for &(op, x) in nan_cases {
        assert!(f64_1(op)(x).is_nan(), "{op:?}({x}) f64");
        assert!(f32_1(op)(x as f32).is_nan(), "{op:?}({x}) f32");
    }
    let exact: &[(ClOp, f64, f64)] = &[
        (ClOp::log, 0.0, -inf),
        (ClOp::log, -0.0, -inf),
        (ClOp::log2, 0.0, -inf),
        (ClOp::log1p, -1.0, -inf),
        (ClOp::atanh, 1.0, inf),
        (ClOp::atanh, -1.0, -inf),
        (ClOp::tgamma, 0.0, inf),
        (ClOp::tgamma, -0.0, -inf),
        (ClOp::lgamma, 0.0, inf),
        (ClOp::exp, -inf, 0.0),
        (ClOp::exp2, 1024.0, inf),
        (ClOp::exp10, inf, inf),
        (ClOp::expm1, -inf, -1.0),
        (ClOp::cbrt, -27.0, -3.0),
        (ClOp::acosh, 1.0, 0.0),
        (ClOp::erf, inf, 1.0),
        (ClOp::erfc, -inf, 2.0),
        (ClOp::cosh, -inf, inf),
        (ClOp::tanh, -inf, -1.0),
        (ClOp::atan, inf, std::f64::consts::FRAC_PI_2),
    ];
    for &(op, x, want) in exact {
        assert!(
            same64(f64_1(op)(x), want),
            "{op:?}({x}) f64 = {}",
            f64_1(op)(x)
        );
        let got32 = f32_1(op)(x as f32);
        assert!(same32(got32, want as f32), "{op:?}({x}) f32 = {got32}");
    }
    // Signed zeros pass through the odd functions.
    for op in [
        ClOp::asin,
        ClOp::asinh,
        ClOp::asinpi,
        ClOp::atan,
        ClOp::atanh,
        ClOp::atanpi,
        ClOp::cbrt,
        ClOp::erf,
        ClOp::expm1,
        ClOp::log1p,
        ClOp::sin,
        ClOp::sinh,
        ClOp::sinpi,
        ClOp::tan,
        ClOp::tanh,
        ClOp::tanpi,
        ClOp::sqrt,
    ] {
        assert!(same64(f64_1(op)(-0.0), -0.0), "{op:?}(-0) f64");
        assert!(same32(f32_1(op)(-0.0), -0.0), "{op:?}(-0) f32");
    }
}

/// Rough per-call cost of a few functions (`cargo test -p cranecl-jit call_cost --
/// --ignored --nocapture`); informational, asserts nothing.
#[test]
#[ignore]
fn call_cost_report() {
    for op in [
        ClOp::sin,
        ClOp::exp,
        ClOp::log,
        ClOp::sinpi,
        ClOp::tan,
        ClOp::rsqrt,
    ] {
        let f = f32_1(op);
        let t = std::time::Instant::now();
        let mut acc = 0.0f32;
        for k in 0..2_000_000u32 {
            acc += f(k as f32 * 1e-3);
        }
        println!(
            "{op:?} f32: {:.1} ns/call ({acc})",
            t.elapsed().as_nanos() as f64 / 2e6
        );
    }
    let f = f32_2(ClOp::pow);
    let t = std::time::Instant::now();
    let mut acc = 0.0f32;
    for k in 0..2_000_000u32 {
        acc += f(k as f32 * 1e-3, 1.3);
    }
    println!(
        "pow f32: {:.1} ns/call ({acc})",
        t.elapsed().as_nanos() as f64 / 2e6
    );
}

#[test]
fn hypot_pow_atan2_special_values() {
    let inf = f64::INFINITY;
    let nan = f64::NAN;
    for (x, y) in [(inf, nan), (nan, -inf), (-inf, 1.0), (3.0, inf)] {
        assert_eq!(f64_2(ClOp::hypot)(x, y), inf, "hypot({x}, {y})");
        assert_eq!(f32_2(ClOp::hypot)(x as f32, y as f32), f32::INFINITY);
    }
    assert!(f64_2(ClOp::hypot)(nan, 1.0).is_nan());
    let pow = f64_2(ClOp::pow);
    assert!(same64(pow(-inf, -3.0), -0.0));
    assert_eq!(pow(-inf, 3.0), -inf);
    assert_eq!(pow(-1.0, inf), 1.0);
    assert_eq!(pow(1.0, nan), 1.0);
    assert_eq!(pow(nan, 0.0), 1.0);
    assert!(pow(-2.0, 0.5).is_nan());
    assert_eq!(pow(-0.0, -0.5), inf);
    assert_eq!(pow(0.5, -inf), inf);
    let pow32 = f32_2(ClOp::pow);
    assert_eq!(pow32(2.0, 128.0), f32::INFINITY);
    assert_eq!(pow32(2.0, -149.0), f32::from_bits(1));
    assert!(same32(pow32(-0.0, 3.0), -0.0));
    let atan2 = f32_2(ClOp::atan2);
    assert!(same32(atan2(-0.0, 0.0), -0.0));
    assert_eq!(atan2(0.0, -0.0), std::f32::consts::PI);
    assert_eq!(
        atan2(-f32::INFINITY, f32::INFINITY),
        -std::f32::consts::FRAC_PI_4
    );
}

/// The special operands the CTS crosses with each other (zeros, denormals, ±1, halves,
/// integers, extremes, infinities, NaN), through the f32 functions, against the host C
/// library evaluated in double.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn f32_special_operands_agree_with_host_libm() {
    let mut specials = vec![0.0f32, f32::from_bits(1), f32::from_bits(0x007f_ffff)];
    specials.extend([
        f32::MIN_POSITIVE,
        0.5,
        1.0,
        1.5,
        2.0,
        2.5,
        3.0,
        100.0,
        1e10,
        16777217.0,
    ]);
    specials.extend([f32::MAX, f32::INFINITY, 0.999_999_94, 1.000_000_1, 7.0]);
    let positives = specials.clone();
    specials.extend(positives.iter().map(|x| -x));
    specials.push(f32::NAN);

    type Host = unsafe extern "C" fn(f64) -> f64;
    type Host2 = unsafe extern "C" fn(f64, f64) -> f64;
    let unary: [(ClOp, Host, f64); 24] = [
        (ClOp::acos, host_libm::acos, 4.0),
        (ClOp::acosh, host_libm::acosh, 4.0),
        (ClOp::asin, host_libm::asin, 4.0),
        (ClOp::asinh, host_libm::asinh, 4.0),
        (ClOp::atan, host_libm::atan, 5.0),
        (ClOp::atanh, host_libm::atanh, 5.0),
        (ClOp::cbrt, host_libm::cbrt, 2.0),
        (ClOp::cos, host_libm::cos, 4.0),
        (ClOp::cosh, host_libm::cosh, 4.0),
        (ClOp::erf, host_libm::erf, 16.0),
        (ClOp::erfc, host_libm::erfc, 16.0),
        (ClOp::exp, host_libm::exp, 3.0),
        (ClOp::exp2, host_libm::exp2, 3.0),
        (ClOp::exp10, host_libm::exp10, 3.0),
        (ClOp::expm1, host_libm::expm1, 3.0),
        (ClOp::log, host_libm::log, 3.0),
        (ClOp::log2, host_libm::log2, 3.0),
        (ClOp::log10, host_libm::log10, 3.0),
        (ClOp::log1p, host_libm::log1p, 2.0),
        (ClOp::sin, host_libm::sin, 4.0),
        (ClOp::sinh, host_libm::sinh, 4.0),
        (ClOp::tan, host_libm::tan, 5.0),
        (ClOp::tanh, host_libm::tanh, 5.0),
        (ClOp::tgamma, host_libm::tgamma, 16.0),
    ];
    let mut failures = Vec::new();
    for (op, host, limit) in unary {
        let f = f32_1(op);
        for &x in &specials {
            // SAFETY: a plain C math function of one double.
            let reference = unsafe { host(f64::from(x)) };
            let got = f(x);
            let err = ulps_f32(got, reference);
            // Zero results must carry the reference's sign.
            let sign_ok = got != 0.0 || got.is_sign_negative() == reference.is_sign_negative();
            if err > limit || !sign_ok {
                failures.push(format!("{op:?}({x:e}) = {got:e}, host {reference:e}"));
            }
        }
    }
    let binary: [(ClOp, Host2, f64); 5] = [
        (ClOp::atan2, host_libm::atan2, 6.0),
        (ClOp::hypot, host_libm::hypot, 4.0),
        (ClOp::pow, host_libm::pow, 16.0),
        (ClOp::fmod, host_libm::fmod, 0.0),
        (ClOp::remainder, host_libm::remainder, 0.0),
    ];
    for (op, host, limit) in binary {
        let f = f32_2(op);
        for &x in &specials {
            for &y in &specials {
                // SAFETY: a plain C math function of two doubles.
                let reference = unsafe { host(f64::from(x), f64::from(y)) };
                let got = f(x, y);
                let err = ulps_f32(got, reference);
                let sign_ok = got != 0.0 || got.is_sign_negative() == reference.is_sign_negative();
                if err > limit || !sign_ok {
                    failures.push(format!(
                        "{op:?}({x:e}, {y:e}) = {got:e}, host {reference:e}"
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
