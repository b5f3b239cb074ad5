//! Kernels that synchronise their work-group (barriers, work-group or sub-group
//! collectives) in work-groups of many sub-groups: a sub-group width of 16 for them.
//!
//! A region-split kernel resumes every sub-group at every barrier: it loads the
//! sub-group's state, dispatches on its region and stores the state again, and each
//! collective step runs once per sub-group. Width 16 halves the number of sub-groups
//! and so all of that, while the region bodies do the same work per lane. Measured
//! with callgrind on clbench `reduce_local` (`reqd_work_group_size(256, 1, 1)`, a
//! strided accumulation loop, then a local-memory tree with eight barriers) on 2^20
//! floats: 8.4 M instructions per run at width 8, 4.7 M at width 16; clbench
//! `reduce_wg` and `reduce_sg` gain 20% and more, `intel_shuffle` and `histogram` run
//! the same.

use super::compute_loop::carries_few;
use super::{is_wide_varying_vector, TILE_ROW_WIDTH};
use crate::analysis::cfg::Cfg;
use crate::analysis::flatten::FlatFunction;
use crate::analysis::uniformity::Uniformity;
use crate::spirv::{EntryPoint, Module, Op};

/// Whether the kernel synchronises a work-group of several sub-groups of 16 and
/// needs no narrower width: it has a barrier or a group instruction; its required
/// work-group size (it must have one: the width must divide the work-group the
/// application will use) has rows of whole sub-groups of 16 and more than one of
/// them; no varying vector of three or more components; and every divergent
/// branch inside a loop lies in one that carries few varying values
/// ([`carries_few`](super::compute_loop::carries_few)), so that masked loop code on
/// 16 lanes fits the registers.
pub(crate) fn is_sync_kernel(
    m: &Module,
    ep: &EntryPoint,
    flat: &FlatFunction,
    cfg: &Cfg,
    uni: &Uniformity,
) -> bool {
    let Some([x, y, z]) = ep.modes.local_size else {
        return false;
    };
    let items = u64::from(x) * u64::from(y) * u64::from(z);
    if x % TILE_ROW_WIDTH != 0 || items <= u64::from(TILE_ROW_WIDTH) {
        return false;
    }
    let insts = || flat.blocks.iter().flat_map(|b| &b.insts);
    let synchronises =
        insts().any(|i| matches!(i.op, Op::ControlBarrier { .. } | Op::Group { .. }));
    let loops_fit = uni
        .divergent_branch
        .iter()
        .enumerate()
        .all(|(b, d)| !*d || cfg.loop_of[b].is_none_or(|l| carries_few(m, flat, cfg, uni, l)));
    synchronises && loops_fit && !insts().any(|i| is_wide_varying_vector(m, uni, i))
}
