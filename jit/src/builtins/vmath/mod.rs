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
mod explog;
mod hyper;
#[cfg(test)]
mod tests;
mod trig;

use super::ClOp;

/// Lanes per block: one 256-bit register of `f32`, two (or one 512-bit) of `f64`.
const B: usize = 8;

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

/// Reads the `B` lanes at `p`, or (`half`) the 4 lanes at `p` twice.
///
/// On x86-64 as 16-byte loads: the generated code has just stored the lanes as
/// 16-byte chunks, and a 32-byte load of two such stores misses store-to-load
/// forwarding (measured: the most expensive instruction of a call; it made `pow` 2.6x
/// slower than `exp`). The loads are volatile because LLVM otherwise merges them into
/// one 32-byte load, and with AVX (`F`) the halves are joined in a register
/// ([`join_avx`]), because a round trip through a stack array is again two 16-byte
/// stores and a 32-byte load.
///
/// # Safety
/// `p .. p + B` (`p .. p + 4` for `half`) must be readable.
#[inline(always)]
unsafe fn load<const F: bool>(p: *const f32, half: bool) -> [f32; B] {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__m128;
        #[repr(C, packed)]
        #[derive(Clone, Copy)]
        struct Unaligned(__m128);
        // SAFETY: the caller guarantees the lanes read (packed: any alignment).
        let (lo, hi) = unsafe {
            let lo = p.cast::<Unaligned>().read_volatile().0;
            let hi = if half {
                lo
            } else {
                p.add(4).cast::<Unaligned>().read_volatile().0
            };
            (lo, hi)
        };
        if F {
            // SAFETY: F routines run only on hosts with AVX2 (see `routine!`).
            return unsafe { join_avx(lo, hi) };
        }
        // SAFETY: two 16-byte vectors are 8 f32 lanes.
        unsafe { std::mem::transmute::<[__m128; 2], [f32; B]>([lo, hi]) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller guarantees the lanes read.
    unsafe {
        if half {
            let q = p.cast::<[f32; 4]>().read_unaligned();
            [q[0], q[1], q[2], q[3], q[0], q[1], q[2], q[3]]
        } else {
            p.cast::<[f32; B]>().read_unaligned()
        }
    }
}

/// `lo` and `hi` as one 256-bit register (`vinsertf128`), viewed as lanes.
///
/// # Safety
/// The host must support AVX.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx")]
unsafe fn join_avx(lo: std::arch::x86_64::__m128, hi: std::arch::x86_64::__m128) -> [f32; B] {
    use std::arch::x86_64::{__m256, _mm256_set_m128};
    // SAFETY: a 256-bit vector is 8 f32 lanes.
    unsafe { std::mem::transmute::<__m256, [f32; B]>(_mm256_set_m128(hi, lo)) }
}

/// Writes the `B` lanes of `r` to `p`, or (`half`) the first 4.
///
/// # Safety
/// `p .. p + B` (`p .. p + 4` for `half`) must be writable.
#[inline(always)]
unsafe fn store(p: *mut f32, r: [f32; B], half: bool) {
    // SAFETY: the caller guarantees the lanes written.
    unsafe {
        if half {
            p.cast::<[f32; 4]>()
                .write_unaligned([r[0], r[1], r[2], r[3]]);
        } else {
            p.cast::<[f32; B]>().write_unaligned(r);
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

/// One block of a unary function: `B` lanes from `a` to `out`, or (`half`) 4.
///
/// # Safety
/// `a` readable and `out` writable for those lanes.
#[inline(always)]
unsafe fn block1<T: Unary, const F: bool>(a: *const f32, out: *mut f32, half: bool) {
    // SAFETY: the caller's contract.
    let x = unsafe { load::<F>(a, half) };
    let mut r = [0.0f32; B];
    let mut ok = true;
    for j in 0..B {
        r[j] = T::fast::<F>(x[j]);
        ok &= T::easy(x[j]);
    }
    // SAFETY: the caller's contract.
    unsafe {
        store(out, r, half);
        if !ok {
            fix1::<T>(a, out, if half { 4 } else { B });
        }
    }
}

/// One block of a binary function, as [`block1`].
///
/// # Safety
/// `a`, `b` readable and `out` writable for those lanes.
#[inline(always)]
unsafe fn block2<T: Binary, const F: bool>(
    a: *const f32,
    b: *const f32,
    out: *mut f32,
    half: bool,
) {
    // SAFETY: the caller's contract.
    let (x, y) = unsafe { (load::<F>(a, half), load::<F>(b, half)) };
    let mut r = [0.0f32; B];
    let mut ok = true;
    for j in 0..B {
        r[j] = T::fast::<F>(x[j], y[j]);
        ok &= T::easy(x[j], y[j]);
    }
    // SAFETY: the caller's contract.
    unsafe {
        store(out, r, half);
        if !ok {
            fix2::<T>(a, b, out, if half { 4 } else { B });
        }
    }
}

/// Unary driver: [`block1`] for every block of `B` lanes, then a half block of 4 (the
/// code generator passes multiples of 4), then single lanes through the scalar
/// function. Nothing goes through the stack: the routine needs no frame.
///
/// # Safety
/// `a` readable and `out` writable for `n` lanes.
#[inline(always)]
unsafe fn run1<T: Unary, const F: bool>(a: *const f32, out: *mut f32, n: usize) {
    // One block (a sub-group of 8 lanes, the common call): straight-line code, whose
    // constants LLVM does not hoist out of a loop into stack slots.
    if n == B {
        // SAFETY: n == B lanes.
        unsafe { block1::<T, F>(a, out, false) };
        return;
    }
    let mut i = 0;
    // SAFETY: every block and lane is below n.
    unsafe {
        while i + B <= n {
            block1::<T, F>(a.add(i), out.add(i), false);
            i += B;
        }
        if i + 4 <= n {
            block1::<T, F>(a.add(i), out.add(i), true);
            i += 4;
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
unsafe fn run2<T: Binary, const F: bool>(a: *const f32, b: *const f32, out: *mut f32, n: usize) {
    if n == B {
        // SAFETY: n == B lanes.
        unsafe { block2::<T, F>(a, b, out, false) };
        return;
    }
    let mut i = 0;
    // SAFETY: every block and lane is below n.
    unsafe {
        while i + B <= n {
            block2::<T, F>(a.add(i), b.add(i), out.add(i), false);
            i += B;
        }
        if i + 4 <= n {
            block2::<T, F>(a.add(i), b.add(i), out.add(i), true);
            i += 4;
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
/// `$run` is [`run1`] or [`run2`] (the unary ones ignore `b`).
macro_rules! routine {
    ($m:ident, $t:ty, $run:ident) => {
        mod $m {
            use super::*;
            /// # Safety
            /// The module doc's ABI.
            unsafe extern "C" fn base(a: *const f32, b: *const f32, out: *mut f32, n: usize) {
                // SAFETY: forwarded from the ABI contract.
                unsafe { $run!($t, false, a, b, out, n) }
            }
            /// # Safety
            /// The module doc's ABI, on a host with AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            unsafe extern "C" fn avx2(a: *const f32, b: *const f32, out: *mut f32, n: usize) {
                // SAFETY: forwarded from the ABI contract.
                unsafe { $run!($t, true, a, b, out, n) }
            }
            /// # Safety
            /// The module doc's ABI, on a host with AVX-512F, AVX2 and FMA.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx2,fma")]
            unsafe extern "C" fn avx512(a: *const f32, b: *const f32, out: *mut f32, n: usize) {
                // SAFETY: forwarded from the ABI contract.
                unsafe { $run!($t, true, a, b, out, n) }
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
    ($t:ty, $f:expr, $a:expr, $b:expr, $out:expr, $n:expr) => {{
        let _ = $b;
        run1::<$t, $f>($a, $out, $n)
    }};
}
macro_rules! bin {
    ($t:ty, $f:expr, $a:expr, $b:expr, $out:expr, $n:expr) => {
        run2::<$t, $f>($a, $b, $out, $n)
    };
}

routine!(vsin, trig::Sin, un);
routine!(vcos, trig::Cos, un);
routine!(vtan, trig::Tan, un);
routine!(vexp, explog::Exp, un);
routine!(vexp2, explog::Exp2, un);
routine!(vexp10, explog::Exp10, un);
routine!(vlog, explog::Log, un);
routine!(vlog2, explog::Log2, un);
routine!(vlog10, explog::Log10, un);
routine!(vtanh, hyper::Tanh, un);
routine!(verf, hyper::Erf, un);
routine!(vpow, explog::Pow, bin);
routine!(vpowr, explog::Powr, bin);

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
