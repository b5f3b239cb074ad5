//! SPIR-V's device-side enqueue instructions (`OpEnqueueKernel` and its family, the
//! `DeviceEnqueue` capability) in the lane model: each becomes the same
//! [`crate::device_enqueue::DeviceOp`] call as the `__cranecl_*` imports of the
//! OpenCL C path (`lower::device_enqueue`), so both end in the runtime's hook.
//!
//! - `Invoke` (an `OpFunction`) is passed as the address of its kernel's name, laid
//!   out with the program's data (`pipeline` compiles an invoke function that is not
//!   an entry point as a hidden kernel);
//! - an `ND Range` struct value is written per lane to the stack in the `ndrange_t`
//!   layout the runtime reads (a pointer operand is passed as it is);
//! - the `Local Size` operands (integers, or pointers to them) are gathered per lane
//!   into a `size_t` array;
//! - `OpBuildNDRange` builds the struct value from its operands, no call.

use cranelift_codegen::ir::{self, types, InstBuilder, Value};

use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::device_enqueue::{DeviceOp, ENQUEUE_ARGS};
use crate::spirv::{EnqueueOp, Id, Type};
use crate::CompileError;

/// Bytes of an `ndrange_t` (`u32` dims, then offset, global and local `size_t[3]`).
const NDRANGE_BYTES: usize = 80;

impl Tr<'_, '_> {
    /// Lowers device-enqueue instruction `op` (operands `args` without `Invoke`).
    pub fn enqueue_inst(
        &mut self,
        op: EnqueueOp,
        args: &[Id],
        invoke: Option<Id>,
        rty: Option<Id>,
    ) -> Result<Option<Val>, CompileError> {
        use EnqueueOp as E;
        let what = op.spirv_name();
        if args.len() < op.operand_count() {
            return Err(CompileError::malformed(format!(
                "Op{what} with {} operands",
                args.len()
            )));
        }
        if op == E::BuildNdRange {
            return self.build_ndrange(args, rty).map(Some);
        }
        let w = self.w as usize;
        let name = match invoke {
            Some(f) => {
                let addr = self.data_addrs.get(&f).copied().ok_or_else(|| {
                    CompileError::codegen(format!("Op{what}: invoke %{f} has no kernel"))
                })?;
                let v = self.b.ins().iconst(types::I64, addr as i64);
                Some(vec![v; w])
            }
            None => None,
        };
        let name = name.unwrap_or_default();
        let mut rows: Vec<(usize, Vec<Value>)> = Vec::new();
        let (dop, nargs) = match op {
            E::BuildNdRange => return Err(CompileError::codegen("OpBuildNDRange as a call")),
            E::GetDefaultQueue => (DeviceOp::GetDefaultQueue, 0),
            E::CreateUserEvent => (DeviceOp::CreateUserEvent, 0),
            E::EnqueueKernel => {
                for (row, &a) in [0, 1].iter().zip(&args[0..2]) {
                    rows.push((*row, self.lanes_i64(what, a)?));
                }
                rows.push((2, self.ndrange_addrs(what, args[2])?));
                for (row, &a) in [3, 4, 5].iter().zip(&args[3..6]) {
                    rows.push((*row, self.lanes_i64(what, a)?));
                }
                rows.push((6, name.clone()));
                rows.push((7, self.lanes_i64(what, args[6])?));
                rows.push((10, self.lanes_i64(what, args[7])?));
                let locals = &args[9..];
                let n = self.b.ins().iconst(types::I64, locals.len() as i64);
                rows.push((8, vec![n; w]));
                rows.push((9, self.local_sizes(what, locals)?));
                (DeviceOp::EnqueueKernel, ENQUEUE_ARGS)
            }
            E::EnqueueMarker => {
                for (row, &a) in args[0..4].iter().enumerate() {
                    rows.push((row, self.lanes_i64(what, a)?));
                }
                (DeviceOp::EnqueueMarker, 4)
            }
            E::KernelWorkGroupSize
            | E::KernelPreferredMultiple
            | E::KernelMaxNumSubgroups
            | E::KernelNdRangeSubGroupCount
            | E::KernelNdRangeMaxSubGroupSize
            | E::KernelLocalSizeForSubgroupCount => {
                let (dop, first) = match op {
                    E::KernelWorkGroupSize => (DeviceOp::KernelWorkGroupSize, false),
                    E::KernelPreferredMultiple => (DeviceOp::KernelPreferredMultiple, false),
                    E::KernelMaxNumSubgroups => (DeviceOp::KernelMaxNumSubGroups, false),
                    E::KernelNdRangeSubGroupCount => (DeviceOp::KernelSubGroupCount, true),
                    E::KernelNdRangeMaxSubGroupSize => (DeviceOp::KernelMaxSubGroupSize, true),
                    _ => (DeviceOp::KernelLocalSizeForSubGroupCount, true),
                };
                let rest = if first {
                    let lanes = if op == E::KernelLocalSizeForSubgroupCount {
                        self.lanes_i64(what, args[0])?
                    } else {
                        self.ndrange_addrs(what, args[0])?
                    };
                    rows.push((0, lanes));
                    &args[1..]
                } else {
                    args
                };
                rows.push((1, name.clone()));
                rows.push((2, self.lanes_i64(what, rest[0])?));
                (dop, 3)
            }
            E::RetainEvent | E::ReleaseEvent | E::IsValidEvent => {
                rows.push((0, self.lanes_i64(what, args[0])?));
                let dop = match op {
                    E::RetainEvent => DeviceOp::RetainEvent,
                    E::ReleaseEvent => DeviceOp::ReleaseEvent,
                    _ => DeviceOp::IsValidEvent,
                };
                (dop, 1)
            }
            E::SetUserEventStatus => {
                rows.push((0, self.lanes_i64(what, args[0])?));
                rows.push((1, self.lanes_i64(what, args[1])?));
                (DeviceOp::SetUserEventStatus, 2)
            }
            E::CaptureEventProfilingInfo => {
                for (row, &a) in args[0..3].iter().enumerate() {
                    rows.push((row, self.lanes_i64(what, a)?));
                }
                (DeviceOp::CaptureProfilingInfo, 3)
            }
        };
        if rows.iter().any(|(_, l)| l.len() != w) {
            return Err(CompileError::malformed(format!(
                "Op{what} without its Invoke operand"
            )));
        }
        let out = self.device_call(dop, nargs, &rows)?;
        self.device_result(what, out, rty)
    }

    /// `OpBuildNDRange`: the `ndrange_t` value of global size, local size and offset
    /// (each a `size_t` or an array of 2 or 3 of them).
    fn build_ndrange(&mut self, args: &[Id], rty: Option<Id>) -> Result<Val, CompileError> {
        let rty = rty.ok_or_else(|| CompileError::malformed("OpBuildNDRange without a type"))?;
        let elems = self.elems(rty)?;
        let mut parts = Vec::with_capacity(3);
        for &a in args {
            let v = self.get(a)?;
            if v.elems.iter().any(|e| *e != Elem::I64) || !(1..=3).contains(&v.leaves.len()) {
                return Err(CompileError::malformed(format!(
                    "OpBuildNDRange: operand %{a} is not a size_t or an array of them"
                )));
            }
            parts.push(v.leaves);
        }
        let dims = parts.first().map_or(0, Vec::len);
        let d = self.b.ins().iconst(types::I32, dims as i64);
        let zero = self.b.ins().iconst(types::I64, 0);
        let mut leaves = vec![Lv::U(d)];
        // Struct order: offset, global size, local size; operand order: global size,
        // local size, offset.
        for part in [&parts[2], &parts[0], &parts[1]] {
            for i in 0..3 {
                leaves.push(part.get(i).cloned().unwrap_or(Lv::U(zero)));
            }
        }
        if elems.len() != leaves.len() {
            return Err(CompileError::malformed(
                "OpBuildNDRange: the result type is not ndrange_t",
            ));
        }
        Ok(Val { leaves, elems })
    }

    /// Per lane, the address of the `ndrange_t` of operand `nd`: a pointer operand's
    /// value, or a struct value written to the stack.
    fn ndrange_addrs(&mut self, what: &str, nd: Id) -> Result<Vec<Value>, CompileError> {
        let t = self.type_of(nd)?;
        if matches!(self.m.ty(t)?, Type::Pointer { .. }) {
            return self.lanes_i64(what, nd);
        }
        let v = self.get(nd)?;
        if v.leaves.len() != 10 || v.elems.first() != Some(&Elem::I32) {
            return Err(CompileError::malformed(format!(
                "Op{what}: ND Range %{nd} is not an ndrange_t"
            )));
        }
        let w = self.w as usize;
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            (NDRANGE_BYTES * w) as u32,
            3,
        ));
        let base = self.b.ins().stack_addr(types::I64, slot, 0);
        let fl = ir::MemFlagsData::trusted();
        for (i, leaf) in v.leaves.iter().enumerate() {
            let e = v.elems[i];
            let lanes = self.lanes_of(e, leaf);
            let off = if i == 0 { 0 } else { 8 * i };
            for (l, x) in lanes.into_iter().enumerate() {
                self.b
                    .ins()
                    .store(fl, x, base, (NDRANGE_BYTES * l + off) as i32);
            }
        }
        Ok((0..w)
            .map(|l| self.b.ins().iadd_imm_s(base, (NDRANGE_BYTES * l) as i64))
            .collect())
    }

    /// Per lane, the address of a `size_t` array of the `Local Size` operands
    /// (integers, or pointers to integers, read here).
    fn local_sizes(&mut self, what: &str, locals: &[Id]) -> Result<Vec<Value>, CompileError> {
        let w = self.w as usize;
        let n = locals.len().max(1);
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            (8 * n * w) as u32,
            3,
        ));
        let base = self.b.ins().stack_addr(types::I64, slot, 0);
        let fl = ir::MemFlagsData::trusted();
        for (j, &id) in locals.iter().enumerate() {
            let t = self.type_of(id)?;
            let pointee = match self.m.ty(t)? {
                Type::Pointer { pointee, .. } => Some(*pointee),
                _ => None,
            };
            let lanes = match pointee {
                None => {
                    let (e, lanes) = self.scalar_lanes(id, || {
                        format!("Op{what}: Local Size %{id} is not a scalar")
                    })?;
                    self.size_lanes(what, e, lanes)?
                }
                Some(p) => {
                    let e = match self.m.ty(p)? {
                        Type::Int { bits: 32 } => Elem::I32,
                        Type::Int { bits: 64 } => Elem::I64,
                        _ => {
                            return Err(CompileError::malformed(format!(
                                "Op{what}: Local Size %{id} does not point to an integer"
                            )))
                        }
                    };
                    let ptrs = self.lanes_i64(what, id)?;
                    // An inactive lane's pointer may be anything: it reads this
                    // array instead (its result is not used).
                    let mask = self.mask.clone();
                    let mut lanes = Vec::with_capacity(w);
                    for (l, p) in ptrs.into_iter().enumerate() {
                        let p = if mask.is_empty() || self.full_state == Some(true) {
                            p
                        } else {
                            let on = self.lane_active(&mask, l);
                            self.b.ins().select(on, p, base)
                        };
                        lanes.push(self.b.ins().load(e.scalar(), fl, p, 0));
                    }
                    self.size_lanes(what, e, lanes)?
                }
            };
            for (l, x) in lanes.into_iter().enumerate() {
                self.b.ins().store(fl, x, base, (8 * (l * n + j)) as i32);
            }
        }
        Ok((0..w)
            .map(|l| self.b.ins().iadd_imm_s(base, (8 * n * l) as i64))
            .collect())
    }

    /// Sizes widened to 64 bits (zero-extended: they are unsigned).
    fn size_lanes(
        &mut self,
        what: &str,
        e: Elem,
        lanes: Vec<Value>,
    ) -> Result<Vec<Value>, CompileError> {
        match e {
            Elem::I64 => Ok(lanes),
            Elem::I32 => Ok(lanes
                .into_iter()
                .map(|x| self.b.ins().uextend(types::I64, x))
                .collect()),
            _ => Err(CompileError::malformed(format!(
                "Op{what}: a Local Size is not a 32- or 64-bit integer"
            ))),
        }
    }
}
