//! Size tiers: how a kernel is compiled is decided from an estimate of its size
//! before it is lowered, so that no lowering is thrown away.
//!
//! Compile time is about linear in the number of Cranelift instructions, and most of
//! a big kernel's instructions are per-lane code (gathers, scatters, accesses under
//! partial masks: W instructions each) in four copies (two sub-group layouts, each
//! with a full-mask and a partial-mask copy). [`estimate`] predicts the instruction
//! count of one layout body from the flat SPIR-V (within some 30% on the shapes of
//! `conformance/examples/build_scale.rs` and pyopencl's Bessel functions), and
//! [`plan`] picks:
//! - normal kernels: both layouts in one function, or one function per layout when
//!   that is too big for the backtracking register allocator (`codegen`);
//! - huge kernels (a few thousand statements; more than [`HUGE_LAYOUT_INSTS`]
//!   estimated per layout): only the general layout (valid for every work-group),
//!   at the smallest sub-group width the kernel allows (per-lane code shrinks with
//!   it, vector code does not grow), compiled without the mid-end optimiser and with
//!   the single-pass register allocator. Slower code (some 1.5x) for a build that
//!   takes a fraction of the time. Their lowering is straight-line wherever it can
//!   be (`lower::Tr::huge`: per-lane accesses without run-time contiguity checks or
//!   active-lane loops, no scheduling checkpoints): the single-pass allocator
//!   passes every live value through every block boundary, so thousands of blocks
//!   with thousands of live values cost their product.
//!
//! A huge kernel is refused (`CL_OUT_OF_RESOURCES`, before lowering) past
//! [`MAX_INSTS`] or when its stack frame would pass `codegen::MAX_FRAME_BYTES`
//! ([`huge_frame_bytes`]: the single-pass allocator never reuses a spill slot); a
//! width that is only a default, not required, drops to the narrowest instead.

use crate::analysis::flatten::FlatFunction;
use crate::analysis::uniformity::Uniformity;
use crate::spirv::{Id, Module, Op, Type};
use crate::CompileError;

/// Estimated Cranelift instructions of one layout body above which a kernel is
/// compiled as a huge one. pyopencl's `bessel_yn` (4400 SPIR-V instructions, run
/// time that matters) estimates to about 70% of this; the 1000-statement kernels of
/// `build_scale` to one to four times it.
pub const HUGE_LAYOUT_INSTS: usize = 100_000;

/// Estimated Cranelift instructions of a huge kernel above which the build fails
/// with `CL_OUT_OF_RESOURCES` instead of compiling it (some 2 GB of compiler memory
/// and half a minute of CPU).
pub const MAX_INSTS: usize = 6_000_000;

/// The features of a flat kernel that its size depends on.
#[derive(Clone, Copy, Debug, Default)]
pub struct Features {
    /// Memory accesses through a varying pointer, in leaves (per-lane code each).
    pub lane_accesses: usize,
    /// Other instructions with a varying result, in leaves.
    pub varying: usize,
    /// 64-bit leaves among `varying` (two chunks per four lanes).
    pub varying_wide: usize,
    /// Instructions with a uniform result or none.
    pub uniform: usize,
    /// Sub-group and work-group operations (per-lane scans, reductions, shuffles).
    pub groups: usize,
    /// Barriers (region splits: live values saved and restored around each).
    pub barriers: usize,
    /// Control-flow edges (successors of every block: a switch has one per case).
    pub edges: usize,
    /// Whether any branch diverges (a masked, linearised body).
    pub divergent: bool,
}

/// Leaves of type `ty` (components of vectors, members of structs and arrays,
/// capped); 1 for scalars and pointers. Second: whether they are 64-bit.
fn leaves(m: &Module, ty: Option<Id>) -> (usize, bool) {
    fn go(m: &Module, ty: Id, depth: u32) -> (usize, bool) {
        if depth > 8 {
            return (1, false);
        }
        match m.types.get(&ty) {
            Some(Type::Vector { elem, count }) => {
                let (n, w) = go(m, *elem, depth + 1);
                (n * *count as usize, w)
            }
            Some(Type::Array { elem, len }) => {
                let (n, w) = go(m, *elem, depth + 1);
                (n.saturating_mul((*len as usize).min(4096)), w)
            }
            Some(Type::Struct { members, .. }) => {
                let mut total = 0;
                let mut wide = false;
                for mem in members {
                    let (n, w) = go(m, *mem, depth + 1);
                    total += n;
                    wide |= w;
                }
                (total.max(1), wide)
            }
            Some(Type::Int { bits: 64 } | Type::Float { bits: 64 }) => (1, true),
            Some(Type::Pointer { .. }) => (1, true),
            _ => (1, false),
        }
    }
    ty.map_or((1, false), |t| go(m, t, 0))
}

/// Counts the features of `f`.
pub fn features(m: &Module, f: &FlatFunction, uni: &Uniformity) -> Features {
    let mut out = Features {
        edges: f.blocks.iter().map(|b| b.term.successors().len()).sum(),
        divergent: uni.any_divergence(),
        ..Default::default()
    };
    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
        match &inst.op {
            Op::Group { .. } => out.groups += 1,
            Op::ControlBarrier { .. } => out.barriers += 1,
            _ => {}
        }
        let access = match &inst.op {
            Op::Load { ptr, .. } => Some((*ptr, leaves(m, inst.ty).0)),
            Op::Store { ptr, .. } => Some((*ptr, 1)),
            Op::CopyMemory { dst, .. } => Some((*dst, 2)),
            Op::Atomic { ptr, .. } => Some((*ptr, 2)),
            _ => None,
        };
        match access {
            Some((ptr, n)) if uni.is_varying(ptr) => out.lane_accesses += n,
            _ => match inst.result {
                Some(r) if uni.is_varying(r) => {
                    let (n, wide) = leaves(m, inst.ty);
                    out.varying += n;
                    if wide {
                        out.varying_wide += n;
                    }
                }
                _ => {
                    if !matches!(inst.op, Op::Nop | Op::Uses(_)) {
                        out.uniform += 1;
                    }
                }
            },
        }
    }
    out
}

/// Estimated Cranelift instructions of one layout body (its full-mask and
/// partial-mask copies) at sub-group width `w`: a least-squares fit to the sizes
/// of `build_scale`'s shapes at N = 100 and 1000 and of pyopencl's `bessel_jn` and
/// `bessel_yn`, at widths 4, 8 and 16 (within 30% of each).
pub fn estimate(x: &Features, w: u32) -> usize {
    let w = w as usize;
    let chunks = w.div_ceil(4);
    let barrier_values = if x.barriers > 0 {
        16 * x.varying * chunks
    } else {
        0
    };
    let edges = if x.divergent {
        x.edges * (5 + 24 * chunks) / 2
    } else {
        0
    };
    x.lane_accesses * (28 + 11 * w) / 2
        + x.varying * 4 * chunks
        + x.varying_wide * chunks
        + x.uniform * 10
        + x.groups * 17 * w / 2
        + barrier_values
        + edges
}

/// How a kernel's code is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Both layout bodies in one function (one function per body when it comes out
    /// too big: `codegen::SPLIT_LAYOUTS_MIN_INSTS`).
    OneFunction,
    /// One function per layout body, known to be needed before lowering.
    Split,
    /// Only the general layout, compiled with the least effort.
    Huge,
}

/// The width and shape a kernel is compiled with.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    pub width: u32,
    pub shape: Shape,
}

/// The sub-group width of huge kernels whose width is free.
const HUGE_WIDTH: u32 = 4;

/// Estimated instructions of both layout bodies above which they are lowered as two
/// functions straight away (half again the threshold of the split, so that the
/// estimate's error does not split kernels that would not be).
const SPLIT_SURE_INSTS: usize = crate::codegen::SPLIT_LAYOUTS_MIN_INSTS * 3 / 2;

/// Estimated stack frame of a huge kernel of `est` estimated instructions at width
/// `w`, in bytes. The single-pass register allocator gives every value it spills a
/// slot of its own for the whole function, so the frame grows with the code, and
/// faster at wide widths (a value is more vectors, more of them spilled). The
/// factor is about the largest frame per estimated instruction of
/// `build_scale`'s shapes compiled huge at widths 4 to 32 (3, 4.3, 5.9 and 7.0
/// bytes; a width-32 kernel of `float16` loads: 3.6).
pub fn huge_frame_bytes(est: usize, w: u32) -> usize {
    let doublings = (w.max(4) / 4).ilog2() as usize;
    est.saturating_mul(9 + 4 * doublings) / 3
}

/// Why a huge kernel of features `x` cannot be compiled at width `w`, if it cannot.
fn too_big(x: &Features, w: u32) -> Option<CompileError> {
    let est = estimate(x, w);
    if est > MAX_INSTS {
        return Some(CompileError::out_of_resources(format!(
            "the kernel is too large to compile: about {:.1} million machine instructions \
             (at most {} million are supported)",
            est as f64 / 1e6,
            MAX_INSTS / 1_000_000
        )));
    }
    let frame = huge_frame_bytes(est, w);
    if frame > crate::codegen::MAX_FRAME_BYTES {
        return Some(CompileError::out_of_resources(format!(
            "the kernel is too large to compile at sub-group size {w}: about {:.1} million \
             machine instructions, whose code would need a stack frame of about {} MB (a \
             work-item thread has {} MB)",
            est as f64 / 1e6,
            frame >> 20,
            crate::codegen::MAX_FRAME_BYTES >> 20
        )));
    }
    None
}

/// How a kernel's sub-group width was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WidthChoice {
    /// By the compiler: a huge kernel takes the smallest width.
    Free,
    /// A default asked for (a driver setting): kept unless the kernel is too big
    /// to compile at it.
    Default,
    /// Required by the kernel (`intel_reqd_sub_group_size`, `SubgroupSize`).
    Required,
}

/// The plan for a kernel of features `x` whose width would be `w`, chosen as
/// `choice`; `contiguous(w)`: whether the lane-contiguous layout can occur at
/// width `w`. A kernel too big to compile at all (too many instructions, or a stack
/// frame a work-item thread cannot hold) is `CL_OUT_OF_RESOURCES`, found before any
/// lowering.
pub fn plan(
    x: &Features,
    w: u32,
    choice: WidthChoice,
    contiguous: impl Fn(u32) -> bool,
) -> Result<Plan, CompileError> {
    let est = estimate(x, w);
    if est > huge_layout_insts() {
        let narrow = HUGE_WIDTH.min(w);
        let width = if choice == WidthChoice::Free {
            narrow
        } else {
            w
        };
        let width = match too_big(x, width) {
            None => width,
            Some(_) if choice == WidthChoice::Default && too_big(x, narrow).is_none() => narrow,
            Some(e) => return Err(e),
        };
        return Ok(Plan {
            width,
            shape: Shape::Huge,
        });
    }
    let shape = if contiguous(w) && 2 * est > SPLIT_SURE_INSTS {
        Shape::Split
    } else {
        Shape::OneFunction
    };
    Ok(Plan { width: w, shape })
}

/// [`HUGE_LAYOUT_INSTS`], or `CRANECL_HUGE_INSTS` (tests: 0 compiles every kernel as
/// a huge one).
fn huge_layout_insts() -> usize {
    static V: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *V.get_or_init(|| {
        std::env::var("CRANECL_HUGE_INSTS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(HUGE_LAYOUT_INSTS)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` loads of a `float16` through a per-work-item address, summed: the
    /// features of `too_big_kernels`' wide kernel.
    fn float16_loads(n: usize) -> Features {
        Features {
            lane_accesses: 16 * n,
            varying: 16 * n,
            ..Default::default()
        }
    }

    #[test]
    fn a_required_width_whose_frame_is_too_big_is_refused() {
        let x = float16_loads(1600);
        assert!(estimate(&x, 32) < MAX_INSTS, "{}", estimate(&x, 32));
        let e = plan(&x, 32, WidthChoice::Required, |_| false).unwrap_err();
        assert!(e.message.contains("stack frame"), "{}", e.message);
    }

    #[test]
    fn a_default_width_too_big_for_a_huge_kernel_drops_to_the_narrowest() {
        let x = float16_loads(1600);
        let p = plan(&x, 32, WidthChoice::Default, |_| false).unwrap();
        assert_eq!((p.width, p.shape), (HUGE_WIDTH, Shape::Huge));
        // A default width the kernel fits at is kept.
        let p = plan(&float16_loads(100), 32, WidthChoice::Default, |_| false).unwrap();
        assert_eq!((p.width, p.shape), (32, Shape::Huge));
    }

    #[test]
    fn a_free_width_huge_kernel_takes_the_narrowest_and_a_small_one_keeps_its_own() {
        let p = plan(&float16_loads(1600), 8, WidthChoice::Free, |_| true).unwrap();
        assert_eq!((p.width, p.shape), (HUGE_WIDTH, Shape::Huge));
        let p = plan(&float16_loads(2), 8, WidthChoice::Free, |_| true).unwrap();
        assert_eq!((p.width, p.shape), (8, Shape::OneFunction));
    }

    #[test]
    fn the_frame_estimate_grows_with_the_width() {
        let f: Vec<usize> = [1, 4, 8, 16, 32]
            .iter()
            .map(|&w| huge_frame_bytes(1_000_000, w))
            .collect();
        assert_eq!(
            f,
            vec![3_000_000, 3_000_000, 4_333_333, 5_666_666, 7_000_000]
        );
    }
}
