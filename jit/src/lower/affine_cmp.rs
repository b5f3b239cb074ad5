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
//!
//! `x == n` with a stride of ±1 holds for some lane iff `n - base` (or `base - n`)
//! is below W, whatever the wrapping, and never for all (W > 1). Boolean
//! combinations keep the answers: `a || b` holds for no lane if neither does and for
//! every lane if either does, `a && b` the other way round, `!a` swaps them, and a
//! uniform bool answers itself. So clbench `stencil2d`'s
//! `gx == 0 || gy == 0 || gx == W - 1 || gy == H - 1` is decided by four scalar
//! compares in all but the border sub-groups, which then take only the `else` edge
//! (`masked::branch_decided`), and its vector masks are built only for the border.

use cranelift_codegen::ir::{
    condcodes::{CondCode, IntCC},
    types, InstBuilder, Value,
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

/// How deep [`Tr::affine_all_none`] follows combinations of bools.
const MAX_DEPTH: u32 = 8;

/// A bool operand of a combination: a mask (by its first chunk) or a uniform i8.
#[derive(Clone, Copy, Debug)]
pub(crate) enum BoolLeaf {
    Mask(Value),
    Uniform(Value),
}

/// A mask made from others by a logical operation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum BoolComb {
    Or(BoolLeaf, BoolLeaf),
    And(BoolLeaf, BoolLeaf),
    Not(BoolLeaf),
}

/// The logical operations [`Tr::note_bool_comb`] records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CombOp {
    Or,
    And,
    Not,
}

impl Tr<'_, '_> {
    /// Records that mask `m` (the first chunk of a comparison's result) is `a cc b`,
    /// when one of `a`, `b` is affine and the other uniform.
    pub(super) fn note_affine_cmp(&mut self, cc: IntCC, e: Elem, a: &Lv, b: &Lv, m: &[Value]) {
        if !e.is_int() {
            return;
        }
        let (cc, base, stride, bound) = match (a, b) {
            (Lv::A(x, s), Lv::U(y)) => (cc, *x, *s, *y),
            (Lv::U(y), Lv::A(x, s)) => (cc.swap_args(), *x, *s, *y),
            _ => return,
        };
        if matches!(cc, IntCC::Equal | IntCC::NotEqual) && stride.abs() != 1 {
            return;
        }
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
        self.decide(BoolLeaf::Mask(*m.first()?), MAX_DEPTH)
    }

    /// Records that the mask whose first chunk is `r` is `op` of `a` (and `b`), when
    /// their leaves are a uniform bool or a mask (see the module documentation).
    pub(super) fn note_bool_comb(&mut self, op: CombOp, a: &Lv, b: Option<&Lv>, r: &Lv) {
        let leaf = |l: &Lv| match l {
            Lv::U(x) => Some(BoolLeaf::Uniform(*x)),
            Lv::V(ch) => ch.first().map(|c| BoolLeaf::Mask(*c)),
            Lv::A(..) => None,
        };
        let Lv::V(rc) = r else { return };
        let (Some(&key), Some(la)) = (rc.first(), leaf(a)) else {
            return;
        };
        let comb = match (op, b.map(leaf)) {
            (CombOp::Not, None) => BoolComb::Not(la),
            (CombOp::Or, Some(Some(lb))) => BoolComb::Or(la, lb),
            (CombOp::And, Some(Some(lb))) => BoolComb::And(la, lb),
            _ => return,
        };
        self.bool_combs.insert(key, comb);
    }

    /// "Every lane" and "no lane" (i8) for a bool leaf, if its answers are known.
    fn decide(&mut self, leaf: BoolLeaf, depth: u32) -> Option<(Value, Value)> {
        let m = match leaf {
            BoolLeaf::Uniform(u) => {
                let not = self.b.ins().bxor_imm_s(u, 1);
                return Some((u, not));
            }
            BoolLeaf::Mask(m) => m,
        };
        if let Some(&comb) = self.bool_combs.get(&m) {
            let depth = depth.checked_sub(1)?;
            return match comb {
                BoolComb::Not(a) => self.decide(a, depth).map(|(all, none)| (none, all)),
                BoolComb::Or(a, b) => {
                    let (aa, an) = self.decide(a, depth)?;
                    let (ba, bn) = self.decide(b, depth)?;
                    Some((self.b.ins().bor(aa, ba), self.b.ins().band(an, bn)))
                }
                BoolComb::And(a, b) => {
                    let (aa, an) = self.decide(a, depth)?;
                    let (ba, bn) = self.decide(b, depth)?;
                    Some((self.b.ins().band(aa, ba), self.b.ins().bor(an, bn)))
                }
            };
        }
        let c = *self.affine_cmps.get(&m)?;
        let ty = self.b.func.dfg.value_type(c.base);
        if self.b.func.dfg.value_type(c.bound) != ty {
            return None;
        }
        if matches!(c.cc, IntCC::Equal | IntCC::NotEqual) {
            // Stride ±1: lane `d` holds the bound, if `d` is a lane.
            let d = if c.stride == 1 {
                self.b.ins().isub(c.bound, c.base)
            } else {
                self.b.ins().isub(c.base, c.bound)
            };
            let hit = self
                .b
                .ins()
                .icmp_imm_s(IntCC::UnsignedLessThan, d, i64::from(self.w));
            let miss = self.b.ins().bxor_imm_s(hit, 1);
            let never = self.b.ins().iconst(types::I8, 0);
            return Some(if c.cc == IntCC::Equal {
                (never, miss)
            } else {
                (miss, never)
            });
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
