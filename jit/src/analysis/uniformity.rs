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
use crate::spirv::{BuiltIn, EnqueueOp, GroupMode, GroupOp, Id, Module, Op, PipeOp, Terminator};

/// Result of the analysis.
#[derive(Clone, Debug, Default)]
pub struct Uniformity {
    /// Ids whose value may differ between lanes.
    pub varying: HashSet<Id>,
    /// Blocks (by index) that end in a divergent branch.
    pub divergent_branch: Vec<bool>,
    /// Loops (by index) that lanes may leave in different iterations or by
    /// different exits: values defined in one of them and used after it need a
    /// per-lane copy taken when each lane leaves.
    pub divergent_loop: Vec<bool>,
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

    /// Whether lanes may leave loop `l` at different times (unknown loops: yes).
    pub fn loop_diverges(&self, l: usize) -> bool {
        self.divergent_loop.get(l).copied().unwrap_or(true)
    }

    /// Whether every lane that reaches block `at` from a definition in block
    /// `def_block` left the loops between them together (same iteration, same
    /// exit), so that the definition's last value is every lane's value there.
    pub fn leaves_loops_together(&self, cfg: &Cfg, def_block: usize, at: usize) -> bool {
        let mut l = cfg.loop_of[def_block];
        while let Some(li) = l {
            if cfg.in_loop(li, at) {
                return true;
            }
            if self.loop_diverges(li) {
                return false;
            }
            l = cfg.loops[li].parent;
        }
        true
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
            | BuiltIn::SubgroupEqMask
            | BuiltIn::SubgroupGeMask
            | BuiltIn::SubgroupGtMask
            | BuiltIn::SubgroupLeMask
            | BuiltIn::SubgroupLtMask
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
    let mut exits_marked: Vec<bool> = vec![false; cfg.loops.len()];
    let mut joins_done: Vec<bool> = vec![false; n];
    let mut exit_reach = ExitReach::new(cfg);
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
                    // Calls of the runtime per lane; OpBuildNDRange only moves values.
                    Op::DeviceEnqueue { op, args, .. } => {
                        *op != EnqueueOp::BuildNdRange || args.iter().any(|a| varying.contains(a))
                    }
                    // Per-work-item pipe accesses and reservations differ per lane;
                    // group reservations and the packet counts are one per group.
                    Op::Pipe { op, args } => match op {
                        PipeOp::Read
                        | PipeOp::Write
                        | PipeOp::ReservedRead
                        | PipeOp::ReservedWrite
                        | PipeOp::ReserveRead
                        | PipeOp::ReserveWrite => true,
                        PipeOp::IsValidReserveId => args.iter().any(|a| varying.contains(a)),
                        _ => false,
                    },
                    Op::Load { ptr, .. } => varying_ptr_src.contains(ptr) || varying.contains(ptr),
                    Op::Group { op, mode, args, .. } => match op {
                        GroupOp::Shuffle
                        | GroupOp::ShuffleDown
                        | GroupOp::ShuffleUp
                        | GroupOp::ShuffleXor
                        | GroupOp::BlockRead
                        | GroupOp::Elect
                        | GroupOp::InverseBallot
                        | GroupOp::ShuffleUpKhr
                        | GroupOp::ShuffleDownKhr
                        | GroupOp::Rotate => true,
                        // A bit of a uniform ballot at a uniform index is uniform.
                        GroupOp::BallotBitExtract => args.iter().any(|a| varying.contains(a)),
                        _ => match mode {
                            Some(GroupMode::InclusiveScan)
                            | Some(GroupMode::ExclusiveScan)
                            | Some(GroupMode::ClusteredReduce) => true,
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
        // Join points of divergent branches, and divergent loops (once per branch:
        // the CFG does not change between rounds).
        for bi in 0..n {
            if !divergent[bi] || !cfg.reachable(bi) || joins_done[bi] {
                continue;
            }
            joins_done[bi] = true;
            let region = cfg.loop_of[bi];
            for j in join_points(cfg, bi, region) {
                join_phi_blocks[j] = true;
            }
            // Lanes may leave every loop containing bi that one of its successors exits.
            let mut l = region;
            while let Some(li) = l {
                if !loop_divergent[li] {
                    let exits = cfg.succs[bi].iter().any(|&s| !cfg.in_loop(li, s));
                    if exits || exit_reach.reaches_exit(cfg, li, bi) {
                        loop_divergent[li] = true;
                    }
                }
                l = cfg.loops[li].parent;
            }
        }
        // Exit blocks of divergent loops: phis varying.
        for li in 0..cfg.loops.len() {
            if !loop_divergent[li] || exits_marked[li] {
                continue;
            }
            exits_marked[li] = true;
            for &b in cfg.loop_blocks(li) {
                for &s in &cfg.succs[b] {
                    if !cfg.in_loop(li, s) {
                        join_phi_blocks[s] = true;
                    }
                }
            }
        }
        // Values defined in a divergent loop and used outside it.
        let leaves_divergent_loop = |u: Id, at: usize| -> bool {
            let Some(&d) = def_block.get(&u) else {
                return false;
            };
            let mut l = cfg.loop_of[d];
            while let Some(li) = l {
                if cfg.in_loop(li, at) {
                    return false;
                }
                if loop_divergent[li] {
                    return true;
                }
                l = cfg.loops[li].parent;
            }
            false
        };
        if loop_divergent.iter().any(|d| *d) {
            let mut temporal = Vec::new();
            for (bi, b) in f.blocks.iter().enumerate() {
                for inst in &b.insts {
                    match &inst.op {
                        Op::Phi(inc) => {
                            // A phi's use happens on the incoming edge, in the predecessor.
                            for (v, pred) in inc {
                                if let Some(&p) = cfg.index.get(pred) {
                                    if leaves_divergent_loop(*v, p) {
                                        temporal.push(*v);
                                    }
                                }
                            }
                        }
                        op => for_each_operand(op, |id| {
                            if leaves_divergent_loop(id, bi) {
                                temporal.push(id);
                            }
                        }),
                    }
                }
                let term_use = match &b.term {
                    Terminator::BranchCond { cond, .. } => Some(*cond),
                    Terminator::Switch { selector, .. } => Some(*selector),
                    Terminator::ReturnValue(v) => Some(*v),
                    _ => None,
                };
                if let Some(u) = term_use {
                    if leaves_divergent_loop(u, bi) {
                        temporal.push(u);
                    }
                }
            }
            varying.extend(temporal);
        }
        if varying.len() == before {
            break;
        }
    }
    Uniformity {
        varying,
        divergent_branch: divergent,
        divergent_loop: loop_divergent,
    }
}

/// Per loop (computed on first use), the blocks from which a path that does not go
/// through the loop header leaves the loop.
struct ExitReach {
    sets: Vec<Option<HashSet<usize>>>,
}

impl ExitReach {
    fn new(cfg: &Cfg) -> ExitReach {
        ExitReach {
            sets: vec![None; cfg.loops.len()],
        }
    }

    /// Whether some path from `b` (not through the loop header) leaves loop `l`.
    fn reaches_exit(&mut self, cfg: &Cfg, l: usize, b: usize) -> bool {
        let set = self.sets[l].get_or_insert_with(|| {
            // Backwards from the blocks with an exit edge, within the loop, never
            // continuing through the header (a path may start there, not pass it).
            let header = cfg.loops[l].header;
            let mut set = HashSet::new();
            let mut work: Vec<usize> = cfg
                .loop_blocks(l)
                .iter()
                .copied()
                .filter(|&x| cfg.succs[x].iter().any(|&s| !cfg.in_loop(l, s)))
                .collect();
            while let Some(x) = work.pop() {
                if !set.insert(x) || x == header {
                    continue;
                }
                for &p in &cfg.preds[x] {
                    if cfg.in_loop(l, p) && !set.contains(&p) {
                        work.push(p);
                    }
                }
            }
            set
        });
        set.contains(&b)
    }
}

/// Blocks where lanes that took different successors of the branch ending `b` can
/// meet again within one iteration of `b`'s loop (`region`); paths stop at the loop
/// header and at loop exits (exits are handled as temporal divergence).
///
/// Labels each block reached from `b` with the successor it is reached from, in
/// linear order (a topological order of forward edges); a block reached with two
/// labels is a join, which then propagates its own label. The walk stops where all
/// remaining paths meet (`b`'s post-dominator in the region), so its cost is the size
/// of the region between the branch and that point, not of the function.
fn join_points(cfg: &Cfg, b: usize, region: Option<usize>) -> Vec<usize> {
    let in_region = |x: usize| region.is_none_or(|l| cfg.in_loop(l, x));
    let header = region.map(|l| cfg.loops[l].header);
    /// A block's label: the successor index it is reached from, or (for a join) a
    /// label of its own.
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Label {
        From(usize),
        Join(usize),
    }
    let mut label: HashMap<usize, Label> = HashMap::new();
    let mut joins = Vec::new();
    // Labelled blocks not yet propagated, by linear position.
    let mut pending: std::collections::BTreeMap<usize, usize> = std::collections::BTreeMap::new();
    let bpos = cfg.pos[b];
    let reach = |s: usize,
                 l: Label,
                 label: &mut HashMap<usize, Label>,
                 pending: &mut std::collections::BTreeMap<usize, usize>,
                 joins: &mut Vec<usize>| {
        match label.get(&s) {
            None => {
                label.insert(s, l);
                pending.insert(cfg.pos[s], s);
            }
            Some(&old) if old != l && old != Label::Join(s) => {
                joins.push(s);
                label.insert(s, Label::Join(s));
            }
            _ => {}
        }
    };
    for (k, &s) in cfg.succs[b].iter().enumerate() {
        if !in_region(s) || Some(s) == header || cfg.pos[s] <= bpos {
            continue;
        }
        reach(s, Label::From(k), &mut label, &mut pending, &mut joins);
    }
    while let Some((px, x)) = pending.pop_first() {
        if pending.is_empty() {
            // Every remaining path goes through x: nothing after it is a new join.
            break;
        }
        let lx = label[&x];
        for &s in &cfg.succs[x] {
            if !in_region(s) || Some(s) == header || cfg.pos[s] <= px {
                continue;
            }
            reach(s, lx, &mut label, &mut pending, &mut joins);
        }
    }
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
            wrap: Default::default(),
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

    /// The walk over the whole linear order that `join_points` replaced.
    fn reference_join_points(cfg: &Cfg, b: usize, region: Option<usize>) -> Vec<usize> {
        let n = cfg.succs.len();
        let in_region = |x: usize| region.is_none_or(|l| cfg.in_loop(l, x));
        let header = region.map(|l| cfg.loops[l].header);
        const NONE: usize = usize::MAX;
        let mut label = vec![NONE; n];
        let mut joins = Vec::new();
        let bpos = cfg.pos[b];
        for (k, &s) in cfg.succs[b].iter().enumerate() {
            if !in_region(s) || Some(s) == header || cfg.pos[s] <= bpos {
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
            if cfg.pos[x] <= bpos || label[x] == NONE || !in_region(x) {
                continue;
            }
            for &s in &cfg.succs[x] {
                if !in_region(s) || Some(s) == header || cfg.pos[s] <= cfg.pos[x] {
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
        joins
    }

    #[test]
    fn join_points_match_the_full_walk() {
        use crate::analysis::cfg::tests::{blocks_of, random_cfg};
        for seed in 1..300u64 {
            let succs = random_cfg(seed);
            let cfg = Cfg::new(&blocks_of(&succs)).unwrap();
            for &b in &cfg.order {
                if cfg.succs[b].len() < 2 {
                    continue;
                }
                let region = cfg.loop_of[b];
                let mut got = join_points(&cfg, b, region);
                let mut want = reference_join_points(&cfg, b, region);
                got.sort_unstable();
                want.sort_unstable();
                assert_eq!(got, want, "seed {seed}, branch in block {b}");
            }
        }
    }

    #[test]
    fn exit_reach_matches_a_search_from_each_block() {
        use crate::analysis::cfg::tests::{blocks_of, random_cfg};
        for seed in 1..300u64 {
            let succs = random_cfg(seed);
            let cfg = Cfg::new(&blocks_of(&succs)).unwrap();
            let mut er = ExitReach::new(&cfg);
            for l in 0..cfg.loops.len() {
                for &b in cfg.loop_blocks(l) {
                    // Forward search from b, not continuing through the header.
                    let mut seen = vec![false; succs.len()];
                    let mut work = vec![b];
                    let mut exits = false;
                    while let Some(x) = work.pop() {
                        for &s in &cfg.succs[x] {
                            if !cfg.in_loop(l, s) {
                                exits = true;
                            } else if s != cfg.loops[l].header && !seen[s] {
                                seen[s] = true;
                                work.push(s);
                            }
                        }
                    }
                    assert_eq!(
                        er.reaches_exit(&cfg, l, b),
                        exits,
                        "seed {seed}, loop {l}, block {b}"
                    );
                }
            }
        }
    }
}
