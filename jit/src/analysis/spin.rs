//! Loops that may wait for another sub-group: their exit depends on the result of
//! an atomic operation (a flag another sub-group of the work-group sets). Sub-groups
//! of a work-group run one after the other between barriers, so such a loop yields
//! to the next sub-group at its back-edges (independent forward progress); loops
//! whose exits do not read atomics (a histogram's atomic adds) never yield.

use std::collections::HashSet;

use super::cfg::Cfg;
use super::flatten::FlatFunction;
use super::for_each_operand;
use crate::spirv::{Id, Module, Op, Terminator};

/// The back-edge sources (latches) of loops that may wait on memory, in block order.
pub fn waiting_latches(m: &Module, f: &FlatFunction, cfg: &Cfg) -> Vec<usize> {
    // Ids computed from an atomic result, through any instruction (phis included)
    // and through the variables they are stored in (unoptimised code keeps locals
    // in memory).
    let mut tainted: HashSet<Id> = HashSet::new();
    let mut stored: HashSet<Id> = HashSet::new();
    loop {
        let before = tainted.len() + stored.len();
        for b in &f.blocks {
            for inst in &b.insts {
                if let Op::Store { ptr, value, .. } = &inst.op {
                    if tainted.contains(value) {
                        stored.insert(*ptr);
                    }
                }
                let Some(r) = inst.result else { continue };
                if tainted.contains(&r) {
                    continue;
                }
                let source = match &inst.op {
                    Op::Atomic { .. } => true,
                    Op::Load { ptr, .. } => stored.contains(ptr),
                    Op::Call { function, .. } => m
                        .functions
                        .get(function)
                        .and_then(|x| x.import.as_deref())
                        .is_some_and(|name| name.contains("atom")),
                    _ => false,
                };
                let mut uses_tainted = false;
                match &inst.op {
                    Op::Phi(inc) => uses_tainted = inc.iter().any(|(v, _)| tainted.contains(v)),
                    op => for_each_operand(op, |id| uses_tainted |= tainted.contains(&id)),
                }
                if source || uses_tainted {
                    tainted.insert(r);
                }
            }
        }
        if tainted.len() + stored.len() == before {
            break;
        }
    }
    let mut latches = Vec::new();
    for (l, lp) in cfg.loops.iter().enumerate() {
        let blocks = cfg.loop_blocks(l);
        let waits = blocks.iter().any(|&b| {
            let leaves = cfg.succs[b].iter().any(|&s| !cfg.in_loop(l, s));
            leaves
                && match &f.blocks[b].term {
                    Terminator::BranchCond { cond, .. } => tainted.contains(cond),
                    Terminator::Switch { selector, .. } => tainted.contains(selector),
                    _ => false,
                }
        });
        if waits {
            latches.extend(
                blocks
                    .iter()
                    .copied()
                    .filter(|&b| cfg.succs[b].contains(&lp.header)),
            );
        }
    }
    latches.sort_unstable();
    latches.dedup();
    latches
}
