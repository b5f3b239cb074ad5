//! Integer functions of OpenCL.std (OpenCL C 6.15.3) for 8-, 16-, 32- and 64-bit
//! elements, signed and unsigned.
//!
//! Every function takes and returns the *signed* Rust type of its width (the ABI type);
//! unsigned operations reinterpret the bits. Results follow OpenCL C exactly, including
//! the edge cases (`abs(INT_MIN)` is `2^(w-1)` as unsigned, `clz(0)` is the width,
//! `rotate` counts modulo the width, saturating ops clamp at the type's bounds).

use super::{native, ClOp, Registry};

/// Defines the integer functions for one width in module `$m` and a `register` for them.
/// `$s`/`$u` are the signed/unsigned types, `$sw`/`$uw` types of twice the width.
macro_rules! int_width {
    ($m:ident, $key:ident, $s:ty, $u:ty, $sw:ty, $uw:ty) => {
        pub(crate) mod $m {
            use super::super::{native, ClOp, Registry};

            const BITS: u32 = <$s>::BITS;

            pub(crate) extern "C" fn s_abs(x: $s) -> $s {
                x.wrapping_abs()
            }
            pub(crate) extern "C" fn u_abs(x: $s) -> $s {
                x
            }
            pub(crate) extern "C" fn s_abs_diff(x: $s, y: $s) -> $s {
                // The true difference is below 2^w, so the unsigned wrapping result is exact.
                let d = if x >= y {
                    (x as $u).wrapping_sub(y as $u)
                } else {
                    (y as $u).wrapping_sub(x as $u)
                };
                d as $s
            }
            pub(crate) extern "C" fn u_abs_diff(x: $s, y: $s) -> $s {
                (x as $u).abs_diff(y as $u) as $s
            }
            pub(crate) extern "C" fn s_add_sat(x: $s, y: $s) -> $s {
                x.saturating_add(y)
            }
            pub(crate) extern "C" fn u_add_sat(x: $s, y: $s) -> $s {
                (x as $u).saturating_add(y as $u) as $s
            }
            pub(crate) extern "C" fn s_sub_sat(x: $s, y: $s) -> $s {
                x.saturating_sub(y)
            }
            pub(crate) extern "C" fn u_sub_sat(x: $s, y: $s) -> $s {
                (x as $u).saturating_sub(y as $u) as $s
            }
            pub(crate) extern "C" fn s_hadd(x: $s, y: $s) -> $s {
                // floor((x + y) / 2) without overflow.
                (x >> 1) + (y >> 1) + (x & y & 1)
            }
            pub(crate) extern "C" fn u_hadd(x: $s, y: $s) -> $s {
                let (x, y) = (x as $u, y as $u);
                ((x >> 1) + (y >> 1) + (x & y & 1)) as $s
            }
            pub(crate) extern "C" fn s_rhadd(x: $s, y: $s) -> $s {
                // floor((x + y + 1) / 2) without overflow.
                (x >> 1) + (y >> 1) + ((x | y) & 1)
            }
            pub(crate) extern "C" fn u_rhadd(x: $s, y: $s) -> $s {
                let (x, y) = (x as $u, y as $u);
                ((x >> 1) + (y >> 1) + ((x | y) & 1)) as $s
            }
            pub(crate) extern "C" fn s_clamp(x: $s, lo: $s, hi: $s) -> $s {
                // OpenCL leaves lo > hi undefined; min(max()) never panics.
                x.max(lo).min(hi)
            }
            pub(crate) extern "C" fn u_clamp(x: $s, lo: $s, hi: $s) -> $s {
                (x as $u).max(lo as $u).min(hi as $u) as $s
            }
            pub(crate) extern "C" fn clz(x: $s) -> $s {
                x.leading_zeros() as $s
            }
            pub(crate) extern "C" fn ctz(x: $s) -> $s {
                x.trailing_zeros() as $s
            }
            pub(crate) extern "C" fn popcount(x: $s) -> $s {
                x.count_ones() as $s
            }
            pub(crate) extern "C" fn s_mul_hi(x: $s, y: $s) -> $s {
                ((x as $sw * y as $sw) >> BITS) as $s
            }
            pub(crate) extern "C" fn u_mul_hi(x: $s, y: $s) -> $s {
                ((x as $u as $uw * y as $u as $uw) >> BITS) as $s
            }
            pub(crate) extern "C" fn s_mad_hi(x: $s, y: $s, z: $s) -> $s {
                s_mul_hi(x, y).wrapping_add(z)
            }
            pub(crate) extern "C" fn u_mad_hi(x: $s, y: $s, z: $s) -> $s {
                u_mul_hi(x, y).wrapping_add(z)
            }
            pub(crate) extern "C" fn s_mad_sat(x: $s, y: $s, z: $s) -> $s {
                // |x*y| <= 2^(2w-2) and |z| <= 2^(w-1): the sum fits the double width.
                let v = x as $sw * y as $sw + z as $sw;
                v.clamp(<$s>::MIN as $sw, <$s>::MAX as $sw) as $s
            }
            pub(crate) extern "C" fn u_mad_sat(x: $s, y: $s, z: $s) -> $s {
                // (2^w-1)^2 + 2^w-1 < 2^(2w): no overflow in the double width.
                let v = x as $u as $uw * y as $u as $uw + z as $u as $uw;
                v.min(<$u>::MAX as $uw) as $s
            }
            pub(crate) extern "C" fn s_max(x: $s, y: $s) -> $s {
                x.max(y)
            }
            pub(crate) extern "C" fn u_max(x: $s, y: $s) -> $s {
                (x as $u).max(y as $u) as $s
            }
            pub(crate) extern "C" fn s_min(x: $s, y: $s) -> $s {
                x.min(y)
            }
            pub(crate) extern "C" fn u_min(x: $s, y: $s) -> $s {
                (x as $u).min(y as $u) as $s
            }
            pub(crate) extern "C" fn rotate(v: $s, i: $s) -> $s {
                // The count is taken modulo the width (two's complement: negative counts
                // rotate right), which for a power-of-two width is a mask.
                (v as $u).rotate_left((i as $u as u32) & (BITS - 1)) as $s
            }
            pub(crate) extern "C" fn bitselect(a: $s, b: $s, c: $s) -> $s {
                (a & !c) | (b & c)
            }

            /// Registers every function of this width.
            pub(super) fn register(r: &mut Registry) {
                use super::super::Scalar;
                macro_rules! reg {
                    ($op:ident, 1) => {
                        r.add(ClOp::$op, Scalar::$key, native!(
                            concat!(stringify!($op), "_", stringify!($m)), $op, [$key] -> $key))
                    };
                    ($op:ident, 2) => {
                        r.add(ClOp::$op, Scalar::$key, native!(
                            concat!(stringify!($op), "_", stringify!($m)), $op, [$key, $key] -> $key))
                    };
                    ($op:ident, 3) => {
                        r.add(ClOp::$op, Scalar::$key, native!(
                            concat!(stringify!($op), "_", stringify!($m)), $op,
                            [$key, $key, $key] -> $key))
                    };
                }
                reg!(s_abs, 1);
                reg!(u_abs, 1);
                reg!(s_abs_diff, 2);
                reg!(u_abs_diff, 2);
                reg!(s_add_sat, 2);
                reg!(u_add_sat, 2);
                reg!(s_sub_sat, 2);
                reg!(u_sub_sat, 2);
                reg!(s_hadd, 2);
                reg!(u_hadd, 2);
                reg!(s_rhadd, 2);
                reg!(u_rhadd, 2);
                reg!(s_clamp, 3);
                reg!(u_clamp, 3);
                reg!(clz, 1);
                reg!(ctz, 1);
                reg!(popcount, 1);
                reg!(s_mul_hi, 2);
                reg!(u_mul_hi, 2);
                reg!(s_mad_hi, 3);
                reg!(u_mad_hi, 3);
                reg!(s_mad_sat, 3);
                reg!(u_mad_sat, 3);
                reg!(s_max, 2);
                reg!(u_max, 2);
                reg!(s_min, 2);
                reg!(u_min, 2);
                reg!(rotate, 2);
                reg!(bitselect, 3);
            }
        }
    };
}

int_width!(i8, I8, i8, u8, i16, u16);
int_width!(i16, I16, i16, u16, i32, u32);
int_width!(i32, I32, i32, u32, i64, u64);
int_width!(i64, I64, i64, u64, i128, u128);

/// `upsample(hi, lo)`: `hi` in the upper half, `lo` (unsigned) in the lower half of a
/// result twice as wide. Signed and unsigned variants have the same bits.
macro_rules! upsample {
    ($name:ident, $s:ty, $u:ty, $wide:ty, $uwide:ty) => {
        pub(crate) extern "C" fn $name(hi: $s, lo: $s) -> $wide {
            (((hi as $u as $uwide) << <$s>::BITS) | lo as $u as $uwide) as $wide
        }
    };
}
upsample!(upsample_i16, i8, u8, i16, u16);
upsample!(upsample_i32, i16, u16, i32, u32);
upsample!(upsample_i64, i32, u32, i64, u64);

/// `mul24`/`mad24`: multiply the low 24 bits (sign-extended for the signed variant; values
/// outside 24 bits are undefined in OpenCL), wrapping like 32-bit integer arithmetic.
pub(crate) extern "C" fn s_mul24_i32(x: i32, y: i32) -> i32 {
    ((x << 8) >> 8).wrapping_mul((y << 8) >> 8)
}
/// See [`s_mul24_i32`].
pub(crate) extern "C" fn u_mul24_i32(x: i32, y: i32) -> i32 {
    ((x as u32 & 0x00ff_ffff).wrapping_mul(y as u32 & 0x00ff_ffff)) as i32
}
/// See [`s_mul24_i32`].
pub(crate) extern "C" fn s_mad24_i32(x: i32, y: i32, z: i32) -> i32 {
    s_mul24_i32(x, y).wrapping_add(z)
}
/// See [`s_mul24_i32`].
pub(crate) extern "C" fn u_mad24_i32(x: i32, y: i32, z: i32) -> i32 {
    u_mul24_i32(x, y).wrapping_add(z)
}

/// Registers the integer functions of every width.
pub(super) fn register(r: &mut Registry) {
    i8::register(r);
    i16::register(r);
    i32::register(r);
    i64::register(r);
    use super::Scalar::{I16, I32, I64};
    r.add(
        ClOp::s_upsample,
        I16,
        native!("upsample_i16", upsample_i16, [I8, I8] -> I16),
    );
    r.add(
        ClOp::u_upsample,
        I16,
        native!("upsample_i16", upsample_i16, [I8, I8] -> I16),
    );
    r.add(
        ClOp::s_upsample,
        I32,
        native!("upsample_i32", upsample_i32, [I16, I16] -> I32),
    );
    r.add(
        ClOp::u_upsample,
        I32,
        native!("upsample_i32", upsample_i32, [I16, I16] -> I32),
    );
    r.add(
        ClOp::s_upsample,
        I64,
        native!("upsample_i64", upsample_i64, [I32, I32] -> I64),
    );
    r.add(
        ClOp::u_upsample,
        I64,
        native!("upsample_i64", upsample_i64, [I32, I32] -> I64),
    );
    r.add(
        ClOp::s_mul24,
        I32,
        native!("s_mul24_i32", s_mul24_i32, [I32, I32] -> I32),
    );
    r.add(
        ClOp::u_mul24,
        I32,
        native!("u_mul24_i32", u_mul24_i32, [I32, I32] -> I32),
    );
    r.add(
        ClOp::s_mad24,
        I32,
        native!("s_mad24_i32", s_mad24_i32, [I32, I32, I32] -> I32),
    );
    r.add(
        ClOp::u_mad24,
        I32,
        native!("u_mad24_i32", u_mad24_i32, [I32, I32, I32] -> I32),
    );
}
