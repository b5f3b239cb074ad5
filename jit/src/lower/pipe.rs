//! Pipe instructions in the lane model: calls of the run-time helpers of
//! `crate::pipe` (storage layout and the lock-free reservation scheme are there).
//!
//! - Per-work-item instructions (`read_pipe`/`write_pipe` with or without a
//!   reservation, `reserve_*_pipe`, `commit_*_pipe`) make one call per *active*
//!   lane, in lane order; inactive lanes touch no packet and get 0.
//! - Sub-group reservations and commits are one call for the sub-group (its lanes
//!   run in lock-step, so every lane's packets are written before the commit).
//! - Work-group reservations are a work-group collective: sub-group 0 reserves and
//!   writes the id into the collective's `__local` slot, and after the barrier every
//!   sub-group reads it. A work-group commit is a barrier after which sub-group 0
//!   (resuming first) commits: every sub-group has done its reads or writes by then.
//! - `is_valid_reserve_id` tests the id against 0; `get_pipe_num_packets` and
//!   `get_pipe_max_packets` are one call for the sub-group.

use cranelift_codegen::ir::{self, condcodes::IntCC, types, AbiParam, InstBuilder, Value};
use cranelift_frontend::Variable;

use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::spirv::{ConstValue, Id, PipeOp};
use crate::CompileError;

/// SPIR-V Workgroup scope.
const SCOPE_WORKGROUP: u64 = 2;

impl Tr<'_, '_> {
    /// Lowers pipe instruction `op` (operands `args`, result type `rty`) at
    /// instruction `k` of block `bi`.
    pub fn pipe_inst(
        &mut self,
        op: PipeOp,
        args: &[Id],
        rty: Option<Id>,
        bi: usize,
        k: usize,
    ) -> Result<Option<Val>, CompileError> {
        use PipeOp as P;
        if args.len() != op.operand_count() {
            return Err(CompileError::malformed(format!(
                "{op:?} with {} operands",
                args.len()
            )));
        }
        let write = u32::from(matches!(
            op,
            P::Write
                | P::ReservedWrite
                | P::ReserveWrite
                | P::CommitWrite
                | P::GroupReserveWrite
                | P::GroupCommitWrite
        ));
        let i64p = AbiParam::new(types::I64);
        let i32p = AbiParam::new(types::I32);
        let result = |t: &mut Self, e: Elem, lv: Lv| -> Result<Option<Val>, CompileError> {
            let rty =
                rty.ok_or_else(|| CompileError::malformed(format!("{op:?} without a result")))?;
            let elems = t.elems(rty)?;
            if elems.first() != Some(&e) {
                return Err(CompileError::malformed(format!(
                    "{op:?} result of the wrong type"
                )));
            }
            Ok(Some(Val {
                leaves: vec![lv],
                elems,
            }))
        };
        match op {
            P::IsValidReserveId => {
                let id = self.get(args[0])?.leaves[0].clone();
                let lv = self.per_lane(&[(Elem::I64, &id)], Elem::Bool, |t, x| {
                    t.b.ins().icmp_imm_s(IntCC::NotEqual, x[0], 0)
                });
                result(self, Elem::Bool, lv)
            }
            P::NumPackets | P::MaxPackets => {
                let p = self.lane0(args[0], Elem::I64)?;
                let sym = if op == P::NumPackets {
                    "cranecl_pipe_num_packets"
                } else {
                    "cranecl_pipe_max_packets"
                };
                let f = self.import_fn(sym, &[i64p], &[i32p])?;
                let c = self.b.ins().call(f, &[p]);
                let r = self.b.inst_results(c)[0];
                result(self, Elem::I32, Lv::U(r))
            }
            P::Read | P::Write => {
                let size = self.const_u32(args[2])?;
                let pipes = self.lanes(args[0], Elem::I64)?;
                let ptrs = self.lanes(args[1], Elem::I64)?;
                let f =
                    self.import_fn("cranecl_pipe_access", &[i64p, i64p, i32p, i32p], &[i32p])?;
                let lanes = self.guarded(&[types::I32], |t, l| {
                    let s = t.b.ins().iconst(types::I32, i64::from(size));
                    let w = t.b.ins().iconst(types::I32, i64::from(write));
                    let c = t.b.ins().call(f, &[pipes[l], ptrs[l], s, w]);
                    Ok(vec![t.b.inst_results(c)[0]])
                })?;
                let res: Vec<Value> = lanes.iter().map(|l| l[0]).collect();
                let lv = self.pack_lanes(Elem::I32, &res);
                result(self, Elem::I32, lv)
            }
            P::ReservedRead | P::ReservedWrite => {
                let size = self.const_u32(args[4])?;
                let pipes = self.lanes(args[0], Elem::I64)?;
                let ids = self.lanes(args[1], Elem::I64)?;
                let idx = self.lanes(args[2], Elem::I32)?;
                let ptrs = self.lanes(args[3], Elem::I64)?;
                let f = self.import_fn(
                    "cranecl_pipe_reserved_access",
                    &[i64p, i64p, i32p, i64p, i32p, i32p],
                    &[i32p],
                )?;
                let lanes = self.guarded(&[types::I32], |t, l| {
                    let s = t.b.ins().iconst(types::I32, i64::from(size));
                    let w = t.b.ins().iconst(types::I32, i64::from(write));
                    let c =
                        t.b.ins()
                            .call(f, &[pipes[l], ids[l], idx[l], ptrs[l], s, w]);
                    Ok(vec![t.b.inst_results(c)[0]])
                })?;
                let res: Vec<Value> = lanes.iter().map(|l| l[0]).collect();
                let lv = self.pack_lanes(Elem::I32, &res);
                result(self, Elem::I32, lv)
            }
            P::ReserveRead | P::ReserveWrite => {
                let pipes = self.lanes(args[0], Elem::I64)?;
                let ns = self.lanes(args[1], Elem::I32)?;
                let f = self.import_fn("cranecl_pipe_reserve", &[i64p, i32p, i32p], &[i64p])?;
                let lanes = self.guarded(&[types::I64], |t, l| {
                    let w = t.b.ins().iconst(types::I32, i64::from(write));
                    let c = t.b.ins().call(f, &[pipes[l], ns[l], w]);
                    Ok(vec![t.b.inst_results(c)[0]])
                })?;
                let res: Vec<Value> = lanes.iter().map(|l| l[0]).collect();
                let lv = self.pack_lanes(Elem::I64, &res);
                result(self, Elem::I64, lv)
            }
            P::CommitRead | P::CommitWrite => {
                let pipes = self.lanes(args[0], Elem::I64)?;
                let ids = self.lanes(args[1], Elem::I64)?;
                let f = self.import_fn("cranecl_pipe_commit", &[i64p, i64p, i32p], &[])?;
                self.guarded(&[], |t, l| {
                    let w = t.b.ins().iconst(types::I32, i64::from(write));
                    t.b.ins().call(f, &[pipes[l], ids[l], w]);
                    Ok(vec![])
                })?;
                Ok(None)
            }
            P::GroupReserveRead | P::GroupReserveWrite => {
                let work_group = self.const_u32(args[0])? == SCOPE_WORKGROUP as u32;
                let p = self.lane0(args[1], Elem::I64)?;
                let n = self.lane0(args[2], Elem::I32)?;
                let f = self.import_fn("cranecl_pipe_reserve", &[i64p, i32p, i32p], &[i64p])?;
                let w = self.b.ins().iconst(types::I32, i64::from(write));
                if !work_group {
                    let c = self.b.ins().call(f, &[p, n, w]);
                    let r = self.b.inst_results(c)[0];
                    return result(self, Elem::I64, Lv::U(r));
                }
                let r = self.work_group_reserve(bi, k, f, [p, n, w])?;
                result(self, Elem::I64, Lv::U(r))
            }
            P::GroupCommitRead | P::GroupCommitWrite => {
                let work_group = self.const_u32(args[0])? == SCOPE_WORKGROUP as u32;
                let p = self.lane0(args[1], Elem::I64)?;
                let id = self.lane0(args[2], Elem::I64)?;
                let f = self.import_fn("cranecl_pipe_commit", &[i64p, i64p, i32p], &[])?;
                if !work_group {
                    let w = self.b.ins().iconst(types::I32, i64::from(write));
                    self.b.ins().call(f, &[p, id, w]);
                    return Ok(None);
                }
                // The pipe and the id cross the barrier in the save area.
                let keep: Vec<(Variable, ir::Type)> = [p, id]
                    .into_iter()
                    .map(|x| {
                        let v = self.b.declare_var(types::I64);
                        self.b.def_var(v, x);
                        (v, types::I64)
                    })
                    .collect();
                self.barrier_split_keeping(bi, k, &keep)?;
                let (p, id) = (self.b.use_var(keep[0].0), self.b.use_var(keep[1].0));
                let (_, done) = self.pipe_sub_group_zero()?;
                let w = self.b.ins().iconst(types::I32, i64::from(write));
                self.b.ins().call(f, &[p, id, w]);
                self.b.ins().jump(done, &[]);
                self.b.switch_to_block(done);
                Ok(None)
            }
        }
    }

    /// A work-group reservation: sub-group 0 calls `f(args)` and leaves the id in
    /// the collective slot; after the barrier every sub-group reads it.
    fn work_group_reserve(
        &mut self,
        bi: usize,
        k: usize,
        f: ir::FuncRef,
        args: [Value; 3],
    ) -> Result<Value, CompileError> {
        let args = if self.regions.yields.is_empty() {
            args
        } else {
            // Kernels that yield: all arrive first (a point of its own).
            let keep: Vec<(Variable, ir::Type)> = args
                .iter()
                .map(|x| {
                    let t = self.b.func.dfg.value_type(*x);
                    let v = self.b.declare_var(t);
                    self.b.def_var(v, *x);
                    (v, t)
                })
                .collect();
            self.collective_arrive(bi, k, &keep)?;
            [0, 1, 2].map(|i| self.b.use_var(keep[i].0))
        };
        let slot = self.collective_addr(bi, k, false)?;
        let (_, done) = self.pipe_sub_group_zero()?;
        let c = self.b.ins().call(f, &args);
        let r = self.b.inst_results(c)[0];
        self.b.ins().store(ir::MemFlagsData::trusted(), r, slot, 0);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        self.barrier_split_keeping(bi, k, &[])?;
        let slot = self.collective_addr(bi, k, true)?;
        Ok(self
            .b
            .ins()
            .load(types::I64, ir::MemFlagsData::trusted(), slot, 0))
    }

    /// Branches to a new block when this is sub-group 0: returns (that block, the
    /// block after it); the caller fills the first and jumps to the second.
    fn pipe_sub_group_zero(&mut self) -> Result<(ir::Block, ir::Block), CompileError> {
        let sg = self
            .sgenv
            .as_ref()
            .map(|x| x.sg)
            .ok_or_else(|| CompileError::codegen("sub-group env missing"))?;
        let first = self.b.ins().icmp_imm_s(IntCC::Equal, sg, 0);
        let yes = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(first, yes, &[], done, &[]);
        self.b.switch_to_block(yes);
        Ok((yes, done))
    }

    /// The value of 32-bit integer constant `id`.
    fn const_u32(&self, id: Id) -> Result<u32, CompileError> {
        match self.m.constants.get(&id).map(|c| &c.value) {
            Some(ConstValue::Scalar(v)) => Ok(*v as u32),
            _ => Err(CompileError::malformed(format!(
                "pipe operand %{id} is not a constant"
            ))),
        }
    }

    /// The W lanes of scalar `id` as element `e`.
    fn lanes(&mut self, id: Id, e: Elem) -> Result<Vec<Value>, CompileError> {
        let v = self.get(id)?;
        let (Some(&ve), Some(lv)) = (v.elems.first(), v.leaves.first()) else {
            return Err(CompileError::malformed(format!("%{id} has no value")));
        };
        if ve != e {
            return Err(CompileError::malformed(format!(
                "pipe operand %{id} is {ve:?}, not {e:?}"
            )));
        }
        Ok(self.lanes_of(e, lv))
    }

    /// Lane 0's value of scalar `id` (operands the spec requires to be the same in
    /// every work-item of the group).
    fn lane0(&mut self, id: Id, e: Elem) -> Result<Value, CompileError> {
        let v = self.get(id)?;
        let (Some(&ve), Some(lv)) = (v.elems.first(), v.leaves.first()) else {
            return Err(CompileError::malformed(format!("%{id} has no value")));
        };
        if ve != e {
            return Err(CompileError::malformed(format!(
                "pipe operand %{id} is {ve:?}, not {e:?}"
            )));
        }
        Ok(match lv {
            Lv::U(x) | Lv::A(x, _) => *x,
            Lv::V(_) => self.lanes_of(e, lv)[0],
        })
    }
}
