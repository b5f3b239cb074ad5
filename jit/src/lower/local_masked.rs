//! Contiguous `__local` accesses under a partial mask as whole vectors.
//!
//! A contiguous access (`ldata[k][lid]`) by a sub-group whose mask is partial
//! (`if (lid > 0) ...`: lane 0 of sub-group 0 off) normally goes lane by lane over the
//! active lanes (`sparse`), since an inactive lane's address may be anywhere and
//! another thread may own the memory next to the active lanes. `__local` memory is
//! different on both counts: the work-group's `__local` block belongs to the one
//! thread that runs the whole work-group (as `atomic::AtomicMemory::WorkGroupLocal`
//! relies on too), and whether the W lanes' span lies inside that block is one
//! comparison. When it does, a load reads the whole span (the inactive lanes' values
//! are never used) and a store reads the span, blends the active lanes in under the
//! mask and writes it back: the inactive lanes' bytes get the values they had, and no
//! other code runs between the read and the write. A strided access (a struct
//! member, `ldata[k][lid].c01`) whose lanes all lie inside the block likewise runs
//! every lane at its immediate offset with no mask test, a store blending the old
//! values in. Outside the block (a span reaching past either end) the lane-by-lane
//! access runs as before.

use cranelift_codegen::ir::{condcodes::IntCC, InstBuilder, Value};

use super::value::{Elem, Lv};
use super::Tr;
use crate::CompileError;

impl Tr<'_, '_> {
    /// i8: the `bytes` bytes from `addr` lie inside this work-group's `__local` block;
    /// None outside a kernel body (no group environment).
    fn local_span_inside(&mut self, addr: Value, bytes: u64) -> Option<Value> {
        let g = self.genv.as_ref()?;
        let (mem, size) = (g.local_mem, g.local_mem_size);
        // off < size (an address below the block wraps to a huge offset) and
        // off + bytes <= size (no wrap: size is far below 2^63).
        let off = self.b.ins().isub(addr, mem);
        let starts_in = self.b.ins().icmp(IntCC::UnsignedLessThan, off, size);
        let end = self.b.ins().iadd_imm_s(off, bytes as i64);
        let ends_in = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, end, size);
        Some(self.b.ins().band(starts_in, ends_in))
    }

    /// Whether element `e` may take the whole-vector path (bools are stored as bytes
    /// of 0/1, not as their mask lanes).
    fn local_masked_elem(e: Elem) -> bool {
        e != Elem::Bool
    }

    /// The run-time flag that the `n` chunks of element `e` at `base` lie inside the
    /// `__local` block, when element `e` may take the whole-vector path at all.
    fn local_masked_span_inside(&mut self, base: Value, e: Elem, n: usize) -> Option<Value> {
        if Self::local_masked_elem(e) {
            self.local_span_inside(base, 16 * n as u64)
        } else {
            None
        }
    }

    /// Loads the W contiguous lanes of element `e` at `base` (`n` 16-byte chunks of
    /// type `vt`) under a partial mask: whole vectors when the span is inside the
    /// `__local` block, else `lanes` (the lane-by-lane load).
    pub(super) fn local_masked_load(
        &mut self,
        base: Value,
        e: Elem,
        lanes: impl FnOnce(&mut Self) -> Result<Vec<Value>, CompileError>,
    ) -> Result<Vec<Value>, CompileError> {
        let (vt, _) = e.chunk();
        let n = self.nchunks(e);
        let Some(inside) = self.local_masked_span_inside(base, e, n) else {
            return lanes(self);
        };
        let fl = self.mem_flags();
        let tys = vec![vt; n];
        let lanes = |t: &mut Self| t.not_local(lanes);
        self.branch_merge(
            inside,
            &tys,
            |t| {
                Ok((0..n)
                    .map(|c| t.b.ins().load(vt, fl, base, (c * 16) as i32))
                    .collect())
            },
            lanes,
        )
    }

    /// Stores leaf `v` (element `e`) to the W contiguous lanes at `base` for the active
    /// lanes only: read, blend under the mask, write back when the span is inside the
    /// `__local` block, else `lanes` (the lane-by-lane store).
    pub(super) fn local_masked_store(
        &mut self,
        base: Value,
        e: Elem,
        v: &Lv,
        lanes: impl FnOnce(&mut Self) -> Result<(), CompileError>,
    ) -> Result<(), CompileError> {
        let (vt, _) = e.chunk();
        let n = self.nchunks(e);
        let Some(inside) = self.local_masked_span_inside(base, e, n) else {
            return lanes(self);
        };
        let fl = self.mem_flags();
        let v = v.clone();
        self.branch_merge(
            inside,
            &[],
            |t| {
                let old: Vec<Value> = (0..n)
                    .map(|c| t.b.ins().load(vt, fl, base, (c * 16) as i32))
                    .collect();
                let mask = t.mask.clone();
                let new = t.select_vec(e, &mask, &v, &Lv::V(old));
                for (c, x) in t.chunks_of(e, &new).iter().enumerate() {
                    t.b.ins().store(fl, *x, base, (c * 16) as i32);
                }
                Ok(vec![])
            },
            |t| {
                t.not_local(lanes)?;
                Ok(vec![])
            },
        )?;
        Ok(())
    }
}

impl Tr<'_, '_> {
    /// The affine `__local` address `p` of an access of `elems` at `offs` under a
    /// partial mask whose lanes all lie inside the `__local` block: the i8 condition,
    /// or None when the access is not such a one (then it goes lane by lane as usual).
    fn local_lanes_inside(&mut self, p: &Lv, elems: &[Elem], offs: &[u64]) -> Option<Value> {
        let Lv::A(base, stride) = p else { return None };
        if !self.local_access || self.full_state == Some(true) || elems.contains(&Elem::Bool) {
            return None;
        }
        let last = i128::from(*stride) * i128::from(self.w - 1);
        let reach = i128::from(super::per_lane::reach(elems, offs));
        let bytes = u64::try_from(last.abs() + reach).ok()?;
        let low = i64::try_from(last.min(0)).ok()?;
        let start = self.b.ins().iadd_imm_s(*base, low);
        self.local_span_inside(start, bytes)
    }

    /// A per-lane load under a partial mask through affine `__local` address `p` (a
    /// struct member, a strided column): when every lane's address lies inside the
    /// block, each lane loads at its immediate offset with no mask test (the inactive
    /// lanes' values are never used); else `None`, and the caller goes lane by lane.
    pub(super) fn local_lanes_load(
        &mut self,
        p: &Lv,
        elems: &[Elem],
        offs: &[u64],
    ) -> Option<Result<Vec<Lv>, CompileError>> {
        let inside = self.local_lanes_inside(p, elems, offs)?;
        Some(self.local_lanes_load_at(inside, p, elems, offs))
    }

    fn local_lanes_load_at(
        &mut self,
        inside: Value,
        p: &Lv,
        elems: &[Elem],
        offs: &[u64],
    ) -> Result<Vec<Lv>, CompileError> {
        let tys = self.chunk_types(elems);
        let merged = self.branch_merge(
            inside,
            &tys,
            |t| {
                let l = t.all_lanes(|t| t.per_lane_load(p, elems, offs, false))?;
                Ok(t.flat_chunks(&l, elems))
            },
            |t| {
                let l = t.not_local(|t| t.per_lane_load(p, elems, offs, false))?;
                Ok(t.flat_chunks(&l, elems))
            },
        )?;
        Ok(self.leaves_of_chunks(&merged, elems))
    }

    /// A per-lane store under a partial mask through affine `__local` address `p`: when
    /// every lane's address lies inside the block, the lanes' old values are read,
    /// the active lanes' new ones blended in and all lanes written back at their
    /// immediate offsets; else `None`, and the caller goes lane by lane.
    pub(super) fn local_lanes_store(
        &mut self,
        p: &Lv,
        leaves: &[Lv],
        elems: &[Elem],
        offs: &[u64],
    ) -> Option<Result<(), CompileError>> {
        let inside = self.local_lanes_inside(p, elems, offs)?;
        let r = self.branch_merge(
            inside,
            &[],
            |t| {
                let old = t.all_lanes(|t| t.per_lane_load(p, elems, offs, false))?;
                let mask = t.mask.clone();
                let new: Vec<Lv> = leaves
                    .iter()
                    .zip(&old)
                    .zip(elems)
                    .map(|((n, o), e)| t.select_vec(*e, &mask, n, o))
                    .collect();
                t.all_lanes(|t| t.per_lane_store(p, &new, elems, offs))?;
                Ok(vec![])
            },
            |t| {
                t.not_local(|t| t.per_lane_store(p, leaves, elems, offs))?;
                Ok(vec![])
            },
        );
        Some(r.map(|_| ()))
    }

    /// Runs `f` lowering accesses as under a full mask (every lane, no mask test).
    fn all_lanes<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = self.full_state.replace(true);
        let r = f(self);
        self.full_state = saved;
        r
    }

    /// Runs `f` without the `__local` whole-span paths (their lane-by-lane fallback).
    fn not_local<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = std::mem::replace(&mut self.local_access, false);
        let r = f(self);
        self.local_access = saved;
        r
    }
}
