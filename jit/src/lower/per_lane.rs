//! Per-lane memory accesses: the fallback of every load, store and copy whose lanes
//! are not one vector access (gathers, scatters, partial masks, private arrays
//! indexed per lane, structs copied per work-item).
//!
//! These are most of the code of a big kernel (a 1000-statement kernel is a million
//! Cranelift instructions, most of them per-lane accesses), so they are emitted
//! lean: an affine address is one base with each lane at a constant offset in the
//! instruction's immediate (no address arithmetic per lane); under a partial mask
//! an inactive lane is pointed at a sink (a stack slot nothing reads; private loads
//! at the start of the private area) by one `select` of the base per lane, so there
//! is no branch per lane; loaded lanes of inactive lanes are zeroed with one blend
//! per vector; a copy moves each lane's bytes in 16-byte pieces, never as values.

use cranelift_codegen::ir::{self, types, InstBuilder, Value};

use super::value::{Elem, Lv};
use super::Tr;
use crate::CompileError;

/// Bytes of the sink that inactive lanes of a branch-free per-lane access touch.
pub(super) const SINK_BYTES: u64 = 256;

/// How far past its lane address an access of leaves `elems` at `offs` reaches.
pub(super) fn reach(elems: &[Elem], offs: &[u64]) -> u64 {
    elems
        .iter()
        .zip(offs)
        .map(|(e, o)| o + u64::from(e.bytes()))
        .max()
        .unwrap_or(0)
}

/// The pieces a copy of `n` bytes moves: (type, offset), 16 bytes at a time, then
/// 8, 4, 2 and 1.
pub(super) fn copy_pieces(n: u64) -> Vec<(ir::Type, u64)> {
    let mut out = Vec::new();
    let mut off = 0u64;
    for (ty, size) in [
        (types::I8X16, 16u64),
        (types::I64, 8),
        (types::I32, 4),
        (types::I16, 2),
        (types::I8, 1),
    ] {
        while off + size <= n {
            out.push((ty, off));
            off += size;
        }
    }
    out
}

impl Tr<'_, '_> {
    /// Per-lane addresses of pointer leaf `p` for an access reaching `reach` bytes
    /// past each: per lane (address, extra offset for the instruction's immediate).
    /// Unless every lane is known active, inactive lanes are pointed at the sink, or,
    /// for loads from private memory (`private_load`), at the start of the private
    /// area, which every lane may read (an inactive lane's index may be wild: `if (x <
    /// 4) v = a[x];`). None when an access of a partial mask would reach past the sink.
    pub(super) fn lane_addrs(
        &mut self,
        p: &Lv,
        private_load: bool,
        reach: u64,
    ) -> Result<Option<Vec<(Value, i64)>>, CompileError> {
        let w = self.w as usize;
        // An affine address whose lane offsets fit the immediates.
        let affine = match p {
            Lv::A(base, stride)
                if (0..w as i64).all(|l| {
                    stride
                        .checked_mul(l)
                        .and_then(|d| d.checked_add(reach as i64))
                        .is_some_and(|d| i32::try_from(d).is_ok() && d > i64::from(i32::MIN))
                }) =>
            {
                Some((*base, *stride))
            }
            _ => None,
        };
        if self.full_state == Some(true) {
            return Ok(Some(match affine {
                Some((b, s)) => (0..w).map(|l| (b, s * l as i64)).collect(),
                None => self
                    .lanes_of(Elem::I64, p)
                    .into_iter()
                    .map(|a| (a, 0))
                    .collect(),
            }));
        }
        let (safe, room) = if private_load {
            if let Lv::U(a) = p {
                // Every lane reads the same valid private address.
                return Ok(Some(vec![(*a, 0); w]));
            }
            let base = self
                .sgenv
                .as_ref()
                .map(|s| s.private_base)
                .ok_or_else(|| CompileError::codegen("sub-group env missing"))?;
            (base, self.private_bytes * u64::from(self.w))
        } else {
            if reach > SINK_BYTES {
                return Ok(None);
            }
            (self.sink_addr(), SINK_BYTES)
        };
        let m = self.mask.clone();
        Ok(Some(match affine {
            Some((b, s)) if s >= 0 && (s as u64) * (w as u64 - 1) + reach <= room => (0..w)
                .map(|l| {
                    let act = self.lane_flag(&m, l);
                    (self.b.ins().select(act, b, safe), s * l as i64)
                })
                .collect(),
            _ => {
                let addrs = self.lanes_of(Elem::I64, p);
                addrs
                    .into_iter()
                    .enumerate()
                    .map(|(l, a)| {
                        let act = self.lane_flag(&m, l);
                        (self.b.ins().select(act, a, safe), 0)
                    })
                    .collect()
            }
        }))
    }

    /// The address of the sink slot.
    fn sink_addr(&mut self) -> Value {
        let slot = *self.sink_slot.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(ir::StackSlotData::new(
                ir::StackSlotKind::ExplicitSlot,
                SINK_BYTES as u32,
                4,
            ))
        });
        self.b.ins().stack_addr(types::I64, slot, 0)
    }

    /// Per-lane loads of every leaf, only for active lanes unless `private` (inactive
    /// lanes then read the start of the private area); inactive lanes of non-private
    /// loads get zeros.
    pub(super) fn per_lane_load(
        &mut self,
        p: &Lv,
        elems: &[Elem],
        offs: &[u64],
        private: bool,
    ) -> Result<Vec<Lv>, CompileError> {
        if !private {
            if let Some(r) = self.local_lanes_load(p, elems, offs) {
                return r;
            }
        }
        if !private && self.sparse_ok(elems) {
            return self.sparse_load(p, elems, offs);
        }
        let fl = self.mem_flags();
        let mut per_leaf: Vec<Vec<Value>> = vec![Vec::new(); elems.len()];
        if let Some(lanes) = self.lane_addrs(p, private, reach(elems, offs))? {
            let mut out: Vec<Lv> = if self.huge {
                self.loads_by_chunk(&lanes, elems, offs)
            } else {
                for (a, d) in &lanes {
                    for (k, (e, o)) in elems.iter().zip(offs).enumerate() {
                        let v = self
                            .b
                            .ins()
                            .load(e.scalar(), fl, *a, (*o as i64 + d) as i32);
                        per_leaf[k].push(self.fix_bool_load(*e, v));
                    }
                }
                per_leaf
                    .iter()
                    .zip(elems)
                    .map(|(v, e)| self.pack_lanes(*e, v))
                    .collect()
            };
            if self.full_state != Some(true) && !private {
                // Inactive lanes read the sink: give them zeros.
                let m = self.mask.clone();
                for (lv, e) in out.iter_mut().zip(elems) {
                    let z = self.vconst_bytes(e.chunk().0, vec![0; 16]);
                    let zero = Lv::V(vec![z; self.nchunks(*e)]);
                    *lv = self.select_vec(*e, &m, lv, &zero);
                }
            }
            return Ok(out);
        }
        let tys: Vec<ir::Type> = elems.iter().map(|e| e.scalar()).collect();
        let addrs = self.lanes_of(Elem::I64, p);
        let lanes = self.guarded(&tys, |t, l| {
            let mut vs = Vec::new();
            for (e, o) in elems.iter().zip(offs) {
                let v = t.b.ins().load(e.scalar(), fl, addrs[l], *o as i32);
                vs.push(v);
            }
            Ok(vs)
        })?;
        for lane in lanes {
            for (k, v) in lane.into_iter().enumerate() {
                let v = self.fix_bool_load(elems[k], v);
                per_leaf[k].push(v);
            }
        }
        Ok(per_leaf
            .iter()
            .zip(elems)
            .map(|(v, e)| self.pack_lanes(*e, v))
            .collect())
    }

    /// The loads of [`Self::per_lane_load`] at lane addresses `lanes`, leaf by leaf
    /// and chunk by chunk, each chunk packed right after its lanes are loaded. Huge
    /// kernels: their single-pass allocator gives every value it spills a stack slot
    /// of its own, so the W x leaves scalars of a wide access (512 for a `float16`
    /// at width 32), all live until packed, would grow the frame by kilobytes per
    /// access; packed at once, only the chunks remain.
    fn loads_by_chunk(&mut self, lanes: &[(Value, i64)], elems: &[Elem], offs: &[u64]) -> Vec<Lv> {
        let fl = self.mem_flags();
        let mut out = Vec::with_capacity(elems.len());
        for (e, o) in elems.iter().zip(offs) {
            let lpc = e.chunk().1 as usize;
            let chunks = lanes
                .chunks(lpc)
                .map(|group| {
                    let vals: Vec<Value> = group
                        .iter()
                        .map(|(a, d)| {
                            let v = self
                                .b
                                .ins()
                                .load(e.scalar(), fl, *a, (*o as i64 + d) as i32);
                            self.fix_bool_load(*e, v)
                        })
                        .collect();
                    self.pack_chunk(*e, &vals)
                })
                .collect();
            out.push(Lv::V(chunks));
        }
        out
    }

    /// Per-lane stores of every leaf for the active lanes (inactive lanes write the
    /// sink, or are branched around when the access reaches past it).
    pub(super) fn per_lane_store(
        &mut self,
        p: &Lv,
        leaves: &[Lv],
        elems: &[Elem],
        offs: &[u64],
    ) -> Result<(), CompileError> {
        if let Some(r) = self.local_lanes_store(p, leaves, elems, offs) {
            return r;
        }
        if self.sparse_ok(elems) {
            return self.sparse_store(p, leaves, elems, offs);
        }
        let fl = self.mem_flags();
        if self.huge {
            if let Some(lanes) = self.lane_addrs(p, false, reach(elems, offs))? {
                // Each lane's value extracted just before its store (see
                // `loads_by_chunk`), in the same lane order.
                for (l, (a, d)) in lanes.iter().enumerate() {
                    for ((leaf, e), o) in leaves.iter().zip(elems).zip(offs) {
                        let x = self.lane_of(*e, leaf, l);
                        let x = self.bool_for_store(*e, x);
                        self.b.ins().store(fl, x, *a, (*o as i64 + d) as i32);
                    }
                }
                return Ok(());
            }
        }
        let vals: Vec<Vec<Value>> = leaves
            .iter()
            .zip(elems)
            .map(|(l, e)| {
                let lanes = self.lanes_of(*e, l);
                lanes
                    .into_iter()
                    .map(|x| self.bool_for_store(*e, x))
                    .collect()
            })
            .collect();
        if let Some(lanes) = self.lane_addrs(p, false, reach(elems, offs))? {
            for (l, (a, d)) in lanes.iter().enumerate() {
                for (k, o) in offs.iter().enumerate() {
                    self.b
                        .ins()
                        .store(fl, vals[k][l], *a, (*o as i64 + d) as i32);
                }
            }
            return Ok(());
        }
        let addrs = self.lanes_of(Elem::I64, p);
        self.guarded(&[], |t, l| {
            for (k, o) in offs.iter().enumerate() {
                t.b.ins().store(fl, vals[k][l], addrs[l], *o as i32);
            }
            Ok(vec![])
        })?;
        Ok(())
    }

    /// Copies `n` bytes from `src` to `dst` for each active lane, piece by piece
    /// (no values are assembled); false (nothing emitted) when an access of a
    /// partial mask would reach past the sink.
    pub(super) fn per_lane_copy(
        &mut self,
        dst: &Lv,
        src: &Lv,
        n: u64,
        src_private: bool,
    ) -> Result<bool, CompileError> {
        if self.full_state != Some(true) && n > SINK_BYTES {
            return Ok(false);
        }
        let fl = self.mem_flags();
        let (Some(s), Some(d)) = (
            self.lane_addrs(src, src_private, n)?,
            self.lane_addrs(dst, false, n)?,
        ) else {
            return Ok(false);
        };
        let pieces = copy_pieces(n);
        for ((sa, sd), (da, dd)) in s.iter().zip(&d) {
            for (ty, o) in &pieces {
                let o = *o as i64;
                let v = self.b.ins().load(*ty, fl, *sa, (o + sd) as i32);
                self.b.ins().store(fl, v, *da, (o + dd) as i32);
            }
        }
        Ok(true)
    }

    /// For each active lane `l` runs `f(l)`; returns per lane the values of types
    /// `tys` (zeros for inactive lanes).
    pub fn guarded(
        &mut self,
        tys: &[ir::Type],
        mut f: impl FnMut(&mut Self, usize) -> Result<Vec<Value>, CompileError>,
    ) -> Result<Vec<Vec<Value>>, CompileError> {
        let m = self.mask.clone();
        let mut out = Vec::new();
        if self.full_state == Some(true) {
            // Every lane is active: no guards.
            for l in 0..self.w as usize {
                out.push(f(self, l)?);
            }
            return Ok(out);
        }
        for l in 0..self.w as usize {
            let act = self.lane_active(&m, l);
            let doit = self.b.create_block();
            let join = self.b.create_block();
            let zeros: Vec<ir::BlockArg> = tys
                .iter()
                .map(|t| ir::BlockArg::Value(self.zero_scalar(*t)))
                .collect();
            for t in tys {
                self.b.append_block_param(join, *t);
            }
            self.b.ins().brif(act, doit, &[], join, &zeros);
            // What `f` caches inside the guarded block does not dominate the join.
            let full_before = self.mask_full;
            self.b.switch_to_block(doit);
            let r = f(self, l)?;
            let args: Vec<ir::BlockArg> = r.iter().map(|v| ir::BlockArg::Value(*v)).collect();
            self.b.ins().jump(join, &args);
            self.mask_full = full_before;
            self.b.switch_to_block(join);
            out.push(self.b.block_params(join).to_vec());
        }
        Ok(out)
    }
}
