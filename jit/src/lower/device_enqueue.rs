//! Calls of the `__cranecl_*` device-enqueue imports (see [`crate::device_enqueue`]):
//! every argument's W lane values go into a stack array, one call of
//! [`crate::device_enqueue::cranecl_device_call`] runs the operation for each active
//! lane, and the W results come back as a varying value. `lower::enqueue_spirv`
//! lowers SPIR-V's own device-enqueue instructions through the same helpers.

use cranelift_codegen::ir::{self, condcodes::IntCC, types, AbiParam, InstBuilder, Value};

use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::device_enqueue::{self, DeviceOp, CALL_SYMBOL};
use crate::spirv::Id;
use crate::CompileError;

impl Tr<'_, '_> {
    /// The call of device-enqueue import `name`, or `None` when `name` is not one.
    pub fn device_enqueue_call(
        &mut self,
        name: &str,
        args: &[Id],
        rty: Option<Id>,
    ) -> Result<Option<Option<Val>>, CompileError> {
        let Some((op, nargs, map)) = device_enqueue::import(name) else {
            return Ok(None);
        };
        if args.len() != map.len() {
            return Err(CompileError::malformed(format!(
                "{name} takes {} arguments, called with {}",
                map.len(),
                args.len()
            )));
        }
        let mut rows = Vec::with_capacity(args.len());
        for (&arg, &row) in args.iter().zip(map) {
            rows.push((row, self.lanes_i64(name, arg)?));
        }
        let out = self.device_call(op, nargs, &rows)?;
        self.device_result(name, out, rty).map(Some)
    }

    /// The W lane values of scalar `arg` (an integer, bool, pointer or handle),
    /// widened to 64 bits (integers sign-extended).
    pub(super) fn lanes_i64(&mut self, what: &str, arg: Id) -> Result<Vec<Value>, CompileError> {
        let (e, lanes) =
            self.scalar_lanes(arg, || format!("{what}: argument %{arg} is not a scalar"))?;
        lanes
            .into_iter()
            .map(|x| {
                Ok(match e {
                    Elem::I64 => x,
                    Elem::I32 | Elem::I16 | Elem::I8 => self.b.ins().sextend(types::I64, x),
                    Elem::Bool => self.b.ins().uextend(types::I64, x),
                    _ => {
                        return Err(CompileError::malformed(format!(
                            "{what}: argument %{arg} is not an integer, pointer or handle"
                        )))
                    }
                })
            })
            .collect()
    }

    /// The element type and W lane values of scalar `arg`; `not_scalar` words the
    /// error for anything else.
    pub(super) fn scalar_lanes(
        &mut self,
        arg: Id,
        not_scalar: impl FnOnce() -> String,
    ) -> Result<(Elem, Vec<Value>), CompileError> {
        let v = self.get(arg)?;
        let (Some(&e), [leaf]) = (v.elems.first(), v.leaves.as_slice()) else {
            return Err(CompileError::malformed(not_scalar()));
        };
        let leaf = leaf.clone();
        Ok((e, self.lanes_of(e, &leaf)))
    }

    /// One call of `op` with `nargs` arguments for the active lanes: `rows` gives
    /// argument `i`'s W lane values (absent arguments are 0). Returns the address of
    /// the W results.
    pub(super) fn device_call(
        &mut self,
        op: DeviceOp,
        nargs: usize,
        rows: &[(usize, Vec<Value>)],
    ) -> Result<Value, CompileError> {
        let w = self.w as usize;
        // Row `i` holds argument `i` of every lane (absent arguments stay 0).
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            (8 * w * nargs.max(1)) as u32,
            3,
        ));
        let table = self.b.ins().stack_addr(types::I64, slot, 0);
        let fl = ir::MemFlagsData::trusted();
        let zero = self.b.ins().iconst(types::I64, 0);
        let mut given = vec![false; nargs];
        for (row, lanes) in rows {
            let (row, lanes) = (*row, lanes.clone());
            if row >= nargs || lanes.len() != w {
                return Err(CompileError::codegen("device call argument out of range"));
            }
            for (l, x) in lanes.into_iter().enumerate() {
                self.b.ins().store(fl, x, table, (8 * (row * w + l)) as i32);
            }
            given[row] = true;
        }
        for (row, _) in given.iter().enumerate().filter(|(_, g)| !**g) {
            for l in 0..w {
                self.b
                    .ins()
                    .store(fl, zero, table, (8 * (row * w + l)) as i32);
            }
        }
        let out_slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            (8 * w) as u32,
            3,
        ));
        let out = self.b.ins().stack_addr(types::I64, out_slot, 0);
        for l in 0..w {
            self.b.ins().store(fl, zero, out, (8 * l) as i32);
        }
        let g = self
            .genv
            .clone()
            .ok_or_else(|| CompileError::codegen("group env missing"))?;
        let mask = self.active_lane_bits();
        let op_v = self.b.ins().iconst(types::I32, op as i64);
        let n_v = self.b.ins().iconst(types::I32, nargs as i64);
        let w_v = self.b.ins().iconst(types::I32, w as i64);
        let (i32p, i64p) = (AbiParam::new(types::I32), AbiParam::new(types::I64));
        let f = self.import_fn(
            CALL_SYMBOL,
            &[i64p, i32p, i64p, i32p, i64p, i32p, i64p],
            &[],
        )?;
        self.b
            .ins()
            .call(f, &[g.ndrange, op_v, table, n_v, mask, w_v, out]);
        Ok(out)
    }

    /// The value of type `rty` (none, a 64-bit handle, a 32-bit integer or a bool)
    /// from the W results at `out`.
    pub(super) fn device_result(
        &mut self,
        what: &str,
        out: Value,
        rty: Option<Id>,
    ) -> Result<Option<Val>, CompileError> {
        let Some(rty) = rty else {
            return Ok(None);
        };
        let elems = self.elems(rty)?;
        let e = match elems.as_slice() {
            [] => return Ok(None),
            [e @ (Elem::I64 | Elem::I32 | Elem::Bool)] => *e,
            _ => {
                return Err(CompileError::malformed(format!(
                    "{what}: unexpected result type"
                )))
            }
        };
        let fl = ir::MemFlagsData::trusted();
        let mut lanes = Vec::with_capacity(self.w as usize);
        for l in 0..self.w as usize {
            let x = self.b.ins().load(types::I64, fl, out, (8 * l) as i32);
            lanes.push(match e {
                Elem::I64 => x,
                Elem::I32 => self.b.ins().ireduce(types::I32, x),
                _ => self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0),
            });
        }
        let leaf: Lv = self.pack_lanes(e, &lanes);
        Ok(Some(Val {
            leaves: vec![leaf],
            elems,
        }))
    }
}
