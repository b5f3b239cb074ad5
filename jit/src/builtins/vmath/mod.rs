//! Vector `f32` OpenCL.std math: one call evaluates a function for every lane of a
//! sub-group (and every component of an OpenCL vector) at once.
//!
//! Design. The lane model used to call the scalar library once per lane; for the hot
//! transcendental functions this was most of a math kernel's time. Here each function
//! is a branch-free `f64` evaluation of one lane ([`core`]: Cody-Waite reduction,
//! short polynomials, exponent bit tricks), looped over blocks of 8 lanes so that LLVM
//! vectorises it, and compiled three times (`#[target_feature]`: AVX-512F, AVX2 + FMA,
//! baseline SSE2), picked at run time for the host. Computing an `f32` result in `f64`
//! and rounding once keeps every function within about 0.5 ulp (far inside the OpenCL
//! limits, so `half_*`/`native_*` use the same code) and treats subnormal operands and
//! results exactly as the scalar library does (as numbers: no flushing). Lanes outside a
//! function's easy range (huge trigonometric arguments, NaN, the special operands of
//! `log`/`pow`, ...) are recomputed by the scalar function, which owns the special
//! values, so precision never regresses and special cases stay exact.
//! The exception: `sin`, `cos` and `exp`, the functions of clbench `math`, have `f32`
//! kernels ([`core32`]: under 2 ulp, with FMA) in the compilations with FMA, run on
//! blocks of 16 lanes (one 512-bit register, a whole sub-group of 16), a third of the
//! instructions of the `f64` kernels; the SSE2 compilation keeps the `f64` ones.
//!
//! Why vector Rust rather than inline Cranelift IR: Cranelift's x86 back end has only
//! 128-bit vectors and no `f64` <-> `i64` lane conversions, while these routines run on
//! 256/512-bit registers; the rare-lane fallback is plain Rust; and the code is tested
//! directly against references (`tests.rs`). The cost is one call per sub-group and
//! function plus a store/load of the lanes through a stack slot (`lower::vmath`).
//!
//! ABI of every routine: `extern "C" fn(a: *const f32, b: *const f32, out: *mut f32,
//! n: usize)`: `n` lanes of the operands (`b` ignored by unary functions) in, `n` results
//! out; `out` does not overlap the operands.

mod core;
mod core32;
mod explog;
mod hyper;
mod hypot;
#[cfg(test)]
mod tests;
mod trig;

use super::ClOp;

/// Lanes per block of the `f64` kernels: one 256-bit register of `f32`, two (or one
/// 512-bit) of `f64`.
const B: usize = 8;

/// Lanes per block of the routines with `f32` kernels ([`core32`]) in the compilations
/// with FMA: one 512-bit register (two 256-bit ones), a whole sub-group of 16.
const B32: usize = 16;

/// A one-operand function: `fast` is valid where `easy` holds; `slow` everywhere.
pub(crate) trait Unary {
    fn easy(x: f32) -> bool;
    fn fast<const F: bool>(x: f32) -> f32;
    fn slow(x: f32) -> f32;
}

/// A two-operand function, as [`Unary`].
pub(crate) trait Binary {
    fn easy(x: f32, y: f32) -> bool;
    fn fast<const F: bool>(x: f32, y: f32) -> f32;
    fn slow(x: f32, y: f32) -> f32;
}

/// Reads `N` lanes (8 or 16) at `p`, of which the first `m` (a multiple of 4) are
/// operands: the missing 4-lane chunks repeat the first one.
///
/// On x86-64 as 16-byte loads: the generated code has just stored the lanes as
/// 16-byte chunks, and a 32-byte load of two such stores misses store-to-load
/// forwarding (measured: the most expensive instruction of a call; it made `pow` 2.6x
/// slower than `exp`). The loads are volatile because LLVM otherwise merges them into
/// wider loads, and with AVX (`F`) pairs of chunks are joined in a register
/// ([`join_avx`]), because a round trip through a stack array is again 16-byte
/// stores and a wider load.
///
/// # Safety
/// `p .. p + m` must be readable; `4 <= m <= N`, `N` is 8 or 16.
#[inline(always)]
unsafe fn load<const F: bool, const N: usize>(p: *const f32, m: usize) -> [f32; N] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__m128;
        #[repr(C, packed)]
        #[derive(Clone, Copy)]
        struct Unaligned(__m128);
        // SAFETY: the caller guarantees the chunks read (packed: any alignment).
        let chunk = |c: usize| unsafe {
            let c = if 4 * c < m { c } else { 0 };
            p.add(4 * c).cast::<Unaligned>().read_volatile().0
        };
        let mut lanes = [0.0f32; N];
        for pair in 0..N / 8 {
            let (lo, hi) = (chunk(2 * pair), chunk(2 * pair + 1));
            let eight: [f32; 8] = if F {
                // SAFETY: F routines run only on hosts with AVX2 (see `routine!`).
                unsafe { join_avx(lo, hi) }
            } else {
                // SAFETY: two 16-byte vectors are 8 f32 lanes.
                unsafe { std::mem::transmute::<[__m128; 2], [f32; 8]>([lo, hi]) }
            };
            lanes[8 * pair..8 * pair + 8].copy_from_slice(&eight);
        }
        lanes
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut lanes = [0.0f32; N];
        for (i, l) in lanes.iter_mut().enumerate() {
            let j = if i < m { i } else { i % 4 };
            // SAFETY: j < m (the caller guarantees the lanes read).
            *l = unsafe { p.add(j).read() };
        }
        lanes
    }
}

/// `lo` and `hi` as one 256-bit register (`vinsertf128`), viewed as lanes.
///
/// # Safety
/// The host must support AVX.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx")]
unsafe fn join_avx(lo: std::arch::x86_64::__m128, hi: std::arch::x86_64::__m128) -> [f32; 8] {
    use std::arch::x86_64::{__m256, _mm256_set_m128};
    // SAFETY: a 256-bit vector is 8 f32 lanes.
    unsafe { std::mem::transmute::<__m256, [f32; 8]>(_mm256_set_m128(hi, lo)) }
}

/// Writes the first `m` (a multiple of 4) of the `N` lanes of `r` to `p`.
///
/// # Safety
/// `p .. p + m` must be writable.
#[inline(always)]
unsafe fn store<const N: usize>(p: *mut f32, r: [f32; N], m: usize) {
    // SAFETY: the caller guarantees the lanes written.
    unsafe {
        if m == N {
            p.cast::<[f32; N]>().write_unaligned(r);
        } else {
            for c in 0..m / 4 {
                p.add(4 * c).cast::<[f32; 4]>().write_unaligned([
                    r[4 * c],
                    r[4 * c + 1],
                    r[4 * c + 2],
                    r[4 * c + 3],
                ]);
            }
        }
    }
}

/// The scalar function for the `m` lanes at `a` where `easy` fails, over the fast
/// results at `out`: out of line and reading the operands again from memory (rare),
/// so that the block code keeps its lanes in registers and needs no stack frame.
///
/// # Safety
/// `a` readable and `out` writable for `m` lanes.
#[cold]
#[inline(never)]
unsafe fn fix1<T: Unary>(a: *const f32, out: *mut f32, m: usize) {
    for j in 0..m {
        // SAFETY: j < m (the caller's contract).
        unsafe {
            let x = a.add(j).read();
            if !T::easy(x) {
                out.add(j).write(T::slow(x));
            }
        }
    }
}

/// [`fix1`] for two operands.
///
/// # Safety
/// `a`, `b` readable and `out` writable for `m` lanes.
#[cold]
#[inline(never)]
unsafe fn fix2<T: Binary>(a: *const f32, b: *const f32, out: *mut f32, m: usize) {
    for j in 0..m {
        // SAFETY: j < m (the caller's contract).
        unsafe {
            let (x, y) = (a.add(j).read(), b.add(j).read());
            if !T::easy(x, y) {
                out.add(j).write(T::slow(x, y));
            }
        }
    }
}

/// One block of a unary function: `m` lanes (a multiple of 4, at most `N`) from `a`
/// to `out`, computed as `N`.
///
/// # Safety
/// `a` readable and `out` writable for `m` lanes.
#[inline(always)]
unsafe fn block1<T: Unary, const F: bool, const N: usize>(a: *const f32, out: *mut f32, m: usize) {
    // SAFETY: the caller's contract.
    let x = unsafe { load::<F, N>(a, m) };
    let mut r = [0.0f32; N];
    let mut ok = true;
    for j in 0..N {
        r[j] = T::fast::<F>(x[j]);
        ok &= T::easy(x[j]);
    }
    // SAFETY: the caller's contract.
    unsafe {
        store(out, r, m);
        if !ok {
            fix1::<T>(a, out, m);
        }
    }
}

/// One block of a binary function, as [`block1`].
///
/// # Safety
/// `a`, `b` readable and `out` writable for `m` lanes.
#[inline(always)]
unsafe fn block2<T: Binary, const F: bool, const N: usize>(
    a: *const f32,
    b: *const f32,
    out: *mut f32,
    m: usize,
) {
    // SAFETY: the caller's contract.
    let (x, y) = unsafe { (load::<F, N>(a, m), load::<F, N>(b, m)) };
    let mut r = [0.0f32; N];
    let mut ok = true;
    for j in 0..N {
        r[j] = T::fast::<F>(x[j], y[j]);
        ok &= T::easy(x[j], y[j]);
    }
    // SAFETY: the caller's contract.
    unsafe {
        store(out, r, m);
        if !ok {
            fix2::<T>(a, b, out, m);
        }
    }
}

/// Unary driver: [`block1`] for every block of `N` lanes, then one partial block of
/// the remaining multiple of 4 (the code generator passes multiples of 4), then single
/// lanes through the scalar function. Nothing goes through the stack: the routine
/// needs no frame.
///
/// # Safety
/// `a` readable and `out` writable for `n` lanes.
#[inline(always)]
unsafe fn run1<T: Unary, const F: bool, const N: usize>(a: *const f32, out: *mut f32, n: usize) {
    // One block (a sub-group of N lanes, the common call): straight-line code, whose
    // constants LLVM does not hoist out of a loop into stack slots.
    if n == N {
        // SAFETY: n == N lanes.
        unsafe { block1::<T, F, N>(a, out, N) };
        return;
    }
    let mut i = 0;
    // SAFETY: every block and lane is below n.
    unsafe {
        while i + N <= n {
            block1::<T, F, N>(a.add(i), out.add(i), N);
            i += N;
        }
        let m = (n - i) & !3;
        if m > 0 {
            block1::<T, F, N>(a.add(i), out.add(i), m);
            i += m;
        }
        while i < n {
            out.add(i).write(T::slow(a.add(i).read()));
            i += 1;
        }
    }
}

/// Binary driver, as [`run1`].
///
/// # Safety
/// `a`, `b` readable and `out` writable for `n` lanes.
#[inline(always)]
unsafe fn run2<T: Binary, const F: bool, const N: usize>(
    a: *const f32,
    b: *const f32,
    out: *mut f32,
    n: usize,
) {
    if n == N {
        // SAFETY: n == N lanes.
        unsafe { block2::<T, F, N>(a, b, out, N) };
        return;
    }
    let mut i = 0;
    // SAFETY: every block and lane is below n.
    unsafe {
        while i + N <= n {
            block2::<T, F, N>(a.add(i), b.add(i), out.add(i), N);
            i += N;
        }
        let m = (n - i) & !3;
        if m > 0 {
            block2::<T, F, N>(a.add(i), b.add(i), out.add(i), m);
            i += m;
        }
        while i < n {
            out.add(i).write(T::slow(a.add(i).read(), b.add(i).read()));
            i += 1;
        }
    }
}

/// The instruction-set level of this host, detected once.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Base,
    #[cfg(target_arch = "x86_64")]
    Avx2,
    #[cfg(target_arch = "x86_64")]
    Avx512,
}

/// The level to use: the host's best, or lower with `CRANECL_VMATH_ISA=base|avx2` (to
/// test and measure the other compilations).
fn level() -> Level {
    let cap = std::env::var("CRANECL_VMATH_ISA").unwrap_or_default();
    if cap == "base" {
        return Level::Base;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let avx2 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
        if avx2 && cap == "avx2" {
            return Level::Avx2;
        }
        if avx2 && is_x86_feature_detected!("avx512f") {
            return Level::Avx512;
        }
        if avx2 {
            return Level::Avx2;
        }
    }
    Level::Base
}

/// The three compilations of a routine, one of which [`symbols`] registers.
#[derive(Clone, Copy)]
struct Variants {
    base: VFn,
    #[cfg(target_arch = "x86_64")]
    avx2: VFn,
    #[cfg(target_arch = "x86_64")]
    avx512: VFn,
}

impl Variants {
    /// The best compilation this host runs.
    fn best(&self) -> VFn {
        match level() {
            Level::Base => self.base,
            #[cfg(target_arch = "x86_64")]
            Level::Avx2 => self.avx2,
            #[cfg(target_arch = "x86_64")]
            Level::Avx512 => self.avx512,
        }
    }
}

/// Defines the three compilations of a routine as a module with [`Variants`] `V`;
/// `$run` is [`run1`] or [`run2`] (the unary ones ignore `b`); `$n` is the block of the
/// compilations with FMA ([`B`], or [`B32`] for the routines with `f32` kernels).
macro_rules! routine {
    ($m:ident, $t:ty, $run:ident) => {
        routine!($m, $t, $run, B);
    };
    ($m:ident, $t:ty, $run:ident, $n:expr) => {
        mod $m {
            use super::*;
            /// # Safety
            /// The module doc's ABI.
            unsafe extern "C" fn base(a: *const f32, b: *const f32, out: *mut f32, n: usize) {
                // SAFETY: forwarded from the ABI contract.
                unsafe { $run!($t, false, B, a, b, out, n) }
            }
            /// # Safety
            /// The module doc's ABI, on a host with AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            unsafe extern "C" fn avx2(a: *const f32, b: *const f32, out: *mut f32, n: usize) {
                // SAFETY: forwarded from the ABI contract.
                unsafe { $run!($t, true, $n, a, b, out, n) }
            }
            /// # Safety
            /// The module doc's ABI, on a host with AVX-512F, AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx2,fma")]
            unsafe extern "C" fn avx512(a: *const f32, b: *const f32, out: *mut f32, n: usize) {
                // SAFETY: forwarded from the ABI contract.
                unsafe { $run!($t, true, $n, a, b, out, n) }
            }
            pub(super) const V: Variants = Variants {
                base,
                #[cfg(target_arch = "x86_64")]
                avx2,
                #[cfg(target_arch = "x86_64")]
                avx512,
            };
        }
    };
}

macro_rules! un {
    ($t:ty, $f:expr, $w:expr, $a:expr, $b:expr, $out:expr, $n:expr) => {{
        let _ = $b;
        run1::<$t, $f, { $w }>($a, $out, $n)
    }};
}
macro_rules! bin {
    ($t:ty, $f:expr, $w:expr, $a:expr, $b:expr, $out:expr, $n:expr) => {
        run2::<$t, $f, { $w }>($a, $b, $out, $n)
    };
}

routine!(vsin, trig::Sin, un, B32);
routine!(vcos, trig::Cos, un, B32);
routine!(vtan, trig::Tan, un);
routine!(vexp, explog::Exp, un, B32);
routine!(vexp2, explog::Exp2, un);
routine!(vexp10, explog::Exp10, un);
routine!(vlog, explog::Log, un);
routine!(vlog2, explog::Log2, un);
routine!(vlog10, explog::Log10, un);
routine!(vtanh, hyper::Tanh, un);
routine!(verf, hyper::Erf, un);
routine!(vpow, explog::Pow, bin);
routine!(vpowr, explog::Powr, bin);
routine!(vhypot, hypot::Hypot, bin);

/// A vector routine (see the module doc for its ABI).
pub type VFn = unsafe extern "C" fn(*const f32, *const f32, *mut f32, usize);

/// Every routine: (symbol, function, operand count, the opcodes it implements). The
/// `half_*`/`native_*` forms share the full-precision routine.
const TABLE: &[(&str, Variants, usize, &[ClOp])] = &[
    (
        "cranecl_vsin_f32",
        vsin::V,
        1,
        &[ClOp::sin, ClOp::half_sin, ClOp::native_sin],
    ),
    (
        "cranecl_vcos_f32",
        vcos::V,
        1,
        &[ClOp::cos, ClOp::half_cos, ClOp::native_cos],
    ),
    (
        "cranecl_vtan_f32",
        vtan::V,
        1,
        &[ClOp::tan, ClOp::half_tan, ClOp::native_tan],
    ),
    (
        "cranecl_vexp_f32",
        vexp::V,
        1,
        &[ClOp::exp, ClOp::half_exp, ClOp::native_exp],
    ),
    (
        "cranecl_vexp2_f32",
        vexp2::V,
        1,
        &[ClOp::exp2, ClOp::half_exp2, ClOp::native_exp2],
    ),
    (
        "cranecl_vexp10_f32",
        vexp10::V,
        1,
        &[ClOp::exp10, ClOp::half_exp10, ClOp::native_exp10],
    ),
    (
        "cranecl_vlog_f32",
        vlog::V,
        1,
        &[ClOp::log, ClOp::half_log, ClOp::native_log],
    ),
    (
        "cranecl_vlog2_f32",
        vlog2::V,
        1,
        &[ClOp::log2, ClOp::half_log2, ClOp::native_log2],
    ),
    (
        "cranecl_vlog10_f32",
        vlog10::V,
        1,
        &[ClOp::log10, ClOp::half_log10, ClOp::native_log10],
    ),
    ("cranecl_vtanh_f32", vtanh::V, 1, &[ClOp::tanh]),
    ("cranecl_verf_f32", verf::V, 1, &[ClOp::erf]),
    ("cranecl_vpow_f32", vpow::V, 2, &[ClOp::pow]),
    (
        "cranecl_vpowr_f32",
        vpowr::V,
        2,
        &[ClOp::powr, ClOp::half_powr, ClOp::native_powr],
    ),
    ("cranecl_vhypot_f32", vhypot::V, 2, &[ClOp::hypot]),
];

/// The vector routine for an `f32` OpenCL.std opcode: (symbol, operand count).
pub fn lookup(opcode: u32) -> Option<(&'static str, usize)> {
    TABLE
        .iter()
        .find(|(_, _, _, ops)| ops.iter().any(|o| *o as u32 == opcode))
        .map(|(s, _, n, _)| (*s, *n))
}

/// The routine of `symbol` for this host (tests call the routines through this).
pub fn routine(symbol: &str) -> Option<VFn> {
    TABLE
        .iter()
        .find(|(s, ..)| *s == symbol)
        .map(|(_, v, ..)| v.best())
}

/// Every routine's symbol, for the JIT builder: the best compilation for this host,
/// chosen once here rather than at each call.
pub fn symbols() -> Vec<(&'static str, *const u8)> {
    TABLE
        .iter()
        .map(|(s, v, _, _)| (*s, v.best() as *const u8))
        .collect()
}
