//! `sub_group_broadcast(p[i], j)`: loading `p[i]` for every lane and keeping lane `j`
//! costs a vector load or W gathered ones (a private array after a 2D block read),
//! where one load of lane `j`'s address suffices. A load whose uses are all sub-group
//! broadcasts or shuffles of it later in the same block, with nothing in between
//! that may write memory, is deferred to them ([`Tr::defer_load`]); each loads only
//! the lane it needs. A private load qualifies with one use; a load of other memory
//! with any number (an unrolled sub-group GEMM step broadcasts every element of a row
//! of A). Lane loads of global or constant memory in blocks no enclosing loop of
//! which writes memory are marked movable ([`Tr::movable_loads`]), so that a block
//! emitted chunk by chunk can load them again per chunk.

use std::collections::HashSet;

use cranelift_codegen::ir::{self, types, InstBuilder};

use super::value::{Lv, Val};
use super::Tr;
use crate::analysis::flatten::FlatFunction;
use crate::spirv::for_each_operand;
use crate::spirv::{GroupOp, Id, Op, Storage, Terminator, Type};
use crate::CompileError;

/// The loads of `f` that may be deferred to their broadcast (`ptr_storage` gives the
/// storage class of a pointer id, when known; `sub_group` tells a sub-group scope).
pub fn broadcast_loads(
    f: &FlatFunction,
    ptr_storage: impl Fn(Id) -> Option<Storage>,
    is_pointer: impl Fn(Id) -> bool,
    sub_group: impl Fn(Id) -> bool,
) -> HashSet<Id> {
    let mut uses: std::collections::HashMap<Id, u32> = std::collections::HashMap::new();
    for b in &f.blocks {
        for i in &b.insts {
            for_each_operand(&i.op, |id| *uses.entry(id).or_default() += 1);
        }
        match &b.term {
            Terminator::BranchCond { cond: id, .. }
            | Terminator::Switch { selector: id, .. }
            | Terminator::ReturnValue(id) => *uses.entry(*id).or_default() += 1,
            _ => {}
        }
    }
    let mut out = HashSet::new();
    for b in &f.blocks {
        for (k, i) in b.insts.iter().enumerate() {
            let (Op::Load { ptr, .. }, Some(r)) = (&i.op, i.result) else {
                continue;
            };
            let Some(&total) = uses.get(&r) else { continue };
            // Private loads (arrays after a 2D block read) with one use; loads of any
            // storage whose every use is a broadcast (an unrolled sub-group GEMM step
            // broadcasts each element of a row of A to the sub-group, 16 times).
            let storage = ptr_storage(*ptr);
            if storage.is_none() || (total != 1 && storage == Some(Storage::Function)) {
                continue;
            }
            let mut seen = 0u32;
            for j in &b.insts[k + 1..] {
                match &j.op {
                    Op::Group {
                        op: GroupOp::Broadcast | GroupOp::Shuffle,
                        scope,
                        args,
                        ..
                    } if args.first() == Some(&r) => {
                        if args.get(1) == Some(&r) || !sub_group(*scope) {
                            break;
                        }
                        seen += 1;
                        if seen == total {
                            out.insert(r);
                            break;
                        }
                    }
                    // Nothing that may write memory (or use the load otherwise).
                    Op::Store { .. }
                    | Op::CopyMemory { .. }
                    | Op::Call { .. }
                    | Op::Atomic { .. }
                    | Op::ControlBarrier { .. }
                    | Op::MemoryBarrier
                    | Op::Block2d { .. }
                    | Op::AsyncCopy { .. }
                    | Op::AsyncCopyNd { .. }
                    | Op::DeviceEnqueue { .. } => break,
                    Op::Group { op, args, .. } => {
                        if !matches!(
                            op,
                            GroupOp::Broadcast | GroupOp::Shuffle | GroupOp::BlockRead
                        ) || args.contains(&r)
                        {
                            break;
                        }
                    }
                    Op::ExtInst { args, .. } if args.iter().any(|a| is_pointer(*a)) => break,
                    op => {
                        let mut used = false;
                        for_each_operand(op, |id| used |= id == r);
                        if used {
                            break;
                        }
                    }
                }
            }
        }
    }
    out
}

impl Tr<'_, '_> {
    /// Computes [`Tr::broadcast_loads`] for the function being lowered.
    pub fn find_broadcast_loads(&mut self) {
        let storage = |id: Id| {
            let t = self.type_of(id).ok()?;
            self.m.pointee(t).ok().map(|(s, _)| s)
        };
        let is_ptr = |id: Id| {
            self.type_of(id)
                .ok()
                .and_then(|t| self.m.ty(t).ok())
                .is_some_and(|t| matches!(t, Type::Pointer { .. }))
        };
        let sub_group = |scope: Id| self.scope_value(scope).is_ok_and(|s| s == 3);
        let found = broadcast_loads(self.f, storage, is_ptr, sub_group);
        // Which loops write memory, once per function (`load_is_movable` asks per
        // deferred lane load), and only when some load is deferred at all.
        let writing_loops = if found.is_empty() {
            Vec::new()
        } else {
            let f = self.f;
            let writes: Vec<bool> = f
                .blocks
                .iter()
                .map(|b| b.insts.iter().any(|i| may_write(&i.op, is_ptr)))
                .collect();
            (0..self.cfg.loops.len())
                .map(|l| self.cfg.loop_blocks(l).iter().any(|&b| writes[b]))
                .collect()
        };
        self.broadcast_loads = found;
        self.writing_loops = writing_loops;
    }

    /// Whether the load of `res` is deferred to its broadcast (then recorded).
    pub fn defer_load(&mut self, res: Id, ptr: Id, rty: Id, align: u32) -> bool {
        if !self.broadcast_loads.contains(&res)
            || self.home_offsets.contains_key(&res)
            || self.remat.contains(&res)
            || (self.masked_body && self.placement.in_vars.contains(&res))
        {
            return false;
        }
        self.deferred_loads.insert(res, (ptr, rty, align));
        true
    }

    /// A broadcast or shuffle (uniform lane `index`) of the deferred load `value`:
    /// one load of that lane's address. Otherwise the load is emitted here, where it
    /// reads what it would have read at its place, and None lets the caller go on.
    pub fn deferred_broadcast(
        &mut self,
        value: Id,
        index: Id,
        rty: Id,
    ) -> Result<Option<Val>, CompileError> {
        // The entry stays for the load's other broadcasts; a use that cannot load
        // its lane alone emits the load (and ends the deferral).
        let Some(&(ptr, lty, align)) = self.deferred_loads.get(&value) else {
            return Ok(None);
        };
        let elems = self.elems(rty)?;
        let p = self.get(ptr)?;
        let ix = self.get(index)?;
        if let (1, Some(Lv::A(base, stride)), Some(Lv::U(ix)), Some(ie)) = (
            elems.len(),
            p.leaves.first(),
            ix.leaves.first(),
            ix.elems.first(),
        ) {
            let e = elems[0];
            if (e.is_int() || e.is_float()) && ie.is_int() && self.w.is_power_of_two() {
                // Lanes outside the sub-group read some lane of it (as lane_dyn).
                let ix = match ie.bits() {
                    64 => *ix,
                    b if b < 64 => self.b.ins().uextend(types::I64, *ix),
                    _ => {
                        self.deferred_loads.remove(&value);
                        return self.emit_deferred(value, ptr, lty, align);
                    }
                };
                let lane = self.b.ins().band_imm_s(ix, i64::from(self.w) - 1);
                let off = self.b.ins().imul_imm_s(lane, *stride);
                let addr = self.b.ins().iadd(*base, off);
                let fl = ir::MemFlagsData::new().with_notrap();
                let v = self.b.ins().load(e.scalar(), fl, addr, 0);
                if self.load_is_movable(ptr) {
                    self.movable_loads.insert(v);
                }
                return Ok(Some(Val {
                    leaves: vec![Lv::U(v)],
                    elems,
                }));
            }
        }
        self.deferred_loads.remove(&value);
        self.emit_deferred(value, ptr, lty, align)
    }

    /// Whether a load through `ptr` in the current block may be moved and copied by
    /// the mid-end: global or constant memory (another work-item's write to it
    /// without a barrier would be a data race), and no loop around the block writes
    /// memory, so that no hoisting out of a loop passes a write.
    fn load_is_movable(&mut self, ptr: Id) -> bool {
        let storage = self
            .type_of(ptr)
            .ok()
            .and_then(|t| self.m.pointee(t).ok())
            .map(|(s, _)| s);
        if !matches!(
            storage,
            Some(Storage::CrossWorkgroup | Storage::UniformConstant)
        ) {
            return false;
        }
        let Some(bi) = self.cur_block else {
            return false;
        };
        let mut l = self.cfg.loop_of[bi];
        while let Some(lp) = l {
            if self.writing_loops.get(lp).copied().unwrap_or(true) {
                return false;
            }
            l = self.cfg.loops[lp].parent;
        }
        true
    }

    /// Emits the deferred load of `id`, if any (for a use other than the broadcast
    /// it was deferred to: never expected, but then it reads what it would have).
    pub fn flush_deferred(&mut self, id: Id) -> Result<(), CompileError> {
        if let Some((ptr, lty, align)) = self.deferred_loads.remove(&id) {
            self.emit_deferred(id, ptr, lty, align)?;
        }
        Ok(())
    }

    fn emit_deferred(
        &mut self,
        value: Id,
        ptr: Id,
        lty: Id,
        align: u32,
    ) -> Result<Option<Val>, CompileError> {
        let v = self.load(ptr, lty, align)?;
        self.define(value, v);
        Ok(None)
    }
}

/// Whether `op` may write memory: anything but arithmetic, loads, address
/// arithmetic, sub-group reads and OpenCL.std functions without pointer operands
/// (`is_pointer` tells a pointer operand).
fn may_write(op: &Op, is_pointer: impl Fn(Id) -> bool) -> bool {
    match op {
        Op::Group { op, .. } => !matches!(
            op,
            GroupOp::Broadcast | GroupOp::Shuffle | GroupOp::BlockRead
        ),
        Op::ExtInst { args, .. } => args.iter().any(|a| is_pointer(*a)),
        _ => !super::chunk_major::reads_only(op),
    }
}
