//! Combines the scalar loads and stores of one array element into one vector access.
//! clang writes a struct element field by field: pyopencl's `cdouble_t` product
//! loads `x[i].real` and `x[i].imag` as two `double`s and stores the result as two;
//! a `float4`-like struct of four floats is stored as four `float`s. Each is a
//! strided access across the lanes of a sub-group, which the lowering can only do
//! lane by lane; as one `double2` or `float4` access of the whole element it is a
//! 16-byte load or store per lane (or per two lanes) and a few shuffles.
//!
//! A group is a run of loads (or of stores) with nothing but pure instructions
//! between them, through pointers at constant byte offsets from one root pointer
//! (`const_offsets`), of one 32- or 64-bit scalar type, covering 2 or 4
//! consecutive scalars, where the lanes' addresses step by exactly the vector's size
//! (`analysis::affine`): then the lowering's element-wise paths apply. `p[0]` and
//! `p[1]` of `float *p = &a[i]` are left alone (the lanes overlap).
//! Loads become one vector load where the first of them was, and the scalars are
//! extracted where each load was; stores become one vector store where the last
//! was (moving the earlier stores down past pure instructions and each other only).

use std::collections::HashMap;

use super::affine::{self, Shape};
use super::cfg::Cfg;
use super::exact::{self, Layout};
use super::flatten::FlatFunction;
use super::new_ids::IdSource;
use super::uniformity::Uniformity;
use crate::spirv::{Id, Inst, Module, Op, Storage, Type};

/// What the combining needs to know of the kernel besides its instructions.
pub struct Context<'a> {
    pub cfg: &'a Cfg,
    pub uni: &'a Uniformity,
    pub reqd_local: Option<[u32; 3]>,
    /// The sub-group width.
    pub w: u32,
}

/// Combines the loads and stores of `flat`; returns how many groups were made (the
/// uniformity analysis must then run again: the vectors are new ids).
pub fn combine(m: &mut Module, flat: &mut FlatFunction, cx: &Context) -> usize {
    let types = flat.value_types();
    let roots = super::const_offsets::pointer_roots(m, flat, cx.cfg, &types);
    let facts = exact::analyze(
        m,
        flat,
        cx.uni,
        &types,
        Layout::Contiguous(cx.reqd_local),
        cx.w,
        &std::collections::HashSet::new(),
    );
    let shapes = affine::shapes(
        m,
        flat,
        cx.uni,
        &types,
        &facts,
        &affine::phi_candidates(flat, cx.cfg, cx.uni),
    );
    let mut ids = IdSource::new(m, flat.next_id);
    let mut made = 0;
    for b in 0..flat.blocks.len() {
        let insts = std::mem::take(&mut flat.blocks[b].insts);
        let groups = find_groups(ids.m, &insts, &roots, &types, &shapes);
        made += groups.len();
        flat.blocks[b].insts = if groups.is_empty() {
            insts
        } else {
            rewrite(&mut ids, insts, &groups, &types)
        };
    }
    flat.next_id = ids.next();
    made
}

/// One combined access: the member instructions' indices in the block (in block
/// order), the root pointer, the scalar type and how many scalars.
#[derive(Debug)]
struct Group {
    members: Vec<usize>,
    /// The member of the lowest offset (its pointer is the vector's).
    first: usize,
    /// For each member, its component in the vector.
    comp: Vec<u32>,
    scalar: Id,
    count: u32,
    storage: Storage,
    store: bool,
}

/// Whether `op` neither reads nor writes memory nor has other effects, so that
/// loads or stores may move across it.
fn is_pure(op: &Op, types: &HashMap<Id, Id>, m: &Module) -> bool {
    match op {
        Op::Binary(..)
        | Op::Unary(..)
        | Op::Convert { .. }
        | Op::Wide(..)
        | Op::VectorTimesScalar(..)
        | Op::Bitcast(_)
        | Op::AccessChain { .. }
        | Op::CompositeExtract { .. }
        | Op::CompositeInsert { .. }
        | Op::CompositeConstruct(_)
        | Op::VectorShuffle { .. }
        | Op::Select { .. }
        | Op::CopyObject(_)
        | Op::Dot(..)
        | Op::Nop
        | Op::Uses(_) => true,
        // Math on values; a pointer operand means it reads or writes memory
        // (vloadn, vstoren, sincos, fract, printf).
        Op::ExtInst { args, .. } => args.iter().all(|a| {
            types
                .get(a)
                .is_none_or(|t| !matches!(m.ty(*t), Ok(Type::Pointer { .. })))
        }),
        _ => false,
    }
}

/// A run of accesses being collected: whether they are stores, their root, and
/// each one's instruction index, byte offset and scalar type.
type Run = (bool, Id, Vec<(usize, i64, Id)>);

/// The groups of a block's instructions.
fn find_groups(
    m: &Module,
    insts: &[Inst],
    roots: &HashMap<Id, (Id, i64)>,
    types: &HashMap<Id, Id>,
    shapes: &HashMap<Id, Shape>,
) -> Vec<Group> {
    let mut out = Vec::new();
    let mut run: Option<Run> = None;
    let close = |run: &mut Option<Run>, out: &mut Vec<Group>| {
        if let Some((store, _, accs)) = run.take() {
            if let Some(g) = group_of(m, store, &accs, insts, types, shapes) {
                out.push(g);
            }
        }
    };
    for (k, i) in insts.iter().enumerate() {
        let access = match &i.op {
            Op::Load { ptr, .. } => i.ty.map(|t| (false, *ptr, t)),
            Op::Store { ptr, value, .. } => types
                .get(value)
                .or_else(|| m.constants.get(value).map(|c| &c.ty))
                .map(|t| (true, *ptr, *t)),
            op if is_pure(op, types, m) => continue,
            _ => None,
        };
        let Some((store, ptr, t)) = access else {
            close(&mut run, &mut out);
            continue;
        };
        let scalar_ok = matches!(
            m.ty(t),
            Ok(Type::Int { bits: 32 | 64 } | Type::Float { bits: 32 | 64 })
        );
        let Some(&(root, off)) = roots.get(&ptr).filter(|_| scalar_ok) else {
            close(&mut run, &mut out);
            continue;
        };
        match &mut run {
            Some((s, r, accs)) if *s == store && *r == root && accs[0].2 == t => {
                accs.push((k, off, t));
            }
            _ => {
                close(&mut run, &mut out);
                run = Some((store, root, vec![(k, off, t)]));
            }
        }
    }
    close(&mut run, &mut out);
    out
}

/// The group a run of accesses forms, if its scalars are consecutive and the lanes'
/// elements adjacent.
fn group_of(
    m: &Module,
    store: bool,
    accs: &[(usize, i64, Id)],
    insts: &[Inst],
    types: &HashMap<Id, Id>,
    shapes: &HashMap<Id, Shape>,
) -> Option<Group> {
    let n = accs.len();
    if n != 2 && n != 4 {
        return None;
    }
    let scalar = accs[0].2;
    let size = m.layout(scalar).ok()?.size as i64;
    let ptr = |k: usize| match &insts[k].op {
        Op::Load { ptr, .. } | Op::Store { ptr, .. } => Some(*ptr),
        _ => None,
    };
    let (storage, _) = m.pointee(*types.get(&ptr(accs[0].0)?)?).ok()?;
    if matches!(storage, Storage::Function | Storage::Input) {
        return None;
    }
    // Offsets from the lowest (a strength-reduced loop pointer may point at a later
    // field: `p[-1]` and `p[0]`).
    let low = accs.iter().map(|a| a.1).min()?;
    let mut comp = Vec::with_capacity(n);
    let mut seen = [false; 4];
    for &(_, off, _) in accs {
        let rel = off - low;
        if rel % size != 0 || !(0..n as i64).contains(&(rel / size)) {
            return None;
        }
        let c = (rel / size) as usize;
        if seen[c] {
            return None;
        }
        seen[c] = true;
        comp.push(c as u32);
    }
    let first = accs[comp.iter().position(|c| *c == 0)?].0;
    // Lanes a whole vector apart: the lowering's element-wise paths.
    if shapes.get(&ptr(first)?) != Some(&Shape::Affine(size * n as i64)) {
        return None;
    }
    // A load's vector goes where the first load is, through the pointer of
    // component 0, which must be defined by then: require it to come first.
    if !store && first != accs[0].0 {
        return None;
    }
    Some(Group {
        members: accs.iter().map(|a| a.0).collect(),
        first,
        comp,
        scalar,
        count: n as u32,
        storage,
        store,
    })
}

/// The block's instructions with each group made one vector access.
fn rewrite(
    ids: &mut IdSource,
    insts: Vec<Inst>,
    groups: &[Group],
    types: &HashMap<Id, Id>,
) -> Vec<Inst> {
    // Instruction index -> (group, member number).
    let mut member: HashMap<usize, (usize, usize)> = HashMap::new();
    for (g, grp) in groups.iter().enumerate() {
        for (j, k) in grp.members.iter().enumerate() {
            member.insert(*k, (g, j));
        }
    }
    let ptr_of = |i: &Inst| match &i.op {
        Op::Load { ptr, .. } | Op::Store { ptr, .. } => *ptr,
        _ => unreachable!("members are loads and stores"),
    };
    let mut loaded: Vec<Option<Id>> = vec![None; groups.len()];
    let mut out = Vec::with_capacity(insts.len() + 4 * groups.len());
    for (k, inst) in insts.iter().enumerate() {
        let Some(&(g, j)) = member.get(&k) else {
            out.push(inst.clone());
            continue;
        };
        let grp = &groups[g];
        let vec_ty = ids.type_id(Type::Vector {
            elem: grp.scalar,
            count: grp.count,
        });
        let ptr_ty = ids.pointer_type(grp.storage, vec_ty);
        let align = match &inst.op {
            Op::Load { align, .. } | Op::Store { align, .. } => *align,
            _ => 0,
        };
        if grp.store {
            if j + 1 < grp.members.len() {
                continue; // stored with the last member
            }
            let mut parts = vec![0; grp.count as usize];
            for (jj, kk) in grp.members.iter().enumerate() {
                if let Op::Store { value, .. } = &insts[*kk].op {
                    parts[grp.comp[jj] as usize] = *value;
                }
            }
            let v = ids.fresh();
            out.push(inst_of(v, vec_ty, Op::CompositeConstruct(parts)));
            let p = ids.fresh();
            out.push(inst_of(p, ptr_ty, Op::Bitcast(ptr_of(&insts[grp.first]))));
            out.push(Inst {
                result: None,
                ty: None,
                op: Op::Store {
                    ptr: p,
                    value: v,
                    align,
                },
                wrap: Default::default(),
            });
        } else {
            let v = match loaded[g] {
                Some(v) => v,
                None => {
                    let p = ids.fresh();
                    out.push(inst_of(p, ptr_ty, Op::Bitcast(ptr_of(&insts[grp.first]))));
                    let v = ids.fresh();
                    out.push(inst_of(v, vec_ty, Op::Load { ptr: p, align }));
                    loaded[g] = Some(v);
                    v
                }
            };
            let r = inst.result.expect("a load has a result");
            let t = inst.ty.or_else(|| types.get(&r).copied()).expect("typed");
            out.push(inst_of(
                r,
                t,
                Op::CompositeExtract {
                    composite: v,
                    indices: vec![grp.comp[j]],
                },
            ));
        }
    }
    out
}

fn inst_of(result: Id, ty: Id, op: Op) -> Inst {
    Inst {
        result: Some(result),
        ty: Some(ty),
        op,
        wrap: Default::default(),
    }
}
