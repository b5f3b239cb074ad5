//! Bit-field instructions (`OpBitFieldInsert`, `OpBitFieldSExtract`,
//! `OpBitFieldUExtract`: cl_khr_extended_bit_ops) and the integer dot products of
//! SPV_KHR_integer_dot_product (cl_khr_integer_dot_product), lane by lane in 64-bit
//! arithmetic, where every intermediate is exact.

use cranelift_codegen::ir::{condcodes::IntCC, types, InstBuilder, Value};

use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::spirv::Id;
use crate::CompileError;

impl Tr<'_, '_> {
    /// `OpBitFieldInsert`: per component, `base` with bits `[offset, offset + count)`
    /// taken from the low bits of `insert` (`count` = 0 gives `base`).
    pub fn bitfield_insert(
        &mut self,
        base: Id,
        insert: Id,
        offset: Id,
        count: Id,
        rty: Id,
    ) -> Result<Val, CompileError> {
        let vb = self.get(base)?;
        let vi = self.get(insert)?;
        let (oe, ol) = self.scalar_operand(offset)?;
        let (ce, cl) = self.scalar_operand(count)?;
        let elems = self.elems(rty)?;
        let mut leaves = Vec::with_capacity(elems.len());
        for (k, e) in elems.iter().copied().enumerate() {
            let (b, i) = (&vb.leaves[k], &vi.leaves[k]);
            leaves.push(
                self.per_lane(&[(e, b), (e, i), (oe, &ol), (ce, &cl)], e, |t, x| {
                    let off = t.zext64(oe, x[2]);
                    let cnt = t.zext64(ce, x[3]);
                    let base = t.zext64(e, x[0]);
                    let ins = t.zext64(e, x[1]);
                    let low = t.low_bits_mask(cnt);
                    let mask = t.b.ins().ishl(low, off);
                    let moved = t.b.ins().ishl(ins, off);
                    let keep = t.b.ins().band_not(base, mask);
                    let put = t.b.ins().band(moved, mask);
                    let r = t.b.ins().bor(keep, put);
                    t.low_of64(e, r)
                }),
            );
        }
        Ok(Val { leaves, elems })
    }

    /// `OpBitFieldSExtract` / `OpBitFieldUExtract`: per component, bits
    /// `[offset, offset + count)` of `base` moved to bit 0 and sign- or zero-extended
    /// (`count` = 0 gives 0).
    pub fn bitfield_extract(
        &mut self,
        signed: bool,
        base: Id,
        offset: Id,
        count: Id,
        rty: Id,
    ) -> Result<Val, CompileError> {
        let vb = self.get(base)?;
        let (oe, ol) = self.scalar_operand(offset)?;
        let (ce, cl) = self.scalar_operand(count)?;
        let elems = self.elems(rty)?;
        let mut leaves = Vec::with_capacity(elems.len());
        for (k, e) in elems.iter().copied().enumerate() {
            let b = &vb.leaves[k];
            leaves.push(self.per_lane(&[(e, b), (oe, &ol), (ce, &cl)], e, |t, x| {
                let off = t.zext64(oe, x[1]);
                let cnt = t.zext64(ce, x[2]);
                let base = t.zext64(e, x[0]);
                // Field to the top of 64 bits, then back down with the wanted extension.
                let top = t.b.ins().iadd(off, cnt);
                let up = t.b.ins().iconst(types::I64, 64);
                let up = t.b.ins().isub(up, top);
                let hi = t.b.ins().ishl(base, up);
                let c64 = t.b.ins().iconst(types::I64, 64);
                let down = t.b.ins().isub(c64, cnt);
                let r = if signed {
                    t.b.ins().sshr(hi, down)
                } else {
                    t.b.ins().ushr(hi, down)
                };
                let zero = t.b.ins().iconst(types::I64, 0);
                let none = t.b.ins().icmp_imm_s(IntCC::Equal, cnt, 0);
                let r = t.b.ins().select(none, zero, r);
                t.low_of64(e, r)
            }));
        }
        Ok(Val { leaves, elems })
    }

    /// `OpSDot`/`OpUDot`/`OpSUDot` (with `acc`: the `AccSat` forms): the sum of the
    /// products of the components (8-bit bytes of 32-bit scalars when `packed`), each
    /// extended by its operand's signedness; wrapped to the result width, or added to
    /// `acc` with saturation (signed unless both operands are unsigned).
    pub fn int_dot(
        &mut self,
        (a_signed, b_signed): (bool, bool),
        a: Id,
        b: Id,
        acc: Option<Id>,
        packed: bool,
        rty: Id,
    ) -> Result<Val, CompileError> {
        let va = self.get(a)?;
        let vb = self.get(b)?;
        let elems = self.elems(rty)?;
        let re = *elems
            .first()
            .ok_or_else(|| CompileError::malformed("integer dot product without a result"))?;
        let vacc = acc.map(|c| self.get(c)).transpose()?;
        // Inputs: every component of a, then of b, then the accumulator.
        let mut inputs: Vec<(Elem, &Lv)> = Vec::new();
        for v in [&va, &vb] {
            for (k, l) in v.leaves.iter().enumerate() {
                inputs.push((v.elems[k], l));
            }
        }
        let n = va.leaves.len();
        if vb.leaves.len() != n {
            return Err(CompileError::malformed(
                "integer dot product of vectors of different lengths",
            ));
        }
        if let Some(c) = &vacc {
            inputs.push((re, &c.leaves[0]));
        }
        let sat_signed = a_signed || b_signed;
        let leaf = self.per_lane(&inputs, re, |t, x| {
            // The components as exact i64 values.
            let comps = |t: &mut Tr<'_, '_>, at: usize, signed: bool| -> Vec<Value> {
                if packed {
                    let w = x[at];
                    (0..4)
                        .map(|i| {
                            let byte = t.b.ins().ushr_imm_s(w, 8 * i);
                            let byte = t.b.ins().ireduce(types::I8, byte);
                            t.extend64(Elem::I8, byte, signed)
                        })
                        .collect()
                } else {
                    (0..n)
                        .map(|i| t.extend64(inputs[at + i].0, x[at + i], signed))
                        .collect()
                }
            };
            let ca = comps(t, 0, a_signed);
            let cb = comps(t, n, b_signed);
            let mut sum = t.b.ins().iconst(types::I64, 0);
            for (p, q) in ca.iter().zip(&cb) {
                let prod = t.b.ins().imul(*p, *q);
                sum = t.b.ins().iadd(sum, prod);
            }
            if vacc.is_some() {
                let acc = t.extend64(re, x[2 * n], sat_signed);
                sum = t.saturating_add64(sum, acc, re.bits(), sat_signed);
            }
            t.low_of64(re, sum)
        });
        Ok(Val {
            leaves: vec![leaf],
            elems,
        })
    }

    /// The single leaf of a scalar integer operand and its element type.
    fn scalar_operand(&mut self, id: Id) -> Result<(Elem, Lv), CompileError> {
        let v = self.get(id)?;
        match (v.elems.first(), v.leaves.first()) {
            (Some(e), Some(l)) if v.leaves.len() == 1 && e.is_int() => Ok((*e, l.clone())),
            _ => Err(CompileError::malformed(format!(
                "operand %{id} must be an integer scalar"
            ))),
        }
    }

    /// A scalar integer of element `e`, zero-extended to 64 bits.
    fn zext64(&mut self, e: Elem, x: Value) -> Value {
        self.extend64(e, x, false)
    }

    /// A scalar integer of element `e`, extended to 64 bits.
    fn extend64(&mut self, e: Elem, x: Value, signed: bool) -> Value {
        match (e, signed) {
            (Elem::I64, _) => x,
            (_, true) => self.b.ins().sextend(types::I64, x),
            (_, false) => self.b.ins().uextend(types::I64, x),
        }
    }

    /// The low bits of a 64-bit value as a scalar of element `e`.
    fn low_of64(&mut self, e: Elem, x: Value) -> Value {
        if e == Elem::I64 {
            x
        } else {
            self.b.ins().ireduce(e.scalar(), x)
        }
    }

    /// `(1 << count) - 1` in 64 bits, all ones from `count` = 64 on.
    fn low_bits_mask(&mut self, count: Value) -> Value {
        let one = self.b.ins().iconst(types::I64, 1);
        let shifted = self.b.ins().ishl(one, count);
        let low = self.b.ins().iadd_imm_s(shifted, -1);
        let all = self.b.ins().iconst(types::I64, -1);
        let wide = self
            .b
            .ins()
            .icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, count, 64);
        self.b.ins().select(wide, all, low)
    }

    /// `a + b` clamped to the range of a `bits`-bit integer (signed or not). `a` is an
    /// exact dot product and `b` an accumulator of that width, both extended to 64 bits
    /// by the same signedness, so their exact sum fits 65 bits: the 64-bit addition's
    /// overflow is only possible for `bits` = 64, where it picks the bound.
    fn saturating_add64(&mut self, a: Value, b: Value, bits: u32, signed: bool) -> Value {
        let sum = self.b.ins().iadd(a, b);
        let (lo, hi): (i64, i64) = match (signed, bits) {
            (true, 64) => (i64::MIN, i64::MAX),
            (true, n) => (-(1i64 << (n - 1)), (1i64 << (n - 1)) - 1),
            (false, 64) => (0, -1),
            (false, n) => (0, (1i64 << n) - 1),
        };
        let lo = self.b.ins().iconst(types::I64, lo);
        let hi = self.b.ins().iconst(types::I64, hi);
        if signed {
            // Overflow of the 64-bit addition: both operands of one sign, the sum of
            // the other.
            let sx = self.b.ins().bxor(sum, a);
            let sy = self.b.ins().bxor(sum, b);
            let both = self.b.ins().band(sx, sy);
            let over = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, both, 0);
            let a_neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, a, 0);
            let bound = self.b.ins().select(a_neg, lo, hi);
            let c = self.b.ins().smin(sum, hi);
            let c = self.b.ins().smax(c, lo);
            self.b.ins().select(over, bound, c)
        } else {
            // Unsigned: a carry out of 64 bits saturates; the dot product of unsigned
            // components is never negative.
            let carry = self.b.ins().icmp(IntCC::UnsignedLessThan, sum, a);
            let c = self.b.ins().umin(sum, hi);
            self.b.ins().select(carry, hi, c)
        }
    }
}
