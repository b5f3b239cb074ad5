//! Uniformity (divergence) analysis: which values may differ between the lanes of a
//! sub-group, and which branches may send lanes different ways.
//!
//! Varying sources: work-item ids, sub-group local ids, private variables (one copy
//! per lane), atomics, loads through varying pointers, scans and shuffles, calls of
//! imported functions. Data dependence propagates. Sync dependence: a phi in a block
//! where lanes that took different paths of a divergent branch meet is varying (the
//! join points are found by propagating, per divergent branch, which successor
//! "reaches" each block inside the branch's loop; a block reached from two successors
//! is a join). Temporal divergence: a value defined in a loop that lanes may leave in
//! different iterations and used outside that loop is varying, as are the phis of
//! the loop's exits.
//!
//! The lowering may still find a value uniform that this analysis calls varying
//! (e.g. `get_local_id(1)` in a sub-group that lies in one row); the reverse never
//! happens, so the analysis decides the shape of phis.

use std::collections::{HashMap, HashSet};

use super::cfg::Cfg;
use super::flatten::FlatFunction;
use super::for_each_operand;
use crate::spirv::{BuiltIn, GroupMode, GroupOp, Id, Module, Op, Terminator};

/// Result of the analysis.
#[derive(Clone, Debug, Default)]
pub struct Uniformity {
    /// Ids whose value may differ between lanes.
    pub varying: HashSet<Id>,
    /// Blocks (by index) that end in a divergent branch.
    pub divergent_branch: Vec<bool>,
}

impl Uniformity {
    /// Whether `id` may differ between lanes.
    pub fn is_varying(&self, id: Id) -> bool {
        self.varying.contains(&id)
    }

    /// Whether the function has any divergent branch.
    pub fn any_divergence(&self) -> bool {
        self.divergent_branch.iter().any(|d| *d)
    }
}

fn varying_builtin(b: BuiltIn) -> bool {
    matches!(
        b,
        BuiltIn::GlobalInvocationId
            | BuiltIn::LocalInvocationId
            | BuiltIn::GlobalLinearId
            | BuiltIn::LocalInvocationIndex
            | BuiltIn::SubgroupLocalInvocationId
    )
}

/// Runs the analysis.
pub fn analyze(m: &Module, f: &FlatFunction, cfg: &Cfg) -> Uniformity {
    let n = f.blocks.len();
    let mut varying: HashSet<Id> = HashSet::new();
    // Pointers to varying built-ins are "varying sources" when loaded.
    let varying_ptr_src: HashSet<Id> = m
        .globals
        .iter()
        .filter(|(_, g)| g.builtin.is_some_and(varying_builtin))
        .map(|(id, _)| *id)
        .collect();
    // Where each id is defined (block index), for temporal divergence.
    let mut def_block: HashMap<Id, usize> = HashMap::new();
    for (bi, b) in f.blocks.iter().enumerate() {
        for i in &b.insts {
            if let Some(r) = i.result {
                def_block.insert(r, bi);
            }
        }
    }
    let mut divergent = vec![false; n];
    let mut join_phi_blocks: Vec<bool> = vec![false; n];
    let mut loop_divergent: Vec<bool> = vec![false; cfg.loops.len()];
    loop {
        let before = varying.len();
        for (bi, b) in f.blocks.iter().enumerate() {
            for inst in &b.insts {
                let Some(r) = inst.result else { continue };
                if varying.contains(&r) {
                    continue;
                }
                let v = match &inst.op {
                    Op::Variable { .. } => true,
                    Op::Atomic { .. } => true,
                    Op::Call { .. } => true,
                    Op::Load { ptr, .. } => varying_ptr_src.contains(ptr) || varying.contains(ptr),
                    Op::Group { op, mode, args, .. } => match op {
                        GroupOp::Shuffle
                        | GroupOp::ShuffleDown
                        | GroupOp::ShuffleUp
                        | GroupOp::ShuffleXor
                        | GroupOp::BlockRead
                        | GroupOp::Elect => true,
                        _ => match mode {
                            Some(GroupMode::InclusiveScan) | Some(GroupMode::ExclusiveScan) => true,
                            // Reductions, broadcast, all/any: one value for the group;
                            // a varying broadcast index is a varying result.
                            _ => {
                                matches!(op, GroupOp::Broadcast)
                                    && args.iter().skip(1).any(|a| varying.contains(a))
                            }
                        },
                    },
                    Op::Phi(inc) => {
                        join_phi_blocks[bi] || inc.iter().any(|(v, _)| varying.contains(v))
                    }
                    op => {
                        let mut any = false;
                        for_each_operand(op, |id| any |= varying.contains(&id));
                        any
                    }
                };
                if v {
                    varying.insert(r);
                }
            }
        }
        // Branch divergence.
        for (bi, b) in f.blocks.iter().enumerate() {
            divergent[bi] = match &b.term {
                Terminator::BranchCond { cond, t, f } => t != f && varying.contains(cond),
                Terminator::Switch { selector, .. } => varying.contains(selector),
                _ => false,
            };
        }
        // Join points of divergent branches, and divergent loops.
        for bi in 0..n {
            if !divergent[bi] || !cfg.reachable(bi) {
                continue;
            }
            let region = cfg.loop_of[bi];
            let joins = join_points(cfg, bi, region);
            for j in joins {
                join_phi_blocks[j] = true;
            }
            // Lanes may leave every loop containing bi that one of its successors exits.
            let mut l = region;
            while let Some(li) = l {
                let exits = cfg.succs[bi].iter().any(|&s| !cfg.in_loop(li, s));
                let reaches_exit = exits || reaches_loop_exit(cfg, bi, li);
                if reaches_exit {
                    loop_divergent[li] = true;
                }
                l = cfg.loops[li].parent;
            }
        }
        for (li, lp) in cfg.loops.iter().enumerate() {
            if !loop_divergent[li] {
                continue;
            }
            // Exit blocks: phis varying.
            for b in 0..n {
                if lp.blocks[b] {
                    for &s in &cfg.succs[b] {
                        if !lp.blocks[s] {
                            join_phi_blocks[s] = true;
                        }
                    }
                }
            }
            // Values defined in the loop and used outside it.
            for (bi, b) in f.blocks.iter().enumerate() {
                let mut uses = Vec::new();
                for inst in &b.insts {
                    match &inst.op {
                        Op::Phi(inc) => {
                            // A phi's use happens on the incoming edge, in the predecessor.
                            for (v, pred) in inc {
                                if let Some(&p) = cfg.index.get(pred) {
                                    if !lp.blocks[p] {
                                        uses.push(*v);
                                    }
                                }
                            }
                        }
                        op => {
                            if !lp.blocks[bi] {
                                for_each_operand(op, |id| uses.push(id));
                            }
                        }
                    }
                }
                if !lp.blocks[bi] {
                    match &b.term {
                        Terminator::BranchCond { cond, .. } => uses.push(*cond),
                        Terminator::Switch { selector, .. } => uses.push(*selector),
                        Terminator::ReturnValue(v) => uses.push(*v),
                        _ => {}
                    }
                }
                for u in uses {
                    if def_block.get(&u).is_some_and(|&d| lp.blocks[d]) {
                        varying.insert(u);
                    }
                }
            }
        }
        if varying.len() == before {
            break;
        }
    }
    Uniformity {
        varying,
        divergent_branch: divergent,
    }
}

/// Whether some path from `b` (not through the loop header) leaves loop `l`.
fn reaches_loop_exit(cfg: &Cfg, b: usize, l: usize) -> bool {
    let lp = &cfg.loops[l];
    let mut seen = vec![false; cfg.succs.len()];
    let mut work = vec![b];
    while let Some(x) = work.pop() {
        for &s in &cfg.succs[x] {
            if !lp.blocks[s] {
                return true;
            }
            if s == lp.header || seen[s] {
                continue;
            }
            seen[s] = true;
            work.push(s);
        }
    }
    false
}

/// Blocks where lanes that took different successors of the branch ending `b` can
/// meet again within one iteration of `b`'s loop (`region`); paths stop at the loop
/// header and at loop exits (exits are handled as temporal divergence).
fn join_points(cfg: &Cfg, b: usize, region: Option<usize>) -> Vec<usize> {
    let n = cfg.succs.len();
    let in_region = |x: usize| region.is_none_or(|l| cfg.in_loop(l, x));
    let header = region.map(|l| cfg.loops[l].header);
    // Label each reachable block with the successor it is reached from, in linear
    // order (a topological order of forward edges). Reaching a block with two labels
    // makes it a join, which then propagates its own label.
    const NONE: usize = usize::MAX;
    let mut label = vec![NONE; n];
    let mut joins = Vec::new();
    let pos: HashMap<usize, usize> = cfg.order.iter().enumerate().map(|(i, b)| (*b, i)).collect();
    let bpos = pos.get(&b).copied().unwrap_or(0);
    for (k, &s) in cfg.succs[b].iter().enumerate() {
        if !in_region(s) || Some(s) == header {
            continue;
        }
        if label[s] == NONE {
            label[s] = k;
        } else if label[s] != k {
            joins.push(s);
            label[s] = n + s;
        }
    }
    for &x in cfg.order.iter() {
        if pos[&x] <= bpos || label[x] == NONE || !in_region(x) {
            continue;
        }
        for &s in &cfg.succs[x] {
            if !in_region(s) || Some(s) == header || pos.get(&s).is_none_or(|&p| p <= pos[&x]) {
                continue;
            }
            let lx = label[x];
            if label[s] == NONE {
                label[s] = lx;
            } else if label[s] != lx && !joins.contains(&s) {
                joins.push(s);
                label[s] = n + s;
            }
        }
    }
    // Branches whose both successors are the same: no join.
    joins
}
