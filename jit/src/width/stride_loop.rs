//! Kernels whose only divergence is the exit test of stride loops: a sub-group width
//! of 16 for them.
//!
//! pyopencl's `ElementwiseKernel` (and every `pyopencl.array` operation built on it)
//! runs a few thousand work-items, each looping `for (i = start + lid; i < n; i +=
//! gsize)` with a `long` index. A sub-group runs its whole loop before the next one
//! starts, so each of its iterations reads one piece of each array, `gsize` elements
//! after the last: at width 8 half a 64-byte line of a `float` array, whose other
//! half the next sub-group fetches again thousands of iterations later. The strides
//! are far beyond what the hardware prefetchers follow, so the time goes by
//! iterations: `z[i] = a*x[i] + y[i]` on 2^24 floats with pyopencl's 64 x 128
//! work-items took 41.9 ms at width 8, 24.6 ms at 16 (Intel's CPU runtime: 33 ms).
//! The loop carries only its induction variables, which stay scalars (affine in the
//! lane), so the wider body costs no vector registers for them.

use std::collections::HashMap;

use crate::analysis::cfg::Cfg;
use crate::analysis::flatten::FlatFunction;
use crate::analysis::uniformity::Uniformity;
use crate::spirv::{BinOp, Id, Op};

/// Whether the kernel has divergent branches, each inside a loop whose header's
/// varying values are all induction variables stepped by a uniform amount, or
/// outside every loop, and at least one in a loop (the caller checks the rest of
/// the kernel: `width::plain_instructions`).
pub(crate) fn is_stride_loop_kernel(flat: &FlatFunction, cfg: &Cfg, uni: &Uniformity) -> bool {
    // Divergent branches outside loops (the guard `if (start + lid < n)` of a
    // rotated loop) cost masked straight-line code once per sub-group.
    let (loops, _) = super::compute_loop::divergent_loops(cfg, uni);
    if loops.is_empty() {
        return false;
    }
    let defs: HashMap<Id, &Op> = flat
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|i| Some((i.result?, &i.op)))
        .collect();
    loops.iter().all(|&l| {
        let header = &flat.blocks[cfg.loops[l].header];
        header.insts.iter().all(|i| match (&i.op, i.result) {
            (Op::Phi(incoming), Some(r)) if uni.is_varying(r) => {
                incoming.iter().all(|(value, from)| {
                    let Some(&b) = cfg.index.get(from) else {
                        return false;
                    };
                    // The value from before the loop may be anything; the one from
                    // the back edge must step the phi by a uniform amount.
                    !cfg.in_loop(l, b) || steps(&defs, uni, r, *value)
                })
            }
            _ => true,
        })
    })
}

/// Whether `value` is `phi + u` (or `u + phi`) with `u` uniform.
fn steps(defs: &HashMap<Id, &Op>, uni: &Uniformity, phi: Id, value: Id) -> bool {
    matches!(defs.get(&value), Some(Op::Binary(BinOp::IAdd, a, b))
        if (*a == phi && !uni.is_varying(*b)) || (*b == phi && !uni.is_varying(*a)))
}
