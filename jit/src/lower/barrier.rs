//! Work-group barriers by region splitting (continuation-based synchronisation).
//!
//! A kernel with barriers runs `loop { for sg in 0..n_sg { resume sg } }`: each
//! sub-group runs until it reaches a barrier, records where to resume and yields to
//! the next sub-group. What it needs after the barrier is in its scratch area: values
//! used across a barrier live there from their definition on (their *homes*, see
//! `storage`), and so does the control state of bodies that keep it in memory
//! (`state`); only control state kept in variables and the current mask are saved
//! at the barrier. When every sub-group has reached the barrier the pass repeats,
//! each resuming after its barrier; a sub-group that finishes records "done".
//! Private variables of such kernels live in the scratch area too. Work-group
//! collectives are a barrier with a combine step before it (each sub-group folds its
//! part into the collective's slot in `__local` memory) and, for reduce, broadcast,
//! all and any, a read of the slot after it. A scan computes its result before the
//! barrier (the slot holds the earlier sub-groups' prefix when it arrives) and keeps
//! it in the save area across the barrier, which only stops sub-group 0 from starting
//! the next meeting of the same collective (in a loop) before the last one has
//! added its part. Each slot has two halves, used in alternate passes: the reads of
//! one meeting happen in the pass after its writes, the same pass in which the
//! earliest sub-groups may already write the next meeting's parts.
//!
//! Loops that may wait for another sub-group ([`crate::analysis::spin`]) yield at
//! their back-edges: the sub-group stops like at a barrier but is not *waiting*, and
//! runs again in the next pass. A pass releases the sub-groups waiting at a barrier
//! only when nobody yielded in the previous one (then all are at the barrier or
//! done); each release starts a new generation, whose parity picks a slot's half.
//! In kernels that yield, sub-groups reach a collective in any order, so it gets
//! two points: all arrive, then (in the releasing pass, in sub-group order) combine.
//!
//! Scratch layout per sub-group: `[0, 4)` resume point, `[4, 8)` waiting flag,
//! `[8, 12)` back-edges since the last yield, `[12, 16)` unused, then the private area
//! (`private_bytes * W`), the home area, the save area (the largest of any barrier)
//! and the state area.

use cranelift_codegen::ir::{self, condcodes::IntCC, types, InstBuilder, Value};
use cranelift_frontend::Variable;

use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::analysis::cfg::Cfg;
use crate::analysis::flatten::FlatFunction;
use crate::analysis::liveness::Uses;
use crate::spirv::{GroupMode, GroupOp, Id, Module, Op};
use crate::CompileError;

/// Offsets of the pass flags in [`BarrierCtx::flags`].
const PENDING: i32 = 0;
const YIELDED: i32 = 1;

/// Resume value of a finished sub-group.
const DONE: i64 = 0x7fff_ffff;

/// Offset in a sub-group's scratch of its flag "waiting at a barrier" (i32).
const WAITING: i32 = 4;

/// Offset in a sub-group's scratch of its count of back-edges since it last
/// yielded (i32), and how many make it yield.
const SPINS: i32 = 8;
const SPINS_PER_YIELD: i64 = 64;

/// SPIR-V Workgroup scope.
const SCOPE_WORKGROUP: u64 = 2;

/// SPIR-V Device scope (CrossDevice is 0: wider scopes have smaller numbers).
const SCOPE_DEVICE: u64 = 1;

/// The synchronisation points of a kernel.
#[derive(Clone, Debug, Default)]
pub(crate) struct Regions {
    /// (block index, instruction index) of every work-group barrier or collective
    /// that needs one, in block order.
    pub points: Vec<(usize, usize)>,
    /// Scratch bytes per sub-group (after lowering).
    pub scratch_per_sg: u64,
    /// Uses of every id, for liveness at barriers.
    pub uses: Uses,
    /// Yield points (also in `points`): the end of the latches of loops that may wait
    /// for another sub-group ([`crate::analysis::spin`]), before the terminator.
    pub yields: Vec<(usize, usize)>,
    /// The points that are collectives (group operations and work-group pipe
    /// reservations), once each: only they have a slot in `__local` memory, so a
    /// kernel with 10 000 plain barriers needs none.
    pub collectives: Vec<(usize, usize)>,
}

fn const_scope(m: &Module, id: Id) -> Option<u64> {
    match m.constants.get(&id) {
        Some(crate::spirv::Constant {
            value: crate::spirv::ConstValue::Scalar(v),
            ..
        }) => Some(*v),
        _ => None,
    }
}

impl Regions {
    /// Finds the barriers of `f`. `one_sub_group`: every work-group is one sub-group
    /// (its required size is at most the width), so its lanes run in lock-step and a
    /// barrier orders nothing that program order does not: it needs no point, unless
    /// the kernel has loops that wait for another work-item (whose yields rely on the
    /// region machinery).
    pub fn find(
        m: &Module,
        f: &FlatFunction,
        cfg: &Cfg,
        one_sub_group: bool,
    ) -> Result<Regions, CompileError> {
        let mut r = Regions::default();
        let latches = crate::analysis::spin::waiting_latches(m, f, cfg);
        let barriers_free = one_sub_group && latches.is_empty();
        r.yields = latches
            .iter()
            .map(|&b| (b, f.blocks[b].insts.len()))
            .collect();
        for &bi in &cfg.order {
            let b = &f.blocks[bi];
            for (k, inst) in b.insts.iter().enumerate() {
                match &inst.op {
                    Op::ControlBarrier { exec_scope, .. } => {
                        let s = const_scope(m, *exec_scope).ok_or_else(|| {
                            CompileError::unsupported("barrier with a non-constant scope")
                        })?;
                        if s <= SCOPE_WORKGROUP && !barriers_free {
                            r.points.push((bi, k));
                        }
                    }
                    // Work-group pipe reservations are collectives, commits barriers.
                    Op::Pipe { op, args }
                        if op.is_group() && const_scope(m, args[0]) == Some(SCOPE_WORKGROUP) =>
                    {
                        r.points.push((bi, k));
                        r.collectives.push((bi, k));
                        if !r.yields.is_empty() && op.has_result() {
                            r.points.push((bi, k));
                        }
                    }
                    Op::Group { scope, mode, .. }
                        if *scope != 0 && const_scope(m, *scope) == Some(SCOPE_WORKGROUP) =>
                    {
                        r.points.push((bi, k));
                        r.collectives.push((bi, k));
                        if !r.yields.is_empty() {
                            // A second point: all arrive, then combine in order.
                            r.points.push((bi, k));
                        }
                    }
                    _ => {}
                }
            }
            // Points stay in linear order: a yield ends its block.
            if latches.contains(&bi) {
                r.points.push((bi, b.insts.len()));
            }
        }
        r.uses = Uses::new(f, cfg, !r.points.is_empty());
        Ok(r)
    }

    pub fn has_barriers(&self) -> bool {
        !self.points.is_empty()
    }

    /// Slot index in the collective area of a collective at (bi, k).
    pub fn collective_slot(&self, bi: usize, k: usize) -> usize {
        self.collectives
            .iter()
            .position(|p| *p == (bi, k))
            .unwrap_or(0)
    }
}

/// Bytes of `__local` memory per work-group collective: two 16-byte halves.
pub(crate) const COLLECTIVE_SLOT_BYTES: u64 = 32;

/// Per-body state of the barrier machinery.
pub(crate) struct BarrierCtx {
    /// Where a sub-group goes when it stops at a barrier or finishes.
    pub next_sg: ir::Block,
    /// Two flag bytes of the pass: [`PENDING`] (some sub-group stopped at a barrier
    /// or yielded) and [`YIELDED`] (some sub-group yielded at a loop back-edge). In
    /// memory, not variables: a variable set in the body and read after the
    /// sub-group loop would ride through every loop of the body.
    pub flags: ir::StackSlot,
    /// The barrier generation (releases so far): its parity picks the half of a
    /// collective slot.
    pub pass: Value,
    /// This sub-group's scratch base.
    pub sg_base: Value,
    /// Resume blocks, one per barrier point.
    pub resume: Vec<ir::Block>,
    /// Largest save area used so far.
    pub save_bytes: u64,
    /// Per variable (by number), the value a resume block loaded and its offset in the save area:
    /// a barrier that finds the variable still holding that value at the same offset
    /// does not store it again (its slot is unchanged: only barriers write there).
    pub resumed: std::collections::HashMap<u32, (Value, u64)>,
}

impl Tr<'_, '_> {
    /// Byte offset of the home area (values used across barriers) in a sub-group's
    /// scratch.
    pub(crate) fn home_area_offset(&self) -> u64 {
        (16 + self.private_slack() + self.private_bytes * u64::from(self.w)).next_multiple_of(16)
    }

    /// Byte offset of the save area in a sub-group's scratch.
    fn save_offset(&self) -> u64 {
        self.home_area_offset() + self.home_bytes
    }

    /// The work-group function of a kernel with barriers: one pass loop per layout
    /// the kernel may need (the layout is chosen once per work-group, not at every
    /// resume).
    pub fn emit_barrier_work_group(&mut self, fast: Value) -> Result<(), CompileError> {
        let g = self
            .genv
            .clone()
            .ok_or_else(|| CompileError::codegen("group env missing"))?;
        // Per-sub-group scratch size: patched once every barrier's save area is known.
        let size_placeholder = self.b.ins().iconst(types::I64, 0);
        let fl = ir::MemFlagsData::trusted();
        let yields = !self.regions.yields.is_empty();
        // Every sub-group starts at resume point 0.
        {
            let sgv = self.b.declare_var(types::I64);
            let z = self.b.ins().iconst(types::I64, 0);
            self.b.def_var(sgv, z);
            let head = self.b.create_block();
            let body = self.b.create_block();
            let done = self.b.create_block();
            self.b.ins().jump(head, &[]);
            self.b.switch_to_block(head);
            let sg = self.b.use_var(sgv);
            let c = self
                .b
                .ins()
                .icmp(IntCC::UnsignedGreaterThanOrEqual, sg, g.n_sg);
            self.b.ins().brif(c, done, &[], body, &[]);
            self.b.switch_to_block(body);
            let off = self.b.ins().imul(sg, size_placeholder);
            let base = self.b.ins().iadd(g.scratch, off);
            let z32 = self.b.ins().iconst(types::I32, 0);
            self.b.ins().store(fl, z32, base, 0);
            if yields {
                self.b.ins().store(fl, z32, base, WAITING);
                self.b.ins().store(fl, z32, base, SPINS);
            }
            let sg1 = self.b.ins().iadd_imm_s(sg, 1);
            self.b.def_var(sgv, sg1);
            self.b.ins().jump(head, &[]);
            self.b.switch_to_block(done);
        }
        let flags = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            2,
            0,
        ));
        let (want_fast, want_gen) = self.layouts();
        let copies: Vec<bool> = [(true, want_fast), (false, want_gen)]
            .iter()
            .filter(|(_, want)| *want)
            .map(|(contiguous, _)| *contiguous)
            .collect();
        let entries: Vec<ir::Block> = copies.iter().map(|_| self.b.create_block()).collect();
        match entries.as_slice() {
            [one] => {
                self.b.ins().jump(*one, &[]);
            }
            [f, gen] => {
                self.b.ins().brif(fast, *f, &[], *gen, &[]);
            }
            _ => return Err(CompileError::codegen("no sub-group layout for the kernel")),
        }
        let mut save_bytes = 0u64;
        for (contiguous, entry) in copies.into_iter().zip(entries) {
            self.b.switch_to_block(entry);
            save_bytes = self.emit_pass_loop(contiguous, size_placeholder, flags, save_bytes)?;
        }

        // The state area of bodies that keep their control state in memory comes last.
        let used = self.finish_state(self.save_offset() + save_bytes);
        let per_sg = used.next_multiple_of(64);
        self.regions.scratch_per_sg = per_sg;
        let inst = self
            .b
            .func
            .dfg
            .value_def(size_placeholder)
            .inst()
            .ok_or_else(|| {
                CompileError::codegen("scratch size placeholder is not an instruction")
            })?;
        self.b.func.replace(inst).iconst(types::I64, per_sg as i64);
        Ok(())
    }

    /// The passes over the sub-groups of a work-group in one layout: each pass resumes
    /// every sub-group that has not finished (in kernels that yield, a sub-group
    /// waiting at a barrier only in a releasing pass) until it stops again; passes
    /// repeat while some sub-group stopped. Returns the largest save area so far.
    fn emit_pass_loop(
        &mut self,
        contiguous: bool,
        size_placeholder: Value,
        flags: ir::StackSlot,
        save_bytes: u64,
    ) -> Result<u64, CompileError> {
        let g = self
            .genv
            .clone()
            .ok_or_else(|| CompileError::codegen("group env missing"))?;
        let fl = ir::MemFlagsData::trusted();
        let yields = !self.regions.yields.is_empty();
        let sgv = self.b.declare_var(types::I64);
        let passv = self.b.declare_var(types::I64);
        let release = self.b.declare_var(types::I8);
        let z = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(passv, z);
        let z8 = self.b.ins().iconst(types::I8, 0);
        self.b.def_var(release, z8);
        // The row of a sub-group follows from its index when the work-group size is
        // known; otherwise it is advanced from sub-group to sub-group.
        let const_rows = contiguous && self.reqd_local.is_some();
        let [pass, head, run, body, finish, next, check, exit] =
            [(); 8].map(|_| self.b.create_block());
        self.b.ins().jump(pass, &[]);

        self.b.switch_to_block(pass);
        let z = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(sgv, z);
        // A pass after one in which nobody yielded releases the sub-groups waiting
        // at a barrier: a new generation.
        let p = self.b.use_var(passv);
        let rel = self.b.use_var(release);
        let rel64 = self.b.ins().uextend(types::I64, rel);
        let p1 = self.b.ins().iadd(p, rel64);
        self.b.def_var(passv, p1);
        let rowv = (contiguous && !const_rows).then(|| self.row_vars_init());
        let f0 = self.b.ins().iconst(types::I8, 0);
        self.b.ins().stack_store(types::I64, f0, flags, PENDING);
        self.b.ins().stack_store(types::I64, f0, flags, YIELDED);
        self.b.ins().jump(head, &[]);

        self.b.switch_to_block(head);
        let sg = self.b.use_var(sgv);
        let c = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, sg, g.n_sg);
        self.b.ins().brif(c, check, &[], run, &[]);

        // The sub-group's index, row and resume point are read here, where they
        // dominate everything up to `next` (variables read later would ride through
        // every loop of the body as block parameters).
        self.b.switch_to_block(run);
        let sg = self.b.use_var(sgv);
        let rows = match rowv {
            Some(v) => Some(v.map(|v| self.b.use_var(v))),
            None if const_rows => Some(self.rows_of_sub_group(sg)),
            None => None,
        };
        let off = self.b.ins().imul(sg, size_placeholder);
        let base = self.b.ins().iadd(g.scratch, off);
        let r = self.b.ins().load(types::I32, fl, base, 0);
        let is_done = self.b.ins().icmp_imm_s(IntCC::Equal, r, DONE);
        if yields {
            // A sub-group waiting at a barrier runs only in a releasing pass.
            let [gate, wake, skip, choose] = [(); 4].map(|_| self.b.create_block());
            self.b.ins().brif(is_done, next, &[], gate, &[]);
            self.b.switch_to_block(gate);
            let wt = self.b.ins().load(types::I32, fl, base, WAITING);
            self.b.ins().brif(wt, wake, &[], choose, &[]);
            self.b.switch_to_block(wake);
            self.b.ins().brif(rel, choose, &[], skip, &[]);
            self.b.switch_to_block(skip);
            let t = self.b.ins().iconst(types::I8, 1);
            self.b.ins().stack_store(types::I64, t, flags, PENDING);
            self.b.ins().jump(next, &[]);
            self.b.switch_to_block(choose);
            let z32 = self.b.ins().iconst(types::I32, 0);
            self.b.ins().store(fl, z32, base, WAITING);
            self.b.ins().jump(body, &[]);
        } else {
            self.b.ins().brif(is_done, next, &[], body, &[]);
        }

        self.b.switch_to_block(body);
        let pbase = self.b.ins().iadd_imm_s(base, 16);
        let pbase = self.align_private_base(pbase);
        self.enter_sub_group(sg, rows, Some(pbase))?;
        self.bctx = Some(BarrierCtx {
            next_sg: next,
            flags,
            pass: p1,
            sg_base: base,
            resume: Vec::new(),
            save_bytes,
            resumed: Default::default(),
        });
        self.emit_body(Some(r), finish)?;
        let save_bytes = self.bctx.as_ref().map_or(0, |b| b.save_bytes);
        self.bctx = None;

        // A sub-group that ran to the end.
        self.b.switch_to_block(finish);
        let d = self.b.ins().iconst(types::I32, DONE);
        self.b.ins().store(fl, d, base, 0);
        self.b.ins().jump(next, &[]);

        self.b.switch_to_block(next);
        let sg1 = self.b.ins().iadd_imm_s(sg, 1);
        self.b.def_var(sgv, sg1);
        if let (Some(v), Some(cur)) = (rowv, rows) {
            self.row_vars_advance(v, cur);
        }
        self.b.ins().jump(head, &[]);

        self.b.switch_to_block(check);
        // Defined again here, so that the next pass finds the variable here rather
        // than through the sub-group loop.
        self.b.def_var(passv, p1);
        let y = self
            .b
            .ins()
            .stack_load(types::I64, types::I8, flags, YIELDED);
        let rel = self.b.ins().bxor_imm_s(y, 1);
        self.b.def_var(release, rel);
        let p = self
            .b
            .ins()
            .stack_load(types::I64, types::I8, flags, PENDING);
        self.b.ins().brif(p, pass, &[], exit, &[]);
        self.b.switch_to_block(exit);
        self.b.ins().return_(&[]);
        Ok(save_bytes)
    }

    /// The local id of lane 0 of sub-group `sg` per dimension in the lane-contiguous
    /// layout of a kernel with a required work-group size (every sub-group in one
    /// row): constant divisions of `sg * W`.
    fn rows_of_sub_group(&mut self, sg: Value) -> [Value; 3] {
        let [lx, ly, _] = self.reqd_local.unwrap_or([1, 1, 1]).map(i64::from);
        let (x, t) = if self.sub_group_per_row() {
            // A sub-group per row: x is 0 as a constant, so that tests of the local
            // id against constants (a tile's edge work-items) are decided per lane
            // when the kernel is compiled.
            (self.b.ins().iconst(types::I64, 0), sg)
        } else {
            let first = self.b.ins().imul_imm_s(sg, i64::from(self.w));
            (
                self.b.ins().urem_imm_s(first, lx),
                self.b.ins().udiv_imm_s(first, lx),
            )
        };
        let y = self.b.ins().urem_imm_s(t, ly);
        let z = self.b.ins().udiv_imm_s(t, ly);
        [x, y, z]
    }

    /// Saves the live state, yields to the next sub-group, and continues (in the
    /// resume block) with the state restored. `point` indexes `regions.points`.
    fn barrier_split(&mut self, bi: usize, k: usize) -> Result<(), CompileError> {
        self.barrier_split_keeping(bi, k, &[])
    }

    /// [`Self::barrier_split`] that also carries the variables `extra` across.
    /// A collective with two points (kernels that yield) splits at the second here.
    pub(super) fn barrier_split_keeping(
        &mut self,
        bi: usize,
        k: usize,
        extra: &[(Variable, ir::Type)],
    ) -> Result<(), CompileError> {
        let point = self.point_index(bi, k, true)?;
        self.split_at(point, bi, extra, false)
    }

    /// The index in `regions.points` of instruction `k` of block `bi`: its last
    /// point (`last`; a collective with two points splits at the second), else its
    /// first.
    fn point_index(&self, bi: usize, k: usize, last: bool) -> Result<usize, CompileError> {
        let mut points = self.regions.points.iter();
        let at = |p: &(usize, usize)| *p == (bi, k);
        if last {
            points.rposition(at)
        } else {
            points.position(at)
        }
        .ok_or_else(|| CompileError::codegen("barrier point not found"))
    }

    /// In a kernel that yields, the first of a collective's two points (all arrive),
    /// carrying `keep` across.
    pub(super) fn collective_arrive(
        &mut self,
        bi: usize,
        k: usize,
        keep: &[(Variable, ir::Type)],
    ) -> Result<(), CompileError> {
        let point = self.point_index(bi, k, false)?;
        self.split_at(point, bi, keep, false)
    }

    /// Yields to the next sub-group at the end of latch `bi` (a loop that may wait
    /// for another sub-group) and resumes there in a later pass.
    /// Only every [`SPINS_PER_YIELD`]-th back-edge yields: a compare-exchange retry
    /// loop contended by the lanes of one sub-group ends within W iterations anyway.
    pub(crate) fn yield_split(&mut self, bi: usize, k: usize) -> Result<(), CompileError> {
        let point = self
            .regions
            .points
            .iter()
            .position(|p| *p == (bi, k))
            .ok_or_else(|| CompileError::codegen("yield point not found"))?;
        let sg_base = self
            .bctx
            .as_ref()
            .map(|c| c.sg_base)
            .ok_or_else(|| CompileError::codegen("yield outside a region-split body"))?;
        let fl = ir::MemFlagsData::trusted();
        let n = self.b.ins().load(types::I32, fl, sg_base, SPINS);
        let n1 = self.b.ins().iadd_imm_s(n, 1);
        let go = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, n1, SPINS_PER_YIELD);
        let z = self.b.ins().iconst(types::I32, 0);
        let n2 = self.b.ins().select(go, z, n1);
        self.b.ins().store(fl, n2, sg_base, SPINS);
        // The mask on both paths (restored after a yield).
        let saved: Vec<Variable> = self
            .mask
            .clone()
            .iter()
            .map(|m| {
                let v = self.b.declare_var(types::I32X4);
                self.b.def_var(v, *m);
                v
            })
            .collect();
        let stop = self.b.create_block();
        let cont = self.b.create_block();
        self.b.ins().brif(go, stop, &[], cont, &[]);
        self.b.switch_to_block(stop);
        self.split_at(point, bi, &[], true)?;
        for (v, m) in saved.iter().zip(self.mask.clone()) {
            self.b.def_var(*v, m);
        }
        self.b.ins().jump(cont, &[]);
        self.b.switch_to_block(cont);
        self.mask = saved.iter().map(|v| self.b.use_var(*v)).collect();
        self.mask_full = None;
        Ok(())
    }

    /// Stops this sub-group at `point` (waiting for the others there, or only
    /// yielding), keeping its state and `extra`; continues in the resume block.
    fn split_at(
        &mut self,
        point: usize,
        bi: usize,
        extra: &[(Variable, ir::Type)],
        yields: bool,
    ) -> Result<(), CompileError> {
        let (next_sg, flags, sg_base, resume) = {
            let c = self
                .bctx
                .as_ref()
                .ok_or_else(|| CompileError::codegen("barrier outside a region-split body"))?;
            (c.next_sg, c.flags, c.sg_base, c.resume[point])
        };
        // What to keep: (variable, type). Values used after the barrier are in their
        // homes already (see `storage`); what remains is the control state.
        let mut keep: Vec<(Variable, ir::Type)> = self
            .body_state_vars(bi, yields)
            .iter()
            .filter_map(|c| c.var().map(|v| (v, c.ty())))
            .collect();
        // The current mask: kept in fresh variables, unless it is the sub-group's
        // entry mask (always so in bodies without divergent branches), which the
        // dispatch computes again before every resume.
        let entry = self.sgenv.as_ref().map(|s| s.mask.clone());
        let is_entry = entry.as_ref().is_some_and(|e| *e == self.mask);
        let cur: Vec<Variable> = if is_entry {
            Vec::new()
        } else {
            self.mask
                .clone()
                .iter()
                .map(|m| {
                    let v = self.b.declare_var(types::I32X4);
                    self.b.def_var(v, *m);
                    v
                })
                .collect()
        };
        for v in &cur {
            keep.push((*v, types::I32X4));
        }
        keep.extend_from_slice(extra);
        let fl = ir::MemFlagsData::trusted();
        let mut off = self.save_offset();
        let mut layout = Vec::with_capacity(keep.len());
        for (v, t) in &keep {
            let sz = u64::from(t.bytes()).max(1);
            off = off.next_multiple_of(sz.min(16));
            let val = self.b.use_var(*v);
            let unchanged = self
                .bctx
                .as_ref()
                .is_some_and(|c| c.resumed.get(&v.as_u32()) == Some(&(val, off)));
            if !unchanged {
                self.b.ins().store(fl, val, sg_base, off as i32);
            }
            layout.push(off);
            off += sz;
        }
        let used = off - self.save_offset();
        if let Some(c) = self.bctx.as_mut() {
            c.save_bytes = c.save_bytes.max(used);
        }
        let id = self.b.ins().iconst(types::I32, point as i64 + 1);
        self.b.ins().store(fl, id, sg_base, 0);
        let t = self.b.ins().iconst(types::I8, 1);
        self.b.ins().stack_store(types::I64, t, flags, PENDING);
        if yields {
            self.b.ins().stack_store(types::I64, t, flags, YIELDED);
        } else if !self.regions.yields.is_empty() {
            let w = self.b.ins().iconst(types::I32, 1);
            self.b.ins().store(fl, w, sg_base, WAITING);
        }
        self.b.ins().jump(next_sg, &[]);
        // Resume.
        self.b.switch_to_block(resume);
        for ((v, t), o) in keep.iter().zip(&layout) {
            let x = self.b.ins().load(*t, fl, sg_base, *o as i32);
            self.b.def_var(*v, x);
            if let Some(c) = self.bctx.as_mut() {
                c.resumed.insert(v.as_u32(), (x, *o));
            }
        }
        self.mask = match entry {
            Some(e) if is_entry => e,
            _ => cur.iter().map(|v| self.b.use_var(*v)).collect(),
        };
        self.mask_full = None;
        self.block_cache.clear();
        Ok(())
    }

    /// OpControlBarrier. The memory part needs a hardware fence only at device scope
    /// or wider: all work-items of a work-group run on one thread, so program order
    /// already orders their accesses for each other (and Cranelift keeps loads and
    /// stores in program order). Skipping it matters: `barrier()` in a tiled loop
    /// costs an `mfence` per sub-group and pass otherwise.
    pub fn control_barrier(
        &mut self,
        bi: usize,
        k: usize,
        exec_scope: Id,
        mem_scope: Id,
    ) -> Result<(), CompileError> {
        if self.scope_value(mem_scope)? <= SCOPE_DEVICE {
            self.b.ins().fence();
        }
        let s = self.scope_value(exec_scope)?;
        // Not a point: the work-group is one sub-group (`Regions::find`).
        if s <= SCOPE_WORKGROUP && self.regions.points.contains(&(bi, k)) {
            self.barrier_split(bi, k)?;
        }
        Ok(())
    }

    /// Address of the collective slot (in local memory after the kernel's variables):
    /// the half this pass writes, or (`after`: just resumed from its barrier) the
    /// half the previous pass wrote.
    pub(super) fn collective_addr(
        &mut self,
        bi: usize,
        k: usize,
        after: bool,
    ) -> Result<Value, CompileError> {
        let slot = self.regions.collective_slot(bi, k) as i64;
        let base = self
            .genv
            .as_ref()
            .map(|g| g.local_mem)
            .ok_or_else(|| CompileError::codegen("group env missing"))?;
        let pass = self
            .bctx
            .as_ref()
            .map(|c| c.pass)
            .ok_or_else(|| CompileError::codegen("collective outside a region-split body"))?;
        let p = pass;
        let p = if after {
            self.b.ins().iadd_imm_s(p, 1)
        } else {
            p
        };
        let half = self.b.ins().band_imm_s(p, 1);
        let half = self.b.ins().ishl_imm_s(half, 4);
        let a = self.b.ins().iadd(base, half);
        Ok(self.b.ins().iadd_imm_s(
            a,
            self.collective_base as i64 + slot * COLLECTIVE_SLOT_BYTES as i64,
        ))
    }

    /// Work-group reduce / scan / broadcast / all / any.
    pub fn work_group_collective(
        &mut self,
        op: GroupOp,
        mode: Option<GroupMode>,
        args: &[Id],
        rty: Id,
        bi: usize,
        k: usize,
    ) -> Result<Val, CompileError> {
        let elems = self.elems(rty)?;
        if elems.len() != 1 {
            return Err(CompileError::unsupported(
                "work-group collectives on vectors",
            ));
        }
        if mode == Some(GroupMode::ClusteredReduce)
            || !(matches!(op, GroupOp::All | GroupOp::Any | GroupOp::Broadcast)
                || op.is_arithmetic())
        {
            return Err(CompileError::unsupported(format!(
                "group operation {op:?} with work-group scope"
            )));
        }
        let mut vals: Vec<Val> = args
            .iter()
            .map(|a| self.get(*a))
            .collect::<Result<_, _>>()?;
        let float_arith = matches!(
            op,
            GroupOp::FAdd | GroupOp::FMul | GroupOp::FMin | GroupOp::FMax
        );
        if float_arith && elems[0] == Elem::F16 {
            // Combined in f32 (partials, slots and scans), rounded to half once.
            if let Some(v) = vals.first_mut() {
                v.leaves[0] = self.half_to_f32(&v.leaves[0]);
                v.elems = std::rc::Rc::new(vec![Elem::F32]);
            }
            let wide = std::rc::Rc::new(vec![Elem::F32]);
            let r = self.work_group_collective_of(op, mode, vals, wide, bi, k)?;
            return Ok(Val {
                leaves: vec![self.f32_to_half(&r.leaves[0])],
                elems,
            });
        }
        self.work_group_collective_of(op, mode, vals, elems, bi, k)
    }

    /// [`Self::work_group_collective`] on operand values `vals` with result `elems`.
    fn work_group_collective_of(
        &mut self,
        op: GroupOp,
        mode: Option<GroupMode>,
        vals: Vec<Val>,
        elems: std::rc::Rc<Vec<Elem>>,
        bi: usize,
        k: usize,
    ) -> Result<Val, CompileError> {
        let e = elems[0];
        let vals = if self.regions.yields.is_empty() {
            vals
        } else {
            self.arrive_first(bi, k, vals)?
        };
        let v = vals
            .first()
            .ok_or_else(|| CompileError::malformed("work-group collective without a value"))?
            .clone();
        let slot = self.collective_addr(bi, k, false)?;
        let fl = ir::MemFlagsData::trusted();
        let sg = self
            .sgenv
            .as_ref()
            .map(|s| s.sg)
            .ok_or_else(|| CompileError::codegen("sub-group env missing"))?;
        let is_first = self.b.ins().icmp_imm_s(IntCC::Equal, sg, 0);
        let st = if e == Elem::Bool {
            types::I8
        } else {
            e.scalar()
        };
        match op {
            GroupOp::Broadcast => {
                // The sub-group holding the chosen work-item writes its value.
                let g = self
                    .genv
                    .clone()
                    .ok_or_else(|| CompileError::codegen("group env missing"))?;
                // The local id is one scalar (1D) or a vector of 2 or 3 components
                // (OpGroupBroadcast's LocalId); x varies fastest.
                let ids: Vec<(Lv, Elem)> = match vals.get(1..) {
                    Some([one]) => one
                        .leaves
                        .iter()
                        .cloned()
                        .zip(one.elems.iter().copied())
                        .collect(),
                    Some(many) => many
                        .iter()
                        .map(|v| (v.leaves[0].clone(), v.elems[0]))
                        .collect(),
                    None => Vec::new(),
                };
                if ids.len() > 3 {
                    return Err(CompileError::malformed(
                        "work_group_broadcast with more than 3 local ids",
                    ));
                }
                let mut lin: Option<Value> = None;
                for d in (0..ids.len()).rev() {
                    let (idl, ide) = &ids[d];
                    let x = self.int_resize(idl, *ide, Elem::I64, false);
                    let Lv::U(x) = x else {
                        return Err(CompileError::unsupported(
                            "work_group_broadcast with a varying work-item id",
                        ));
                    };
                    lin = Some(match lin {
                        None => x,
                        Some(acc) => {
                            let m = self.b.ins().imul(acc, g.local_size[d]);
                            self.b.ins().iadd(m, x)
                        }
                    });
                }
                let lin = lin
                    .ok_or_else(|| CompileError::malformed("work_group_broadcast without an id"))?;
                let first = self
                    .sgenv
                    .as_ref()
                    .map(|s| s.first)
                    .ok_or_else(|| CompileError::codegen("sub-group env missing"))?;
                let rel = self.b.ins().isub(lin, first);
                let mine = self
                    .b
                    .ins()
                    .icmp_imm_s(IntCC::UnsignedLessThan, rel, i64::from(self.w));
                let x = match &v.leaves[0] {
                    Lv::U(x) => *x,
                    other => {
                        let other = other.clone();
                        let ix = self.b.ins().band_imm_s(rel, i64::from(self.w) - 1);
                        self.lane_dyn(e, &other, ix)
                    }
                };
                let wb = self.b.create_block();
                let cont = self.b.create_block();
                self.b.ins().brif(mine, wb, &[], cont, &[]);
                self.b.switch_to_block(wb);
                self.b.ins().store(fl, x, slot, 0);
                self.b.ins().jump(cont, &[]);
                self.b.switch_to_block(cont);
                self.barrier_split(bi, k)?;
                let slot = self.collective_addr(bi, k, true)?;
                let r = self.b.ins().load(st, fl, slot, 0);
                return Ok(Val {
                    leaves: vec![Lv::U(r)],
                    elems,
                });
            }
            GroupOp::All | GroupOp::Any => {
                let vm = self.bool_mask(&v.leaves[0]);
                let m = self.mask.clone();
                let mine = if op == GroupOp::Any {
                    let x = self.mask_and(&vm, &m);
                    self.mask_any(&x)
                } else {
                    let x = self.mask_and_not(&m, &vm);
                    let a = self.mask_any(&x);
                    self.b.ins().bxor_imm_s(a, 1)
                };
                let old = self.b.ins().load(types::I8, fl, slot, 0);
                let comb = if op == GroupOp::Any {
                    self.b.ins().bor(old, mine)
                } else {
                    self.b.ins().band(old, mine)
                };
                let newv = self.b.ins().select(is_first, mine, comb);
                self.b.ins().store(fl, newv, slot, 0);
                self.barrier_split(bi, k)?;
                let slot = self.collective_addr(bi, k, true)?;
                let r = self.b.ins().load(types::I8, fl, slot, 0);
                return Ok(Val {
                    leaves: vec![Lv::U(r)],
                    elems,
                });
            }
            _ => {}
        }
        // Reductions and scans: this sub-group's partial, combined in sub-group order.
        let partial = match self.group_partial(op, e, &v.leaves[0])? {
            Lv::U(p) => p,
            _ => return Err(CompileError::codegen("internal: partial is not uniform")),
        };
        let old = self.b.ins().load(st, fl, slot, 0);
        let prefix = old;
        let comb = self.combine(op, old, partial);
        let newv = self.b.ins().select(is_first, partial, comb);
        self.b.ins().store(fl, newv, slot, 0);
        match mode.unwrap_or(GroupMode::Reduce) {
            GroupMode::Reduce => {
                self.barrier_split(bi, k)?;
                let slot = self.collective_addr(bi, k, true)?;
                let r = self.b.ins().load(st, fl, slot, 0);
                Ok(Val {
                    leaves: vec![Lv::U(r)],
                    elems,
                })
            }
            m => {
                // Prefix of the earlier sub-groups (identity for the first).
                let scan = self.group_scan(op, m, e, &v.leaves[0])?;
                let id = self.group_identity(op, e);
                let pre = self.b.ins().select(is_first, id, prefix);
                let pre_lv = Lv::U(pre);
                let r = self.per_lane(&[(e, &pre_lv), (e, &scan)], e, |t, x| {
                    t.combine(op, x[0], x[1])
                });
                // The result crosses the barrier in the save area.
                let keep: Vec<(Variable, ir::Type)> = self
                    .chunks_of(e, &r)
                    .into_iter()
                    .map(|c| {
                        let t = self.b.func.dfg.value_type(c);
                        let v = self.b.declare_var(t);
                        self.b.def_var(v, c);
                        (v, t)
                    })
                    .collect();
                self.barrier_split_keeping(bi, k, &keep)?;
                let chunks = keep.iter().map(|(v, _)| self.b.use_var(*v)).collect();
                Ok(Val {
                    leaves: vec![Lv::V(chunks)],
                    elems,
                })
            }
        }
    }

    /// In a kernel that yields, sub-groups reach a collective in any order: they
    /// first all arrive (a barrier, carrying the operands across), then combine in
    /// sub-group order in the releasing pass.
    fn arrive_first(
        &mut self,
        bi: usize,
        k: usize,
        vals: Vec<Val>,
    ) -> Result<Vec<Val>, CompileError> {
        let point = self
            .regions
            .points
            .iter()
            .position(|p| *p == (bi, k))
            .ok_or_else(|| CompileError::codegen("collective point not found"))?;
        let mut keep: Vec<(Variable, ir::Type)> = Vec::new();
        for v in &vals {
            for l in &v.leaves {
                let parts: Vec<Value> = match l {
                    Lv::U(x) | Lv::A(x, _) => vec![*x],
                    Lv::V(c) => c.clone(),
                };
                for x in parts {
                    let t = self.b.func.dfg.value_type(x);
                    let var = self.b.declare_var(t);
                    self.b.def_var(var, x);
                    keep.push((var, t));
                }
            }
        }
        self.split_at(point, bi, &keep, false)?;
        let mut it = keep.iter();
        let mut next = |t: &mut Tr<'_, '_>| -> Result<Value, CompileError> {
            let (var, _) = it
                .next()
                .ok_or_else(|| CompileError::codegen("collective operands lost"))?;
            Ok(t.b.use_var(*var))
        };
        let mut out = Vec::with_capacity(vals.len());
        for v in &vals {
            let mut leaves = Vec::with_capacity(v.leaves.len());
            for l in &v.leaves {
                leaves.push(match l {
                    Lv::U(_) => Lv::U(next(self)?),
                    Lv::A(_, s) => Lv::A(next(self)?, *s),
                    Lv::V(c) => {
                        let mut cs = Vec::with_capacity(c.len());
                        for _ in c {
                            cs.push(next(self)?);
                        }
                        Lv::V(cs)
                    }
                });
            }
            out.push(Val {
                leaves,
                elems: v.elems.clone(),
            });
        }
        Ok(out)
    }
}
