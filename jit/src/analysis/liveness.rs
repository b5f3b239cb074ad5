//! Liveness across barriers: where every value is used, and whether a value defined
//! before a program point is still needed after it (so that a sub-group yielding at a
//! barrier must save it). Positions follow the linear block order; a use anywhere in
//! a loop that contains the point counts as "after" (the next iteration).

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
    /// Loops containing each block.
    loops_of: Vec<Vec<usize>>,
    /// Membership of each loop.
    loop_blocks: Vec<Vec<bool>>,
}

impl Uses {
    /// Collects the uses of `f`.
    pub fn new(f: &FlatFunction, cfg: &Cfg) -> Uses {
        let mut uses: HashMap<Id, Vec<(usize, usize)>> = HashMap::new();
        for (bi, b) in f.blocks.iter().enumerate() {
            for (k, inst) in b.insts.iter().enumerate() {
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
        let mut pos = vec![usize::MAX; n];
        for (i, b) in cfg.order.iter().enumerate() {
            pos[*b] = i;
        }
        let loops_of = (0..n)
            .map(|b| {
                (0..cfg.loops.len())
                    .filter(|&l| cfg.loops[l].blocks[b])
                    .collect()
            })
            .collect();
        let loop_blocks = cfg.loops.iter().map(|l| l.blocks.clone()).collect();
        Uses {
            uses,
            pos,
            loops_of,
            loop_blocks,
        }
    }

    /// Whether `id` is used after instruction `k` of block `bi`: later in the linear
    /// order, later in the same block, or anywhere in a loop around `bi`.
    pub fn used_after(&self, id: Id, bi: usize, k: usize) -> bool {
        let here = self.pos[bi];
        self.uses.get(&id).is_some_and(|us| {
            us.iter().any(|&(ub, uk)| {
                let p = self.pos[ub];
                (p != usize::MAX && p > here)
                    || (ub == bi && uk > k)
                    || self.loops_of[bi].iter().any(|&l| self.loop_blocks[l][ub])
            })
        })
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
        let u = Uses::new(&f, &cfg);
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
        let u = Uses::new(&f, &cfg);
        assert!(u.used_after(10, 2, 0));
        assert!(!u.used_after(11, 2, 0), "%11 is never used");
    }
}
