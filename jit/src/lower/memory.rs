//! Memory in the lane model: addresses (access chains), loads, stores, private
//! variables, copies (atomics are in `atomic`).
//!
//! Rules: a uniform address is one scalar access; an affine address whose stride is
//! the element size is contiguous, a vector access when the mask is full; anything
//! else is per-lane, and only active lanes touch memory (inactive lanes hold whatever
//! their guarded-off computation gave, e.g. a negative index). Stores never
//! load-blend-store shared memory: other work-groups write neighbouring elements.
//! Private memory (one copy per lane, lane `l`'s copy at `base + l * size`) is valid
//! for every lane, so per-lane private loads need no branch: inactive lanes read from
//! the start of the private area instead of their own (possibly wild) address.

use cranelift_codegen::ir::{self, condcodes::IntCC, types, InstBuilder, Value};

use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::spirv::{Id, Op, Storage, Type};
use crate::CompileError;

impl Tr<'_, '_> {
    /// Assigns each private variable its offset in the per-lane private area.
    pub fn layout_private(&mut self) -> Result<(), CompileError> {
        let mut off = 0u64;
        let f = self.f;
        for b in &f.blocks {
            for i in &b.insts {
                if let (Op::Variable { .. }, Some(r), Some(ty)) = (&i.op, i.result, i.ty) {
                    let (_, pointee) = self.m.pointee(ty)?;
                    let l = self.m.layout(pointee)?;
                    let a = l.align.max(1);
                    self.private_align = self.private_align.max(a);
                    off = off.next_multiple_of(a);
                    self.private_offsets.insert(r, off);
                    off += l.size.next_multiple_of(a);
                }
            }
        }
        self.private_bytes = off.next_multiple_of(16);
        // W copies live on the worker's stack (or in scratch): keep them sane.
        const MAX_PRIVATE_PER_SUB_GROUP: u64 = 4 << 20;
        if self.private_bytes.saturating_mul(u64::from(self.w)) > MAX_PRIVATE_PER_SUB_GROUP {
            return Err(CompileError::unsupported(format!(
                "kernel {} needs {} bytes of private memory per work-item; at most {} are supported",
                self.f.name,
                self.private_bytes,
                MAX_PRIVATE_PER_SUB_GROUP / u64::from(self.w)
            )));
        }
        Ok(())
    }

    /// Base address of the private area on the stack (for kernels without barriers).
    pub fn private_stack_base(&mut self) -> Value {
        let total = self.private_bytes * u64::from(self.w);
        if total == 0 {
            return self.b.ins().iconst(types::I64, 0);
        }
        if self.private_slot.is_none() {
            let size = u32::try_from(total + self.private_slack()).unwrap_or(u32::MAX);
            self.private_slot = Some(self.b.create_sized_stack_slot(ir::StackSlotData::new(
                ir::StackSlotKind::ExplicitSlot,
                size,
                4,
            )));
        }
        let slot = self.private_slot.expect("created above");
        let raw = self.b.ins().stack_addr(types::I64, slot, 0);
        self.align_private_base(raw)
    }

    /// Bytes reserved in front of the private area so that its base can be aligned
    /// to the strictest private variable (`short16` in a struct: 32; `double16`: 128).
    /// Stack slots and the scratch block's sub-group areas are only 16-aligned.
    pub fn private_slack(&self) -> u64 {
        if self.private_align > 16 {
            self.private_align
        } else {
            0
        }
    }

    /// `raw` rounded up to the private area's alignment (within [`Self::private_slack`]).
    pub fn align_private_base(&mut self, raw: Value) -> Value {
        if self.private_align <= 16 {
            return raw;
        }
        let a = self.private_align as i64;
        let up = self.b.ins().iadd_imm_s(raw, a - 1);
        self.b.ins().band_imm_s(up, -a)
    }

    /// The address of module-scope variable `id`.
    pub fn global_address(&mut self, id: Id) -> Result<Val, CompileError> {
        let g = self
            .m
            .globals
            .get(&id)
            .ok_or_else(|| CompileError::malformed(format!("%{id} is not a variable")))?
            .clone();
        let elems = self.elems(g.ty)?;
        let v = match g.storage {
            Storage::Input => self.b.ins().iconst(types::I64, 0),
            Storage::Workgroup => {
                let off = *self
                    .local_offsets
                    .get(&id)
                    .ok_or_else(|| CompileError::codegen("local variable without an offset"))?;
                let base = self
                    .genv
                    .as_ref()
                    .map(|g| g.local_mem)
                    .ok_or_else(|| CompileError::codegen("group env missing"))?;
                self.b.ins().iadd_imm_s(base, off as i64)
            }
            _ => match self.data_addrs.get(&id) {
                Some(a) => self.b.ins().iconst(types::I64, *a as i64),
                None => {
                    return Err(CompileError::unsupported(format!(
                        "program-scope variable {} in storage {:?}",
                        g.name, g.storage
                    )))
                }
            },
        };
        Ok(Val {
            leaves: vec![Lv::U(v)],
            elems,
        })
    }

    /// `lv * c` for a constant `c`, keeping affine values affine.
    pub fn mul_const(&mut self, e: Elem, lv: &Lv, c: i64) -> Lv {
        if c == 1 {
            return lv.clone();
        }
        match lv {
            Lv::U(x) => Lv::U(self.b.ins().imul_imm_s(*x, c)),
            Lv::A(x, s) => Lv::A(self.b.ins().imul_imm_s(*x, c), s.wrapping_mul(c)),
            Lv::V(ch) => {
                if c > 0 && (c as u64).is_power_of_two() {
                    let sh = self
                        .b
                        .ins()
                        .iconst(types::I32, i64::from(c.trailing_zeros()));
                    Lv::V(ch.iter().map(|v| self.b.ins().ishl(*v, sh)).collect())
                } else {
                    let k = self.b.ins().iconst(e.scalar(), c);
                    let ks = self.b.ins().splat(e.chunk().0, k);
                    Lv::V(ch.iter().map(|v| self.b.ins().imul(*v, ks)).collect())
                }
            }
        }
    }

    /// Index `id` (value `v`) as i64 (indices are signed).
    fn index_i64(&mut self, id: Id, v: &Val) -> Lv {
        let keep = self.fact(id).widens(true);
        self.int_resize_keep(&v.leaves[0], v.elems[0], Elem::I64, true, keep)
    }

    fn const_index(&self, id: Id) -> Option<u64> {
        match self.m.constants.get(&id) {
            Some(crate::spirv::Constant {
                value: crate::spirv::ConstValue::Scalar(v),
                ..
            }) => Some(*v),
            Some(crate::spirv::Constant {
                value: crate::spirv::ConstValue::Null,
                ..
            }) => Some(0),
            _ => None,
        }
    }

    /// OpAccessChain / OpPtrAccessChain.
    pub fn access_chain(
        &mut self,
        res: Id,
        base: Id,
        element: Option<Id>,
        indices: &[Id],
        rty: Id,
    ) -> Result<Val, CompileError> {
        let bty = self.type_of(base)?;
        let (_, t) = self.m.pointee(bty)?;
        // Built-in variables: remember which component is meant.
        let builtin = self
            .m
            .globals
            .get(&base)
            .and_then(|g| g.builtin)
            .or_else(|| self.builtin_ptrs.get(&base).map(|b| b.0));
        if let Some(b) = builtin {
            let comp = indices
                .last()
                .and_then(|i| self.const_index(*i))
                .map(|c| c as u32);
            self.builtin_ptrs.insert(res, (b, comp));
            let elems = self.elems(rty)?;
            let z = self.b.ins().iconst(types::I64, 0);
            return Ok(Val {
                leaves: vec![Lv::U(z)],
                elems,
            });
        }
        let bv = self.get(base)?;
        let addr = self.chain_walk(
            bv.leaves[0].clone(),
            t,
            element,
            indices,
            &mut |tr: &mut Self, id| {
                let iv = tr.get(id)?;
                Ok(tr.index_i64(id, &iv))
            },
        )?;
        let elems = self.elems(rty)?;
        Ok(Val {
            leaves: vec![addr],
            elems,
        })
    }

    /// The address `addr` (of a `t`) offset by an access chain's `element` and
    /// `indices`; `index_of` gives a non-constant index as an i64 leaf.
    pub fn chain_walk(
        &mut self,
        mut addr: Lv,
        mut t: Id,
        element: Option<Id>,
        indices: &[Id],
        index_of: &mut dyn FnMut(&mut Self, Id) -> Result<Lv, CompileError>,
    ) -> Result<Lv, CompileError> {
        if let Some(el) = element {
            let size = self.m.layout(t)?;
            let stride = size.size.next_multiple_of(size.align) as i64;
            addr = self.add_scaled(addr, el, stride, index_of)?;
        }
        for &idx in indices {
            match self.m.ty(t)?.clone() {
                Type::Struct { .. } => {
                    let k = self.const_index(idx).ok_or_else(|| {
                        CompileError::malformed("struct member index is not a constant")
                    })? as usize;
                    let offs = self.m.member_offsets(t)?;
                    let Type::Struct { members, .. } = self.m.ty(t)?.clone() else {
                        unreachable!("matched above")
                    };
                    let off = *offs.get(k).ok_or_else(|| {
                        CompileError::malformed("struct member index out of range")
                    })?;
                    addr = self.add_uniform_const(&addr, off as i64);
                    t = members[k];
                }
                Type::Array { elem, .. } | Type::RuntimeArray { elem } => {
                    let l = self.m.layout(elem)?;
                    let stride = l.size.next_multiple_of(l.align) as i64;
                    addr = self.add_scaled(addr, idx, stride, index_of)?;
                    t = elem;
                }
                Type::Vector { elem, .. } => {
                    let l = self.m.layout(elem)?;
                    addr = self.add_scaled(addr, idx, l.size as i64, index_of)?;
                    t = elem;
                }
                other => {
                    return Err(CompileError::malformed(format!(
                        "access chain index into {other:?}"
                    )));
                }
            }
        }
        Ok(addr)
    }

    fn add_uniform_const(&mut self, a: &Lv, c: i64) -> Lv {
        if c == 0 {
            return a.clone();
        }
        match a {
            Lv::U(x) => Lv::U(self.b.ins().iadd_imm_s(*x, c)),
            Lv::A(x, s) => Lv::A(self.b.ins().iadd_imm_s(*x, c), *s),
            Lv::V(_) => {
                let k = self.b.ins().iconst(types::I64, c);
                self.add_lv(Elem::I64, a, &Lv::U(k))
            }
        }
    }

    fn add_scaled(
        &mut self,
        addr: Lv,
        idx: Id,
        stride: i64,
        index_of: &mut dyn FnMut(&mut Self, Id) -> Result<Lv, CompileError>,
    ) -> Result<Lv, CompileError> {
        if let Some(c) = self.const_index(idx) {
            // Constant indices are sign-extended from their type's width.
            let ty = self.type_of(idx)?;
            let bits = match self.m.ty(ty)? {
                Type::Int { bits } => *bits,
                _ => 64,
            };
            let sh = 64 - bits;
            let c = ((c << sh) as i64) >> sh;
            return Ok(self.add_uniform_const(&addr, c.wrapping_mul(stride)));
        }
        let i = index_of(self, idx)?;
        let scaled = self.mul_const(Elem::I64, &i, stride);
        Ok(self.add_lv(Elem::I64, &addr, &scaled))
    }

    /// Byte offsets of the leaves of type `ty` in memory.
    pub fn leaf_offsets(&self, ty: Id) -> Result<Vec<u64>, CompileError> {
        let mut out = Vec::new();
        self.collect_offsets(ty, 0, &mut out)?;
        Ok(out)
    }

    fn collect_offsets(&self, ty: Id, base: u64, out: &mut Vec<u64>) -> Result<(), CompileError> {
        match self.m.ty(ty)?.clone() {
            Type::Vector { elem, count } => {
                let l = self.m.layout(elem)?;
                for i in 0..u64::from(count) {
                    self.collect_offsets(elem, base + i * l.size, out)?;
                }
            }
            Type::Array { elem, len } => {
                let l = self.m.layout(elem)?;
                let stride = l.size.next_multiple_of(l.align);
                for i in 0..len.min(4096) {
                    self.collect_offsets(elem, base + i * stride, out)?;
                }
            }
            Type::Struct { members, .. } => {
                let offs = self.m.member_offsets(ty)?;
                for (m, o) in members.iter().zip(offs) {
                    self.collect_offsets(*m, base + o, out)?;
                }
            }
            Type::Void => {}
            _ => out.push(base),
        }
        Ok(())
    }

    /// `base + off` (no instruction for 0).
    fn offset_addr(&mut self, base: Value, off: u64) -> Value {
        if off == 0 {
            base
        } else {
            self.b.ins().iadd_imm_s(base, off as i64)
        }
    }

    /// Whether pointer `ptr` points to private memory (valid for every lane): it was
    /// derived from a private variable (see `analysis::provenance`).
    fn is_private(&self, ptr: Id) -> bool {
        self.private_ptrs.contains(&ptr)
    }

    /// Memory flags for accesses through a pointer.
    pub(super) fn mem_flags(&self) -> ir::MemFlagsData {
        ir::MemFlagsData::new().with_notrap()
    }

    /// OpLoad.
    pub fn load(&mut self, ptr: Id, rty: Id, _align: u32) -> Result<Val, CompileError> {
        let elems = self.elems(rty)?;
        // Built-in variables.
        if let Some(b) = self.m.globals.get(&ptr).and_then(|g| g.builtin) {
            let v = self.builtin_value(b)?;
            return self.fit_builtin(v, elems);
        }
        if let Some((b, comp)) = self.builtin_ptrs.get(&ptr).copied() {
            let v = self.builtin_value(b)?;
            let v = match comp {
                Some(c) => vec![v.get(c as usize).cloned().unwrap_or_else(|| v[0].clone())],
                None => v,
            };
            return self.fit_builtin(v, elems);
        }
        let p = self.get(ptr)?.leaves[0].clone();
        let offs = self.leaf_offsets(rty)?;
        let private = self.is_private(ptr);
        self.local_access = self.is_local(ptr);
        let leaves = self.load_hinted(ptr, &p, &elems, &offs, private);
        self.local_access = false;
        Ok(Val {
            leaves: leaves?,
            elems,
        })
    }

    /// Adapts built-in components (i64 or i32) to the loaded type.
    fn fit_builtin(
        &mut self,
        v: Vec<Lv>,
        elems: std::rc::Rc<Vec<Elem>>,
    ) -> Result<Val, CompileError> {
        let mut leaves = Vec::new();
        for (i, e) in elems.iter().enumerate() {
            let l = v
                .get(i)
                .cloned()
                .ok_or_else(|| CompileError::malformed("built-in loaded with a wider type"))?;
            let from = match &l {
                Lv::U(x) | Lv::A(x, _) => {
                    if self.b.func.dfg.value_type(*x) == types::I32 {
                        Elem::I32
                    } else {
                        Elem::I64
                    }
                }
                Lv::V(c) => {
                    if self.b.func.dfg.value_type(c[0]) == types::I32X4 {
                        Elem::I32
                    } else {
                        Elem::I64
                    }
                }
            };
            leaves.push(self.int_resize(&l, from, *e, false));
        }
        Ok(Val { leaves, elems })
    }

    /// Loads leaves `elems` at byte offsets `offs` from pointer leaf `p`.
    pub fn load_leaves(
        &mut self,
        p: &Lv,
        elems: &[Elem],
        offs: &[u64],
        private: bool,
    ) -> Result<Vec<Lv>, CompileError> {
        let fl = self.mem_flags();
        match p {
            Lv::U(a) => {
                let mut out = Vec::new();
                for (e, o) in elems.iter().zip(offs) {
                    let v = self.b.ins().load(e.scalar(), fl, *a, *o as i32);
                    out.push(Lv::U(self.fix_bool_load(*e, v)));
                }
                Ok(out)
            }
            Lv::A(base, stride)
                if elems.len() == 1
                    && *stride == i64::from(elems[0].bytes())
                    && self.w * elems[0].bytes() >= 16 =>
            {
                let e = elems[0];
                let (vt, _) = e.chunk();
                let n = self.nchunks(e);
                let base = self.offset_addr(*base, offs[0]);
                let vec_load = move |t: &mut Self| -> Result<Vec<Value>, CompileError> {
                    Ok((0..n)
                        .map(|c| t.b.ins().load(vt, fl, base, (c * 16) as i32))
                        .collect())
                };
                let tys = vec![vt; n];
                let pl = Lv::A(base, *stride);
                // Private too: an inactive lane's address may be wild (its index was
                // guarded off), so the W-lane access needs every lane active; but a
                // span inside the `__local` block may be read whole.
                let local = self.local_access;
                let v = self.if_full(&tys, vec_load, |t| {
                    let lanes = |t: &mut Self| {
                        let r = t.per_lane_load(&pl, &[e], &[0], private)?;
                        Ok(t.chunks_of(e, &r[0]))
                    };
                    if local {
                        t.local_masked_load(base, e, lanes)
                    } else {
                        lanes(t)
                    }
                })?;
                Ok(vec![Lv::V(v)])
            }
            Lv::A(base, stride)
                if (2..=4).contains(&elems.len())
                    && elems.iter().all(|e| *e == elems[0])
                    && matches!(elems[0], Elem::F32 | Elem::I32)
                    && *stride == if elems.len() == 2 { 8 } else { 16 }
                    && offs.iter().enumerate().all(|(i, o)| *o == 4 * i as u64)
                    && self.w >= 4 =>
            {
                // Arrays of float2/float3/float4: one 16-byte load per lane (two lanes
                // for float2), then a 4x4 transpose into one vector per component.
                let e = elems[0];
                let (vt, _) = e.chunk();
                let ncomp = elems.len();
                let n = self.nchunks(e);
                let base = *base;
                let stride = *stride;
                let fast = move |t: &mut Self| -> Result<Vec<Value>, CompileError> {
                    let mut comps: Vec<Vec<Value>> = vec![Vec::new(); ncomp];
                    for c in 0..n {
                        // Lanes 4c..4c+3.
                        let q: Vec<Value> = if stride == 16 {
                            (0..4)
                                .map(|j| t.b.ins().load(vt, fl, base, ((4 * c + j) * 16) as i32))
                                .collect()
                        } else {
                            let lo = t.b.ins().load(vt, fl, base, (c * 32) as i32);
                            let hi = t.b.ins().load(vt, fl, base, (c * 32 + 16) as i32);
                            let lo2 = t.shuffle32(lo, lo, [2, 3, 0, 1]);
                            let hi2 = t.shuffle32(hi, hi, [2, 3, 0, 1]);
                            vec![lo, lo2, hi, hi2]
                        };
                        let t0 = t.shuffle32(q[0], q[1], [0, 4, 1, 5]);
                        let t1 = t.shuffle32(q[2], q[3], [0, 4, 1, 5]);
                        let t2 = t.shuffle32(q[0], q[1], [2, 6, 3, 7]);
                        let t3 = t.shuffle32(q[2], q[3], [2, 6, 3, 7]);
                        let all = [
                            t.shuffle32(t0, t1, [0, 1, 4, 5]),
                            t.shuffle32(t0, t1, [2, 3, 6, 7]),
                            t.shuffle32(t2, t3, [0, 1, 4, 5]),
                            t.shuffle32(t2, t3, [2, 3, 6, 7]),
                        ];
                        for (k, comp) in comps.iter_mut().enumerate() {
                            comp.push(all[k]);
                        }
                    }
                    Ok(comps.into_iter().flatten().collect())
                };
                self.element_load(p, elems, offs, private, fast)
            }
            Lv::A(base, 16)
                if elems.len() == 2
                    && elems[0] == elems[1]
                    && matches!(elems[0], Elem::F64 | Elem::I64)
                    && offs == [0, 8]
                    && self.w >= 2 =>
            {
                // Arrays of double2 (pyopencl's `cdouble_t`, combined by
                // `analysis::combine`): one 16-byte load per lane, then the low and
                // high halves of two lanes' loads are the components' chunks.
                let e = elems[0];
                let (vt, _) = e.chunk();
                let n = self.nchunks(e);
                let base = *base;
                let fast = move |t: &mut Self| -> Result<Vec<Value>, CompileError> {
                    let mut comps: [Vec<Value>; 2] = [Vec::new(), Vec::new()];
                    for c in 0..n {
                        let a = t.b.ins().load(vt, fl, base, (c * 32) as i32);
                        let b = t.b.ins().load(vt, fl, base, (c * 32 + 16) as i32);
                        comps[0].push(t.shuffle32(a, b, [0, 1, 4, 5]));
                        comps[1].push(t.shuffle32(a, b, [2, 3, 6, 7]));
                    }
                    Ok(comps.into_iter().flatten().collect())
                };
                self.element_load(p, elems, offs, private, fast)
            }
            Lv::V(_)
                if elems.len() == 1
                    && self.w * elems[0].bytes() >= 16
                    && elems[0] != Elem::Bool
                    && !private
                    && !self.huge =>
            {
                // Varying addresses that happen to be contiguous (checked at run time;
                // not in huge kernels, whose per-lane loads stay branch-free).
                let e = elems[0];
                let (vt, _) = e.chunk();
                let n = self.nchunks(e);
                let (contig, base) = self.contiguous_check(p, e, offs[0])?;
                let tys = vec![vt; n];
                let p2 = p.clone();
                let offs2 = offs.to_vec();
                let v = self.if_contiguous(
                    contig,
                    &tys,
                    move |t: &mut Self| {
                        Ok((0..n)
                            .map(|c| t.b.ins().load(vt, fl, base, (c * 16) as i32))
                            .collect())
                    },
                    move |t: &mut Self| t.broadcast_or_per_lane_load(&p2, e, &offs2, base, fl),
                )?;
                Ok(vec![Lv::V(v)])
            }
            _ => self.per_lane_load(p, elems, offs, private),
        }
    }

    /// A store of whole vector elements (`elems`, all of one type): `fast` stores the
    /// components' chunks (`comps[component][chunk]`) when every lane is active;
    /// otherwise lane by lane.
    fn element_store(
        &mut self,
        p: &Lv,
        leaves: &[Lv],
        elems: &[Elem],
        offs: &[u64],
        fast: impl FnOnce(&mut Self, &[Vec<Value>]),
    ) -> Result<(), CompileError> {
        let e = elems[0];
        let comps: Vec<Vec<Value>> = leaves.iter().map(|l| self.chunks_of(e, l)).collect();
        let pl = p.clone();
        let (leaves2, elems2, offs2) = (leaves.to_vec(), elems.to_vec(), offs.to_vec());
        self.if_full(
            &[],
            move |t: &mut Self| {
                fast(t, &comps);
                Ok(vec![])
            },
            move |t: &mut Self| {
                t.per_lane_store(&pl, &leaves2, &elems2, &offs2)?;
                Ok(vec![])
            },
        )?;
        Ok(())
    }

    /// A load of whole vector elements (`elems`, all of one type): `fast` gives the
    /// components' chunks, component by component, when every lane is active;
    /// otherwise lane by lane. One leaf per component.
    fn element_load(
        &mut self,
        p: &Lv,
        elems: &[Elem],
        offs: &[u64],
        private: bool,
        fast: impl FnOnce(&mut Self) -> Result<Vec<Value>, CompileError>,
    ) -> Result<Vec<Lv>, CompileError> {
        let e = elems[0];
        let n = self.nchunks(e);
        let tys = vec![e.chunk().0; n * elems.len()];
        let (pl, elems2, offs2) = (p.clone(), elems.to_vec(), offs.to_vec());
        let v = self.if_full(&tys, fast, move |t| {
            let r = t.per_lane_load(&pl, &elems2, &offs2, private)?;
            let mut out = Vec::new();
            for (l, e) in r.iter().zip(elems2.iter()) {
                out.extend(t.chunks_of(*e, l));
            }
            Ok(out)
        })?;
        Ok(v.chunks(n).map(|c| Lv::V(c.to_vec())).collect())
    }

    pub(super) fn fix_bool_load(&mut self, e: Elem, v: Value) -> Value {
        if e == Elem::Bool {
            self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0)
        } else {
            v
        }
    }

    /// OpStore.
    pub fn store(&mut self, ptr: Id, value: Id, _align: u32) -> Result<(), CompileError> {
        let p = self.get(ptr)?.leaves[0].clone();
        let v = self.get(value)?;
        let vty = self.type_of(value)?;
        let offs = self.leaf_offsets(vty)?;
        let private = self.is_private(ptr);
        self.local_access = self.is_local(ptr);
        let r = self.store_hinted(ptr, &p, &v.leaves, &v.elems, &offs, private);
        self.local_access = false;
        r
    }

    /// Whether pointer `ptr` has the `Workgroup` storage class (`__local`).
    fn is_local(&mut self, ptr: Id) -> bool {
        self.type_of(ptr)
            .ok()
            .and_then(|t| self.m.pointee(t).ok())
            .is_some_and(|(s, _)| s == Storage::Workgroup)
    }

    /// Stores leaves at byte offsets from pointer leaf `p` for the active lanes.
    pub fn store_leaves(
        &mut self,
        p: &Lv,
        leaves: &[Lv],
        elems: &[Elem],
        offs: &[u64],
        private: bool,
    ) -> Result<(), CompileError> {
        let fl = self.mem_flags();
        if let Lv::U(a) = p {
            if leaves.iter().all(Lv::is_uniform) {
                for ((l, e), o) in leaves.iter().zip(elems).zip(offs) {
                    if let Lv::U(x) = l {
                        let x = self.bool_for_store(*e, *x);
                        self.b.ins().store(fl, x, *a, *o as i32);
                    }
                }
                return Ok(());
            }
            if !private && self.last_lane_store_ok(elems) {
                // Every active lane writes the same place: what stays is the last
                // active lane's value (lanes store in order).
                return self.store_last_lane(*a, leaves, elems, offs);
            }
        }
        if let Lv::A(base, stride) = p {
            if elems.len() == 1
                && *stride == i64::from(elems[0].bytes())
                && self.w * elems[0].bytes() >= 16
                && elems[0] != Elem::Bool
            {
                let e = elems[0];
                let base = self.offset_addr(*base, offs[0]);
                let chunks = self.chunks_of(e, &leaves[0]);
                let pl = Lv::A(base, *stride);
                let leaf = leaves[0].clone();
                let local = self.local_access;
                // Private memory too: an inactive lane's address may be wild (its index
                // was guarded off), so a partial mask stores lane by lane (but a span
                // inside the `__local` block is blended whole).
                self.if_full(
                    &[],
                    |t| {
                        for (c, v) in chunks.iter().enumerate() {
                            t.b.ins().store(fl, *v, base, (c * 16) as i32);
                        }
                        Ok(vec![])
                    },
                    |t| {
                        let lanes = |t: &mut Self| {
                            t.per_lane_store(&pl, std::slice::from_ref(&leaf), &[e], &[0])
                        };
                        if local {
                            t.local_masked_store(base, e, &leaf, lanes)?;
                        } else {
                            lanes(t)?;
                        }
                        Ok(vec![])
                    },
                )?;
                return Ok(());
            }
        }
        if let Lv::A(base, stride) = p {
            if (elems.len() == 2 || elems.len() == 4)
                && elems.iter().all(|e| *e == elems[0])
                && matches!(elems[0], Elem::F32 | Elem::I32)
                && *stride == 4 * elems.len() as i64
                && offs.iter().enumerate().all(|(i, o)| *o == 4 * i as u64)
                && self.w >= 4
                && !private
            {
                // float2/float4 array elements: transpose to one vector per lane (pair),
                // 16-byte stores when every lane is active.
                let ncomp = elems.len();
                let base = *base;
                return self.element_store(p, leaves, elems, offs, move |t, comps| {
                    for c in 0..comps[0].len() {
                        let x = comps[0][c];
                        let y = comps[1][c];
                        let (z, w) = if ncomp == 4 {
                            (comps[2][c], comps[3][c])
                        } else {
                            (x, y)
                        };
                        let t0 = t.shuffle32(x, y, [0, 4, 1, 5]);
                        let t1 = t.shuffle32(z, w, [0, 4, 1, 5]);
                        let t2 = t.shuffle32(x, y, [2, 6, 3, 7]);
                        let t3 = t.shuffle32(z, w, [2, 6, 3, 7]);
                        let q = [
                            t.shuffle32(t0, t1, [0, 1, 4, 5]),
                            t.shuffle32(t0, t1, [2, 3, 6, 7]),
                            t.shuffle32(t2, t3, [0, 1, 4, 5]),
                            t.shuffle32(t2, t3, [2, 3, 6, 7]),
                        ];
                        if ncomp == 4 {
                            for (j, v) in q.iter().enumerate() {
                                t.b.ins().store(fl, *v, base, ((4 * c + j) * 16) as i32);
                            }
                        } else {
                            let lo = t.shuffle32(q[0], q[1], [0, 1, 4, 5]);
                            let hi = t.shuffle32(q[2], q[3], [0, 1, 4, 5]);
                            t.b.ins().store(fl, lo, base, (c * 32) as i32);
                            t.b.ins().store(fl, hi, base, (c * 32 + 16) as i32);
                        }
                    }
                });
            }
        }
        if let Lv::A(base, 16) = p {
            if elems.len() == 2
                && elems[0] == elems[1]
                && matches!(elems[0], Elem::F64 | Elem::I64)
                && offs == [0, 8]
                && self.w >= 2
                && !private
            {
                // double2 array elements: two lanes' components interleaved into one
                // 16-byte store per lane when every lane is active.
                let base = *base;
                return self.element_store(p, leaves, elems, offs, move |t, comps| {
                    for c in 0..comps[0].len() {
                        let (x, y) = (comps[0][c], comps[1][c]);
                        let l0 = t.shuffle32(x, y, [0, 1, 4, 5]);
                        let l1 = t.shuffle32(x, y, [2, 3, 6, 7]);
                        t.b.ins().store(fl, l0, base, (c * 32) as i32);
                        t.b.ins().store(fl, l1, base, (c * 32 + 16) as i32);
                    }
                });
            }
        }
        if let Lv::V(_) = p {
            if elems.len() == 1
                && self.w * elems[0].bytes() >= 16
                && elems[0] != Elem::Bool
                && !private
                && !self.huge
            {
                let e = elems[0];
                let (contig, base) = self.contiguous_check(p, e, offs[0])?;
                let chunks = self.chunks_of(e, &leaves[0]);
                let (p2, leaf, offs2) = (p.clone(), leaves[0].clone(), offs.to_vec());
                self.if_contiguous(
                    contig,
                    &[],
                    move |t: &mut Self| {
                        for (c, v) in chunks.iter().enumerate() {
                            t.b.ins().store(fl, *v, base, (c * 16) as i32);
                        }
                        Ok(vec![])
                    },
                    move |t: &mut Self| {
                        t.per_lane_store(&p2, &[leaf], &[e], &offs2)?;
                        Ok(vec![])
                    },
                )?;
                return Ok(());
            }
        }
        self.per_lane_store(p, leaves, elems, offs)
    }

    /// A 32-bit-lane shuffle of two 4-lane vectors (`idx` 0..7 over `a || b`).
    pub fn shuffle32(&mut self, a: Value, b: Value, idx: [u8; 4]) -> Value {
        let ty = self.b.func.dfg.value_type(a);
        let fl = super::value::little();
        let ab = self.b.ins().bitcast(types::I8X16, fl, a);
        let bb = self.b.ins().bitcast(types::I8X16, fl, b);
        let mut mask = [0u8; 16];
        for (j, i) in idx.iter().enumerate() {
            for k in 0..4 {
                mask[4 * j + k] = 4 * i + k as u8;
            }
        }
        let imm = self.b.func.dfg.immediates.push(mask.to_vec().into());
        let r = self.b.ins().shuffle(ab, bb, imm);
        self.b.ins().bitcast(ty, fl, r)
    }

    /// Run-time test that a varying address leaf is `lane0 + l * size(e)` (plus
    /// `off`): returns (i8 "contiguous", base address of lane 0).
    fn contiguous_check(
        &mut self,
        p: &Lv,
        e: Elem,
        off: u64,
    ) -> Result<(Value, Value), CompileError> {
        let Lv::V(ch) = p else {
            return Err(CompileError::codegen(
                "internal: contiguity check of a non-varying address",
            ));
        };
        let a0 = self.b.ins().extractlane(ch[0], 0);
        let want = self.chunks_of(Elem::I64, &Lv::A(a0, i64::from(e.bytes())));
        let mut all: Option<Value> = None;
        for (x, y) in ch.iter().zip(&want) {
            let eq = self.b.ins().icmp(IntCC::Equal, *x, *y);
            all = Some(match all {
                None => eq,
                Some(a) => self.b.ins().band(a, eq),
            });
        }
        let ok = match all {
            Some(a) => self.b.ins().vall_true(a),
            None => self.b.ins().iconst(types::I8, 0),
        };
        let base = self.b.ins().iadd_imm_s(a0, off as i64);
        Ok((ok, base))
    }

    /// A varying-address load of one `e` per lane that is not contiguous: when every
    /// lane is active and reads lane 0's address (`a[row * n + k]` across the lanes of
    /// one row: clang's strength reduction turns it into a pointer every lane holds),
    /// one scalar load at `base` (lane 0's address plus the offset) and a splat;
    /// otherwise one load per lane.
    fn broadcast_or_per_lane_load(
        &mut self,
        p: &Lv,
        e: Elem,
        offs: &[u64],
        base: Value,
        fl: ir::MemFlagsData,
    ) -> Result<Vec<Value>, CompileError> {
        let per_lane = |t: &mut Self| -> Result<Vec<Value>, CompileError> {
            let r = t.per_lane_load(p, &[e], offs, false)?;
            Ok(t.chunks_of(e, &r[0]))
        };
        let (Lv::V(ch), false) = (p, self.full_state == Some(false)) else {
            return per_lane(self);
        };
        let a0 = self.b.ins().extractlane(ch[0], 0);
        let s = self.b.ins().splat(types::I64X2, a0);
        let mut same: Option<Value> = None;
        for x in ch {
            let eq = self.b.ins().icmp(IntCC::Equal, *x, s);
            same = Some(match same {
                None => eq,
                Some(a) => self.b.ins().band(a, eq),
            });
        }
        let Some(same) = same else {
            return per_lane(self);
        };
        let mut cond = self.b.ins().vall_true(same);
        if self.full_state.is_none() {
            let full = self.full_mask();
            cond = self.b.ins().band(full, cond);
        }
        let (vt, _) = e.chunk();
        let n = self.nchunks(e);
        let bb = self.b.create_block();
        let bs = self.b.create_block();
        let join = self.b.create_block();
        for _ in 0..n {
            self.b.append_block_param(join, vt);
        }
        self.b.ins().brif(cond, bb, &[], bs, &[]);
        self.b.switch_to_block(bb);
        let x = self.b.ins().load(e.scalar(), fl, base, 0);
        let v = self.b.ins().splat(vt, x);
        let args: Vec<ir::BlockArg> = (0..n).map(|_| ir::BlockArg::Value(v)).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(bs);
        let vs = per_lane(self)?;
        let args: Vec<ir::BlockArg> = vs.iter().map(|v| ir::BlockArg::Value(*v)).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(join);
        Ok(self.b.block_params(join).to_vec())
    }

    /// `fast` when `contiguous` and the mask is full, `slow` otherwise.
    fn if_contiguous(
        &mut self,
        contiguous: Value,
        tys: &[ir::Type],
        fast: impl FnOnce(&mut Self) -> Result<Vec<Value>, CompileError>,
        slow: impl FnOnce(&mut Self) -> Result<Vec<Value>, CompileError>,
    ) -> Result<Vec<Value>, CompileError> {
        let cond = match self.full_state {
            Some(false) => return slow(self),
            Some(true) => contiguous,
            None => {
                let full = self.full_mask();
                self.b.ins().band(full, contiguous)
            }
        };
        let bf = self.b.create_block();
        let bs = self.b.create_block();
        let join = self.b.create_block();
        for t in tys {
            self.b.append_block_param(join, *t);
        }
        self.b.ins().brif(cond, bf, &[], bs, &[]);
        self.b.switch_to_block(bf);
        let vf = fast(self)?;
        let args: Vec<ir::BlockArg> = vf.iter().map(|v| ir::BlockArg::Value(*v)).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(bs);
        let vs = slow(self)?;
        let args: Vec<ir::BlockArg> = vs.iter().map(|v| ir::BlockArg::Value(*v)).collect();
        self.b.ins().jump(join, &args);
        self.b.switch_to_block(join);
        Ok(self.b.block_params(join).to_vec())
    }

    pub(super) fn bool_for_store(&mut self, e: Elem, x: Value) -> Value {
        if e == Elem::Bool && self.b.func.dfg.value_type(x) != types::I8 {
            self.b.ins().ireduce(types::I8, x)
        } else {
            x
        }
    }

    /// OpVariable (Function storage): records the per-lane address of this lane's
    /// copy (`Stored::Private`: computed where it is used) and stores the initialiser.
    pub fn private_variable(
        &mut self,
        res: Id,
        rty: Id,
        init: Option<Id>,
    ) -> Result<(), CompileError> {
        let off = *self
            .private_offsets
            .get(&res)
            .ok_or_else(|| CompileError::codegen("private variable without an offset"))?;
        let (_, pointee) = self.m.pointee(rty)?;
        let l = self.m.layout(pointee)?;
        let size = l.size.next_multiple_of(l.align.max(1));
        self.vals.insert(
            res,
            super::storage::Stored::Private {
                off: (off * u64::from(self.w)) as i64,
                stride: size as i64,
            },
        );
        if let Some(i) = init {
            let p = self.get_direct(res)?.leaves[0].clone();
            let v = self.get(i)?;
            let offs = self.leaf_offsets(pointee)?;
            let saved = std::mem::take(&mut self.mask);
            let full = self.vconst_bytes(types::I32X4, vec![0xff; 16]);
            self.mask = vec![full; (self.w / 4) as usize];
            let saved_full = self.mask_full.take();
            let saved_state = self.full_state.replace(true);
            let r = self.store_leaves(&p, &v.leaves, &v.elems, &offs, true);
            self.mask = saved;
            self.mask_full = saved_full;
            self.full_state = saved_state;
            r?;
        }
        Ok(())
    }

    /// OpCopyMemory(Sized): bytes, not values. Both pointers uniform: one copy;
    /// lanes adjacent on both sides (each pointer's stride is the size) under a full
    /// mask: one block of W copies; otherwise lane by lane (`per_lane`).
    pub fn copy_memory(&mut self, dst: Id, src: Id, size: Option<Id>) -> Result<(), CompileError> {
        let n = match size {
            None => {
                let t = self.type_of(src)?;
                let (_, pointee) = self.m.pointee(t)?;
                self.m.layout(pointee)?.size
            }
            Some(s) => {
                let n = self.const_index(s).ok_or_else(|| {
                    CompileError::unsupported("OpCopyMemorySized with a non-constant size")
                })?;
                if n > 1 << 16 {
                    return Err(CompileError::unsupported(
                        "OpCopyMemorySized of more than 64 KiB",
                    ));
                }
                n
            }
        };
        let sp = self.get(src)?.leaves[0].clone();
        let dp = self.get(dst)?.leaves[0].clone();
        let sprivate = self.is_private(src);
        let fl = self.mem_flags();
        let copy = |t: &mut Self, s: Value, d: Value, bytes: u64| {
            for (ty, o) in super::per_lane::copy_pieces(bytes) {
                let v = t.b.ins().load(ty, fl, s, o as i32);
                t.b.ins().store(fl, v, d, o as i32);
            }
        };
        if let (Lv::U(s), Lv::U(d)) = (&sp, &dp) {
            copy(self, *s, *d, n);
            return Ok(());
        }
        let block = u64::from(self.w) * n;
        if let (Lv::A(s, ss), Lv::A(d, ds)) = (&sp, &dp) {
            if *ss == n as i64 && *ds == n as i64 && block <= 4096 {
                let (s, d) = (*s, *d);
                let (dp2, sp2) = (dp.clone(), sp.clone());
                self.if_full(
                    &[],
                    |t| {
                        copy(t, s, d, block);
                        Ok(vec![])
                    },
                    |t| {
                        t.copy_lanes(&dp2, &sp2, n, sprivate)?;
                        Ok(vec![])
                    },
                )?;
                return Ok(());
            }
        }
        self.copy_lanes(&dp, &sp, n, sprivate)
    }

    /// A copy of `n` bytes per active lane: branch-free (`per_lane_copy`), else
    /// guarded lane by lane.
    fn copy_lanes(&mut self, dp: &Lv, sp: &Lv, n: u64, sprivate: bool) -> Result<(), CompileError> {
        if self.per_lane_copy(dp, sp, n, sprivate)? {
            return Ok(());
        }
        let fl = self.mem_flags();
        let sa = self.lanes_of(Elem::I64, sp);
        let da = self.lanes_of(Elem::I64, dp);
        let pieces = super::per_lane::copy_pieces(n);
        self.guarded(&[], |t, l| {
            for (ty, o) in &pieces {
                let v = t.b.ins().load(*ty, fl, sa[l], *o as i32);
                t.b.ins().store(fl, v, da[l], *o as i32);
            }
            Ok(vec![])
        })?;
        Ok(())
    }
}
