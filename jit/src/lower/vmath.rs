//! OpenCL.std `f32` math on whole sub-groups: the lanes of every operand (all components
//! of an OpenCL vector together) are stored to a stack slot, one call of the vector
//! routine of [`crate::builtins::vmath`] computes every result, and the results are
//! loaded back as chunks, instead of one scalar call per lane and component.
//! `rsqrt` is inline: an `f32` square root and division (each correctly rounded:
//! at most 1.5 ulp, inside the limit of 2).
//! Uniform operands keep the single scalar call of `extinst.rs`.

use cranelift_codegen::ir::{self, types, AbiParam, InstBuilder};
use rspirv::spirv::OpenclStd100Op as C;

use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::builtins::vmath;
use crate::CompileError;

impl Tr<'_, '_> {
    /// The vector lowering of `op` on `f32` operands; None = not handled here.
    pub(super) fn vmath(
        &mut self,
        op: C,
        vals: &[Val],
        elems: &[Elem],
    ) -> Result<Option<Vec<Lv>>, CompileError> {
        let all_f32 = |es: &[Elem]| es.iter().all(|e| *e == Elem::F32);
        if !all_f32(elems) || !vals.iter().all(|v| all_f32(&v.elems)) {
            return Ok(None);
        }
        if op == C::rsqrt && vals.len() == 1 {
            let one = self.b.ins().f32const(1.0);
            let out = (0..elems.len())
                .map(|i| {
                    let (_, x) = Self::comp(&vals[0], i);
                    let s = self.vec_op1(Elem::F32, &x, |t, x| t.b.ins().sqrt(x));
                    self.vec_op2(
                        Elem::F32,
                        &Lv::U(one),
                        &s,
                        |t, x, y| t.b.ins().fdiv(x, y),
                        |t, x, y| t.b.ins().fdiv(x, y),
                    )
                })
                .collect();
            return Ok(Some(out));
        }
        let Some((symbol, arity)) = vmath::lookup(op as u32) else {
            return Ok(None);
        };
        if vals.len() != arity || vals.iter().all(|v| v.leaves.iter().all(Lv::is_uniform)) {
            return Ok(None);
        }
        let w = self.w as usize;
        let ncomp = elems.len();
        let n = ncomp * w;
        // One region of n lanes per operand, then the results.
        let region = (n * 4) as u32;
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            region * (arity as u32 + 1),
            4,
        ));
        let lane_off = |region_no: usize, comp: usize, chunk: usize| -> i32 {
            (region_no as u32 * region + ((comp * w + chunk * 4) * 4) as u32) as i32
        };
        for (k, v) in vals.iter().enumerate() {
            for i in 0..ncomp {
                let (_, l) = Self::comp(v, i);
                let chunks = self.chunks_of(Elem::F32, &l);
                for (c, ch) in chunks.iter().enumerate() {
                    self.b
                        .ins()
                        .stack_store(types::I64, *ch, slot, lane_off(k, i, c));
                }
            }
        }
        let p = AbiParam::new(types::I64);
        let f = self.import_fn(symbol, &[p, p, p, p], &[])?;
        let a = self.b.ins().stack_addr(types::I64, slot, 0);
        let b = if arity == 2 {
            self.b.ins().stack_addr(types::I64, slot, region as i32)
        } else {
            a
        };
        let out = self
            .b
            .ins()
            .stack_addr(types::I64, slot, lane_off(arity, 0, 0));
        let nv = self.b.ins().iconst(types::I64, n as i64);
        self.b.ins().call(f, &[a, b, out, nv]);
        let nchunks = self.nchunks(Elem::F32);
        let leaves = (0..ncomp)
            .map(|i| {
                Lv::V(
                    (0..nchunks)
                        .map(|c| {
                            self.b.ins().stack_load(
                                types::I64,
                                types::F32X4,
                                slot,
                                lane_off(arity, i, c),
                            )
                        })
                        .collect(),
                )
            })
            .collect();
        Ok(Some(leaves))
    }
}
