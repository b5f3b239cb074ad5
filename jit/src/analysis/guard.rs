//! Exactness bought with a check per work-group: `int i = begin + get_local_id(0)`
//! (a uniform plus a small-ranged id, no no-wrap flags: pyopencl's scan, `index_type`
//! `int`) may wrap between lanes as far as the compiler knows, so widening it for an
//! address (`(long)i`, or the `int` index of a pointer) would go lane by lane, and the
//! loop phis clang builds from it (strength-reduced pointers) would be varying too.
//! But the uniform part is usually computed from the kernel's arguments and work-group
//! built-ins alone (`interval_size * get_group_id(0)`), so the work-group's entry can
//! compute it before it picks the sub-group layout: when every lane's value of the sum
//! lies in `[0, 2^(n-1))` the sum cannot wrap in either reading, and the lane-contiguous
//! layout may count on that (`super::exact` gives the sum that range); otherwise the
//! work-group runs the general layout, which assumes nothing.
//!
//! Only sums some widening needs are checked (a failed check costs the fast layout),
//! and only in the lane-contiguous layout (the general one has no affine ids).

use std::collections::{HashMap, HashSet};

use super::exact::Fact;
use super::flatten::FlatFunction;
use super::uniformity::Uniformity;
use crate::spirv::{BinOp, BuiltIn, ConstValue, ConvOp, Id, Inst, Module, Op, Type};

/// A uniform integer computed from the kernel's arguments, constants and work-group
/// built-ins only: the work-group's entry computes it (`lower::guard`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// A scalar integer parameter of the kernel.
    Param(Id),
    /// An integer constant (its bits, zero-extended) of a `bits`-bit type.
    Const { value: u64, bits: u32 },
    /// Component `d` of a work-group built-in (a 64-bit `size_t`; `WorkDim`: 32 bits).
    Builtin(BuiltIn, u8),
    /// Integer arithmetic on two such values.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// A width change to `to` bits (sign extension if `signed` and widening).
    Conv {
        signed: bool,
        to: u32,
        value: Box<Expr>,
    },
}

/// An assumption the lane-contiguous layout makes: instruction `id` (`u + x` or a
/// difference, `x` with a known range) keeps every lane in `[0, 2^(bits-1))`, which
/// holds when `u`, read as a signed `bits`-bit integer, lies in `[lo, hi]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Guard {
    pub id: Id,
    pub value: Expr,
    pub bits: u32,
    pub lo: i128,
    pub hi: i128,
}

/// Built-ins that are one value per work-group.
fn group_builtin(b: BuiltIn) -> bool {
    matches!(
        b,
        BuiltIn::WorkgroupId
            | BuiltIn::NumWorkgroups
            | BuiltIn::GlobalSize
            | BuiltIn::WorkgroupSize
            | BuiltIn::EnqueuedWorkgroupSize
            | BuiltIn::GlobalOffset
            | BuiltIn::WorkDim
    )
}

/// Deepest expression the entry recomputes.
const MAX_DEPTH: u32 = 16;

struct Ctx<'a> {
    m: &'a Module,
    f: &'a FlatFunction,
    uni: &'a Uniformity,
    types: &'a HashMap<Id, Id>,
    defs: HashMap<Id, &'a Inst>,
    exact: &'a HashMap<Id, Fact>,
}

impl Ctx<'_> {
    fn bits(&self, id: Id) -> Option<u32> {
        match self.m.types.get(self.types.get(&id)?)? {
            Type::Int { bits } => Some(*bits),
            _ => None,
        }
    }

    fn fact(&self, id: Id) -> Fact {
        self.exact.get(&id).copied().unwrap_or(Fact::NONE)
    }

    fn konst(&self, id: Id) -> Option<(u64, u32)> {
        let c = self.m.constants.get(&id)?;
        let Some(Type::Int { bits }) = self.m.types.get(&c.ty) else {
            return None;
        };
        match c.value {
            ConstValue::Scalar(v) => Some((v, *bits)),
            ConstValue::Null => Some((0, *bits)),
            _ => None,
        }
    }

    fn builtin_of(&self, ptr: Id) -> Option<BuiltIn> {
        self.m
            .globals
            .get(&ptr)
            .and_then(|g| g.builtin)
            .filter(|b| group_builtin(*b))
    }

    /// `id` as an expression the work-group's entry can compute, if it is one.
    fn expr(&self, id: Id, depth: u32) -> Option<Expr> {
        if depth > MAX_DEPTH || self.uni.is_varying(id) {
            return None;
        }
        if let Some((value, bits)) = self.konst(id) {
            return Some(Expr::Const { value, bits });
        }
        if self.f.params.iter().any(|(p, _)| *p == id) {
            return self.bits(id).map(|_| Expr::Param(id));
        }
        let inst = self.defs.get(&id)?;
        match &inst.op {
            Op::CompositeExtract { composite, indices } => {
                let [d] = indices.as_slice() else { return None };
                let Op::Load { ptr, .. } = self.defs.get(composite)?.op else {
                    return None;
                };
                let b = self.builtin_of(ptr)?;
                (*d < 3).then_some(Expr::Builtin(b, *d as u8))
            }
            Op::Load { ptr, .. } => {
                if let Some(b) = self.builtin_of(*ptr) {
                    // A scalar built-in (WorkDim).
                    return self.bits(id).map(|_| Expr::Builtin(b, 0));
                }
                let Op::AccessChain {
                    base,
                    element: None,
                    indices,
                } = &self.defs.get(ptr)?.op
                else {
                    return None;
                };
                let b = self.builtin_of(*base)?;
                let [d] = indices.as_slice() else { return None };
                let (d, _) = self.konst(*d)?;
                (d < 3).then_some(Expr::Builtin(b, d as u8))
            }
            Op::Binary(op, a, b) if op.is_index_arithmetic() => {
                self.bits(id)?;
                let x = self.expr(*a, depth + 1)?;
                let y = self.expr(*b, depth + 1)?;
                Some(Expr::Bin(*op, Box::new(x), Box::new(y)))
            }
            Op::Convert {
                op: op @ (ConvOp::UConvert | ConvOp::SConvert),
                value,
                saturate: false,
                ..
            } => Some(Expr::Conv {
                signed: *op == ConvOp::SConvert,
                to: self.bits(id)?,
                value: Box::new(self.expr(*value, depth + 1)?),
            }),
            Op::Bitcast(v) | Op::CopyObject(v) if self.bits(*v) == self.bits(id) => {
                self.bits(id)?;
                self.expr(*v, depth + 1)
            }
            _ => None,
        }
    }

    /// The guard that makes instruction `r = a op b` exact, if it is a candidate.
    fn candidate(&self, r: Id, op: BinOp, a: Id, b: Id) -> Option<Guard> {
        let bits = self.bits(r)?;
        if !self.uni.is_varying(r) || self.fact(r).signed || !(8..=64).contains(&bits) {
            return None;
        }
        let ranged = |x: Id| self.fact(x).range.filter(|_| self.uni.is_varying(x));
        // (the uniform operand, whether it comes first, the other's range)
        let (u, first, range) = match (ranged(a), ranged(b)) {
            (None, Some(rb)) => (a, true, rb),
            (Some(ra), None) => (b, false, ra),
            _ => return None,
        };
        let (lo, hi) = uniform_bounds(op, first, range, bits)?;
        let value = self.expr(u, 0)?;
        Some(Guard {
            id: r,
            value,
            bits,
            lo,
            hi,
        })
    }
}

/// The values of a uniform `u`, read as a signed `bits`-bit integer, for which
/// `u op x` (`u_first`) or `x op u` lies in `[0, 2^(bits-1))` for every `x` in
/// `[xlo, xhi]` (exact arithmetic), if any: `op` is an addition or a subtraction.
fn uniform_bounds(
    op: BinOp,
    u_first: bool,
    (xlo, xhi): (i128, i128),
    bits: u32,
) -> Option<(i128, i128)> {
    let max = (1i128 << (bits - 1)) - 1;
    let (lo, hi) = match (op, u_first) {
        (BinOp::IAdd, _) => (-xlo, max - xhi),
        (BinOp::ISub, true) => (xhi, max + xlo),
        (BinOp::ISub, false) => (xhi - max, xlo),
        _ => return None,
    };
    // Within the type's signed range (the entry compares the sign-extended value).
    let (lo, hi) = (lo.max(-max - 1), hi.min(max));
    (lo <= hi).then_some((lo, hi))
}

/// The guards worth checking for `f` in the lane-contiguous layout, given that
/// layout's unguarded facts `exact`: candidate sums that some widening (a conversion
/// to more bits, a right shift, a narrow access-chain index) reaches through
/// arithmetic, conversions and phis and would otherwise take lane by lane.
pub fn find(
    m: &Module,
    f: &FlatFunction,
    uni: &Uniformity,
    types: &HashMap<Id, Id>,
    exact: &HashMap<Id, Fact>,
) -> Vec<Guard> {
    let defs: HashMap<Id, &Inst> = f
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|i| Some((i.result?, i)))
        .collect();
    let cx = Ctx {
        m,
        f,
        uni,
        types,
        defs,
        exact,
    };
    // Operands whose lanes some instruction widens while they are not known exact.
    let mut seeds: Vec<Id> = Vec::new();
    for inst in f.blocks.iter().flat_map(|b| &b.insts) {
        let Some(r) = inst.result else { continue };
        match &inst.op {
            Op::Convert {
                op: op @ (ConvOp::UConvert | ConvOp::SConvert),
                value,
                saturate: false,
                ..
            } if cx.bits(r) > cx.bits(*value)
                && !cx.fact(*value).widens(*op == ConvOp::SConvert) =>
            {
                seeds.push(*value)
            }
            Op::Binary(op @ (BinOp::AShr | BinOp::LShr), a, _)
                if !cx.fact(*a).widens(*op == BinOp::AShr) =>
            {
                seeds.push(*a)
            }
            Op::AccessChain {
                base,
                element,
                indices,
            } if m.globals.get(base).and_then(|g| g.builtin).is_none() => {
                for &i in element.iter().chain(indices) {
                    if cx.bits(i).is_some_and(|b| b < 64) && !cx.fact(i).widens(true) {
                        seeds.push(i);
                    }
                }
            }
            _ => {}
        }
    }
    // Walk back from them through the varying arithmetic that feeds them.
    let mut seen: HashSet<Id> = HashSet::new();
    let mut guards = Vec::new();
    while let Some(id) = seeds.pop() {
        if !uni.is_varying(id) || !seen.insert(id) {
            continue;
        }
        let Some(inst) = cx.defs.get(&id) else {
            continue;
        };
        match &inst.op {
            Op::Binary(op, a, b) => {
                if let Some(g) = cx.candidate(id, *op, *a, *b) {
                    guards.push(g);
                } else {
                    seeds.extend([*a, *b]);
                }
            }
            Op::Unary(_, a) | Op::Convert { value: a, .. } | Op::Bitcast(a) | Op::CopyObject(a) => {
                seeds.push(*a)
            }
            Op::Phi(inc) => seeds.extend(inc.iter().map(|(v, _)| *v)),
            _ => {}
        }
    }
    guards.sort_by_key(|g| g.id);
    guards
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exhaustively at 8 bits: `u` passes the bounds exactly when every sum (or
    /// difference) with an `x` of the range lies in `[0, 128)`.
    #[test]
    fn bounds_admit_exactly_the_uniforms_that_keep_every_lane_in_range() {
        let ranges = [
            (0, 0),
            (0, 15),
            (3, 7),
            (-5, 5),
            (0, 127),
            (-128, 127),
            (100, 127),
        ];
        for op in [BinOp::IAdd, BinOp::ISub] {
            for first in [true, false] {
                for (xlo, xhi) in ranges {
                    let b = uniform_bounds(op, first, (xlo, xhi), 8);
                    for u in -128i128..=127 {
                        let all_in = (xlo..=xhi).all(|x| {
                            let v = match (op, first) {
                                (BinOp::IAdd, _) => u + x,
                                (_, true) => u - x,
                                (_, false) => x - u,
                            };
                            (0..128).contains(&v)
                        });
                        let admitted = b.is_some_and(|(lo, hi)| (lo..=hi).contains(&u));
                        assert_eq!(
                            admitted, all_in,
                            "{op:?} u_first={first} x in [{xlo}, {xhi}] u={u}: bounds {b:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn only_sums_and_differences_get_bounds() {
        assert_eq!(uniform_bounds(BinOp::IMul, true, (0, 15), 32), None);
        assert_eq!(
            uniform_bounds(BinOp::IAdd, true, (0, 15), 32),
            Some((0, i128::from(i32::MAX) - 15))
        );
    }
}
