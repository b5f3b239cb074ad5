//! Blocks that at most one lane can enter, lowered as scalar code for that lane.
//!
//! `if (lx == 0) tile[ly][0] = in[...]` (clbench `stencil2d`'s halo column) runs
//! under a mask of at most one lane when `lx` is affine with a non-zero stride: the
//! lanes' values are distinct, so at most one equals the case value. Lowered as
//! masked vector code, such a block builds the W lanes' addresses, spills them, finds
//! the active lane and loads and stores through it (about 75 instructions per
//! sub-group at W = 8). Here the block's lane `l` is computed once (`bound - base`
//! for a stride of ±1, at the branch, carried in a variable; else from the mask) and every operand the block reads becomes
//! the uniform scalar of lane `l` (`base + l * stride` for affine values, lane `l`
//! of a varying one), so the block's arithmetic, loads and stores are scalar code.
//!
//! A uniform result stands for lane `l`'s value, which is right wherever the block's
//! values are used: a block it dominates runs only lanes that passed through it (it
//! is in no loop, so each lane passes once), and phis of its successor take the
//! value under the edge's mask, which holds lane `l` at most. The block qualifies only
//! if it has the branch as its one predecessor, is in no loop, has no phi, ends in a
//! plain branch to a block that is not a loop header, and holds only arithmetic,
//! conversions, composites and plain loads and stores (no atomic, group, barrier,
//! call, printf or private variable, whose meaning counts the lanes).

use cranelift_codegen::ir::{self, condcodes::IntCC, types, InstBuilder, Value};
use cranelift_frontend::Variable;

use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::spirv::{BinOp, Id, Op, Terminator};
use crate::CompileError;

/// How the one lane of a single-lane block is found: where the affine value
/// `affine` (of stride `stride`) equals `bound`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SingleLane {
    affine: Id,
    stride: i64,
    bound: Bound,
    /// The lane, computed at the branch (`bound - base`) and carried to the block in
    /// this variable; None: the block takes its mask's first active lane.
    lane: Option<Variable>,
}

/// What the branch knows of a single-lane target's lane.
enum LaneAtBranch {
    /// Its index (i64), from the affine value's base and the bound.
    Known(Value),
    /// Found from the block's mask (a stride other than ±1).
    FromMask,
    /// Not a single-lane block after all (the bound is not a scalar of the type).
    NotSingle,
}

/// The value an affine one is compared with.
#[derive(Clone, Copy, Debug)]
enum Bound {
    /// A switch case literal (bits of the selector's type).
    Literal(u64),
    /// A uniform value.
    Id(Id),
}

impl Tr<'_, '_> {
    /// Records which targets of the terminator of block `bi` run with at most one
    /// lane (and forgets targets that do not here: a block may be lowered in another
    /// layout, where the selector is not affine).
    pub(super) fn note_single_lane_targets(&mut self, bi: usize) -> Result<(), CompileError> {
        let f = self.f;
        let term = &f.blocks[bi].term;
        let mut found: Vec<(Id, Option<SingleLane>)> = Vec::new();
        match term {
            Terminator::Switch {
                selector,
                default,
                targets,
            } => {
                let stride = self.distinct_stride(*selector)?;
                for (v, t) in targets {
                    let once = targets.iter().filter(|(_, x)| x == t).count() == 1;
                    let sl = stride.filter(|_| once && t != default).map(|s| SingleLane {
                        affine: *selector,
                        stride: s,
                        bound: Bound::Literal(*v),
                        lane: None,
                    });
                    found.push((*t, sl));
                }
            }
            Terminator::BranchCond { cond, t, f: fl } if t != fl => {
                let def = f.blocks[bi]
                    .insts
                    .iter()
                    .find(|i| i.result == Some(*cond))
                    .map(|i| &i.op);
                let mut sl = None;
                let mut side = *t;
                if let Some(Op::Binary(op @ (BinOp::IEqual | BinOp::INotEqual), a, b)) = def {
                    side = if *op == BinOp::IEqual { *t } else { *fl };
                    for (x, y) in [(*a, *b), (*b, *a)] {
                        let uniform_y = matches!(self.get(y)?.leaves.first(), Some(Lv::U(_)));
                        if let (Some(s), true) = (self.distinct_stride(x)?, uniform_y) {
                            sl = Some(SingleLane {
                                affine: x,
                                stride: s,
                                bound: Bound::Id(y),
                                lane: None,
                            });
                            break;
                        }
                    }
                }
                found.push((side, sl));
                found.push((if side == *t { *fl } else { *t }, None));
            }
            _ => return Ok(()),
        }
        for (t, sl) in found {
            let Some(&ti) = self.cfg.index.get(&t) else {
                continue;
            };
            let Some(mut sl) = sl.filter(|_| self.single_lane_block_ok(bi, ti)) else {
                self.single_lane_blocks.remove(&ti);
                continue;
            };
            // The lane is computed here, where the affine value and the bound are
            // defined on every path, and reaches the block through a variable: the
            // block may follow the join of this block's full and partial copies,
            // where neither copy's values dominate it. Each copy defines the same
            // variable. (The copies of one layout agree on `NotSingle`: the bound's
            // uniformity and type are the layout's, so no copy defines the variable
            // after another removed the block.)
            let earlier = self.single_lane_blocks.get(&ti).map(|e| e.lane);
            match self.lane_at_branch(&sl)? {
                LaneAtBranch::NotSingle => {
                    self.single_lane_blocks.remove(&ti);
                    continue;
                }
                LaneAtBranch::FromMask => sl.lane = None,
                LaneAtBranch::Known(lane) => {
                    let var = match earlier {
                        Some(Some(var)) => var,
                        // Another copy found its lane from the mask: so does the block.
                        Some(None) => {
                            self.single_lane_blocks.insert(ti, sl);
                            continue;
                        }
                        None => self.b.declare_var(types::I64),
                    };
                    self.b.def_var(var, lane);
                    sl.lane = Some(var);
                }
            }
            self.single_lane_blocks.insert(ti, sl);
        }
        Ok(())
    }

    /// The lane of single-lane target `sl`, computed in the branching block.
    fn lane_at_branch(&mut self, sl: &SingleLane) -> Result<LaneAtBranch, CompileError> {
        let a = self.get(sl.affine)?;
        let (Some(Lv::A(base, s)), 1 | -1) = (a.leaves.first(), sl.stride) else {
            return Ok(LaneAtBranch::FromMask);
        };
        if *s != sl.stride {
            return Ok(LaneAtBranch::FromMask);
        }
        let base = *base;
        let ty = self.b.func.dfg.value_type(base);
        let bound = match sl.bound {
            Bound::Literal(v) => self.scalar_const(a.elems[0], v),
            Bound::Id(id) => match self.get(id)?.leaves.first() {
                Some(Lv::U(x)) => *x,
                _ => return Ok(LaneAtBranch::NotSingle),
            },
        };
        if self.b.func.dfg.value_type(bound) != ty {
            return Ok(LaneAtBranch::NotSingle);
        }
        // The block runs only when the lane exists: `bound - base` (or the reverse) is
        // below W, so zero-extending it is exact.
        let d = if sl.stride == 1 {
            self.b.ins().isub(bound, base)
        } else {
            self.b.ins().isub(base, bound)
        };
        Ok(LaneAtBranch::Known(self.widen_to_i64(d)))
    }

    /// The stride of `id` when it is a scalar affine integer whose W lanes are
    /// pairwise distinct (a non-zero stride whose span does not wrap the type).
    fn distinct_stride(&mut self, id: Id) -> Result<Option<i64>, CompileError> {
        let v = self.get(id)?;
        let (Some(Lv::A(_, s)), Some(e)) = (v.leaves.first(), v.elems.first()) else {
            return Ok(None);
        };
        if v.leaves.len() != 1 || !e.is_int() || *s == 0 {
            return Ok(None);
        }
        let span = i128::from(*s).abs() * i128::from(self.w - 1);
        Ok((span < 1i128 << e.bits()).then_some(*s))
    }

    /// Whether block `ti`, a target of `from`'s branch, may run as scalar code for its
    /// one lane (see the module documentation).
    fn single_lane_block_ok(&self, from: usize, ti: usize) -> bool {
        let cfg = self.cfg;
        if cfg.preds[ti] != [from] || cfg.loop_of[ti].is_some() || ti == from {
            return false;
        }
        if self.regions.points.iter().any(|(b, _)| *b == ti) {
            return false;
        }
        let blk = &self.f.blocks[ti];
        let Terminator::Branch(next) = blk.term else {
            return false;
        };
        let Some(&ni) = cfg.index.get(&next) else {
            return false;
        };
        if cfg.loops.iter().any(|l| l.header == ni) {
            return false;
        }
        blk.insts.iter().all(|i| match &i.op {
            Op::Binary(..)
            | Op::Unary(..)
            | Op::Convert { .. }
            | Op::Bitcast(_)
            | Op::PtrCast(_)
            | Op::Select { .. }
            | Op::AccessChain { .. }
            | Op::CompositeExtract { .. }
            | Op::CompositeInsert { .. }
            | Op::CompositeConstruct(_)
            | Op::VectorShuffle { .. }
            | Op::CopyObject(_)
            | Op::CopyLogical(_) => true,
            Op::Load { ptr, .. } => !self.private_ptrs.contains(ptr),
            Op::Store { ptr, .. } => !self.private_ptrs.contains(ptr),
            // OpenCL.std 171..=185: vloadn/vstoren, shuffles, printf, prefetch.
            Op::ExtInst { opcode, .. } => !(171..=185).contains(opcode),
            _ => false,
        })
    }

    /// Before lowering single-lane block `bi`: computes its lane (i64) and makes every
    /// operand read from now on that lane's scalar. Returns false for other blocks.
    pub(super) fn enter_single_lane(&mut self, bi: usize) -> Result<bool, CompileError> {
        let Some(sl) = self.single_lane_blocks.get(&bi).copied() else {
            return Ok(false);
        };
        let lane = match sl.lane {
            Some(var) => self.b.use_var(var),
            None => {
                let l = self.first_active_lane();
                self.b.ins().uextend(types::I64, l)
            }
        };
        self.single_lane = Some(lane);
        Ok(true)
    }

    /// After the instructions of a single-lane block: operands are whole again.
    pub(super) fn leave_single_lane(&mut self) {
        self.single_lane = None;
    }

    /// An integer zero-extended (or kept) to i64.
    fn widen_to_i64(&mut self, v: Value) -> Value {
        if self.b.func.dfg.value_type(v) == types::I64 {
            v
        } else {
            self.b.ins().uextend(types::I64, v)
        }
    }

    /// `v` as seen by the lane of the single-lane block being lowered: every leaf
    /// that lane's uniform scalar.
    pub(super) fn single_lane_view(&mut self, lane: Value, v: Val) -> Val {
        if v.leaves.iter().all(Lv::is_uniform) {
            return v;
        }
        let leaves = v
            .leaves
            .iter()
            .zip(v.elems.iter())
            .map(|(l, e)| match l {
                Lv::U(_) => l.clone(),
                Lv::A(base, stride) => {
                    let ty = self.b.func.dfg.value_type(*base);
                    let l = if ty == types::I64 {
                        lane
                    } else {
                        self.b.ins().ireduce(ty, lane)
                    };
                    let off = self.b.ins().imul_imm_s(l, *stride);
                    Lv::U(self.b.ins().iadd(*base, off))
                }
                Lv::V(chunks) => Lv::U(self.lane_of_chunks(*e, chunks, lane)),
            })
            .collect();
        Val {
            leaves,
            elems: v.elems,
        }
    }

    /// Lane `lane` (a run-time i64) of the chunks of a varying leaf of element `e`,
    /// through the stack (bools as i8 0/1).
    fn lane_of_chunks(&mut self, e: Elem, chunks: &[Value], lane: Value) -> Value {
        let bytes = 16 * chunks.len() as u32;
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            bytes,
            4,
        ));
        let fl = ir::MemFlagsData::trusted();
        let area = self.b.ins().stack_addr(types::I64, slot, 0);
        for (c, v) in chunks.iter().enumerate() {
            self.b.ins().store(fl, *v, area, (16 * c) as i32);
        }
        // Bools are i32 lanes (all ones or zero).
        let (ty, size) = if e == Elem::Bool {
            (types::I32, 4)
        } else {
            (e.scalar(), i64::from(e.bytes()))
        };
        let off = self.b.ins().imul_imm_s(lane, size);
        let at = self.b.ins().iadd(area, off);
        let x = self.b.ins().load(ty, fl, at, 0);
        if e == Elem::Bool {
            self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0)
        } else {
            x
        }
    }
}
