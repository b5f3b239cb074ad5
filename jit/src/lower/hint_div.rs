//! Checked forms of an affine value divided by a constant (`hint` for division).
//!
//! `o / K` and `o % K` of an affine `o = b + l*s` (the transpose through `__local`
//! memory of pyopencl's scans and sorts: `ldata[o % K][o / K]`, `o = k*WG + lid`) are
//! not affine in general, so the lowering computes them lane by lane. But when every
//! lane has the same quotient `q` (the lanes do not cross a multiple of `K`), the
//! quotient is the uniform `q` and the remainder the affine `(b - q*K) + l*s`; the
//! access through them is then a strided (or contiguous) one instead of a gather or
//! scatter with 64-bit lane addresses. Whether the lanes share a quotient is known
//! only at run time, so these are [`super::hint::Hint`] forms: the quotient of the
//! first and the last lane compared, and the lanes checked not to wrap (then they are
//! monotonic, and so is the quotient: rounding toward zero or toward minus infinity,
//! by a positive divisor, never decreases).

use cranelift_codegen::ir::{condcodes::IntCC, InstBuilder, Value};

use super::value::{Elem, Lv};
use super::Tr;
use crate::spirv::BinOp;

impl Tr<'_, '_> {
    /// The checked form of `x op c` for affine `(x, s)` of element `e`, `op` a division
    /// or remainder by the positive constant `c`: `(form, ok)`, or None if the lanes
    /// may span half the type (then a wrap could go unnoticed) or `c` is not positive.
    pub(super) fn div_form(
        &mut self,
        op: BinOp,
        e: Elem,
        x: Value,
        s: i64,
        c: i64,
    ) -> Option<(Lv, Value)> {
        let bits = e.bits();
        if !matches!(e, Elem::I16 | Elem::I32 | Elem::I64) || c <= 0 {
            return None;
        }
        if bits < 64 && c >= 1i64 << (bits - 1) {
            return None;
        }
        let span = i128::from(s).abs() * i128::from(self.w - 1);
        if span >= 1i128 << (bits - 1) {
            return None;
        }
        let signed = matches!(op, BinOp::SDiv | BinOp::SRem | BinOp::SMod);
        let last = self
            .b
            .ins()
            .iadd_imm_s(x, s.wrapping_mul(i64::from(self.w - 1)));
        // No wrap: the last lane lies on the side of the first that the stride says.
        let mono = match s.signum() {
            0 => None,
            sign => {
                let cc = match (sign > 0, signed) {
                    (true, true) => IntCC::SignedGreaterThanOrEqual,
                    (true, false) => IntCC::UnsignedGreaterThanOrEqual,
                    (false, true) => IntCC::SignedLessThanOrEqual,
                    (false, false) => IntCC::UnsignedLessThanOrEqual,
                };
                Some(self.b.ins().icmp(cc, last, x))
            }
        };
        let q0 = self.div_const(op, e, x, c);
        let q1 = self.div_const(op, e, last, c);
        let same = self.b.ins().icmp(IntCC::Equal, q0, q1);
        let ok = match mono {
            Some(m) => self.b.ins().band(m, same),
            None => same,
        };
        let form = match op {
            BinOp::UDiv | BinOp::SDiv => Lv::U(q0),
            _ => {
                let qc = self.b.ins().imul_imm_s(q0, c);
                Lv::A(self.b.ins().isub(x, qc), s)
            }
        };
        Some((form, ok))
    }

    /// The quotient of scalar `x` by the positive constant `c` as `op` rounds it:
    /// toward zero (SDiv, SRem), toward minus infinity (SMod: its remainder has the
    /// divisor's sign), unsigned (UDiv, UMod). A power of two by shifts.
    fn div_const(&mut self, op: BinOp, e: Elem, x: Value, c: i64) -> Value {
        let bits = i64::from(e.bits());
        let pow2 = c & (c - 1) == 0;
        let k = i64::from(c.trailing_zeros());
        if c == 1 {
            return x;
        }
        match op {
            BinOp::UDiv | BinOp::UMod if pow2 => self.b.ins().ushr_imm_s(x, k),
            BinOp::UDiv | BinOp::UMod => {
                let d = self.b.ins().iconst(e.scalar(), c);
                self.b.ins().udiv(x, d)
            }
            BinOp::SMod if pow2 => self.b.ins().sshr_imm_s(x, k),
            BinOp::SMod => {
                let d = self.b.ins().iconst(e.scalar(), c);
                let q = self.b.ins().sdiv(x, d);
                let qc = self.b.ins().imul_imm_s(q, c);
                let r = self.b.ins().isub(x, qc);
                let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, r, 0);
                let neg = self.b.ins().uextend(e.scalar(), neg);
                self.b.ins().isub(q, neg)
            }
            _ if pow2 => {
                // Toward zero: add 2^k - 1 to a negative dividend first.
                let sign = self.b.ins().sshr_imm_s(x, bits - 1);
                let bias = self.b.ins().ushr_imm_s(sign, bits - k);
                let t = self.b.ins().iadd(x, bias);
                self.b.ins().sshr_imm_s(t, k)
            }
            _ => {
                let d = self.b.ins().iconst(e.scalar(), c);
                self.b.ins().sdiv(x, d)
            }
        }
    }
}
