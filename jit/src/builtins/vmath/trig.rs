//! `sin`, `cos`, `tan` of `f32` lanes: Cody-Waite reduction by pi/2 and short
//! polynomials for `|x| <= TRIG_MAX` (`sin` and `cos` in `f32` when compiled with FMA,
//! [`super::core32`], else and for `tan` in `f64`); larger arguments (Payne-Hanek
//! territory), infinities and NaN go to the scalar functions.

use super::core::{reduce_pio2, sin_cos_poly, TRIG_MAX};
use super::core32::{reduce_pio2_32, sin_cos_32, TRIG32_MAX};
use super::Unary;
use crate::builtins::float::f32fns;

const SIGN: u32 = 0x8000_0000;

/// Both kernels reduce the same arguments.
const _: () = assert!(TRIG32_MAX == TRIG_MAX);

#[inline(always)]
fn easy(x: f32) -> bool {
    x.abs() <= TRIG_MAX
}

/// `sin`/`cos` of `|x|` and the quadrant.
#[inline(always)]
fn parts<const F: bool>(x: f32) -> (f64, f64, u64) {
    let (r, q) = reduce_pio2::<F>(f64::from(x.abs()));
    let (s, c) = sin_cos_poly::<F>(r);
    (s, c, q)
}

/// [`parts`] for `sin` and `cos`: in `f32` with FMA (`F`), rounded to `f32` either way.
#[inline(always)]
fn parts32<const F: bool>(x: f32) -> (f32, f32, u32) {
    if F {
        let (r, q) = reduce_pio2_32(x.abs());
        let (s, c) = sin_cos_32(r);
        (s, c, q)
    } else {
        let (s, c, q) = parts::<F>(x);
        (s as f32, c as f32, q as u32)
    }
}

/// `sin x` (odd: computed on `|x|`, so `sin(-0) = -0`).
pub(super) struct Sin;
impl Unary for Sin {
    #[inline(always)]
    fn easy(x: f32) -> bool {
        easy(x)
    }
    #[inline(always)]
    fn fast<const F: bool>(x: f32) -> f32 {
        let (s, c, q) = parts32::<F>(x);
        let v = if q & 1 == 0 { s } else { c };
        let neg = if q & 2 == 0 { 0 } else { SIGN };
        f32::from_bits(v.to_bits() ^ neg ^ (x.to_bits() & SIGN))
    }
    fn slow(x: f32) -> f32 {
        f32fns::sin(x)
    }
}

/// `cos x` (even).
pub(super) struct Cos;
impl Unary for Cos {
    #[inline(always)]
    fn easy(x: f32) -> bool {
        easy(x)
    }
    #[inline(always)]
    fn fast<const F: bool>(x: f32) -> f32 {
        let (s, c, q) = parts32::<F>(x);
        let v = if q & 1 == 0 { c } else { s };
        let neg = if (q + 1) & 2 == 0 { 0 } else { SIGN };
        f32::from_bits(v.to_bits() ^ neg)
    }
    fn slow(x: f32) -> f32 {
        f32fns::cos(x)
    }
}

/// `tan x` = `s/c` in even quadrants, `-c/s` in odd ones (odd function).
pub(super) struct Tan;
impl Unary for Tan {
    #[inline(always)]
    fn easy(x: f32) -> bool {
        easy(x)
    }
    #[inline(always)]
    fn fast<const F: bool>(x: f32) -> f32 {
        let (s, c, q) = parts::<F>(x);
        let odd = q & 1 != 0;
        let num = if odd { -c } else { s };
        let den = if odd { s } else { c };
        f32::from_bits(((num / den) as f32).to_bits() ^ (x.to_bits() & SIGN))
    }
    fn slow(x: f32) -> f32 {
        f32fns::tan(x)
    }
}
