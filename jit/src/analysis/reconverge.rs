//! Blocks every work-item runs exactly once: the post-dominators of the entry
//! block that lie outside all loops.
//!
//! In the masked (linearised) body a block's execution mask is the union of the
//! masks of the edges into it, computed at run time. After a divergent `if` the
//! lanes meet again, and the join's mask is the sub-group's entry mask once more;
//! when the lowering knows that, the join's code runs under the entry mask (no
//! mask to test, to save at a barrier or to restore after it, and the full-mask
//! copies of its blocks apply to every full sub-group). A block outside loops that
//! every path from the entry to an exit passes through is such a join: every lane
//! that entered the kernel reaches it (lanes that loop forever never finish
//! anyway), and reaches it once.

use super::cfg::Cfg;

/// Per block: whether it post-dominates the entry and lies outside all loops.
pub fn entry_mask_blocks(cfg: &Cfg) -> Vec<bool> {
    let n = cfg.succs.len();
    let mut out = vec![false; n];
    if n == 0 {
        return out;
    }
    // Post-dominators: dominators of the reversed graph, rooted at a virtual exit
    // `x` that every block without successors (return, unreachable) leads to.
    let x = n;
    let exits: Vec<usize> = (0..n)
        .filter(|&b| cfg.reachable(b) && cfg.succs[b].is_empty())
        .collect();
    // Reverse post-order of the reversed graph from `x`.
    let rsuccs = |b: usize| -> &[usize] {
        if b == x {
            &exits
        } else {
            &cfg.preds[b]
        }
    };
    let post = crate::analysis::cfg::reverse_post_order(n + 1, x, rsuccs);
    let mut pos = vec![usize::MAX; n + 1];
    for (i, b) in post.iter().enumerate() {
        pos[*b] = i;
    }
    if pos[0] == usize::MAX {
        // The entry reaches no exit.
        return out;
    }
    // Cooper, Harvey, Kennedy on the reversed graph: a block's predecessors there are
    // its successors here (and `x` for exits).
    let ipdom = crate::analysis::cfg::immediate_dominators(&post, &pos, n + 1, |b| {
        let mut p = cfg.succs[b].clone();
        if p.is_empty() {
            p.push(x);
        }
        p
    });
    let mut b = 0;
    while b != x && b != usize::MAX {
        if cfg.loop_of[b].is_none() {
            out[b] = true;
        }
        b = ipdom[b];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spirv::{Block, Terminator};

    fn block(label: u32, term: Terminator) -> Block {
        Block {
            label,
            insts: Vec::new(),
            term,
        }
    }

    /// entry -> (then | join), then -> join, join -> loop header <-> latch, exit;
    /// a second exit path returns early from `then`.
    #[test]
    fn joins_after_ifs_but_not_loops_or_early_returns() {
        let br = |t| Terminator::Branch(t);
        let cond = |t, f| Terminator::BranchCond { cond: 99, t, f };
        // 0 entry, 1 then, 2 join, 3 header, 4 body, 5 exit
        let blocks = vec![
            block(10, cond(11, 12)),
            block(11, br(12)),
            block(12, br(13)),
            block(13, cond(14, 15)),
            block(14, br(13)),
            block(15, Terminator::Return),
        ];
        let cfg = Cfg::new(&blocks).unwrap();
        assert_eq!(
            entry_mask_blocks(&cfg),
            vec![true, false, true, false, false, true]
        );
        // An early return in `then`: the join is no longer reached by every lane.
        let mut early = blocks.clone();
        early[1] = block(11, cond(12, 16));
        early.push(block(16, Terminator::Return));
        let cfg = Cfg::new(&early).unwrap();
        assert_eq!(
            entry_mask_blocks(&cfg),
            vec![true, false, false, false, false, false, false]
        );
    }
}
