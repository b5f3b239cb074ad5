//! The sub-group width of each kernel: how many work-items one call of its generated
//! code runs at once, one per SIMD lane.
//!
//! The width is the kernel's required one when it has one, else the configured
//! default, else chosen from the kernel's shape: wider sub-groups amortise per-sub-group
//! work (id arithmetic, loop control, barrier region dispatch) over more lanes, but
//! every varying value takes twice the registers. Each rule below names the kernels it
//! was measured on.

mod compute_loop;
mod stride_loop;
mod sync;

use crate::{analysis, spirv};
use crate::{CompileError, CompileOptions, DEFAULT_SUB_GROUP_WIDTH, SUPPORTED_SUB_GROUP_WIDTHS};

/// The sub-group width for a kernel: the required one, else the configured default,
/// else one sub-group per work-group ([`one_sub_group_width`]), else
/// [`TILE_ROW_WIDTH`] for a synchronising kernel ([`sync::is_sync_kernel`], unless
/// estimated too big), a tile kernel ([`is_tile_row_kernel`]), a plain streaming
/// kernel ([`is_plain_streaming_kernel`]), a compute-loop kernel
/// ([`compute_loop::is_compute_loop_kernel`]) or a stride-loop kernel
/// ([`stride_loop::is_stride_loop_kernel`], unless estimated too big), else
/// [`DEFAULT_SUB_GROUP_WIDTH`].
pub(crate) fn sub_group_width(
    m: &spirv::Module,
    ep: &spirv::EntryPoint,
    flat: &analysis::flatten::FlatFunction,
    options: &CompileOptions,
    cfg: &analysis::cfg::Cfg,
    uni: &analysis::uniformity::Uniformity,
    feats: &crate::tiers::Features,
) -> Result<u32, CompileError> {
    let w = ep
        .modes
        .sub_group_size
        .or(options.default_sub_group_width)
        .unwrap_or(if let Some(w) = one_sub_group_width(ep, flat, cfg, feats) {
            w
        } else if (sync::is_sync_kernel(m, ep, flat, cfg, uni)
            && wide_body_fits(feats, TILE_ROW_WIDTH))
            || is_tile_row_kernel(ep, cfg, uni)
            || is_plain_streaming_kernel(m, ep, flat, uni)
            || (plain_instructions(m, ep, flat, uni)
                && (compute_loop::is_compute_loop_kernel(m, flat, cfg, uni)
                    || (stride_loop::is_stride_loop_kernel(flat, cfg, uni)
                        && wide_body_fits(feats, TILE_ROW_WIDTH))))
        {
            TILE_ROW_WIDTH
        } else {
            DEFAULT_SUB_GROUP_WIDTH
        });
    if !SUPPORTED_SUB_GROUP_WIDTHS.contains(&w) {
        return Err(CompileError::unsupported(format!(
            "kernel {}: sub-group size {w} is not supported (supported: {:?})",
            ep.name, SUPPORTED_SUB_GROUP_WIDTHS
        )));
    }
    Ok(w)
}

/// The width that makes each work-group exactly one sub-group: its required
/// work-group size, when that is 4 or 16 items (8 is the default width already) and
/// the kernel has barriers, or 16 items in one row and a loop. Barriers then cost
/// nothing (`lower::one_sub_group`): no region split, no state saved. pyopencl's scan
/// (`reqd_work_group_size(16, 1, 1)`, a barrier per step of its local-memory tree) is
/// the model. Without barriers two sub-groups of 8 run one after the other, so in a
/// loop over the work-group's stride (`for (i = begin + lid; i < end; i += 16)`,
/// pyopencl's scan_final_update) each walks the whole range touching half of every
/// 64-byte line of an `int` array, and the second fetches every line again: at width
/// 16 the one sub-group uses whole lines (final_update on 2^24 ints: 26 -> 18 ms).
/// Not when the wider body would be estimated past [`ONE_SUB_GROUP_MAX_EST`].
fn one_sub_group_width(
    ep: &spirv::EntryPoint,
    flat: &analysis::flatten::FlatFunction,
    cfg: &analysis::cfg::Cfg,
    feats: &crate::tiers::Features,
) -> Option<u32> {
    let [x, y, z] = ep.modes.local_size?;
    let items = u64::from(x) * u64::from(y) * u64::from(z);
    let has_barrier = flat
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .any(|i| matches!(i.op, spirv::Op::ControlBarrier { .. }));
    let w = if has_barrier {
        [4u32, 16].into_iter().find(|w| u64::from(*w) == items)
    } else {
        ([x, y, z] == [16, 1, 1] && !cfg.loops.is_empty()).then_some(16)
    }?;
    (w < DEFAULT_SUB_GROUP_WIDTH || wide_body_fits(feats, w)).then_some(w)
}

/// Estimated instructions of a layout body (`tiers::estimate`) above which a kernel
/// keeps the default width rather than widen to one sub-group per work-group (or to
/// 16 for a synchronising kernel, [`sync::is_sync_kernel`]): half
/// again the backtracking register allocator's limit (the fit's error), past which
/// the body would get the single-pass allocator and spill. pyopencl's radix-sort
/// scan_lev1 with work-groups of 16 (a 16-byte scan type): estimated 38 500 at width
/// 8, 73 000 at 16, where its lane-contiguous body came out four times the machine
/// code with three times the stack accesses; the int scan_lev1: 42 000 at 16.
const ONE_SUB_GROUP_MAX_EST: usize = crate::codegen::BACKTRACKING_MAX_INSTS * 3 / 2;

/// Whether the body at width `w` is estimated within [`ONE_SUB_GROUP_MAX_EST`], the
/// limit the widening rules for one sub-group per work-group, synchronising kernels
/// and stride-loop kernels share.
fn wide_body_fits(feats: &crate::tiers::Features, w: u32) -> bool {
    crate::tiers::estimate(feats, w) <= ONE_SUB_GROUP_MAX_EST
}

/// Sub-group width of tile kernels: one sub-group per 16-item row of the tile.
const TILE_ROW_WIDTH: u32 = 16;

/// A kernel whose `reqd_work_group_size` is a 2-D or 3-D tile with rows of exactly
/// [`TILE_ROW_WIDTH`] items and no divergent branch (a transpose, a tiled copy). With
/// a sub-group per row, each row's access to a row-major array is one whole 64-byte
/// cache line, and a region-split kernel resumes half as many sub-groups per barrier:
/// clbench `transpose` (16x16) runs in 0.6x the CPU time of width 8. Divergent
/// branches outside loops (a stencil's halo and border tests) are allowed: with
/// single-lane blocks as scalar code (`lower::single_lane`) and decided branches
/// (`lower::affine_cmp`) their cost is per sub-group, so width 16 halves it (clbench
/// `stencil2d`: 0.84x the JIT instructions of width 8). Kernels with a divergent
/// branch in a loop keep width 8 (masked loop code on 16 lanes needs four vectors per
/// value and spills).
fn is_tile_row_kernel(
    ep: &spirv::EntryPoint,
    cfg: &analysis::cfg::Cfg,
    uni: &analysis::uniformity::Uniformity,
) -> bool {
    matches!(ep.modes.local_size, Some([x, y, z]) if x == TILE_ROW_WIDTH && y.saturating_mul(z) > 1)
        && uni
            .divergent_branch
            .iter()
            .enumerate()
            .all(|(b, d)| !d || cfg.loop_of[b].is_none())
}

/// A kernel where a wider sub-group only amortises per-sub-group work: no divergent
/// branch (masked code on 16 lanes needs twice the registers), no barrier, atomic,
/// group, pipe, block, async-copy or enqueue instruction and no call left after
/// inlining (the legacy `atomic_*` functions), no sub-group built-in
/// variable (its width is then invisible to the program), no varying vector of three
/// or more components (a `float4` is sixteen registers at width 16: clbench `nbody`
/// spills and runs at half speed), and a required work-group size, if any, whose rows
/// are whole sub-groups of the wider width. Measured on clbench: `saxpy` 1.7x less
/// CPU, `math` (calls of the vector math library, per sub-group) 2x, `sgemm_naive`
/// 1.1x.
fn is_plain_streaming_kernel(
    m: &spirv::Module,
    ep: &spirv::EntryPoint,
    flat: &analysis::flatten::FlatFunction,
    uni: &analysis::uniformity::Uniformity,
) -> bool {
    !uni.any_divergence() && plain_instructions(m, ep, flat, uni)
}

/// The instruction part of [`is_plain_streaming_kernel`] (everything but the
/// divergence), which `compute_loop` shares.
fn plain_instructions(
    m: &spirv::Module,
    ep: &spirv::EntryPoint,
    flat: &analysis::flatten::FlatFunction,
    uni: &analysis::uniformity::Uniformity,
) -> bool {
    use spirv::{BuiltIn, Op};
    if ep
        .modes
        .local_size
        .is_some_and(|[x, _, _]| x % TILE_ROW_WIDTH != 0)
    {
        return false;
    }
    let sub_group_builtin = |id: spirv::Id| {
        m.globals.get(&id).and_then(|g| g.builtin).is_some_and(|b| {
            matches!(
                b,
                BuiltIn::SubgroupSize
                    | BuiltIn::SubgroupMaxSize
                    | BuiltIn::NumSubgroups
                    | BuiltIn::NumEnqueuedSubgroups
                    | BuiltIn::SubgroupId
                    | BuiltIn::SubgroupLocalInvocationId
                    | BuiltIn::SubgroupEqMask
                    | BuiltIn::SubgroupGeMask
                    | BuiltIn::SubgroupGtMask
                    | BuiltIn::SubgroupLeMask
                    | BuiltIn::SubgroupLtMask
            )
        })
    };
    flat.blocks.iter().flat_map(|b| &b.insts).all(|inst| {
        let plain = !matches!(
            inst.op,
            Op::ControlBarrier { .. }
                | Op::Atomic { .. }
                | Op::Call { .. }
                | Op::Group { .. }
                | Op::Block2d { .. }
                | Op::AsyncCopy { .. }
                | Op::AsyncCopyNd { .. }
                | Op::Pipe { .. }
                | Op::DeviceEnqueue { .. }
        );
        let mut builtin = false;
        spirv::for_each_operand(&inst.op, |id| builtin |= sub_group_builtin(id));
        plain && !builtin && !is_wide_varying_vector(m, uni, inst)
    })
}

/// Whether `inst` makes a varying vector of three or more components (a `float4` is
/// sixteen registers at width 16: clbench `nbody` spills and runs at half speed).
/// The id built-ins are 3-component vectors whose components are taken apart at once,
/// so their loads do not count.
fn is_wide_varying_vector(
    m: &spirv::Module,
    uni: &analysis::uniformity::Uniformity,
    inst: &spirv::Inst,
) -> bool {
    let id_builtin = matches!(inst.op, spirv::Op::Load { ptr, .. }
        if m.globals.get(&ptr).is_some_and(|g| g.builtin.is_some()));
    !id_builtin
        && inst.result.is_some_and(|r| uni.is_varying(r))
        && inst
            .ty
            .and_then(|t| m.types.get(&t))
            .is_some_and(|t| matches!(t, spirv::Type::Vector { count, .. } if *count >= 3))
}
