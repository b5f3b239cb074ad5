//! Promotes private variables to SSA values ("mem2reg"). A `Function` variable whose
//! address never escapes, and whose every access is a load or store at a constant
//! byte offset, becomes a row of words: one SSA value per word, with phis where
//! control flow merges. The lowering then keeps it in registers (uniform, affine or
//! one vector per word) instead of in the private area, which is laid out lane by lane
//! so that every access there is a gather or a scatter.
//!
//! clang promotes most locals itself; what it leaves are the variables whose address
//! goes to a function it did not inline (pyopencl's Philox counter and key, passed as
//! `gen_bits(&key, &ctr)`). Our inlining (`flatten`) makes those accesses constant
//! offsets, so they are promoted here, before the uniformity analysis: a counter that
//! every work-item steps alike is then a uniform value.
//!
//! The accesses may pun types (the counter is stored as four `uint`s and loaded as a
//! `uint4`; the key stored as two `uint`s and loaded as one `ulong`): words are the
//! variable's one scalar type when every access uses it, else 32-bit integers, with
//! bitcasts and 64-bit splits and joins added at the accesses.

use std::collections::{HashMap, HashSet};

use super::cfg::Cfg;
use super::flatten::FlatFunction;
use super::new_ids::IdSource;
use crate::spirv::{
    BinOp, Block, ConstValue, ConvOp, Id, Inst, Module, Op, Storage, Terminator, Type,
};

/// Largest variable promoted, in words: bigger ones (arrays indexed by constants after
/// unrolling) would cost a phi per word at every merge.
const MAX_WORDS: u64 = 64;

/// Words promoted per kernel at most: phis are placed per word, up to one per block,
/// so a kernel of many private structs and many blocks would otherwise get words
/// times blocks of them. Variables past the cap stay in memory.
const MAX_TOTAL_WORDS: usize = 512;

/// One scalar piece of an accessed value: its byte offset in the variable, its type
/// and the composite indices that reach it in the accessed value.
#[derive(Clone, Debug)]
struct Leaf {
    off: u64,
    ty: Id,
    bits: u32,
    float: bool,
    path: Vec<u32>,
}

/// How a promoted variable is split into words.
#[derive(Clone, Copy, Debug)]
struct Words {
    /// Index of the variable's first word in the function's word table.
    first: usize,
    /// Bytes per word (4 or 8).
    bytes: u64,
    /// The words' SPIR-V type.
    ty: Id,
}

/// Promotes every promotable private variable of `flat` to SSA values; returns how
/// many were promoted. May add integer types and constants to `m` (their ids come
/// from `flat.next_id`, and `m.bound` moves above them).
pub fn promote(m: &mut Module, flat: &mut FlatFunction, cfg: &Cfg) -> usize {
    let types = flat.value_types();
    let Some(plan) = Plan::find(m, flat, cfg, &types) else {
        return 0;
    };
    let mut ids = IdSource::new(m, flat.next_id);
    let (words, word_ty) = plan.assign_words(&mut ids);
    if words.is_empty() {
        return 0;
    }
    let n = words.len();
    let mut rw = Rewriter::new(flat, cfg, &plan, &words, word_ty, &types, ids);
    rw.place_phis();
    rw.rename();
    rw.finish();
    n
}

/// The variables to promote, with the accesses that decided it.
struct Plan {
    /// Variable id -> (size in bytes, every leaf accessed).
    vars: Vec<(Id, u64, Vec<Leaf>)>,
    /// Pointer id -> (variable, byte offset) for the variable and every pointer
    /// derived from it.
    ptrs: HashMap<Id, (Id, u64)>,
}

impl Plan {
    /// Finds the promotable variables: none of their pointers escapes, and every
    /// load and store through them reads or writes 32- or 64-bit scalars at constant,
    /// in-bounds offsets.
    fn find(m: &Module, flat: &FlatFunction, cfg: &Cfg, types: &HashMap<Id, Id>) -> Option<Plan> {
        let mut candidates: HashMap<Id, (Id, u64)> = HashMap::new();
        for i in flat.blocks.iter().flat_map(|b| &b.insts) {
            if let (Op::Variable { .. }, Some(r), Some(t)) = (&i.op, i.result, i.ty) {
                let Ok((Storage::Function, pointee)) = m.pointee(t) else {
                    continue;
                };
                let Ok(l) = m.layout(pointee) else { continue };
                if l.size > 0 && l.size <= MAX_WORDS * 4 {
                    candidates.insert(r, (pointee, l.size));
                }
            }
        }
        if candidates.is_empty() {
            return None;
        }
        // The candidates and the pointers derived from them at offsets >= 0 (a use
        // of any other pointer derived from them is an escape, below).
        let mut ptrs: HashMap<Id, (Id, u64)> =
            super::const_offsets::pointer_roots(m, flat, cfg, types)
                .into_iter()
                .filter(|(_, (root, off))| candidates.contains_key(root) && *off >= 0)
                .map(|(p, (root, off))| (p, (root, off as u64)))
                .collect();
        let mut bad: HashSet<Id> = HashSet::new();
        // Every use of a derived pointer must be one of: a derivation above, a load,
        // the address of a store, or a lifetime marker.
        let mut leaves: HashMap<Id, Vec<Leaf>> = HashMap::new();
        for b in &flat.blocks {
            for i in &b.insts {
                match &i.op {
                    Op::Bitcast(_)
                    | Op::CopyObject(_)
                    | Op::PtrCast(_)
                    | Op::AccessChain { .. }
                        if i.result.is_some_and(|r| ptrs.contains_key(&r)) => {}
                    Op::Uses(_) => {}
                    Op::Load { ptr, .. } if ptrs.contains_key(ptr) => {
                        let (v, off) = ptrs[ptr];
                        match i.ty.and_then(|t| value_leaves(m, t, off)) {
                            Some(ls) => leaves.entry(v).or_default().extend(ls),
                            None => {
                                bad.insert(v);
                            }
                        }
                    }
                    Op::Store { ptr, value, .. } if ptrs.contains_key(ptr) => {
                        let (v, off) = ptrs[ptr];
                        if let Some((w, _)) = ptrs.get(value) {
                            bad.insert(*w);
                        }
                        match type_of(m, types, *value).and_then(|t| value_leaves(m, t, off)) {
                            Some(ls) => leaves.entry(v).or_default().extend(ls),
                            None => {
                                bad.insert(v);
                            }
                        }
                    }
                    op => crate::analysis::for_each_operand(op, |id| {
                        if let Some((v, _)) = ptrs.get(&id) {
                            bad.insert(*v);
                        }
                    }),
                }
                if let (Op::Variable { init: Some(c) }, Some(r)) = (&i.op, i.result) {
                    if let Some((pointee, _)) = candidates.get(&r) {
                        match value_leaves(m, *pointee, 0) {
                            Some(ls) if m.constants.contains_key(c) => {
                                leaves.entry(r).or_default().extend(ls)
                            }
                            _ => {
                                bad.insert(r);
                            }
                        }
                    }
                }
            }
            term_operands(&b.term, |id| {
                if let Some((v, _)) = ptrs.get(&id) {
                    bad.insert(*v);
                }
            });
        }
        let mut vars = Vec::new();
        let mut ids: Vec<Id> = candidates.keys().copied().collect();
        ids.sort_unstable();
        for v in ids {
            if bad.contains(&v) {
                continue;
            }
            let (_, size) = candidates[&v];
            let ls = leaves.remove(&v).unwrap_or_default();
            if ls.iter().all(|l| l.off + u64::from(l.bits / 8) <= size) {
                vars.push((v, size, ls));
            }
        }
        ptrs.retain(|_, (v, _)| vars.iter().any(|x| x.0 == *v));
        if vars.is_empty() {
            return None;
        }
        Some(Plan { vars, ptrs })
    }

    /// Chooses each variable's words (dropping variables whose accesses do not fit
    /// any) and numbers them; also returns the type of each word.
    fn assign_words(&self, ids: &mut IdSource) -> (HashMap<Id, Words>, Vec<Id>) {
        let mut out = HashMap::new();
        let mut word_ty = Vec::new();
        let mut first = 0usize;
        for (v, size, ls) in &self.vars {
            let same = ls.first().map(|l| l.ty);
            let (bytes, ty) = match same {
                Some(t)
                    if ls
                        .iter()
                        .all(|l| l.ty == t && l.off % u64::from(l.bits / 8) == 0) =>
                {
                    (u64::from(ls[0].bits / 8), t)
                }
                _ if ls.iter().all(|l| l.off % 4 == 0) => (4, ids.int_type(32)),
                _ => continue,
            };
            let n = size.div_ceil(bytes) as usize;
            if first + n > MAX_TOTAL_WORDS {
                continue;
            }
            out.insert(*v, Words { first, bytes, ty });
            word_ty.resize(first + n, ty);
            first += n;
        }
        (out, word_ty)
    }
}

/// The leaves of a value of type `t` stored at byte `off`, or None when a leaf is not
/// a 32- or 64-bit integer or float.
fn value_leaves(m: &Module, t: Id, off: u64) -> Option<Vec<Leaf>> {
    let mut out = Vec::new();
    let mut stack = vec![(t, off, Vec::new())];
    while let Some((t, off, path)) = stack.pop() {
        match m.ty(t).ok()? {
            Type::Int { bits } | Type::Float { bits } if *bits == 32 || *bits == 64 => {
                let float = matches!(m.ty(t).ok()?, Type::Float { .. });
                out.push(Leaf {
                    off,
                    ty: t,
                    bits: *bits,
                    float,
                    path,
                });
            }
            Type::Vector { elem, count } => {
                let s = m.layout(*elem).ok()?.size;
                for k in (0..*count).rev() {
                    let mut p = path.clone();
                    p.push(k);
                    stack.push((*elem, off + s * u64::from(k), p));
                }
            }
            Type::Array { elem, len } if *len <= MAX_WORDS => {
                let l = m.layout(*elem).ok()?;
                let s = l.size.next_multiple_of(l.align.max(1));
                for k in (0..*len as u32).rev() {
                    let mut p = path.clone();
                    p.push(k);
                    stack.push((*elem, off + s * u64::from(k), p));
                }
            }
            Type::Struct { members, .. } => {
                let offs = m.member_offsets(t).ok()?;
                for (k, (mt, mo)) in members.iter().zip(offs).enumerate().rev() {
                    let mut p = path.clone();
                    p.push(k as u32);
                    stack.push((*mt, off + mo, p));
                }
            }
            _ => return None,
        }
        if out.len() as u64 > MAX_WORDS * 2 {
            return None;
        }
    }
    Some(out)
}

/// The type of value `id`: an instruction result, parameter or constant.
fn type_of(m: &Module, types: &HashMap<Id, Id>, id: Id) -> Option<Id> {
    types
        .get(&id)
        .copied()
        .or_else(|| m.constants.get(&id).map(|c| c.ty))
}

/// Calls `f` on the value operands of a terminator.
fn term_operands(t: &Terminator, mut f: impl FnMut(Id)) {
    match t {
        Terminator::BranchCond { cond, .. } => f(*cond),
        Terminator::Switch { selector, .. } => f(*selector),
        Terminator::ReturnValue(v) => f(*v),
        _ => {}
    }
}

/// The SSA construction: phis at the iterated dominance frontiers of the blocks that
/// store a word, then a walk of the dominator tree that replaces loads by the words'
/// current values.
struct Rewriter<'a> {
    flat: &'a mut FlatFunction,
    cfg: &'a Cfg,
    plan: &'a Plan,
    words: &'a HashMap<Id, Words>,
    types: &'a HashMap<Id, Id>,
    ids: IdSource<'a>,
    /// Phis to add: block -> (word, phi id).
    phis: Vec<Vec<(usize, Id)>>,
    /// Incoming values of each phi.
    incoming: HashMap<Id, Vec<(Id, Id)>>,
    /// The word of each phi.
    phi_word: HashMap<Id, usize>,
    /// The type of each word (`Plan::assign_words`).
    word_ty: Vec<Id>,
    /// Load result -> the value that replaces it.
    subst: HashMap<Id, Id>,
    /// Undefined value of each word type.
    undef: HashMap<Id, Id>,
    /// `(type, value)` cache of the integer constants added (shift amounts).
    consts: HashMap<(Id, u64), Id>,
}

impl<'a> Rewriter<'a> {
    fn new(
        flat: &'a mut FlatFunction,
        cfg: &'a Cfg,
        plan: &'a Plan,
        words: &'a HashMap<Id, Words>,
        word_ty: Vec<Id>,
        types: &'a HashMap<Id, Id>,
        ids: IdSource<'a>,
    ) -> Self {
        let nb = flat.blocks.len();
        Rewriter {
            flat,
            cfg,
            plan,
            words,
            types,
            ids,
            phis: vec![Vec::new(); nb],
            incoming: HashMap::new(),
            phi_word: HashMap::new(),
            word_ty,
            subst: HashMap::new(),
            undef: HashMap::new(),
            consts: HashMap::new(),
        }
    }

    /// The words a store through pointer `ptr` of a value of type `t` writes.
    fn stored_words(&self, ptr: Id, t: Id) -> Vec<usize> {
        let Some(&(v, off)) = self.plan.ptrs.get(&ptr) else {
            return Vec::new();
        };
        let Some(w) = self.words.get(&v) else {
            return Vec::new();
        };
        let Some(ls) = value_leaves(self.ids.m, t, off) else {
            return Vec::new();
        };
        let mut out: Vec<usize> = ls
            .iter()
            .flat_map(|l| {
                let a = l.off / w.bytes;
                let b = (l.off + u64::from(l.bits / 8) - 1) / w.bytes;
                (a..=b).map(move |k| w.first + k as usize)
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Places a phi for each word at the iterated dominance frontier of its stores.
    fn place_phis(&mut self) {
        let cfg = self.cfg;
        let n = cfg.labels.len();
        let mut df: Vec<Vec<usize>> = vec![Vec::new(); n];
        for b in 0..n {
            if !cfg.reachable(b) || cfg.preds[b].len() < 2 {
                continue;
            }
            for &p in &cfg.preds[b] {
                let mut r = p;
                while cfg.reachable(r) && r != cfg.idom[b] {
                    if !df[r].contains(&b) {
                        df[r].push(b);
                    }
                    if r == cfg.idom[r] {
                        break;
                    }
                    r = cfg.idom[r];
                }
            }
        }
        let mut defs: Vec<Vec<usize>> = vec![Vec::new(); self.word_ty.len()];
        for (bi, b) in self.flat.blocks.iter().enumerate() {
            for i in &b.insts {
                if let Op::Store { ptr, value, .. } = &i.op {
                    if let Some(t) = type_of(self.ids.m, self.types, *value) {
                        for w in self.stored_words(*ptr, t) {
                            defs[w].push(bi);
                        }
                    }
                }
            }
        }
        for (w, blocks) in defs.into_iter().enumerate() {
            let mut has = vec![false; n];
            let mut work = blocks;
            let mut seen = vec![false; n];
            while let Some(b) = work.pop() {
                for &d in &df[b] {
                    if !has[d] {
                        has[d] = true;
                        let id = self.ids.fresh();
                        self.phis[d].push((w, id));
                        self.incoming.insert(id, Vec::new());
                        self.phi_word.insert(id, w);
                        if !seen[d] {
                            seen[d] = true;
                            work.push(d);
                        }
                    }
                }
            }
        }
    }

    fn undef(&mut self, ty: Id) -> Id {
        if let Some(u) = self.undef.get(&ty) {
            return *u;
        }
        let u = self.ids.constant(ty, ConstValue::Undef);
        self.undef.insert(ty, u);
        u
    }

    fn int_const(&mut self, ty: Id, v: u64) -> Id {
        if let Some(c) = self.consts.get(&(ty, v)) {
            return *c;
        }
        let c = self.ids.constant(ty, ConstValue::Scalar(v));
        self.consts.insert((ty, v), c);
        c
    }

    /// Appends an instruction with a fresh result to `out`.
    fn emit(&mut self, out: &mut Vec<Inst>, ty: Id, op: Op) -> Id {
        let r = self.ids.fresh();
        out.push(Inst {
            result: Some(r),
            ty: Some(ty),
            op,
            wrap: Default::default(),
        });
        r
    }

    /// Walks the dominator tree, rewriting each block's accesses.
    fn rename(&mut self) {
        let cfg = self.cfg;
        let n = cfg.labels.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for b in 1..n {
            if cfg.reachable(b) && cfg.idom[b] != b {
                children[cfg.idom[b]].push(b);
            }
        }
        let mut cur: Vec<Id> = Vec::with_capacity(self.word_ty.len());
        for w in 0..self.word_ty.len() {
            let u = self.undef(self.word_ty[w]);
            cur.push(u);
        }
        let mut undo: Vec<(usize, Id)> = Vec::new();
        // (block, undo mark); mark None = entering.
        let mut stack: Vec<(usize, Option<usize>)> = vec![(0, None)];
        while let Some((b, mark)) = stack.pop() {
            if let Some(mk) = mark {
                while undo.len() > mk {
                    let (w, old) = undo.pop().expect("len checked");
                    cur[w] = old;
                }
                continue;
            }
            stack.push((b, Some(undo.len())));
            for k in 0..self.phis[b].len() {
                let (w, id) = self.phis[b][k];
                undo.push((w, cur[w]));
                cur[w] = id;
            }
            self.rewrite_block(b, &mut cur, &mut undo);
            let label = cfg.labels[b];
            for &s in &cfg.succs[b] {
                for &(w, id) in &self.phis[s] {
                    self.incoming
                        .get_mut(&id)
                        .expect("placed")
                        .push((cur[w], label));
                }
            }
            for &c in children[b].iter().rev() {
                stack.push((c, None));
            }
        }
        // Unreachable blocks are not lowered, but the analyses read them: their
        // accesses see undefined words, and as predecessors they still name phis.
        for b in 0..n {
            if cfg.reachable(b) {
                continue;
            }
            let mut cur: Vec<Id> = (0..self.word_ty.len())
                .map(|w| self.undef(self.word_ty[w]))
                .collect();
            self.rewrite_block(b, &mut cur, &mut Vec::new());
            for &s in &cfg.succs[b] {
                for k in 0..self.phis[s].len() {
                    let (w, id) = self.phis[s][k];
                    let u = self.undef(self.word_ty[w]);
                    self.incoming
                        .get_mut(&id)
                        .expect("placed")
                        .push((u, cfg.labels[b]));
                }
            }
        }
    }

    /// Rewrites block `b`: loads and stores of promoted variables become word values.
    fn rewrite_block(&mut self, b: usize, cur: &mut [Id], undo: &mut Vec<(usize, Id)>) {
        let insts = std::mem::take(&mut self.flat.blocks[b].insts);
        let mut out = Vec::with_capacity(insts.len());
        for inst in insts {
            match &inst.op {
                Op::Variable { init } if inst.result.is_some_and(|r| self.is_promoted(r)) => {
                    let v = inst.result.expect("checked");
                    if let Some(c) = *init {
                        let t = self
                            .ids
                            .m
                            .pointee(inst.ty.expect("typed"))
                            .expect("pointer")
                            .1;
                        self.store(&mut out, v, c, t, cur, undo);
                    }
                }
                Op::Bitcast(_) | Op::CopyObject(_) | Op::PtrCast(_) | Op::AccessChain { .. }
                    if inst.result.is_some_and(|r| self.is_promoted(r)) => {}
                Op::Load { ptr, .. } if self.is_promoted(*ptr) => {
                    let (r, t) = (inst.result.expect("load"), inst.ty.expect("load"));
                    let v = self.load(&mut out, *ptr, t, cur);
                    self.subst.insert(r, v);
                }
                Op::Store { ptr, value, .. } if self.is_promoted(*ptr) => {
                    let t = type_of(self.ids.m, self.types, *value).expect("checked in find");
                    self.store(&mut out, *ptr, *value, t, cur, undo);
                }
                Op::Uses(ids) => {
                    let keep: Vec<Id> = ids
                        .iter()
                        .copied()
                        .filter(|i| !self.is_promoted(*i))
                        .collect();
                    if !keep.is_empty() {
                        out.push(Inst {
                            op: Op::Uses(keep),
                            ..inst
                        });
                    }
                }
                _ => out.push(inst),
            }
        }
        self.flat.blocks[b].insts = out;
    }

    fn is_promoted(&self, ptr: Id) -> bool {
        self.plan
            .ptrs
            .get(&ptr)
            .is_some_and(|(v, _)| self.words.contains_key(v))
    }

    /// The value of type `t` a load through `ptr` reads.
    fn load(&mut self, out: &mut Vec<Inst>, ptr: Id, t: Id, cur: &[Id]) -> Id {
        let (v, off) = self.plan.ptrs[&ptr];
        let w = self.words[&v];
        self.build(out, t, off, w, cur)
    }

    /// Builds the value of type `t` at byte `off` of words `w` (composites member by
    /// member).
    fn build(&mut self, out: &mut Vec<Inst>, t: Id, off: u64, w: Words, cur: &[Id]) -> Id {
        let ty = self.ids.m.ty(t).expect("checked in find").clone();
        // (member type, byte offset) of each part of a composite.
        let parts: Vec<(Id, u64)> = match ty {
            Type::Int { bits } | Type::Float { bits } => {
                return self.build_scalar(out, t, bits, off, w, cur);
            }
            Type::Vector { elem, count } => {
                let s = self.ids.m.layout(elem).expect("checked").size;
                (0..u64::from(count)).map(|k| (elem, off + s * k)).collect()
            }
            Type::Array { elem, len } => {
                let l = self.ids.m.layout(elem).expect("checked");
                let s = l.size.next_multiple_of(l.align.max(1));
                (0..len).map(|k| (elem, off + s * k)).collect()
            }
            Type::Struct { members, .. } => {
                let offs = self.ids.m.member_offsets(t).expect("checked");
                members
                    .iter()
                    .zip(offs)
                    .map(|(mt, mo)| (*mt, off + mo))
                    .collect()
            }
            _ => unreachable!("value_leaves accepts no other type"),
        };
        let ids: Vec<Id> = parts
            .into_iter()
            .map(|(pt, po)| self.build(out, pt, po, w, cur))
            .collect();
        self.emit(out, t, Op::CompositeConstruct(ids))
    }

    /// A scalar of type `t` (`bits` wide) at byte `off` of words `w`.
    fn build_scalar(
        &mut self,
        out: &mut Vec<Inst>,
        t: Id,
        bits: u32,
        off: u64,
        w: Words,
        cur: &[Id],
    ) -> Id {
        let float = matches!(self.ids.m.ty(t), Ok(Type::Float { .. }));
        let first = w.first + (off / w.bytes) as usize;
        if t == w.ty {
            return cur[first];
        }
        if u64::from(bits / 8) == w.bytes {
            return self.emit(out, t, Op::Bitcast(cur[first]));
        }
        // A 64-bit value from two 32-bit words (little-endian).
        let i64t = self.ids.int_type(64);
        let lo = self.emit(out, i64t, conv(ConvOp::UConvert, cur[first]));
        let hi = self.emit(out, i64t, conv(ConvOp::UConvert, cur[first + 1]));
        let c32 = self.int_const(i64t, 32);
        let hs = self.emit(out, i64t, Op::Binary(BinOp::Shl, hi, c32));
        let x = if float { i64t } else { t };
        let j = self.emit(out, x, Op::Binary(BinOp::Or, lo, hs));
        if float {
            self.emit(out, t, Op::Bitcast(j))
        } else {
            j
        }
    }

    /// A store of `value` (type `t`) through `ptr`: the words it covers take its leaves.
    fn store(
        &mut self,
        out: &mut Vec<Inst>,
        ptr: Id,
        value: Id,
        t: Id,
        cur: &mut [Id],
        undo: &mut Vec<(usize, Id)>,
    ) {
        let (v, off) = self.plan.ptrs[&ptr];
        let w = self.words[&v];
        let leaves = value_leaves(self.ids.m, t, off).expect("checked in find");
        let mut set = |word: usize, x: Id, undo: &mut Vec<(usize, Id)>| {
            undo.push((word, cur[word]));
            cur[word] = x;
        };
        for l in leaves {
            let x = if l.path.is_empty() {
                self.resolve(value)
            } else {
                let c = self.resolve(value);
                self.emit(
                    out,
                    l.ty,
                    Op::CompositeExtract {
                        composite: c,
                        indices: l.path.clone(),
                    },
                )
            };
            let word = w.first + (l.off / w.bytes) as usize;
            if l.ty == w.ty {
                set(word, x, undo);
            } else if u64::from(l.bits / 8) == w.bytes {
                let y = self.emit(out, w.ty, Op::Bitcast(x));
                set(word, y, undo);
            } else {
                // A 64-bit leaf into two 32-bit words.
                let i64t = self.ids.int_type(64);
                let xi = if l.float {
                    self.emit(out, i64t, Op::Bitcast(x))
                } else {
                    x
                };
                let lo = self.emit(out, w.ty, conv(ConvOp::UConvert, xi));
                let c32 = self.int_const(i64t, 32);
                let sh = self.emit(out, i64t, Op::Binary(BinOp::LShr, xi, c32));
                let hi = self.emit(out, w.ty, conv(ConvOp::UConvert, sh));
                set(word, lo, undo);
                set(word + 1, hi, undo);
            }
        }
    }

    /// `id` after the load substitutions so far (a stored value may be a loaded one).
    fn resolve(&self, mut id: Id) -> Id {
        while let Some(n) = self.subst.get(&id) {
            id = *n;
        }
        id
    }

    /// Adds the phis, removes the dead and trivial ones, and substitutes loads.
    fn finish(mut self) {
        // Trivial phis (every incoming value the phi itself or one other value).
        let mut changed = true;
        while changed {
            changed = false;
            let phis: Vec<Id> = self.incoming.keys().copied().collect();
            for p in phis {
                let inc = &self.incoming[&p];
                let mut only: Option<Id> = None;
                let mut trivial = true;
                for (v, _) in inc {
                    let v = self.resolve(*v);
                    if v == p || Some(v) == only {
                        continue;
                    }
                    if only.is_some() {
                        trivial = false;
                        break;
                    }
                    only = Some(v);
                }
                if trivial {
                    let to = match only {
                        Some(v) => v,
                        None => self.undef(self.word_ty[self.phi_word[&p]]),
                    };
                    if to != p {
                        self.subst.insert(p, to);
                        self.incoming.remove(&p);
                        changed = true;
                    }
                }
            }
        }
        // Dead phis: live only when a non-phi use or a live phi needs them.
        let mut used: HashSet<Id> = HashSet::new();
        for b in &self.flat.blocks {
            for i in &b.insts {
                crate::analysis::for_each_operand(&i.op, |id| {
                    used.insert(self.resolve(id));
                });
            }
            term_operands(&b.term, |id| {
                used.insert(self.resolve(id));
            });
        }
        let mut live: HashSet<Id> = HashSet::new();
        let mut work: Vec<Id> = self
            .incoming
            .keys()
            .copied()
            .filter(|p| used.contains(p))
            .collect();
        while let Some(p) = work.pop() {
            if !live.insert(p) {
                continue;
            }
            for (v, _) in &self.incoming[&p] {
                let v = self.resolve(*v);
                if self.incoming.contains_key(&v) && !live.contains(&v) {
                    work.push(v);
                }
            }
        }
        for b in 0..self.flat.blocks.len() {
            let mut phis = Vec::new();
            for &(w, id) in &self.phis[b] {
                if !live.contains(&id) {
                    continue;
                }
                let inc: Vec<(Id, Id)> = self.incoming[&id]
                    .iter()
                    .map(|(v, l)| (self.resolve(*v), *l))
                    .collect();
                phis.push(Inst {
                    result: Some(id),
                    ty: Some(self.word_ty[w]),
                    op: Op::Phi(inc),
                    wrap: Default::default(),
                });
            }
            let blk: &mut Block = &mut self.flat.blocks[b];
            blk.insts.splice(0..0, phis);
        }
        // Uses of loads (and of trivial phis) take their replacements.
        let subst = std::mem::take(&mut self.subst);
        let resolve = |mut id: Id| {
            while let Some(n) = subst.get(&id) {
                id = *n;
            }
            id
        };
        self.flat.replace_uses(resolve);
        self.flat.next_id = self.ids.next();
    }
}

/// A plain conversion.
fn conv(op: ConvOp, value: Id) -> Op {
    Op::Convert {
        op,
        value,
        saturate: false,
        rounding: None,
    }
}
