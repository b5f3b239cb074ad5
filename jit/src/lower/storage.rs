//! Where the value of each SPIR-V id lives while a kernel is lowered (see
//! `analysis::placement`): plain Cranelift values (most ids: SPIR-V is already SSA and
//! the lowering keeps definitions dominating uses), frontend variables (ids used
//! outside the skip region of their block in a masked body, and the ids a duplicated
//! block defines in both copies when they are variables), or a home slot in memory
//! (ids used across a barrier: written where defined, read where used; in a huge
//! kernel without barriers, every id used outside its block, homed in the frame).
//!
//! Plain values cost the frontend nothing; a variable costs a lookup through every
//! block between definition and use, which is why only the few ids that need one get
//! one.

use cranelift_codegen::ir::{self, InstBuilder, Value};

use super::value::{Elem, Lv, Val};
use super::{Slot, Tr};
use crate::spirv::Id;
use crate::CompileError;

/// The storage of one id's value.
#[derive(Clone, Debug)]
pub(crate) enum Stored {
    /// The leaves as Cranelift values (the definition dominates every use).
    Direct(Vec<Lv>),
    /// One frontend variable per leaf (or per chunk of a varying leaf).
    Vars(Vec<Slot>),
    /// In the home area: each leaf's shape and byte offset.
    Home(Vec<(HomeLeaf, u64)>),
    /// Recomputed in each Cranelift block that reads it (`barrier_remat`).
    Remat,
    /// A private variable: an affine address, the sub-group's private base plus
    /// `off`, lane stride `stride`, computed again where it is used. Variables are
    /// all declared in the entry block; addresses computed there would all be live
    /// from the start of the body to their last use (a thousand private arrays:
    /// a thousand values live across every block, quadratic register allocation).
    Private { off: i64, stride: i64 },
}

impl Stored {
    /// Whether the value is one varying leaf.
    pub fn is_one_varying_leaf(&self) -> bool {
        match self {
            Stored::Direct(l) => matches!(l.as_slice(), [Lv::V(_)]),
            Stored::Vars(s) => matches!(s.as_slice(), [Slot::V(_)]),
            Stored::Home(h) => matches!(h.as_slice(), [(HomeLeaf::V, _)]),
            Stored::Private { .. } | Stored::Remat => false,
        }
    }
}

/// The shape of a leaf kept in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HomeLeaf {
    /// One scalar for the sub-group.
    U,
    /// The base of an affine value with this stride.
    A(i64),
    /// Every lane (the element's chunks).
    V,
}

impl Tr<'_, '_> {
    /// Records the value of `id`.
    pub fn define(&mut self, id: Id, v: Val) {
        let dup_copy = self.dup_second && self.dup_defs.as_ref().is_some_and(|d| d.contains(&id));
        if !self.dup_second {
            if let Some(d) = self.dup_defs.as_mut() {
                d.insert(id);
            }
        }
        if self.debug_shapes {
            let kinds: String = v
                .leaves
                .iter()
                .map(|l| match l {
                    Lv::U(_) => "U".to_string(),
                    Lv::A(_, s) => format!("A{s}"),
                    Lv::V(_) => "V".to_string(),
                })
                .collect::<Vec<_>>()
                .join(",");
            eprintln!("; %{id} ({}) = [{kinds}]", self.m.name_of(id));
        }
        if self.remat.contains(&id) {
            self.vals.insert(id, Stored::Remat);
            self.cache_in_block(id, v.leaves);
            return;
        }
        if let Some(&off) = self.home_offsets.get(&id) {
            self.define_home(id, v, off, dup_copy);
            return;
        }
        if self.masked_body && self.placement.in_vars.contains(&id) {
            if dup_copy {
                if let Some(Stored::Vars(slots)) = self.vals.get(&id).cloned() {
                    if self.define_into(&slots, &v) {
                        return;
                    }
                    self.dup_conflict = true;
                }
            }
            self.define_vars(id, v);
            return;
        }
        // Plain values; the second copy of a duplicated block hands its values to the
        // join in the first copy's shapes (`carry_values`).
        self.vals.insert(id, Stored::Direct(v.leaves));
    }

    /// Defines `id` as frontend variables holding `v`.
    fn define_vars(&mut self, id: Id, v: Val) {
        let mut slots = Vec::with_capacity(v.leaves.len());
        for (lv, e) in v.leaves.iter().zip(v.elems.iter()) {
            slots.push(match lv {
                Lv::U(x) => {
                    let var = self.b.declare_var(self.b.func.dfg.value_type(*x));
                    self.b.def_var(var, *x);
                    Slot::U(var)
                }
                Lv::A(x, s) => {
                    let var = self.b.declare_var(self.b.func.dfg.value_type(*x));
                    self.b.def_var(var, *x);
                    Slot::A(var, *s)
                }
                Lv::V(chunks) => {
                    let (ty, _) = e.chunk();
                    let vars = chunks
                        .iter()
                        .map(|c| {
                            let var = self.b.declare_var(ty);
                            self.b.def_var(var, *c);
                            var
                        })
                        .collect();
                    Slot::V(vars)
                }
            });
        }
        self.vals.insert(id, Stored::Vars(slots));
    }

    /// Writes `v` into existing slots (coercing uniform/affine values to vectors where
    /// the slot is varying); false if the shapes cannot match.
    fn define_into(&mut self, slots: &[Slot], v: &Val) -> bool {
        if slots.len() != v.leaves.len() {
            return false;
        }
        // Check first, then write.
        for (s, l) in slots.iter().zip(&v.leaves) {
            let ok = match (s, l) {
                (Slot::U(_), Lv::U(_)) | (Slot::V(_), _) => true,
                (Slot::A(_, a), Lv::A(_, b)) => a == b,
                _ => false,
            };
            if !ok {
                return false;
            }
        }
        for ((s, l), e) in slots.iter().zip(&v.leaves).zip(v.elems.iter()) {
            match (s, l) {
                (Slot::U(var), Lv::U(x)) | (Slot::A(var, _), Lv::A(x, _)) => {
                    self.b.def_var(*var, *x)
                }
                (Slot::V(vars), l) => {
                    let ch = self.chunks_of(*e, l);
                    for (var, c) in vars.iter().zip(ch) {
                        self.b.def_var(*var, c);
                    }
                }
                _ => {}
            }
        }
        true
    }

    /// Stores `v` in `id`'s home at byte offset `off` of the home area. The second
    /// copy of a duplicated block stores in the first copy's shapes.
    fn define_home(&mut self, id: Id, v: Val, off: u64, dup_copy: bool) {
        let shapes: Vec<HomeLeaf> = match (&self.vals.get(&id), dup_copy) {
            (Some(Stored::Home(old)), true) => old.iter().map(|(s, _)| *s).collect(),
            _ => v
                .leaves
                .iter()
                .map(|l| match l {
                    Lv::U(_) => HomeLeaf::U,
                    Lv::A(_, s) => HomeLeaf::A(*s),
                    Lv::V(_) => HomeLeaf::V,
                })
                .collect(),
        };
        let Some(base) = self.home_base() else {
            self.dup_conflict = true;
            return;
        };
        let fl = ir::MemFlagsData::trusted();
        let mut layout = Vec::with_capacity(shapes.len());
        let mut at = off;
        for ((shape, lv), e) in shapes.iter().zip(&v.leaves).zip(v.elems.iter()) {
            let slot = self.nchunks(*e) as u64 * 16;
            match (shape, lv) {
                (HomeLeaf::U, Lv::U(x)) => {
                    self.b.ins().store(fl, *x, base, at as i32);
                }
                (HomeLeaf::A(s), Lv::A(x, t)) if s == t => {
                    self.b.ins().store(fl, *x, base, at as i32);
                }
                (HomeLeaf::V, lv) => {
                    for (c, ch) in self.chunks_of(*e, lv).into_iter().enumerate() {
                        self.b
                            .ins()
                            .store(fl, ch, base, (at + 16 * c as u64) as i32);
                    }
                }
                _ => self.dup_conflict = true,
            }
            layout.push((*shape, at));
            at += slot;
        }
        self.block_cache.remove(&id);
        self.vals.insert(id, Stored::Home(layout));
    }

    /// The address of the home area of the current sub-group.
    fn home_base(&mut self) -> Option<Value> {
        if let Some(slot) = self.home_slot {
            return Some(self.b.ins().stack_addr(ir::types::I64, slot, 0));
        }
        let c = self.bctx.as_ref()?;
        let (base, off) = (c.sg_base, self.home_area_offset());
        Some(self.b.ins().iadd_imm_s(base, off as i64))
    }

    /// Gives every value that lives in memory its slot in the home area.
    pub(crate) fn layout_homes(&mut self) -> Result<(), CompileError> {
        self.plan_barrier_remat();
        let mut ids: Vec<Id> = self.placement.homed.iter().copied().collect();
        ids.sort_unstable();
        let mut off = 0u64;
        for id in ids {
            if self.private_offsets.contains_key(&id) || self.remat.contains(&id) {
                // Private variables' addresses are computed where used (`Stored::Private`),
                // recomputed values in each block that reads them.
                continue;
            }
            let ty = self.type_of(id)?;
            let bytes = self.home_bytes(ty)?;
            self.home_offsets.insert(id, off);
            off += bytes;
        }
        if self.regions.points.is_empty() && off > 0 {
            // No barriers: one sub-group runs to the end before the next starts, so
            // the homes can be in the frame.
            let size = u32::try_from(off).map_err(|_| {
                CompileError::out_of_resources("the values of the kernel are too large")
            })?;
            self.home_slot = Some(self.b.create_sized_stack_slot(ir::StackSlotData::new(
                ir::StackSlotKind::ExplicitSlot,
                size,
                4,
            )));
        } else {
            self.home_bytes = off;
        }
        Ok(())
    }

    /// Bytes of the home slot of a value of type `ty`.
    pub(crate) fn home_bytes(&mut self, ty: Id) -> Result<u64, CompileError> {
        let elems = self.elems(ty)?;
        Ok(elems.iter().map(|e| self.nchunks(*e) as u64 * 16).sum())
    }

    /// The value of `id` as seen from the block being lowered: outside the loop that
    /// defines it, each lane's own value from the iteration it left in (a live-out
    /// accumulator when lanes leave at different times, the header phi the latch
    /// passes it to when they leave together: `BodyState::via_header`).
    pub fn get(&mut self, id: Id) -> Result<Val, CompileError> {
        if !self.deferred_loads.is_empty() {
            self.flush_deferred(id)?;
        }
        if let (Some(cb), Some(st)) = (self.cur_block, self.body_state.as_ref()) {
            if let Some(&(l, phi)) = st.via_header.get(&id) {
                if !self.cfg.in_loop(l, cb) {
                    let ty = self.type_of(id)?;
                    let elems = self.elems(ty)?;
                    let leaves = self.read_phi_acc(phi);
                    return Ok(self.lane_view(Val { leaves, elems }));
                }
            } else if let Some((l, accs, elems)) = st.liveout.get(&id) {
                if !self.cfg.in_loop(*l, cb) {
                    let (accs, elems) = (accs.clone(), elems.clone());
                    let leaves = accs
                        .iter()
                        .map(|cells| Lv::V(cells.iter().map(|c| self.read_cell(*c)).collect()))
                        .collect();
                    return Ok(self.lane_view(Val { leaves, elems }));
                }
            }
        }
        let v = self.get_direct(id)?;
        Ok(self.lane_view(v))
    }

    /// `v` as the block being lowered sees it: in a single-lane block, that lane's
    /// scalars (`single_lane`).
    fn lane_view(&mut self, v: Val) -> Val {
        match self.single_lane {
            Some(lane) => self.single_lane_view(lane, v),
            None => v,
        }
    }

    /// The value of `id` (constant, or defined earlier) where it was defined.
    pub fn get_direct(&mut self, id: Id) -> Result<Val, CompileError> {
        let stored = match self.vals.get(&id) {
            Some(s) => s.clone(),
            None => {
                if self.m.constants.contains_key(&id) {
                    return self.constant(id);
                }
                if self.m.globals.contains_key(&id) {
                    return self.global_address(id);
                }
                return Err(CompileError::malformed(format!(
                    "%{id} is used before it is defined in kernel {}",
                    self.f.name
                )));
            }
        };
        let ty = self.type_of(id)?;
        let elems = self.elems(ty)?;
        let leaves = match stored {
            Stored::Direct(leaves) => leaves,
            Stored::Vars(slots) => slots
                .iter()
                .map(|s| match s {
                    Slot::U(v) => Lv::U(self.b.use_var(*v)),
                    Slot::A(v, st) => Lv::A(self.b.use_var(*v), *st),
                    Slot::V(vs) => Lv::V(vs.iter().map(|v| self.b.use_var(*v)).collect()),
                })
                .collect(),
            Stored::Home(layout) => self.load_home(id, &layout, &elems)?,
            Stored::Remat => self.rematerialize(id)?,
            Stored::Private { off, stride } => {
                let base = self
                    .sgenv
                    .as_ref()
                    .map(|s| s.private_base)
                    .ok_or_else(|| CompileError::codegen("sub-group env missing"))?;
                vec![Lv::A(self.b.ins().iadd_imm_s(base, off), stride)]
            }
        };
        Ok(Val { leaves, elems })
    }

    /// `id`'s leaves read or recomputed earlier in the current Cranelift block.
    pub(super) fn cached_in_block(&self, id: Id) -> Option<Vec<Lv>> {
        let here = self.b.current_block()?;
        match self.block_cache.get(&id) {
            Some((blk, leaves)) if *blk == here => Some(leaves.clone()),
            _ => None,
        }
    }

    /// Records `id`'s leaves in the current Cranelift block, for its later reads there.
    pub(super) fn cache_in_block(&mut self, id: Id, leaves: Vec<Lv>) {
        if let Some(blk) = self.b.current_block() {
            self.block_cache.insert(id, (blk, leaves));
        }
    }

    /// Reads `id` from its home (once per Cranelift block).
    fn load_home(
        &mut self,
        id: Id,
        layout: &[(HomeLeaf, u64)],
        elems: &[Elem],
    ) -> Result<Vec<Lv>, CompileError> {
        if let Some(leaves) = self.cached_in_block(id) {
            return Ok(leaves);
        }
        let base = self.home_base().ok_or_else(|| {
            CompileError::codegen("internal: a value in memory outside a barrier body")
        })?;
        let fl = ir::MemFlagsData::trusted();
        let mut leaves = Vec::with_capacity(layout.len());
        for ((shape, off), e) in layout.iter().zip(elems) {
            leaves.push(match shape {
                HomeLeaf::U => Lv::U(self.b.ins().load(e.scalar(), fl, base, *off as i32)),
                HomeLeaf::A(s) => Lv::A(self.b.ins().load(e.scalar(), fl, base, *off as i32), *s),
                HomeLeaf::V => {
                    let (ct, _) = e.chunk();
                    Lv::V(
                        (0..self.nchunks(*e))
                            .map(|c| {
                                self.b
                                    .ins()
                                    .load(ct, fl, base, (*off + 16 * c as u64) as i32)
                            })
                            .collect(),
                    )
                }
            });
        }
        self.cache_in_block(id, leaves.clone());
        Ok(leaves)
    }

    /// The plain values among `ids`, as (id, leaves) of their current definition.
    pub(crate) fn direct_leaves(&self, ids: &[Id]) -> Vec<(Id, Vec<Lv>)> {
        ids.iter()
            .filter_map(|id| match self.vals.get(id) {
                Some(Stored::Direct(l)) => Some((*id, l.clone())),
                _ => None,
            })
            .collect()
    }

    /// The Cranelift values that carry `id`'s current leaves to a join, coerced to
    /// `shape` (the first copy's leaves); None when the shapes cannot match.
    pub(crate) fn carry_values(
        &mut self,
        id: Id,
        shape: &[Lv],
    ) -> Result<Option<Vec<Value>>, CompileError> {
        let v = self.get_direct(id)?;
        let mut out = Vec::new();
        for ((want, have), e) in shape.iter().zip(&v.leaves).zip(v.elems.iter()) {
            match (want, have) {
                (Lv::U(_), Lv::U(x)) => out.push(*x),
                (Lv::A(_, s), Lv::A(x, t)) if s == t => out.push(*x),
                (Lv::V(_), have) => out.extend(self.chunks_of(*e, have)),
                _ => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// Defines `id` from the join's parameters `params` (consumed from the front) in
    /// the leaf shapes `shape`.
    pub(crate) fn define_carried(&mut self, id: Id, shape: &[Lv], params: &mut &[Value]) {
        let mut take = |k: usize| {
            let (a, b) = params.split_at(k.min(params.len()));
            *params = b;
            a.to_vec()
        };
        let leaves = shape
            .iter()
            .map(|l| match l {
                Lv::U(_) => Lv::U(take(1)[0]),
                Lv::A(_, s) => Lv::A(take(1)[0], *s),
                Lv::V(ch) => Lv::V(take(ch.len())),
            })
            .collect();
        self.vals.insert(id, Stored::Direct(leaves));
    }
}
