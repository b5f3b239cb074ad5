//! Floating-point functions of OpenCL.std (OpenCL C 6.15.2 math, 6.15.4 common and
//! 6.15.5 geometric functions on scalar operands) for `f32` and `f64`.
//!
//! Functions that OpenCL requires to be exact (rounding, `fmod`, `remquo`, `ldexp`,
//! `frexp`, `fmin`/`fmax`, ...) are implemented natively for each type. The `f32`
//! transcendental functions evaluate the `f64` implementation and round once, which keeps
//! them far inside the OpenCL ulp limits; the `f64` ones come from the `libm` crate or,
//! where it lacks the function or its accuracy, from [`super::precise`].
//! `half_*` and `native_*` share the full-precision implementations, `mad` is an unfused
//! multiply-add, `fma` a true fused one.

use super::{native, ClOp, Registry, Scalar};

/// Writes `v` through an out-parameter address from generated code.
///
/// # Safety
/// `p` must be null (the write is skipped) or valid for a write of a `T`; no alignment is
/// assumed.
unsafe fn store<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: non-null, and the caller guarantees it is valid for a write of T.
        unsafe { p.write_unaligned(v) }
    }
}

/// Functions with the same definition for both float types. Expects to be expanded in a
/// module for type `$t` whose bits are `$bits`, with the `libm` names given.
macro_rules! float_exact {
    (
        $t:ident, $bits:ty, $nan_param:ty,
        quiet_nan: $qnan:expr, payload_mask: $payload:expr, below_one: $below_one:expr,
        remainder: $remainder:path, remquo: $remquo:path, fmod: $fmod:path,
        frexp: $frexp:path, ilogb: $ilogb:path, nextafter: $nextafter:path
    ) => {
        use super::store;

        pub(crate) extern "C" fn fabs(x: $t) -> $t {
            x.abs()
        }
        pub(crate) extern "C" fn copysign(x: $t, y: $t) -> $t {
            x.copysign(y)
        }
        pub(crate) extern "C" fn ceil(x: $t) -> $t {
            x.ceil()
        }
        pub(crate) extern "C" fn floor(x: $t) -> $t {
            x.floor()
        }
        pub(crate) extern "C" fn trunc(x: $t) -> $t {
            x.trunc()
        }
        /// Round to nearest, ties to even.
        pub(crate) extern "C" fn rint(x: $t) -> $t {
            x.round_ties_even()
        }
        /// Round to nearest, ties away from zero.
        pub(crate) extern "C" fn round(x: $t) -> $t {
            x.round()
        }
        pub(crate) extern "C" fn sqrt(x: $t) -> $t {
            x.sqrt()
        }
        /// Fused: one rounding.
        pub(crate) extern "C" fn fma(x: $t, y: $t, z: $t) -> $t {
            x.mul_add(y, z)
        }
        /// Unfused: `x * y` is rounded before the addition.
        pub(crate) extern "C" fn mad(x: $t, y: $t, z: $t) -> $t {
            x * y + z
        }
        pub(crate) extern "C" fn divide(x: $t, y: $t) -> $t {
            x / y
        }
        pub(crate) extern "C" fn recip(x: $t) -> $t {
            1.0 / x
        }
        /// `x - y` if `x > y`, else `+0`; NaN if either is NaN.
        pub(crate) extern "C" fn fdim(x: $t, y: $t) -> $t {
            if x.is_nan() || y.is_nan() {
                <$t>::NAN
            } else if x > y {
                x - y
            } else {
                0.0
            }
        }
        /// IEEE 754 maxNum: a NaN operand yields the other operand; `+0` beats `-0`.
        pub(crate) extern "C" fn fmax(x: $t, y: $t) -> $t {
            if x.is_nan() {
                y
            } else if y.is_nan() {
                x
            } else if x == y {
                <$t>::from_bits(x.to_bits() & y.to_bits())
            } else if x > y {
                x
            } else {
                y
            }
        }
        /// IEEE 754 minNum: a NaN operand yields the other operand; `-0` beats `+0`.
        pub(crate) extern "C" fn fmin(x: $t, y: $t) -> $t {
            if x.is_nan() {
                y
            } else if y.is_nan() {
                x
            } else if x == y {
                <$t>::from_bits(x.to_bits() | y.to_bits())
            } else if x < y {
                x
            } else {
                y
            }
        }
        pub(crate) extern "C" fn maxmag(x: $t, y: $t) -> $t {
            let (ax, ay) = (x.abs(), y.abs());
            if ax > ay {
                x
            } else if ay > ax {
                y
            } else {
                fmax(x, y)
            }
        }
        pub(crate) extern "C" fn minmag(x: $t, y: $t) -> $t {
            let (ax, ay) = (x.abs(), y.abs());
            if ax < ay {
                x
            } else if ay < ax {
                y
            } else {
                fmin(x, y)
            }
        }
        /// Exact `x - trunc(x / y) * y`.
        pub(crate) extern "C" fn fmod(x: $t, y: $t) -> $t {
            $fmod(x, y)
        }
        /// Exact IEEE remainder (quotient rounded to nearest even).
        pub(crate) extern "C" fn remainder(x: $t, y: $t) -> $t {
            $remainder(x, y)
        }
        /// IEEE remainder; stores the sign and low bits (at least 7) of the quotient.
        ///
        /// # Safety
        /// `quo` is null or valid for a write of an `i32`.
        pub(crate) unsafe extern "C" fn remquo(x: $t, y: $t, quo: *mut i32) -> $t {
            let (r, q) = $remquo(x, y);
            let q = if r.is_nan() { 0 } else { q };
            // SAFETY: forwarded from this function's contract.
            unsafe { store(quo, q) };
            r
        }
        /// `min(x - floor(x), largest value below 1)`, storing `floor(x)`.
        ///
        /// # Safety
        /// `iptr` is null or valid for a write of this float type.
        pub(crate) unsafe extern "C" fn fract(x: $t, iptr: *mut $t) -> $t {
            let fl = x.floor();
            // SAFETY: forwarded from this function's contract.
            unsafe { store(iptr, fl) };
            if x.is_nan() {
                x
            } else if x.is_infinite() {
                (0.0 as $t).copysign(x)
            } else if x == 0.0 {
                x
            } else {
                (x - fl).min($below_one)
            }
        }
        /// Fractional part with the sign of `x`, storing the integral part.
        ///
        /// # Safety
        /// `iptr` is null or valid for a write of this float type.
        pub(crate) unsafe extern "C" fn modf(x: $t, iptr: *mut $t) -> $t {
            let t = x.trunc();
            // SAFETY: forwarded from this function's contract.
            unsafe { store(iptr, t) };
            if x.is_infinite() {
                (0.0 as $t).copysign(x)
            } else {
                (x - t).copysign(x)
            }
        }
        /// Mantissa in `[0.5, 1)` (or `x` for zero, infinity, NaN) and the exponent.
        ///
        /// # Safety
        /// `exp` is null or valid for a write of an `i32`.
        pub(crate) unsafe extern "C" fn frexp(x: $t, exp: *mut i32) -> $t {
            let (m, e) = if x.is_finite() { $frexp(x) } else { (x, 0) };
            // SAFETY: forwarded from this function's contract.
            unsafe { store(exp, e) };
            m
        }
        /// Unbiased exponent; `FP_ILOGB0` (`INT_MIN`) for zero, `FP_ILOGBNAN` (`INT_MAX`,
        /// clang's opencl-c-base.h) for NaN, `INT_MAX` for infinity.
        pub(crate) extern "C" fn ilogb(x: $t) -> i32 {
            if x.is_nan() {
                i32::MAX
            } else {
                $ilogb(x)
            }
        }
        pub(crate) extern "C" fn logb(x: $t) -> $t {
            if x.is_nan() {
                x
            } else if x == 0.0 {
                <$t>::NEG_INFINITY
            } else if x.is_infinite() {
                <$t>::INFINITY
            } else {
                $ilogb(x) as $t
            }
        }
        pub(crate) extern "C" fn nextafter(x: $t, y: $t) -> $t {
            $nextafter(x, y)
        }
        /// A quiet NaN carrying `code` in its payload (as far as it fits).
        pub(crate) extern "C" fn nan(code: $nan_param) -> $t {
            <$t>::from_bits($qnan | (code as $bits & $payload))
        }
        /// `1.0`, `-1.0`, `±0` for `±0`, and `0` for NaN.
        pub(crate) extern "C" fn sign(x: $t) -> $t {
            if x > 0.0 {
                1.0
            } else if x < 0.0 {
                -1.0
            } else if x.is_nan() {
                0.0
            } else {
                x
            }
        }
        pub(crate) extern "C" fn step(edge: $t, x: $t) -> $t {
            if x < edge {
                0.0
            } else {
                1.0
            }
        }
        pub(crate) extern "C" fn fclamp(x: $t, lo: $t, hi: $t) -> $t {
            fmin(fmax(x, lo), hi)
        }
        /// Scalar `length`: `|x|`.
        pub(crate) extern "C" fn length(x: $t) -> $t {
            x.abs()
        }
        /// Scalar `normalize`: `x` for zeros, NaN for NaN, else `±1`.
        pub(crate) extern "C" fn normalize(x: $t) -> $t {
            if x == 0.0 || x.is_nan() {
                x
            } else {
                (1.0 as $t).copysign(x)
            }
        }
        /// Bitwise select: bits of `b` where `c` has ones, of `a` elsewhere.
        pub(crate) extern "C" fn bitselect(a: $t, b: $t, c: $t) -> $t {
            let c = c.to_bits();
            <$t>::from_bits((a.to_bits() & !c) | (b.to_bits() & c))
        }
    };
}

/// `f64` implementations.
pub(crate) mod f64fns {
    use super::super::precise;

    float_exact!(
        f64, u64, i64,
        quiet_nan: 0x7ff8_0000_0000_0000u64, payload_mask: 0x0007_ffff_ffff_ffffu64,
        below_one: 0.999_999_999_999_999_9_f64,
        remainder: libm::remainder, remquo: libm::remquo, fmod: libm::fmod,
        frexp: libm::frexp, ilogb: libm::ilogb, nextafter: libm::nextafter
    );

    /// Forwards to a one-argument `f64` function.
    macro_rules! forward1 {
        ($($name:ident => $f:path),* $(,)?) => {$(
            pub(crate) extern "C" fn $name(x: f64) -> f64 {
                $f(x)
            }
        )*};
    }
    /// Forwards to a two-argument `f64` function.
    macro_rules! forward2 {
        ($($name:ident => $f:path),* $(,)?) => {$(
            pub(crate) extern "C" fn $name(x: f64, y: f64) -> f64 {
                $f(x, y)
            }
        )*};
    }

    forward1!(
        acos => libm::acos, acosh => precise::acosh, asin => libm::asin, asinh => libm::asinh,
        atan => libm::atan, atanh => libm::atanh, cbrt => libm::cbrt, cos => libm::cos,
        cosh => libm::cosh, erf => libm::erf, erfc => libm::erfc, exp => libm::exp,
        exp2 => libm::exp2, expm1 => libm::expm1, log => libm::log, log2 => libm::log2,
        log10 => libm::log10, log1p => libm::log1p, sin => libm::sin, sinh => libm::sinh,
        tan => libm::tan, tanh => libm::tanh, tgamma => libm::tgamma, lgamma => libm::lgamma,
        acospi => precise::acospi, asinpi => precise::asinpi, atanpi => precise::atanpi,
        cospi => precise::cospi, sinpi => precise::sinpi, tanpi => precise::tanpi,
        exp10 => precise::exp10, rsqrt => precise::rsqrt,
    );
    forward2!(
        atan2 => libm::atan2, atan2pi => precise::atan2pi, hypot => libm::hypot,
        pow => libm::pow, powr => precise::powr,
    );

    pub(crate) extern "C" fn pown(x: f64, n: i32) -> f64 {
        // n is exact in f64, and pow's special cases are pown's.
        libm::pow(x, f64::from(n))
    }
    pub(crate) extern "C" fn rootn(x: f64, n: i32) -> f64 {
        precise::rootn(x, n)
    }
    /// `x * 2^n`, correctly rounded (also into the subnormal range).
    pub(crate) extern "C" fn ldexp(x: f64, n: i32) -> f64 {
        libm::scalbn(x, n)
    }
    /// `lgamma(x)`, storing the sign of `gamma(x)`.
    ///
    /// # Safety
    /// `sign` is null or valid for a write of an `i32`.
    pub(crate) unsafe extern "C" fn lgamma_r(x: f64, sign: *mut i32) -> f64 {
        let (v, s) = libm::lgamma_r(x);
        // SAFETY: forwarded from this function's contract.
        unsafe { store(sign, s) };
        v
    }
    /// Returns `sin(x)`, storing `cos(x)`.
    ///
    /// # Safety
    /// `cosval` is null or valid for a write of an `f64`.
    pub(crate) unsafe extern "C" fn sincos(x: f64, cosval: *mut f64) -> f64 {
        let (s, c) = libm::sincos(x);
        // SAFETY: forwarded from this function's contract.
        unsafe { store(cosval, c) };
        s
    }
    pub(crate) extern "C" fn degrees(x: f64) -> f64 {
        x * (180.0 / std::f64::consts::PI)
    }
    pub(crate) extern "C" fn radians(x: f64) -> f64 {
        x * (std::f64::consts::PI / 180.0)
    }
    pub(crate) extern "C" fn mix(x: f64, y: f64, a: f64) -> f64 {
        x + (y - x) * a
    }
    pub(crate) extern "C" fn smoothstep(edge0: f64, edge1: f64, x: f64) -> f64 {
        let t = ((x - edge0) / (edge1 - edge0)).clamp(0.0, 1.0);
        t * t * (3.0 - 2.0 * t)
    }
    /// Scalar `distance`: `|x - y|`.
    pub(crate) extern "C" fn distance(x: f64, y: f64) -> f64 {
        (x - y).abs()
    }
}

/// `f32` implementations.
pub(crate) mod f32fns {
    use super::super::{fast32, precise};
    use super::f64fns;

    float_exact!(
        f32, u32, i32,
        quiet_nan: 0x7fc0_0000u32, payload_mask: 0x003f_ffffu32,
        below_one: 0.999_999_94_f32,
        remainder: libm::remainderf, remquo: libm::remquof, fmod: libm::fmodf,
        frexp: libm::frexpf, ilogb: libm::ilogbf, nextafter: libm::nextafterf
    );

    /// Evaluates the `f64` function of the same name and rounds once.
    macro_rules! via_f64 {
        (1: $($name:ident),* $(,)?) => {$(
            pub(crate) extern "C" fn $name(x: f32) -> f32 {
                f64fns::$name(f64::from(x)) as f32
            }
        )*};
        (2: $($name:ident),* $(,)?) => {$(
            pub(crate) extern "C" fn $name(x: f32, y: f32) -> f32 {
                f64fns::$name(f64::from(x), f64::from(y)) as f32
            }
        )*};
        (3: $($name:ident),* $(,)?) => {$(
            pub(crate) extern "C" fn $name(x: f32, y: f32, z: f32) -> f32 {
                f64fns::$name(f64::from(x), f64::from(y), f64::from(z)) as f32
            }
        )*};
    }

    via_f64!(1:
        acos, acosh, asin, asinh, atan, atanh, cbrt, cos, cosh, erf, erfc, expm1, log1p, sin,
        sinh, tan, tanh, tgamma, lgamma, acospi, asinpi, atanpi, rsqrt, degrees, radians,
    );

    /// The hottest functions, through the short f64 kernels of [`fast32`].
    macro_rules! fast {
        ($($name:ident),*) => {$(
            pub(crate) extern "C" fn $name(x: f32) -> f32 {
                fast32::$name(f64::from(x)) as f32
            }
        )*};
    }
    fast!(exp, exp2, exp10, log, log2, log10);

    /// `sinpi`/`cospi`/`tanpi` with the exact reduction of the f64 versions but without
    /// their double-double correction, which an f32 result does not need.
    macro_rules! pi_trig {
        ($($name:ident => $f:path),*) => {$(
            pub(crate) extern "C" fn $name(x: f32) -> f32 {
                $f(f64::from(x)) as f32
            }
        )*};
    }
    pi_trig!(
        sinpi => precise::sinpi_for_f32,
        cospi => precise::cospi_for_f32,
        tanpi => precise::tanpi_for_f32
    );
    via_f64!(2: atan2, atan2pi, hypot, distance);
    via_f64!(3: mix, smoothstep);

    // The pow family has f32-specific cores (2^(y log2 x) in f64), much cheaper than the
    // f64 algorithms and still far inside the f32 limits.
    pub(crate) extern "C" fn pow(x: f32, y: f32) -> f32 {
        precise::pow_for_f32(f64::from(x), f64::from(y)) as f32
    }
    pub(crate) extern "C" fn powr(x: f32, y: f32) -> f32 {
        precise::powr_for_f32(f64::from(x), f64::from(y)) as f32
    }
    pub(crate) extern "C" fn pown(x: f32, n: i32) -> f32 {
        precise::pown_for_f32(f64::from(x), n) as f32
    }
    pub(crate) extern "C" fn rootn(x: f32, n: i32) -> f32 {
        precise::rootn_for_f32(f64::from(x), n) as f32
    }
    /// `x * 2^n`, correctly rounded: the product is exact in `f64` (|n| is clamped to
    /// 400, past which every result has over- or underflowed anyway), then rounds once.
    pub(crate) extern "C" fn ldexp(x: f32, n: i32) -> f32 {
        let n = n.clamp(-400, 400);
        let scale = f64::from_bits(((1023 + n) as u64) << 52);
        (f64::from(x) * scale) as f32
    }
    /// `lgamma(x)`, storing the sign of `gamma(x)`.
    ///
    /// # Safety
    /// `sign` is null or valid for a write of an `i32`.
    pub(crate) unsafe extern "C" fn lgamma_r(x: f32, sign: *mut i32) -> f32 {
        let (v, s) = libm::lgamma_r(f64::from(x));
        // SAFETY: forwarded from this function's contract.
        unsafe { store(sign, s) };
        v as f32
    }
    /// Returns `sin(x)`, storing `cos(x)`.
    ///
    /// # Safety
    /// `cosval` is null or valid for a write of an `f32`.
    pub(crate) unsafe extern "C" fn sincos(x: f32, cosval: *mut f32) -> f32 {
        let (s, c) = libm::sincos(f64::from(x));
        // SAFETY: forwarded from this function's contract.
        unsafe { store(cosval, c as f32) };
        s as f32
    }
}

/// Registers `$op` for both float types, implemented by the functions named `$f` in
/// [`f32fns`] and [`f64fns`], taking `$n` float operands.
macro_rules! both {
    ($r:ident, $op:ident => $f:ident, 1) => {{
        $r.add(ClOp::$op, Scalar::F32, native!(concat!(stringify!($f), "_f32"), f32fns::$f, [F32] -> F32));
        $r.add(ClOp::$op, Scalar::F64, native!(concat!(stringify!($f), "_f64"), f64fns::$f, [F64] -> F64));
    }};
    ($r:ident, $op:ident => $f:ident, 2) => {{
        $r.add(ClOp::$op, Scalar::F32,
            native!(concat!(stringify!($f), "_f32"), f32fns::$f, [F32, F32] -> F32));
        $r.add(ClOp::$op, Scalar::F64,
            native!(concat!(stringify!($f), "_f64"), f64fns::$f, [F64, F64] -> F64));
    }};
    ($r:ident, $op:ident => $f:ident, 3) => {{
        $r.add(ClOp::$op, Scalar::F32,
            native!(concat!(stringify!($f), "_f32"), f32fns::$f, [F32, F32, F32] -> F32));
        $r.add(ClOp::$op, Scalar::F64,
            native!(concat!(stringify!($f), "_f64"), f64fns::$f, [F64, F64, F64] -> F64));
    }};
    // Operand types spelled out: `F` stands for the float type of each variant.
    ($r:ident, $op:ident => $f:ident, [$($p32:ident),*] / [$($p64:ident),*]) => {{
        $r.add(ClOp::$op, Scalar::F32,
            native!(concat!(stringify!($f), "_f32"), f32fns::$f, [$($p32),*] -> F32));
        $r.add(ClOp::$op, Scalar::F64,
            native!(concat!(stringify!($f), "_f64"), f64fns::$f, [$($p64),*] -> F64));
    }};
}

/// Registers the float functions of both types.
pub(super) fn register(r: &mut Registry) {
    // Math functions (OpenCL C 6.15.2).
    both!(r, acos => acos, 1);
    both!(r, acosh => acosh, 1);
    both!(r, acospi => acospi, 1);
    both!(r, asin => asin, 1);
    both!(r, asinh => asinh, 1);
    both!(r, asinpi => asinpi, 1);
    both!(r, atan => atan, 1);
    both!(r, atan2 => atan2, 2);
    both!(r, atanh => atanh, 1);
    both!(r, atanpi => atanpi, 1);
    both!(r, atan2pi => atan2pi, 2);
    both!(r, cbrt => cbrt, 1);
    both!(r, ceil => ceil, 1);
    both!(r, copysign => copysign, 2);
    both!(r, cos => cos, 1);
    both!(r, cosh => cosh, 1);
    both!(r, cospi => cospi, 1);
    both!(r, erfc => erfc, 1);
    both!(r, erf => erf, 1);
    both!(r, exp => exp, 1);
    both!(r, exp2 => exp2, 1);
    both!(r, exp10 => exp10, 1);
    both!(r, expm1 => expm1, 1);
    both!(r, fabs => fabs, 1);
    both!(r, fdim => fdim, 2);
    both!(r, floor => floor, 1);
    both!(r, fma => fma, 3);
    both!(r, fmax => fmax, 2);
    both!(r, fmin => fmin, 2);
    both!(r, fmod => fmod, 2);
    both!(r, fract => fract, [F32, Ptr] / [F64, Ptr]);
    both!(r, frexp => frexp, [F32, Ptr] / [F64, Ptr]);
    both!(r, hypot => hypot, 2);
    r.add(
        ClOp::ilogb,
        Scalar::F32,
        native!("ilogb_f32", f32fns::ilogb, [F32] -> I32),
    );
    r.add(
        ClOp::ilogb,
        Scalar::F64,
        native!("ilogb_f64", f64fns::ilogb, [F64] -> I32),
    );
    both!(r, ldexp => ldexp, [F32, I32] / [F64, I32]);
    both!(r, lgamma => lgamma, 1);
    both!(r, lgamma_r => lgamma_r, [F32, Ptr] / [F64, Ptr]);
    both!(r, log => log, 1);
    both!(r, log2 => log2, 1);
    both!(r, log10 => log10, 1);
    both!(r, log1p => log1p, 1);
    both!(r, logb => logb, 1);
    both!(r, mad => mad, 3);
    both!(r, maxmag => maxmag, 2);
    both!(r, minmag => minmag, 2);
    both!(r, modf => modf, [F32, Ptr] / [F64, Ptr]);
    both!(r, nan => nan, [I32] / [I64]);
    both!(r, nextafter => nextafter, 2);
    both!(r, pow => pow, 2);
    both!(r, pown => pown, [F32, I32] / [F64, I32]);
    both!(r, powr => powr, 2);
    both!(r, remainder => remainder, 2);
    both!(r, remquo => remquo, [F32, F32, Ptr] / [F64, F64, Ptr]);
    both!(r, rint => rint, 1);
    both!(r, rootn => rootn, [F32, I32] / [F64, I32]);
    both!(r, round => round, 1);
    both!(r, rsqrt => rsqrt, 1);
    both!(r, sin => sin, 1);
    both!(r, sincos => sincos, [F32, Ptr] / [F64, Ptr]);
    both!(r, sinh => sinh, 1);
    both!(r, sinpi => sinpi, 1);
    both!(r, sqrt => sqrt, 1);
    both!(r, tan => tan, 1);
    both!(r, tanh => tanh, 1);
    both!(r, tanpi => tanpi, 1);
    both!(r, tgamma => tgamma, 1);
    both!(r, trunc => trunc, 1);

    // half_* and native_*: the full-precision functions satisfy their looser limits.
    both!(r, half_cos => cos, 1);
    both!(r, half_divide => divide, 2);
    both!(r, half_exp => exp, 1);
    both!(r, half_exp2 => exp2, 1);
    both!(r, half_exp10 => exp10, 1);
    both!(r, half_log => log, 1);
    both!(r, half_log2 => log2, 1);
    both!(r, half_log10 => log10, 1);
    both!(r, half_powr => powr, 2);
    both!(r, half_recip => recip, 1);
    both!(r, half_rsqrt => rsqrt, 1);
    both!(r, half_sin => sin, 1);
    both!(r, half_sqrt => sqrt, 1);
    both!(r, half_tan => tan, 1);
    both!(r, native_cos => cos, 1);
    both!(r, native_divide => divide, 2);
    both!(r, native_exp => exp, 1);
    both!(r, native_exp2 => exp2, 1);
    both!(r, native_exp10 => exp10, 1);
    both!(r, native_log => log, 1);
    both!(r, native_log2 => log2, 1);
    both!(r, native_log10 => log10, 1);
    both!(r, native_powr => powr, 2);
    both!(r, native_recip => recip, 1);
    both!(r, native_rsqrt => rsqrt, 1);
    both!(r, native_sin => sin, 1);
    both!(r, native_sqrt => sqrt, 1);
    both!(r, native_tan => tan, 1);

    // Common functions (6.15.4).
    both!(r, fclamp => fclamp, 3);
    both!(r, degrees => degrees, 1);
    both!(r, fmax_common => fmax, 2);
    both!(r, fmin_common => fmin, 2);
    both!(r, mix => mix, 3);
    both!(r, radians => radians, 1);
    both!(r, step => step, 2);
    both!(r, smoothstep => smoothstep, 3);
    both!(r, sign => sign, 1);

    // Geometric functions (6.15.5), scalar operands only.
    both!(r, distance => distance, 2);
    both!(r, length => length, 1);
    both!(r, normalize => normalize, 1);
    both!(r, fast_distance => distance, 2);
    both!(r, fast_length => length, 1);
    both!(r, fast_normalize => normalize, 1);

    // Relational (6.15.6) functions that OpenCL.std carries.
    both!(r, bitselect => bitselect, 3);
}
