//! Affine shapes: which varying integer/pointer values are `base + lane * stride` with
//! a constant stride, in the lane-contiguous sub-group layout. Lowering keeps such
//! values symbolic (contiguous accesses become vector accesses); this analysis exists
//! for loop phis, whose shape must be known before their back-edge values are seen
//! (clang's strength-reduced pointer increments in loops).
//!
//! The rules mirror the lowering's (`lower::value::Lv::A`): x work-item ids and the
//! sub-group local id have stride 1; private variables the size of their type; add,
//! sub, negate, multiply or left shift by a constant, truncation, casts and access
//! chains preserve affinity; widening and right shifts only where the lanes are known
//! not to wrap (`super::exact`); a phi is affine if all incoming values have the same
//! stride. Which phis may be affine is the caller's choice: in bodies with divergent
//! branches only loop-header phis with one entry and one back edge (all lanes taking
//! that edge are in the same iteration); elsewhere a phi may mix lanes from
//! different edges.

use std::collections::HashMap;

use super::flatten::FlatFunction;
use super::uniformity::Uniformity;
use crate::spirv::{BinOp, BuiltIn, ConstValue, ConvOp, Id, Module, Op, Type, UnOp};

/// Shape of a value across the lanes of a sub-group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    Uniform,
    Affine(i64),
    Varying,
}

fn meet(a: Shape, b: Shape) -> Shape {
    if a == b {
        a
    } else {
        Shape::Varying
    }
}

/// Shapes of the varying ids of `f` (uniform ids are absent).
pub fn shapes(
    m: &Module,
    f: &FlatFunction,
    uni: &Uniformity,
    types: &HashMap<Id, Id>,
    exact: &HashMap<Id, super::exact::Fact>,
    phis_allowed: &std::collections::HashSet<Id>,
) -> HashMap<Id, Shape> {
    let fact = |id: Id| exact.get(&id).copied().unwrap_or(super::exact::Fact::NONE);
    let int_bits = |id: Id| -> Option<u32> {
        match m.types.get(types.get(&id)?)? {
            Type::Int { bits } => Some(*bits),
            Type::Pointer { .. } => Some(64),
            _ => None,
        }
    };
    let mut sh: HashMap<Id, Shape> = HashMap::new();
    // Loads of built-in vectors: per-component shapes, by result id.
    let mut comps: HashMap<Id, [Shape; 3]> = HashMap::new();
    // Access chains into built-ins: id -> component shape.
    let mut builtin_comp: HashMap<Id, Shape> = HashMap::new();
    let builtin_shape = |b: BuiltIn| -> [Shape; 3] {
        match b {
            BuiltIn::GlobalInvocationId | BuiltIn::LocalInvocationId => {
                [Shape::Affine(1), Shape::Uniform, Shape::Uniform]
            }
            BuiltIn::LocalInvocationIndex
            | BuiltIn::SubgroupLocalInvocationId
            | BuiltIn::GlobalLinearId => [Shape::Affine(1), Shape::Varying, Shape::Varying],
            BuiltIn::SubgroupEqMask
            | BuiltIn::SubgroupGeMask
            | BuiltIn::SubgroupGtMask
            | BuiltIn::SubgroupLeMask
            | BuiltIn::SubgroupLtMask => [Shape::Varying; 3],
            _ => [Shape::Uniform; 3],
        }
    };
    let konst = |id: Id| -> Option<i64> {
        let c = m.constants.get(&id)?;
        let bits = match m.types.get(&c.ty) {
            Some(Type::Int { bits }) => *bits,
            _ => return None,
        };
        match c.value {
            ConstValue::Scalar(v) => {
                let s = 64 - bits;
                Some(((v << s) as i64) >> s)
            }
            ConstValue::Null => Some(0),
            _ => None,
        }
    };
    for _ in 0..8 {
        let mut changed = false;
        for b in &f.blocks {
            for inst in &b.insts {
                let Some(r) = inst.result else { continue };
                if !uni.is_varying(r) {
                    continue;
                }
                let get = |id: Id| -> Option<Shape> {
                    if !uni.is_varying(id) {
                        Some(Shape::Uniform)
                    } else {
                        sh.get(&id).copied()
                    }
                };
                let new: Option<Shape> = match &inst.op {
                    Op::Load { ptr, .. } => {
                        if let Some(bi) = m.globals.get(ptr).and_then(|g| g.builtin) {
                            let c = builtin_shape(bi);
                            let vector = inst
                                .ty
                                .and_then(|t| m.types.get(&t))
                                .is_some_and(|t| matches!(t, Type::Vector { .. }));
                            if vector {
                                comps.insert(r, c);
                                Some(Shape::Varying)
                            } else {
                                Some(c[0])
                            }
                        } else if let Some(s) = builtin_comp.get(ptr) {
                            Some(*s)
                        } else {
                            Some(Shape::Varying)
                        }
                    }
                    Op::AccessChain {
                        base,
                        element,
                        indices,
                    } => {
                        if let Some(bi) = m.globals.get(base).and_then(|g| g.builtin) {
                            let comp = indices.last().and_then(|i| konst(*i)).unwrap_or(0) as usize;
                            builtin_comp.insert(
                                r,
                                builtin_shape(bi)
                                    .get(comp)
                                    .copied()
                                    .unwrap_or(Shape::Varying),
                            );
                            Some(Shape::Varying)
                        } else {
                            // An index narrower than 64 bits is sign-extended: affine
                            // only without wraps (exact.rs).
                            let get_index = |id: Id| match get(id) {
                                Some(Shape::Affine(_))
                                    if int_bits(id).is_some_and(|b| b < 64)
                                        && !fact(id).widens(true) =>
                                {
                                    Some(Shape::Varying)
                                }
                                s => s,
                            };
                            access_chain_shape(
                                m, types, &get, &get_index, &konst, *base, *element, indices,
                            )
                        }
                    }
                    Op::CompositeExtract { composite, indices } => {
                        match (comps.get(composite), indices.as_slice()) {
                            (Some(c), [i]) => c.get(*i as usize).copied().or(Some(Shape::Varying)),
                            _ => Some(Shape::Varying),
                        }
                    }
                    Op::Binary(op, a, bb) => {
                        let (sa, sb) = (get(*a), get(*bb));
                        match (sa, sb) {
                            // Right shifts keep the form only without wraps (exact.rs).
                            (Some(Shape::Affine(_)), Some(_))
                                if matches!(op, BinOp::LShr | BinOp::AShr)
                                    && !fact(*a).widens(*op == BinOp::AShr) =>
                            {
                                Some(Shape::Varying)
                            }
                            // `x & (2^k - 1)`, k >= 32, on lanes known to lie in
                            // [0, 2^32): the zero-extension idiom of 32-bit ids, the
                            // identity (the lowering's rule, `lower::inst`).
                            (Some(Shape::Affine(s)), Some(Shape::Uniform))
                                if *op == BinOp::And && low_mask_keeps(fact(*a), konst(*bb)) =>
                            {
                                Some(Shape::Affine(s))
                            }
                            (Some(sa), Some(sb)) => {
                                Some(binary(*op, sa, sb, konst(*a), konst(*bb)))
                            }
                            _ => None,
                        }
                    }
                    Op::Convert {
                        op: op @ (ConvOp::UConvert | ConvOp::SConvert),
                        value,
                        saturate: false,
                        ..
                    } if int_bits(r) > int_bits(*value)
                        && !fact(*value).widens(*op == ConvOp::SConvert) =>
                    {
                        get(*value).map(|s| match s {
                            Shape::Affine(_) => Shape::Varying,
                            s => s,
                        })
                    }
                    Op::Unary(UnOp::SNegate, a) => get(*a).map(|s| match s {
                        Shape::Affine(x) => Shape::Affine(x.wrapping_neg()),
                        s => s,
                    }),
                    Op::Convert {
                        op: ConvOp::UConvert | ConvOp::SConvert,
                        value,
                        saturate: false,
                        ..
                    }
                    | Op::ConvertPtrToU(value)
                    | Op::ConvertUToPtr(value)
                    | Op::PtrCast(value)
                    | Op::CopyObject(value)
                    | Op::CopyLogical(value) => get(*value),
                    Op::Bitcast(v) => {
                        // Integer/pointer to integer/pointer of the same width keeps the shape.
                        let int_like = |t: Option<Id>| {
                            t.and_then(|t| m.types.get(&t)).is_some_and(|t| {
                                matches!(t, Type::Int { .. } | Type::Pointer { .. })
                            })
                        };
                        if int_like(inst.ty) {
                            get(*v)
                        } else {
                            Some(Shape::Varying)
                        }
                    }
                    Op::Variable { .. } => {
                        let size = inst
                            .ty
                            .and_then(|t| m.pointee(t).ok())
                            .and_then(|(_, p)| m.layout(p).ok())
                            .map(|l| l.size.next_multiple_of(l.align.max(1)) as i64);
                        Some(size.map_or(Shape::Varying, Shape::Affine))
                    }
                    Op::Phi(_) if !phis_allowed.contains(&r) => Some(Shape::Varying),
                    Op::Phi(inc) => {
                        let mut acc: Option<Shape> = None;
                        for (v, _) in inc {
                            if let Some(s) = get(*v) {
                                acc = Some(match acc {
                                    None => s,
                                    Some(a) => meet(a, s),
                                });
                            }
                        }
                        acc
                    }
                    _ => Some(Shape::Varying),
                };
                if let Some(n) = new {
                    // Only move down the lattice (unknown -> shape -> varying).
                    let n = match sh.get(&r) {
                        Some(old) if *old != n => Shape::Varying,
                        _ => n,
                    };
                    if sh.get(&r) != Some(&n) {
                        sh.insert(r, n);
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    sh
}

/// The phis that may be affine (see the module doc): all of them in bodies without
/// divergent branches, else only loop-header phis with one entry and one back edge.
pub fn phi_candidates(
    f: &FlatFunction,
    cfg: &super::cfg::Cfg,
    uni: &Uniformity,
) -> std::collections::HashSet<Id> {
    let mut out = std::collections::HashSet::new();
    let divergent = uni.any_divergence();
    for (bi, b) in f.blocks.iter().enumerate() {
        let ok = !divergent
            || cfg.loop_of[bi].is_some_and(|l| {
                cfg.loops[l].header == bi
                    && cfg.preds[bi].len() == 2
                    && cfg.preds[bi].iter().filter(|p| cfg.in_loop(l, **p)).count() == 1
            });
        if !ok {
            continue;
        }
        for i in &b.insts {
            if let (crate::spirv::Op::Phi(_), Some(r)) = (&i.op, i.result) {
                out.insert(r);
            }
        }
    }
    out
}

/// Whether `x & mask` is `x` for an affine `x` with fact `fa`: the mask keeps at least
/// the low 32 bits (all ones, or `2^k - 1` with k >= 32) and every lane lies in
/// `[0, 2^32)`. The lowering (`lower::inst`, `B::And`) applies the same test.
pub(crate) fn low_mask_keeps(fa: super::exact::Fact, mask: Option<i64>) -> bool {
    let in_u32 = fa
        .range
        .is_some_and(|(lo, hi)| lo >= 0 && hi <= i128::from(u32::MAX));
    in_u32
        && mask.is_some_and(|m| {
            m == -1
                || (m > 0 && (m as u64 + 1).is_power_of_two() && m as u64 >= u64::from(u32::MAX))
        })
}

fn binary(op: BinOp, a: Shape, b: Shape, ca: Option<i64>, cb: Option<i64>) -> Shape {
    use Shape::*;
    match (op, a, b) {
        (_, Uniform, Uniform) => Uniform,
        (BinOp::IAdd, Affine(s), Uniform) | (BinOp::IAdd, Uniform, Affine(s)) => Affine(s),
        (BinOp::IAdd, Affine(s), Affine(t)) => Affine(s.wrapping_add(t)),
        (BinOp::ISub, Affine(s), Uniform) => Affine(s),
        (BinOp::ISub, Uniform, Affine(s)) => Affine(s.wrapping_neg()),
        (BinOp::ISub, Affine(s), Affine(t)) => Affine(s.wrapping_sub(t)),
        (BinOp::IMul, Affine(s), Uniform) => cb.map_or(Varying, |c| Affine(s.wrapping_mul(c))),
        (BinOp::IMul, Uniform, Affine(s)) => ca.map_or(Varying, |c| Affine(s.wrapping_mul(c))),
        (BinOp::Shl, Affine(s), Uniform) => {
            cb.map_or(Varying, |c| Affine(s.wrapping_shl((c & 63) as u32)))
        }
        (BinOp::LShr | BinOp::AShr, Affine(s), Uniform) => match cb {
            Some(c) if (0..63).contains(&c) && s.rem_euclid(1i64 << c) == 0 => Affine(s >> c),
            _ => Varying,
        },
        _ => Varying,
    }
}

#[allow(clippy::too_many_arguments)]
fn access_chain_shape(
    m: &Module,
    types: &HashMap<Id, Id>,
    get: &impl Fn(Id) -> Option<Shape>,
    get_index: &impl Fn(Id) -> Option<Shape>,
    konst: &impl Fn(Id) -> Option<i64>,
    base: Id,
    element: Option<Id>,
    indices: &[Id],
) -> Option<Shape> {
    let (mut stride, mut affine) = match get(base)? {
        Shape::Uniform => (0i64, false),
        Shape::Affine(s) => (s, true),
        Shape::Varying => return Some(Shape::Varying),
    };
    // Stride contribution of an index, or None if the index is varying.
    let idx = |id: Id| -> Option<Option<i64>> {
        if konst(id).is_some() {
            return Some(Some(0));
        }
        match get_index(id)? {
            Shape::Uniform => Some(Some(0)),
            Shape::Affine(s) => Some(Some(s)),
            Shape::Varying => Some(None),
        }
    };
    let bty = types
        .get(&base)
        .copied()
        .or_else(|| m.globals.get(&base).map(|g| g.ty))?;
    let (_, mut t) = m.pointee(bty).ok()?;
    let mut add = |id: Id, size: i64, affine: &mut bool| -> Option<bool> {
        match idx(id)? {
            Some(s) => {
                if s != 0 {
                    *affine = true;
                    stride = stride.wrapping_add(s.wrapping_mul(size));
                }
                Some(true)
            }
            None => Some(false),
        }
    };
    if let Some(el) = element {
        let l = m.layout(t).ok()?;
        if !add(
            el,
            l.size.next_multiple_of(l.align.max(1)) as i64,
            &mut affine,
        )? {
            return Some(Shape::Varying);
        }
    }
    for &i in indices {
        match m.ty(t).ok()?.clone() {
            Type::Struct { members, .. } => {
                t = *members.get(konst(i)? as usize)?;
            }
            Type::Array { elem, .. } | Type::RuntimeArray { elem } => {
                let l = m.layout(elem).ok()?;
                if !add(
                    i,
                    l.size.next_multiple_of(l.align.max(1)) as i64,
                    &mut affine,
                )? {
                    return Some(Shape::Varying);
                }
                t = elem;
            }
            Type::Vector { elem, .. } => {
                let l = m.layout(elem).ok()?;
                if !add(i, l.size as i64, &mut affine)? {
                    return Some(Shape::Varying);
                }
                t = elem;
            }
            _ => return Some(Shape::Varying),
        }
    }
    Some(if affine {
        Shape::Affine(stride)
    } else {
        Shape::Uniform
    })
}
