//! Vector forms of the OpenCL.std geometric functions `length`, `distance`, `normalize`
//! (and their `fast_` variants) for 2, 3 and 4 components, found through
//! [`super::geometric`].
//!
//! They exist because the straightforward `sqrt(dot(p, p))` over- and underflows far
//! before the true result does, and `normalize` has special cases (zero, NaN and infinite
//! components) that a per-lane expansion gets wrong. Operands are passed by address: the
//! caller stores each vector's components contiguously (`N` elements, no padding for
//! 3-component vectors) and passes that address as a [`super::Scalar::Ptr`]. `f32` is
//! evaluated in `f64` (no scaling needed there); `f64` scales by a power of two before
//! summing squares. This module knows nothing of lanes: it is called once per lane.

use super::{native, ClOp, Registry, Scalar};

/// Reads `N` contiguous components.
///
/// # Safety
/// `p` must be valid for reads of `N` elements of `T` (no alignment needed).
unsafe fn load<T: Copy + Default, const N: usize>(p: *const T) -> [T; N] {
    let mut v = [T::default(); N];
    for (i, slot) in v.iter_mut().enumerate() {
        // SAFETY: i < N and the caller guarantees N readable elements.
        *slot = unsafe { p.add(i).read_unaligned() };
    }
    v
}

/// Writes `N` contiguous components.
///
/// # Safety
/// `p` must be valid for writes of `N` elements of `T` (no alignment needed).
unsafe fn store<T: Copy, const N: usize>(p: *mut T, v: [T; N]) {
    for (i, x) in v.into_iter().enumerate() {
        // SAFETY: i < N and the caller guarantees N writable elements.
        unsafe { p.add(i).write_unaligned(x) };
    }
}

/// Euclidean norm of `v` without spurious over/underflow, within about 1 ulp; like
/// `hypot`, an infinite component wins over a NaN.
fn norm64(v: &[f64]) -> f64 {
    if v.iter().any(|x| x.is_infinite()) {
        return f64::INFINITY;
    }
    if v.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let m = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if m == 0.0 {
        return 0.0;
    }
    // Scaling by a power of two is exact; components far below m only lose bits that
    // cannot affect the rounded result.
    let e = libm::ilogb(m);
    let sum = v.iter().fold(0.0f64, |acc, &x| {
        let s = libm::scalbn(x, -e);
        s.mul_add(s, acc)
    });
    libm::scalbn(sum.sqrt(), e)
}

/// Euclidean norm of f32 components, evaluated in f64 (no scaling needed: squares of
/// f32 values are normal f64 values) and rounded once.
fn norm32(v: &[f64]) -> f32 {
    if v.iter().any(|x| x.is_infinite()) {
        return f32::INFINITY;
    }
    v.iter().fold(0.0f64, |acc, &x| x.mul_add(x, acc)).sqrt() as f32
}

/// `normalize` special cases shared by both types: returns the vector to divide by its
/// norm, or the final result. Works on f64 components.
fn normalize_prepare<const N: usize>(v: [f64; N]) -> Result<[f64; N], [f64; N]> {
    if v.iter().all(|&x| x == 0.0) {
        return Err(v);
    }
    if v.iter().any(|x| x.is_nan()) {
        return Err([f64::NAN; N]);
    }
    if v.iter().any(|x| x.is_infinite()) {
        // OpenCL C 6.15.5: infinite components become ±1, the others ±0.
        return Ok(v.map(|x| {
            if x.is_infinite() {
                1.0f64.copysign(x)
            } else {
                0.0f64.copysign(x)
            }
        }));
    }
    Ok(v)
}

/// `length(p)` for `N` f32 components at `p`.
///
/// # Safety
/// `p` must be valid for reads of `N` f32 values.
pub(crate) unsafe extern "C" fn length_f32<const N: usize>(p: *const f32) -> f32 {
    // SAFETY: forwarded from this function's contract.
    let v: [f32; N] = unsafe { load(p) };
    norm32(&v.map(f64::from))
}

/// `length(p)` for `N` f64 components at `p`.
///
/// # Safety
/// `p` must be valid for reads of `N` f64 values.
pub(crate) unsafe extern "C" fn length_f64<const N: usize>(p: *const f64) -> f64 {
    // SAFETY: forwarded from this function's contract.
    let v: [f64; N] = unsafe { load(p) };
    norm64(&v)
}

/// `distance(p0, p1)` = `length(p0 - p1)` for `N` f32 components (the difference is
/// formed in f64, so it is not rounded to f32 first).
///
/// # Safety
/// `p0` and `p1` must be valid for reads of `N` f32 values.
pub(crate) unsafe extern "C" fn distance_f32<const N: usize>(
    p0: *const f32,
    p1: *const f32,
) -> f32 {
    // SAFETY: forwarded from this function's contract.
    let (a, b): ([f32; N], [f32; N]) = unsafe { (load(p0), load(p1)) };
    let mut d = [0.0f64; N];
    for i in 0..N {
        d[i] = f64::from(a[i]) - f64::from(b[i]);
    }
    norm32(&d)
}

/// `distance(p0, p1)` = `length(p0 - p1)` for `N` f64 components.
///
/// # Safety
/// `p0` and `p1` must be valid for reads of `N` f64 values.
pub(crate) unsafe extern "C" fn distance_f64<const N: usize>(
    p0: *const f64,
    p1: *const f64,
) -> f64 {
    // SAFETY: forwarded from this function's contract.
    let (a, b): ([f64; N], [f64; N]) = unsafe { (load(p0), load(p1)) };
    let mut d = [0.0f64; N];
    for i in 0..N {
        d[i] = a[i] - b[i];
    }
    norm64(&d)
}

/// Writes `normalize(p)` (`N` f32 components) to `out` (which may equal `p`) and returns
/// `length(p)`.
///
/// # Safety
/// `p` must be valid for reads and `out` for writes of `N` f32 values.
pub(crate) unsafe extern "C" fn normalize_f32<const N: usize>(p: *const f32, out: *mut f32) -> f32 {
    // SAFETY: forwarded from this function's contract.
    let v: [f32; N] = unsafe { load(p) };
    let wide = v.map(f64::from);
    let len = norm32(&wide);
    let r = match normalize_prepare(wide) {
        Err(done) => done.map(|x| x as f32),
        Ok(u) => {
            let n = u.iter().fold(0.0f64, |acc, &x| x.mul_add(x, acc)).sqrt();
            u.map(|x| (x / n) as f32)
        }
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { store(out, r) };
    len
}

/// Writes `normalize(p)` (`N` f64 components) to `out` (which may equal `p`) and returns
/// `length(p)`.
///
/// # Safety
/// `p` must be valid for reads and `out` for writes of `N` f64 values.
pub(crate) unsafe extern "C" fn normalize_f64<const N: usize>(p: *const f64, out: *mut f64) -> f64 {
    // SAFETY: forwarded from this function's contract.
    let v: [f64; N] = unsafe { load(p) };
    let len = norm64(&v);
    let r = match normalize_prepare(v) {
        Err(done) => done,
        Ok(u) => {
            let m = u.iter().fold(0.0f64, |m, x| m.max(x.abs()));
            let e = libm::ilogb(m);
            let s = u.map(|x| libm::scalbn(x, -e));
            let n = s.iter().fold(0.0f64, |acc, &x| x.mul_add(x, acc)).sqrt();
            s.map(|x| x / n)
        }
    };
    // SAFETY: forwarded from this function's contract.
    unsafe { store(out, r) };
    len
}

/// Registers the vector geometric functions: `(op, type, width)` for widths 2 to 4.
pub(super) fn register(r: &mut Registry) {
    macro_rules! widths {
        ($($n:literal),*) => {$(
            let entries = [
                (
                    [ClOp::length, ClOp::fast_length],
                    native!(concat!("length_f32x", $n), length_f32::<$n>, [Ptr] -> F32),
                    native!(concat!("length_f64x", $n), length_f64::<$n>, [Ptr] -> F64),
                ),
                (
                    [ClOp::distance, ClOp::fast_distance],
                    native!(concat!("distance_f32x", $n), distance_f32::<$n>, [Ptr, Ptr] -> F32),
                    native!(concat!("distance_f64x", $n), distance_f64::<$n>, [Ptr, Ptr] -> F64),
                ),
                (
                    [ClOp::normalize, ClOp::fast_normalize],
                    native!(concat!("normalize_f32x", $n), normalize_f32::<$n>, [Ptr, Ptr] -> F32),
                    native!(concat!("normalize_f64x", $n), normalize_f64::<$n>, [Ptr, Ptr] -> F64),
                ),
            ];
            for (ops, f32v, f64v) in entries {
                for op in ops {
                    r.add_vector(op, Scalar::F32, $n, f32v);
                    r.add_vector(op, Scalar::F64, $n, f64v);
                }
            }
        )*};
    }
    widths!(2, 3, 4);
}
