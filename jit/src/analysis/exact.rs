//! Exactness of integer values across the lanes of a sub-group: which affine values
//! (`base + lane * stride`, see [`super::affine`]) may be widened or shifted right as a
//! whole (new base, same stride) instead of lane by lane.
//!
//! An affine value is computed modulo 2^n: lane `l` holds `(base + l*stride) mod 2^n`.
//! Addition, multiplication by a constant, left shifts and truncation commute with
//! that, so they keep a value affine. Sign or zero extension, right shifts and masks
//! do not: `(uint)(x - 3)` zero-extended is `0xfffffffd, ..., 0, 1, ...`, which is not
//! `zext(base) + l*stride` (the lanes after the wrap would land 16 GiB away). They
//! keep the affine form only when the lanes provably do not wrap in that reading:
//!
//! - `signed`: the lanes read as signed n-bit integers form the exact progression
//!   (sign extension and arithmetic right shifts keep the form);
//! - `unsigned`: the same read as unsigned (zero extension, logical right shifts,
//!   masks of the low bits);
//! - `range`: every lane's value, read as signed, lies in `[lo, hi]` (implies
//!   `signed`; with `lo >= 0` also `unsigned`).
//!
//! Sources: constants (their value), uniform values (one value: trivially exact),
//! instructions decorated `NoSignedWrap` / `NoUnsignedWrap` (clang is asked to emit
//! them: OpenCL C's signed overflow is undefined, so a lane whose value would wrap
//! computes poison), and, in the lane-contiguous layout only, the work-item ids: the
//! code that picks that layout checks per work-group that every global id, group
//! offset and local size stays below [`ID_GUARD`] ([`Layout::Contiguous`]), so ids,
//! group ids and `get_group_id(d) * get_local_size(d)` have small ranges (tighter
//! with `reqd_work_group_size`). Anything else is not exact, and the lowering
//! materialises the lanes before widening. Facts only matter where a value is affine
//! or uniform; for lane-by-lane (varying) values every operation is exact anyway.

use std::collections::HashMap;

use super::flatten::FlatFunction;
use super::uniformity::Uniformity;
use crate::spirv::{BinOp, BuiltIn, ConstValue, ConvOp, Id, Module, NoWrap, Op, Type, UnOp};

/// In the lane-contiguous layout, `group_id * enqueued_size + offset + local_size` is
/// at most this in every dimension, and so is the linear local size (the code that
/// picks the layout checks it per work-group). Small enough that a group base plus a
/// local id still fits an `int`.
pub const ID_GUARD: i128 = 1 << 30;

/// Which sub-group layout the facts are for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Lane-contiguous, behind the [`ID_GUARD`] check; `reqd_work_group_size` if any.
    Contiguous(Option<[u32; 3]>),
    /// The general layout: no id is affine in x, no ranges are known.
    General,
}

/// Which work-item quantity of dimension `d` a uniform value is (for the group-base
/// pattern `get_group_id(d) * get_local_size(d)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    GroupId(u8),
    GroupSize(u8),
}

/// What is known about the lanes of one integer value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fact {
    /// Every lane's value (read as signed) lies in `[lo, hi]`.
    pub range: Option<(i128, i128)>,
    /// Read as signed, the lanes form an exact (non-wrapping) progression.
    pub signed: bool,
    /// Read as unsigned, the lanes form an exact (non-wrapping) progression.
    pub unsigned: bool,
    /// A work-item quantity (uniform values only).
    part: Option<Part>,
}

impl Fact {
    /// Nothing known.
    pub const NONE: Fact = Fact {
        range: None,
        signed: false,
        unsigned: false,
        part: None,
    };
    /// One value in every lane.
    pub const UNIFORM: Fact = Fact {
        range: None,
        signed: true,
        unsigned: true,
        part: None,
    };
    /// Exact in both readings, range unknown (64-bit arithmetic on small ids).
    const EXACT: Fact = Fact {
        range: None,
        signed: true,
        unsigned: true,
        part: None,
    };

    fn range(lo: i128, hi: i128, bits: u32) -> Fact {
        if !fits_signed(lo, hi, bits) {
            return Fact::NONE;
        }
        Fact {
            range: Some((lo, hi)),
            signed: true,
            unsigned: lo >= 0,
            part: None,
        }
    }

    fn with_part(mut self, p: Option<Part>) -> Fact {
        self.part = p;
        self
    }

    /// A uniform value (exact whatever its range).
    fn uniform(self) -> Fact {
        Fact {
            signed: true,
            unsigned: true,
            ..self
        }
    }

    /// The weaker of two facts (phis).
    fn meet(self, o: Fact) -> Fact {
        let range = match (self.range, o.range) {
            (Some(a), Some(b)) if a == b => Some(a),
            _ => None,
        };
        Fact {
            range,
            signed: self.signed && o.signed,
            unsigned: self.unsigned && o.unsigned,
            part: if self.part == o.part { self.part } else { None },
        }
    }

    /// Whether widening with sign (`signed`) or zero extension keeps the affine form.
    pub fn widens(self, signed: bool) -> bool {
        if signed {
            self.signed
        } else {
            self.unsigned
        }
    }
}

fn fits_signed(lo: i128, hi: i128, bits: u32) -> bool {
    let half = 1i128 << (bits.min(64) - 1);
    lo <= hi && lo >= -half && hi < half
}

/// The facts of the work-item built-in `b` (components x, y, z).
fn builtin_facts(b: BuiltIn, layout: Layout, w: u32) -> [Fact; 3] {
    let g = ID_GUARD;
    let in_range = |lo: i128, hi: i128| Fact::range(lo, hi, 64);
    let reqd = match layout {
        Layout::Contiguous(r) => r,
        Layout::General => None,
    };
    let per_dim = |f: &dyn Fn(Option<i128>) -> Fact| -> [Fact; 3] {
        [0, 1, 2].map(|d| f(reqd.map(|r| i128::from(r[d].max(1)))))
    };
    match (b, layout) {
        (BuiltIn::SubgroupLocalInvocationId, _) => [Fact::range(0, i128::from(w) - 1, 32); 3],
        (
            BuiltIn::SubgroupEqMask
            | BuiltIn::SubgroupGeMask
            | BuiltIn::SubgroupGtMask
            | BuiltIn::SubgroupLeMask
            | BuiltIn::SubgroupLtMask,
            _,
        ) => [Fact::NONE; 3],
        // 64-bit arithmetic on ids below 2^63: exact, range unknown.
        (BuiltIn::GlobalLinearId, _) => [Fact::EXACT; 3],
        (_, Layout::General) => [Fact::UNIFORM; 3],
        (BuiltIn::GlobalInvocationId, _) => [in_range(0, g - 1); 3],
        (BuiltIn::LocalInvocationId, _) => per_dim(&|r| in_range(0, r.map_or(g, |r| r) - 1)),
        (BuiltIn::LocalInvocationIndex, _) => [in_range(0, g - 1); 3],
        (BuiltIn::WorkgroupId, _) => {
            let f = |d: u8, r: Option<i128>| {
                in_range(0, (g - 1) / r.unwrap_or(1)).with_part(Some(Part::GroupId(d)))
            };
            [0u8, 1, 2].map(|d| f(d, reqd.map(|r| i128::from(r[usize::from(d)].max(1)))))
        }
        (BuiltIn::WorkgroupSize | BuiltIn::EnqueuedWorkgroupSize, _) => [0u8, 1, 2].map(|d| {
            let hi = reqd.map_or(g, |r| i128::from(r[usize::from(d)].max(1)));
            in_range(1, hi).with_part(Some(Part::GroupSize(d)))
        }),
        _ => [Fact::UNIFORM; 3],
    }
}

/// Facts of the integer ids of `f` in sub-group layout `layout` at sub-group width
/// `w` (ids absent: nothing known). The lanes of each instruction in `assume` lie in
/// `[0, 2^(n-1))` (checked per work-group before the layout is chosen: `super::guard`).
pub fn analyze(
    m: &Module,
    f: &FlatFunction,
    uni: &Uniformity,
    types: &HashMap<Id, Id>,
    layout: Layout,
    w: u32,
    assume: &std::collections::HashSet<Id>,
) -> HashMap<Id, Fact> {
    let bits_of = |id: Id| -> Option<u32> {
        match m.types.get(types.get(&id)?)? {
            Type::Int { bits } => Some(*bits),
            Type::Pointer { .. } => Some(64),
            _ => None,
        }
    };
    let konst = |id: Id| -> Option<i128> {
        let c = m.constants.get(&id)?;
        let bits = match m.types.get(&c.ty) {
            Some(Type::Int { bits }) => *bits,
            _ => return None,
        };
        match c.value {
            ConstValue::Scalar(v) => {
                let s = 64 - bits;
                Some(i128::from(((v << s) as i64) >> s))
            }
            ConstValue::Null => Some(0),
            _ => None,
        }
    };
    let defined: std::collections::HashSet<Id> = f
        .blocks
        .iter()
        .flat_map(|b| b.insts.iter().filter_map(|i| i.result))
        .collect();
    let mut facts: HashMap<Id, Fact> = HashMap::new();
    // Loads of built-in vectors (by result id) and access chains into them: the
    // component facts.
    let mut comps: HashMap<Id, [Fact; 3]> = HashMap::new();
    let mut builtin_comp: HashMap<Id, Fact> = HashMap::new();
    // Facts only move down (unknown -> fact -> weaker fact), so this settles; the cap
    // guards against a lattice bug, after which nothing is claimed.
    for _ in 0..64 {
        let mut changed = false;
        for b in &f.blocks {
            for inst in &b.insts {
                let Some(r) = inst.result else { continue };
                let get = |id: Id| -> Option<Fact> {
                    if let Some(c) = konst(id) {
                        return Some(Fact::range(c, c, 64).uniform());
                    }
                    match facts.get(&id) {
                        Some(f) => Some(*f),
                        // Parameters and other values defined outside the blocks.
                        None if !uni.is_varying(id) && !defined.contains(&id) => {
                            Some(Fact::UNIFORM)
                        }
                        None => None,
                    }
                };
                let new: Option<Fact> = match &inst.op {
                    _ if assume.contains(&r) => {
                        bits_of(r).map(|b| Fact::range(0, (1i128 << (b - 1)) - 1, b))
                    }
                    Op::Load { ptr, .. } => {
                        if let Some(bi) = m.globals.get(ptr).and_then(|g| g.builtin) {
                            let c = builtin_facts(bi, layout, w);
                            comps.insert(r, c);
                            Some(c[0])
                        } else {
                            Some(builtin_comp.get(ptr).copied().unwrap_or(Fact::NONE))
                        }
                    }
                    Op::AccessChain { base, indices, .. } => {
                        if let Some(bi) = m.globals.get(base).and_then(|g| g.builtin) {
                            let comp = indices.last().and_then(|i| konst(*i)).unwrap_or(0) as usize;
                            let c = builtin_facts(bi, layout, w)
                                .get(comp)
                                .copied()
                                .unwrap_or(Fact::NONE);
                            builtin_comp.insert(r, c);
                        }
                        Some(Fact::NONE)
                    }
                    Op::CompositeExtract { composite, indices } => {
                        match (comps.get(composite), indices.as_slice()) {
                            (Some(c), [i]) => {
                                Some(c.get(*i as usize).copied().unwrap_or(Fact::NONE))
                            }
                            _ => Some(Fact::NONE),
                        }
                    }
                    Op::Binary(op, a, bb) => match (bits_of(r), get(*a), get(*bb)) {
                        (Some(bits), Some(fa), Some(fb)) => {
                            Some(binary(*op, bits, fa, fb, inst.wrap))
                        }
                        (None, _, _) => Some(Fact::NONE),
                        _ => None,
                    },
                    Op::Unary(UnOp::SNegate, a) => match (bits_of(r), get(*a)) {
                        (Some(bits), Some(fa)) => Some(match fa.range {
                            Some((lo, hi)) => Fact::range(-hi, -lo, bits),
                            None => Fact {
                                signed: fa.signed && inst.wrap.signed,
                                ..Fact::NONE
                            },
                        }),
                        (None, _) => Some(Fact::NONE),
                        _ => None,
                    },
                    Op::Convert {
                        op: op @ (ConvOp::UConvert | ConvOp::SConvert),
                        value,
                        saturate: false,
                        ..
                    } => match (bits_of(*value), bits_of(r), get(*value)) {
                        (Some(from), Some(to), Some(fv)) => {
                            Some(resize(fv, from, to, *op == ConvOp::SConvert))
                        }
                        (None, _, _) | (_, None, _) => Some(Fact::NONE),
                        _ => None,
                    },
                    // Same width, same bits.
                    Op::Bitcast(v)
                    | Op::ConvertPtrToU(v)
                    | Op::ConvertUToPtr(v)
                    | Op::PtrCast(v)
                    | Op::CopyObject(v) => match (bits_of(*v), bits_of(r)) {
                        (Some(a), Some(b)) if a == b => get(*v),
                        _ => Some(Fact::NONE),
                    },
                    Op::Phi(inc) => {
                        let mut acc: Option<Fact> = None;
                        for (v, _) in inc {
                            if let Some(x) = get(*v) {
                                acc = Some(acc.map_or(x, |a| a.meet(x)));
                            }
                        }
                        acc
                    }
                    _ => Some(Fact::NONE),
                };
                // A uniform value is exact whatever was computed for it.
                let new = new.map(|n| if uni.is_varying(r) { n } else { n.uniform() });
                if let Some(n) = new {
                    let n = match facts.get(&r) {
                        Some(old) => old.meet(n),
                        None => n,
                    };
                    if facts.get(&r) != Some(&n) {
                        facts.insert(r, n);
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            return facts;
        }
    }
    HashMap::new()
}

/// A width change (`signed`: SConvert) from `from` to `to` bits.
fn resize(fv: Fact, from: u32, to: u32, signed: bool) -> Fact {
    if to == from {
        return fv;
    }
    if to < from {
        // Truncation: exact only if every lane's value is representable.
        return match fv.range {
            Some((lo, hi)) => Fact::range(lo, hi, to).with_part(fv.part),
            None => Fact::NONE,
        };
    }
    if !fv.widens(signed) {
        return Fact::NONE;
    }
    match (fv.range, signed) {
        (Some((lo, hi)), _) if signed || lo >= 0 => Fact::range(lo, hi, to).with_part(fv.part),
        // Zero extension of exact unsigned lanes: non-negative and exact when read
        // either way in the wider type.
        (_, false) => Fact::EXACT,
        (_, true) => Fact {
            signed: true,
            ..Fact::NONE
        },
    }
}

/// The fact of `a op b` in a `bits`-bit type.
fn binary(op: BinOp, bits: u32, a: Fact, b: Fact, wrap: NoWrap) -> Fact {
    let by_range = |f: fn(i128, i128) -> i128| -> Option<Fact> {
        let ((alo, ahi), (blo, bhi)) = (a.range?, b.range?);
        let c = [f(alo, blo), f(alo, bhi), f(ahi, blo), f(ahi, bhi)];
        let lo = *c.iter().min()?;
        let hi = *c.iter().max()?;
        let r = Fact::range(lo, hi, bits);
        (r != Fact::NONE).then_some(r)
    };
    let by_flags = |op_keeps_unsigned: bool| Fact {
        signed: wrap.signed && a.signed && b.signed,
        unsigned: op_keeps_unsigned && wrap.unsigned && a.unsigned && b.unsigned,
        ..Fact::NONE
    };
    match op {
        BinOp::IAdd => by_range(|x, y| x + y).unwrap_or_else(|| by_flags(true)),
        BinOp::ISub => by_range(|x, y| x - y).unwrap_or_else(|| by_flags(true)),
        // get_group_id(d) * get_local_size(d) < ID_GUARD (the layout's check).
        BinOp::IMul
            if matches!(
                (a.part, b.part),
                (Some(Part::GroupId(x)), Some(Part::GroupSize(y)))
                    | (Some(Part::GroupSize(y)), Some(Part::GroupId(x))) if x == y
            ) =>
        {
            Fact::range(0, ID_GUARD - 1, bits)
        }
        BinOp::IMul => by_range(|x, y| x.saturating_mul(y)).unwrap_or_else(|| by_flags(true)),
        BinOp::Shl => match b.range {
            Some((c, d)) if c == d && (0..i128::from(bits)).contains(&c) => {
                let k = 1i128 << c;
                match a.range {
                    Some((lo, hi)) => Fact::range(lo * k, hi * k, bits),
                    None => by_flags(true),
                }
            }
            _ => Fact::NONE,
        },
        BinOp::AShr | BinOp::LShr => match b.range {
            Some((c, d)) if c == d && (0..i128::from(bits)).contains(&c) => {
                let k = 1i128 << c;
                match a.range {
                    Some((lo, hi)) if op == BinOp::AShr || lo >= 0 => {
                        Fact::range(lo.div_euclid(k), hi.div_euclid(k), bits)
                    }
                    _ if op == BinOp::AShr && a.signed => Fact {
                        signed: true,
                        ..Fact::NONE
                    },
                    // A logical shift by at least one bit clears the sign bit.
                    _ if op == BinOp::LShr && a.unsigned => Fact {
                        signed: c > 0,
                        unsigned: true,
                        ..Fact::NONE
                    },
                    _ => Fact::NONE,
                }
            }
            _ => Fact::NONE,
        },
        // A mask of the low bits of a non-negative value in range is the identity.
        BinOp::And => match (a.range, b.range) {
            (Some((lo, hi)), Some((m, m2)))
                if m == m2 && lo >= 0 && (hi & m) == hi && {
                    let m1 = m + 1;
                    m1 > 0 && (m1 & (m1 - 1)) == 0
                } =>
            {
                a
            }
            _ => Fact::NONE,
        },
        _ => Fact::NONE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NSW: NoWrap = NoWrap {
        signed: true,
        unsigned: false,
    };

    const ID_LIMIT: i128 = ID_GUARD - 1;

    fn id() -> Fact {
        Fact::range(0, ID_LIMIT, 64)
    }

    #[test]
    fn ids_truncated_and_widened_stay_exact() {
        let t = resize(id(), 64, 32, false);
        assert_eq!(t.range, Some((0, ID_LIMIT)));
        assert!(resize(t, 32, 64, false).widens(false));
        assert!(resize(t, 32, 64, true).widens(true));
    }

    #[test]
    fn offset_index_is_signed_exact_but_not_unsigned() {
        // x = (int)gid - off with nsw: lanes may be negative, then non-negative.
        let x = resize(id(), 64, 32, false);
        let d = binary(BinOp::ISub, 32, x, Fact::UNIFORM, NSW);
        assert!(d.signed);
        assert!(
            !d.unsigned,
            "zero extension of x - off must go lane by lane"
        );
        // Without the decoration nothing is known.
        let d = binary(BinOp::ISub, 32, x, Fact::UNIFORM, NoWrap::default());
        assert_eq!(d, Fact::NONE);
    }

    #[test]
    fn ranges_that_overflow_the_type_are_dropped() {
        let x = resize(id(), 64, 32, false);
        let big = Fact::range(100_000, 100_000, 32);
        assert_eq!(
            binary(BinOp::IMul, 32, x, big, NoWrap::default()),
            Fact::NONE
        );
        let small = Fact::range(4, 4, 64);
        assert_eq!(
            binary(BinOp::IMul, 64, id(), small, NoWrap::default()).range,
            Some((0, 4 * ID_LIMIT))
        );
    }

    #[test]
    fn shift_idiom_of_ids_is_exact() {
        // (gid << 32) >> 30: sign extension of the low 32 bits, times 4.
        let c32 = Fact::range(32, 32, 64);
        let c30 = Fact::range(30, 30, 64);
        let s = binary(BinOp::Shl, 64, id(), c32, NoWrap::default());
        assert!(s.range.is_some());
        let r = binary(BinOp::AShr, 64, s, c30, NoWrap::default());
        assert_eq!(r.range, Some((0, 4 * ID_LIMIT)));
    }

    #[test]
    fn masks_keep_only_non_negative_ranges() {
        let m = Fact::range(0xffff_ffff, 0xffff_ffff, 64);
        assert_eq!(binary(BinOp::And, 64, id(), m, NoWrap::default()), id());
        let neg = Fact::range(-5, 10, 64);
        assert_eq!(
            binary(BinOp::And, 64, neg, m, NoWrap::default()),
            Fact::NONE
        );
    }
}
