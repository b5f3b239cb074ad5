//! Kernels whose time goes to a divergent loop of plain arithmetic: a sub-group
//! width of 16 for them.
//!
//! Such a loop (clbench `mandelbrot`: `while (it < max && x*x + y*y <= 4)`) is a
//! chain of dependent float operations per iteration; at width 8 its two f32x4
//! halves leave the core waiting on that chain (the loop ran at the latency of the
//! chain: 4.4 ns per iteration, as fast as the same chain written in C). Width 16
//! keeps four independent chains in flight for the same loop control, as long as
//! the loop carries few varying values: each is four vectors at width 16, and the
//! registers must hold them and the execution mask (`lower::loop_pressure` keeps
//! the rest out of the way). Measured on `mandelbrot` (one thread, 1024x1024): 41.5
//! ms at width 8, 36.5 ms at width 16.

use crate::analysis::cfg::Cfg;
use crate::analysis::flatten::FlatFunction;
use crate::analysis::uniformity::Uniformity;
use crate::spirv::{self, Module, Op, Type};

/// Varying values (32-bit scalars) a loop may carry around its back edge: with the
/// mask (one register, packed by `lower::mask_pack`), nine of the sixteen vector
/// registers at width 16. A third gains nothing at width 16 (escape-time loops
/// with a third float: 80.5 Mpix/s at width 16, 81.9 at width 8; with a varying
/// counter: 64 against 82).
const MAX_CARRIED: usize = 2;

/// Whether every divergent branch of the kernel lies in a loop that accesses no
/// memory and whose header carries at most [`MAX_CARRIED`] varying 32-bit scalars
/// (the caller checks that no other part of the kernel needs a narrower width:
/// `width::plain_instructions`).
pub(crate) fn is_compute_loop_kernel(
    m: &Module,
    flat: &FlatFunction,
    cfg: &Cfg,
    uni: &Uniformity,
) -> bool {
    if !uni.any_divergence() {
        return false;
    }
    let (loops, outside) = divergent_loops(cfg, uni);
    if outside {
        return false;
    }
    let builtin_ptr = |id: spirv::Id| m.globals.get(&id).is_some_and(|g| g.builtin.is_some());
    loops.iter().all(|&l| {
        let memory_free = (0..flat.blocks.len())
            .filter(|&b| cfg.in_loop(l, b))
            .flat_map(|b| &flat.blocks[b].insts)
            .all(|i| match &i.op {
                Op::Load { ptr, .. } => builtin_ptr(*ptr),
                Op::Store { .. } | Op::CopyMemory { .. } => false,
                Op::ExtInst { opcode, .. } => !(171..=181).contains(opcode),
                _ => true,
            });
        memory_free && carries_few(m, flat, cfg, uni, l)
    })
}

/// Whether loop `l`'s header carries at most [`MAX_CARRIED`] varying values, all
/// 32-bit scalars: at width 16 each is four vector registers, and with the execution
/// mask they must fit the sixteen.
pub(super) fn carries_few(
    m: &Module,
    flat: &FlatFunction,
    cfg: &Cfg,
    uni: &Uniformity,
    l: usize,
) -> bool {
    let scalar32 = |ty: Option<spirv::Id>| {
        ty.and_then(|t| m.types.get(&t))
            .is_some_and(|t| matches!(t, Type::Int { bits: 32 } | Type::Float { bits: 32 }))
    };
    let header = &flat.blocks[cfg.loops[l].header];
    let mut carried = 0;
    let phis_fit = header.insts.iter().all(|i| match (&i.op, i.result) {
        (Op::Phi(_), Some(r)) if uni.is_varying(r) => {
            carried += 1;
            scalar32(i.ty)
        }
        _ => true,
    });
    phis_fit && carried <= MAX_CARRIED
}

/// The loops holding the kernel's divergent branches (each innermost one once), and
/// whether a divergent branch lies outside every loop.
pub(super) fn divergent_loops(cfg: &Cfg, uni: &Uniformity) -> (Vec<usize>, bool) {
    let mut loops: Vec<usize> = Vec::new();
    let mut outside = false;
    for (b, d) in uni.divergent_branch.iter().enumerate() {
        if !*d {
            continue;
        }
        match cfg.loop_of.get(b).copied().flatten() {
            Some(l) if !loops.contains(&l) => loops.push(l),
            Some(_) => {}
            None => outside = true,
        }
    }
    (loops, outside)
}
