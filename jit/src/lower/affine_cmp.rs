//! Whole-sub-group answers for comparisons of an affine value with a uniform one.
//!
//! `i < n` with `i = base + lane * stride` is, lane by lane, a vector compare whose
//! "all lanes true" and "no lane true" tests cost a dozen vector instructions per
//! W lanes (splat, iota add, compare, and the reductions). When the lanes do not
//! wrap in the comparison's reading (signed or unsigned), they are monotone, so the
//! whole sub-group's answer is decided by its smallest and largest lane: two scalar
//! compares. The loop branches of the full-mask copies (`masked::branch_full`) ask
//! this first and fall back to the vector test only when the lanes wrap or the
//! answer is mixed (the last iteration of `for (i = gid; i < n; i += gsz)`).

use cranelift_codegen::ir::{
    condcodes::{CondCode, IntCC},
    InstBuilder, Value,
};

use super::value::{Elem, Lv};
use super::Tr;

/// A comparison `base + lane * stride  cc  bound` lowered to a vector mask.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AffineCmp {
    /// The condition with the affine operand on the left.
    cc: IntCC,
    base: Value,
    stride: i64,
    bound: Value,
}

impl Tr<'_, '_> {
    /// Records that mask `m` (the first chunk of a comparison's result) is `a cc b`,
    /// when one of `a`, `b` is affine and the other uniform.
    pub(super) fn note_affine_cmp(&mut self, cc: IntCC, e: Elem, a: &Lv, b: &Lv, m: &[Value]) {
        if !e.is_int() || matches!(cc, IntCC::Equal | IntCC::NotEqual) {
            return;
        }
        let (cc, base, stride, bound) = match (a, b) {
            (Lv::A(x, s), Lv::U(y)) => (cc, *x, *s, *y),
            (Lv::U(y), Lv::A(x, s)) => (cc.swap_args(), *x, *s, *y),
            _ => return,
        };
        // The span of the lanes must stay below half the type's range, so that "the
        // last lane is not below the first" means "no lane wrapped".
        let span = i128::from(stride).abs() * i128::from(self.w - 1);
        if stride == 0 || span >= 1i128 << (e.bits() - 1) {
            return;
        }
        if let Some(&first) = m.first() {
            self.affine_cmps.insert(
                first,
                AffineCmp {
                    cc,
                    base,
                    stride,
                    bound,
                },
            );
        }
    }

    /// For a comparison mask recorded by [`Self::note_affine_cmp`]: i8 values "every
    /// lane is true" and "no lane is true", each false when the lanes wrap (then the
    /// caller tests the vector).
    pub(super) fn affine_all_none(&mut self, m: &[Value]) -> Option<(Value, Value)> {
        let c = *self.affine_cmps.get(m.first()?)?;
        let ty = self.b.func.dfg.value_type(c.base);
        if self.b.func.dfg.value_type(c.bound) != ty {
            return None;
        }
        let first = c.base;
        let last = self
            .b
            .ins()
            .iadd_imm_s(c.base, c.stride * i64::from(self.w - 1));
        let (lo, hi) = if c.stride > 0 {
            (first, last)
        } else {
            (last, first)
        };
        let signed = matches!(
            c.cc,
            IntCC::SignedLessThan
                | IntCC::SignedLessThanOrEqual
                | IntCC::SignedGreaterThan
                | IntCC::SignedGreaterThanOrEqual
        );
        let ordered = if signed {
            IntCC::SignedLessThanOrEqual
        } else {
            IntCC::UnsignedLessThanOrEqual
        };
        let nowrap = self.b.ins().icmp(ordered, lo, hi);
        // `x < n` holds for all lanes iff for the largest, for none iff not for the
        // smallest; `x > n` the other way round.
        let upward = matches!(
            c.cc,
            IntCC::SignedLessThan
                | IntCC::SignedLessThanOrEqual
                | IntCC::UnsignedLessThan
                | IntCC::UnsignedLessThanOrEqual
        );
        let (for_all, for_none) = if upward { (hi, lo) } else { (lo, hi) };
        let all = self.b.ins().icmp(c.cc, for_all, c.bound);
        let some = self.b.ins().icmp(c.cc, for_none, c.bound);
        let all = self.b.ins().band(all, nowrap);
        let none = self.b.ins().band_not(nowrap, some);
        Some((all, none))
    }
}
