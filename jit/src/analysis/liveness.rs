//! Liveness across barriers: whether a value defined before a program point is still
//! needed after it (so that a sub-group yielding at a barrier must save it). Standard
//! SSA liveness (backward dataflow over blocks; a phi operand is used at the end of
//! its predecessor), queried at an instruction.

use std::collections::HashMap;

use super::cfg::Cfg;
use super::flatten::FlatFunction;
use super::for_each_operand;
use crate::spirv::{Id, Op, Terminator};

/// Instruction index used for uses in a block's terminator (and phi operands, which
/// are used at the end of their predecessor).
pub const AT_END: usize = usize::MAX;

/// Every use of every id: (block index, instruction index or [`AT_END`]).
#[derive(Clone, Debug, Default)]
pub struct Uses {
    uses: HashMap<Id, Vec<(usize, usize)>>,
    /// Position of each block in the linear order (`usize::MAX` if unreachable).
    pos: Vec<usize>,
    /// Where each instruction result is defined: (block index, instruction index).
    defs: HashMap<Id, (usize, usize)>,
    /// Ids live at the end of each block.
    live_out: Vec<std::collections::HashSet<Id>>,
}

impl Uses {
    /// Collects the uses of `f`; with `liveness`, also what is live at each block's
    /// end ([`Uses::used_after`] needs it; only kernels with barriers ask, since it
    /// costs time and memory proportional to blocks times live values).
    pub fn new(f: &FlatFunction, cfg: &Cfg, liveness: bool) -> Uses {
        let mut uses: HashMap<Id, Vec<(usize, usize)>> = HashMap::new();
        let mut defs = HashMap::new();
        for (bi, b) in f.blocks.iter().enumerate() {
            for (k, inst) in b.insts.iter().enumerate() {
                if let Some(r) = inst.result {
                    defs.insert(r, (bi, k));
                }
                match &inst.op {
                    Op::Phi(inc) => {
                        for (v, pred) in inc {
                            if let Some(&p) = cfg.index.get(pred) {
                                uses.entry(*v).or_default().push((p, AT_END));
                            }
                        }
                    }
                    op => for_each_operand(op, |id| uses.entry(id).or_default().push((bi, k))),
                }
            }
            match &b.term {
                Terminator::BranchCond { cond, .. } => {
                    uses.entry(*cond).or_default().push((bi, AT_END))
                }
                Terminator::Switch { selector, .. } => {
                    uses.entry(*selector).or_default().push((bi, AT_END))
                }
                Terminator::ReturnValue(v) => uses.entry(*v).or_default().push((bi, AT_END)),
                _ => {}
            }
        }
        let n = f.blocks.len();
        let pos = cfg.pos.clone();
        if !liveness {
            return Uses {
                uses,
                pos,
                defs,
                live_out: vec![std::collections::HashSet::new(); n],
            };
        }
        // Backward dataflow: live_in(B) = uses(B) + (live_out(B) - defs(B));
        // live_out(B) = union over successors S of live_in(S) - phis(S), plus the phi
        // operands S takes from B (recorded as uses at the end of B).
        use std::collections::HashSet;
        let mut upward: Vec<HashSet<Id>> = vec![HashSet::new(); n];
        let mut defined: Vec<HashSet<Id>> = vec![HashSet::new(); n];
        let mut phi_defs: Vec<HashSet<Id>> = vec![HashSet::new(); n];
        for (bi, b) in f.blocks.iter().enumerate() {
            for inst in &b.insts {
                if let (Op::Phi(_), Some(r)) = (&inst.op, inst.result) {
                    phi_defs[bi].insert(r);
                }
                if let Some(r) = inst.result {
                    defined[bi].insert(r);
                }
            }
        }
        for (id, us) in &uses {
            for &(ub, _) in us {
                // Uses before any definition in the block (SSA: a def in the same block
                // always precedes its non-phi uses, except for phi operands at the end).
                let def_here = defs.get(id).is_some_and(|(db, _)| *db == ub);
                if !def_here {
                    upward[ub].insert(*id);
                }
            }
        }
        let mut live_in: Vec<HashSet<Id>> = upward.clone();
        let mut live_out: Vec<HashSet<Id>> = vec![HashSet::new(); n];
        let mut changed = true;
        while changed {
            changed = false;
            for &b in cfg.order.iter().rev() {
                let mut out: HashSet<Id> = HashSet::new();
                for &sb in &cfg.succs[b] {
                    for id in &live_in[sb] {
                        if !phi_defs[sb].contains(id) {
                            out.insert(*id);
                        }
                    }
                }
                let mut inn = upward[b].clone();
                for id in &out {
                    if !defined[b].contains(id) {
                        inn.insert(*id);
                    }
                }
                if out.len() != live_out[b].len() || inn.len() != live_in[b].len() {
                    changed = true;
                }
                live_out[b] = out;
                live_in[b] = inn;
            }
        }
        Uses {
            uses,
            pos,
            defs,
            live_out,
        }
    }

    /// Where `id` is defined: (block index, instruction index).
    pub fn def_of(&self, id: Id) -> Option<(usize, usize)> {
        self.defs.get(&id).copied()
    }

    /// Every use of `id` ([`AT_END`] for terminators and phi operands).
    pub fn uses_of(&self, id: Id) -> &[(usize, usize)] {
        self.uses.get(&id).map_or(&[], Vec::as_slice)
    }

    /// Instruction results defined in the function.
    pub fn defined_ids(&self) -> impl Iterator<Item = Id> + '_ {
        self.defs.keys().copied()
    }

    /// Whether `id` is an instruction result defined before instruction `k` of block
    /// `bi` in the linear order (parameters and constants are not).
    pub fn defined_before(&self, id: Id, bi: usize, k: usize) -> bool {
        self.defs.get(&id).is_some_and(|&(db, dk)| {
            let (p, here) = (self.pos[db], self.pos[bi]);
            p != usize::MAX && (p < here || (db == bi && dk < k))
        })
    }

    /// Whether `id` is needed after instruction `k` of block `bi`: used later in the
    /// block (or its terminator, or as a phi operand on an outgoing edge), or live at
    /// the block's end.
    pub fn used_after(&self, id: Id, bi: usize, k: usize) -> bool {
        self.live_out[bi].contains(&id)
            || self
                .uses
                .get(&id)
                .is_some_and(|us| us.iter().any(|&(ub, uk)| ub == bi && uk > k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spirv::{BinOp, Block, Inst};

    fn inst(r: Id, op: Op) -> Inst {
        Inst {
            result: Some(r),
            ty: Some(1),
            op,
            wrap: Default::default(),
        }
    }

    #[test]
    fn values_live_across_a_point() {
        // b0: %10 = a+a; %11 = %10+a; (point at k=1); %12 = %11+%11; br b1
        // b1: %13 = %10 + %12; ret
        let blocks = vec![
            Block {
                label: 100,
                insts: vec![
                    inst(10, Op::Binary(BinOp::IAdd, 2, 2)),
                    inst(11, Op::Binary(BinOp::IAdd, 10, 2)),
                    inst(12, Op::Binary(BinOp::IAdd, 11, 11)),
                ],
                term: Terminator::Branch(101),
            },
            Block {
                label: 101,
                insts: vec![inst(13, Op::Binary(BinOp::IAdd, 10, 12))],
                term: Terminator::Return,
            },
        ];
        let f = FlatFunction {
            name: "t".into(),
            params: vec![],
            blocks,
            next_id: 200,
        };
        let cfg = Cfg::new(&f.blocks).unwrap();
        let u = Uses::new(&f, &cfg, true);
        assert!(u.used_after(10, 0, 1), "%10 is used in b1");
        assert!(u.used_after(11, 0, 1), "%11 is used by instruction 2");
        assert!(!u.used_after(11, 0, 2), "%11's last use is instruction 2");
        assert!(u.used_after(12, 0, 2));
        assert!(!u.used_after(13, 1, 0));
    }

    #[test]
    fn loop_uses_count_as_after() {
        // b0 -> b1 (header) -> b2 -> b1 | b3. %10 defined in b0, used in b1 (before
        // a point in b2): live at the point because of the next iteration.
        let blocks = vec![
            Block {
                label: 100,
                insts: vec![inst(10, Op::Binary(BinOp::IAdd, 2, 2))],
                term: Terminator::Branch(101),
            },
            Block {
                label: 101,
                insts: vec![inst(11, Op::Binary(BinOp::IAdd, 10, 2))],
                term: Terminator::Branch(102),
            },
            Block {
                label: 102,
                insts: vec![inst(12, Op::Binary(BinOp::IAdd, 2, 2))],
                term: Terminator::BranchCond {
                    cond: 12,
                    t: 101,
                    f: 103,
                },
            },
            Block {
                label: 103,
                insts: vec![],
                term: Terminator::Return,
            },
        ];
        let f = FlatFunction {
            name: "t".into(),
            params: vec![],
            blocks,
            next_id: 200,
        };
        let cfg = Cfg::new(&f.blocks).unwrap();
        let u = Uses::new(&f, &cfg, true);
        assert!(u.used_after(10, 2, 0));
        assert!(!u.used_after(11, 2, 0), "%11 is never used");
    }
}
