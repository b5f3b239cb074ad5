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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spirv::{BinOp, Block, GlobalVar, Inst, Storage, Type};

    /// A module with an int type (1), a bool type (2), a pointer-to-int type (3), the
    /// local-id built-in (50) and a plain global int (51).
    fn module() -> Module {
        let mut m = Module::default();
        m.types.insert(1, Type::Int { bits: 32 });
        m.types.insert(2, Type::Bool);
        m.types.insert(
            3,
            Type::Pointer {
                storage: Storage::CrossWorkgroup,
                pointee: 1,
            },
        );
        m.globals.insert(
            50,
            GlobalVar {
                ty: 3,
                storage: Storage::Input,
                builtin: Some(BuiltIn::LocalInvocationId),
                init: None,
                name: "lid".into(),
            },
        );
        m.globals.insert(
            51,
            GlobalVar {
                ty: 3,
                storage: Storage::CrossWorkgroup,
                builtin: None,
                init: None,
                name: "g".into(),
            },
        );
        m
    }

    fn i(r: Id, op: Op) -> Inst {
        Inst {
            result: Some(r),
            ty: Some(1),
            op,
        }
    }

    fn diamond(cond_from_lid: bool) -> FlatFunction {
        let c = if cond_from_lid { 11 } else { 12 };
        FlatFunction {
            name: "t".into(),
            params: vec![],
            blocks: vec![
                Block {
                    label: 100,
                    insts: vec![
                        i(10, Op::Load { ptr: 50, align: 4 }),
                        i(11, Op::Binary(BinOp::IAdd, 10, 10)),
                        i(12, Op::Load { ptr: 51, align: 4 }),
                        i(13, Op::Binary(BinOp::IEqual, c, 12)),
                    ],
                    term: Terminator::BranchCond {
                        cond: 13,
                        t: 101,
                        f: 102,
                    },
                },
                Block {
                    label: 101,
                    insts: vec![i(20, Op::Binary(BinOp::IAdd, 12, 12))],
                    term: Terminator::Branch(103),
                },
                Block {
                    label: 102,
                    insts: vec![i(21, Op::Binary(BinOp::ISub, 12, 12))],
                    term: Terminator::Branch(103),
                },
                Block {
                    label: 103,
                    insts: vec![
                        i(14, Op::Phi(vec![(20, 101), (21, 102)])),
                        i(15, Op::Binary(BinOp::IAdd, 12, 12)),
                    ],
                    term: Terminator::Return,
                },
            ],
            next_id: 200,
        }
    }

    #[test]
    fn data_and_sync_dependence() {
        let m = module();
        let f = diamond(true);
        let cfg = Cfg::new(&f.blocks).unwrap();
        let u = analyze(&m, &f, &cfg);
        assert!(u.is_varying(10) && u.is_varying(11) && u.is_varying(13));
        assert!(
            !u.is_varying(12),
            "a load through a uniform pointer is uniform"
        );
        assert!(!u.is_varying(20) && !u.is_varying(21) && !u.is_varying(15));
        assert!(u.divergent_branch[0]);
        assert!(
            u.is_varying(14),
            "a phi joining a divergent branch is varying"
        );
    }

    #[test]
    fn uniform_branch_keeps_phis_uniform() {
        let m = module();
        let f = diamond(false);
        let cfg = Cfg::new(&f.blocks).unwrap();
        let u = analyze(&m, &f, &cfg);
        assert!(!u.any_divergence());
        assert!(!u.is_varying(14));
    }

    #[test]
    fn temporal_divergence_of_loop_values() {
        // b0 -> b1 (header: %30 = phi(%12 from b0, %31 from b1); %31 = %30 + %12;
        // exit when %31 == lid) -> b2 uses %31.
        let m = module();
        let f = FlatFunction {
            name: "t".into(),
            params: vec![],
            blocks: vec![
                Block {
                    label: 100,
                    insts: vec![
                        i(10, Op::Load { ptr: 50, align: 4 }),
                        i(12, Op::Load { ptr: 51, align: 4 }),
                    ],
                    term: Terminator::Branch(101),
                },
                Block {
                    label: 101,
                    insts: vec![
                        i(30, Op::Phi(vec![(12, 100), (31, 101)])),
                        i(31, Op::Binary(BinOp::IAdd, 30, 12)),
                        i(32, Op::Binary(BinOp::IEqual, 31, 10)),
                    ],
                    term: Terminator::BranchCond {
                        cond: 32,
                        t: 102,
                        f: 101,
                    },
                },
                Block {
                    label: 102,
                    insts: vec![i(33, Op::Binary(BinOp::IAdd, 31, 31))],
                    term: Terminator::Return,
                },
            ],
            next_id: 200,
        };
        let cfg = Cfg::new(&f.blocks).unwrap();
        let u = analyze(&m, &f, &cfg);
        assert!(u.divergent_branch[1]);
        assert!(
            u.is_varying(31),
            "lanes leave the loop in different iterations"
        );
        assert!(u.is_varying(33));
    }
}
