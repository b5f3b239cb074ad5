//! Integer operations with a two-part result (`OpIAddCarry`, `OpISubBorrow`,
//! `OpUMulExtended`, `OpSMulExtended`): the result is a struct `{ low, high }` whose
//! members have the operands' type, so its leaves are all low components, then all
//! high ones.

use cranelift_codegen::ir::{condcodes::IntCC, types, InstBuilder, Value};

use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::spirv::{Id, WideOp};
use crate::CompileError;

impl Tr<'_, '_> {
    /// Lowers `op a b` with result type `rty` (a two-member struct).
    pub fn wide(&mut self, op: WideOp, a: Id, b: Id, rty: Id) -> Result<Val, CompileError> {
        let va = self.get(a)?;
        let vb = self.get(b)?;
        let elems = self.elems(rty)?;
        let n = va.leaves.len();
        if vb.leaves.len() != n || elems.len() != 2 * n {
            return Err(CompileError::malformed(format!(
                "Op{op:?}: operands of {n} and {} components for a result of {}",
                vb.leaves.len(),
                elems.len()
            )));
        }
        let mut low = Vec::with_capacity(n);
        let mut high = Vec::with_capacity(n);
        for i in 0..n {
            let e = va.elems[i];
            if !e.is_int() || vb.elems[i] != e || elems[i] != e || elems[n + i] != e {
                return Err(CompileError::malformed(format!(
                    "Op{op:?} needs integer operands and members of one type"
                )));
            }
            let (x, y) = (&va.leaves[i], &vb.leaves[i]);
            let (lo, hi) = match op {
                WideOp::IAddCarry => {
                    let lo = self.add_lv(e, x, y);
                    let carry = self.icmp_lv(IntCC::UnsignedLessThan, e, &lo, x);
                    (lo, self.bool_to_int(e, &carry))
                }
                WideOp::ISubBorrow => {
                    let lo = self.vec_op2(
                        e,
                        x,
                        y,
                        |t, p, q| t.b.ins().isub(p, q),
                        |t, p, q| t.b.ins().isub(p, q),
                    );
                    let borrow = self.icmp_lv(IntCC::UnsignedLessThan, e, x, y);
                    (lo, self.bool_to_int(e, &borrow))
                }
                WideOp::UMulExtended | WideOp::SMulExtended => {
                    let signed = op == WideOp::SMulExtended;
                    let lo = self.per_lane(&[(e, x), (e, y)], e, |t, v| t.b.ins().imul(v[0], v[1]));
                    let hi = self.per_lane(&[(e, x), (e, y)], e, |t, v| {
                        t.mul_high(e, signed, v[0], v[1])
                    });
                    (lo, hi)
                }
            };
            low.push(lo);
            high.push(hi);
        }
        low.extend(high);
        Ok(Val { leaves: low, elems })
    }

    /// A bool leaf as 1 / 0 of integer element `e`.
    fn bool_to_int(&mut self, e: Elem, c: &Lv) -> Lv {
        let one = Lv::U(self.iconst(e, 1));
        let zero = Lv::U(self.iconst(e, 0));
        self.select_lv(c, e, &one, &zero)
    }

    /// The high half of the double-width product of two scalars of element `e`.
    fn mul_high(&mut self, e: Elem, signed: bool, x: Value, y: Value) -> Value {
        if e == Elem::I64 {
            return if signed {
                self.b.ins().smulhi(x, y)
            } else {
                self.b.ins().umulhi(x, y)
            };
        }
        // Narrower types: the exact product fits in 64 bits.
        let (wx, wy) = if signed {
            (
                self.b.ins().sextend(types::I64, x),
                self.b.ins().sextend(types::I64, y),
            )
        } else {
            (
                self.b.ins().uextend(types::I64, x),
                self.b.ins().uextend(types::I64, y),
            )
        };
        let p = self.b.ins().imul(wx, wy);
        let h = self.b.ins().sshr_imm_s(p, i64::from(e.bits()));
        self.b.ins().ireduce(e.scalar(), h)
    }
}
