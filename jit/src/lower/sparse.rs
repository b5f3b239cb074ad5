//! Per-lane loads and stores under a partial mask that touch only the active lanes.
//!
//! The branch-free per-lane access (`memory::sink_addrs`) costs the same for every
//! lane, active or not: extract the address, select the sink for inactive lanes,
//! access. Boundary code (`if (lx == 0) tile[..][0] = in[..]`, one lane of eight)
//! pays eight times for one access. Here the addresses and values go to a stack slot
//! as whole vectors and a loop over the set bits of the mask (lowest first: lane
//! order, as the lane-by-lane code) does the accesses of the active lanes only.

use cranelift_codegen::ir::{self, condcodes::IntCC, types, InstBuilder, Value};

use super::value::{Elem, Lv};
use super::Tr;
use crate::CompileError;

/// Leaves of one access the active-lane loop handles at most (a float4).
const MAX_LEAVES: usize = 4;

impl Tr<'_, '_> {
    /// Whether a per-lane access of these leaves may take the active-lane loop:
    /// not under a known full mask, not in a huge kernel (its blocks would cost the
    /// single-pass allocator every live value each), leaves that live in vectors as
    /// they do in memory.
    pub(super) fn sparse_ok(&self, elems: &[Elem]) -> bool {
        self.full_state != Some(true)
            && !self.huge
            && !elems.is_empty()
            && elems.len() <= MAX_LEAVES
            && elems.iter().all(|e| *e != Elem::Bool)
    }

    /// The address of the kernel's one scratch slot for these loops: W 8-byte
    /// addresses, then one W-lane area per leaf. One slot, so one address: Cranelift
    /// hoists every distinct stack address out of loops, where they would crowd the
    /// registers of the whole sub-group loop.
    fn sparse_area(&mut self) -> Value {
        let lane_bytes = 8 * self.w;
        let slot = *self.sparse_slot.get_or_insert_with(|| {
            self.b.create_sized_stack_slot(ir::StackSlotData::new(
                ir::StackSlotKind::ExplicitSlot,
                lane_bytes * (1 + MAX_LEAVES as u32),
                4,
            ))
        });
        self.b.ins().stack_addr(types::I64, slot, 0)
    }

    /// Stores the chunks of `lv` (element `e`) at `area + at`.
    fn spill_lanes(&mut self, e: Elem, lv: &Lv, area: Value, at: u32) {
        let fl = ir::MemFlagsData::trusted();
        for (c, v) in self.chunks_of(e, lv).iter().enumerate() {
            self.b
                .ins()
                .store(fl, *v, area, (at + 16 * c as u32) as i32);
        }
    }

    /// Byte offset of leaf `k`'s lanes in the scratch area.
    fn leaf_area(&self, k: usize) -> u32 {
        8 * self.w * (1 + k as u32)
    }

    /// `area + at + lane * bytes`.
    fn lane_addr(&mut self, area: Value, at: u32, lane: Value, bytes: u32) -> Value {
        let off = self.b.ins().imul_imm_s(lane, i64::from(bytes));
        let p = self.b.ins().iadd(area, off);
        self.b.ins().iadd_imm_s(p, i64::from(at))
    }
    /// Runs `f(lane)` (lane: i64) for each set lane of the current mask, in lane order.
    fn for_active_lanes(
        &mut self,
        mut f: impl FnMut(&mut Self, Value) -> Result<(), CompileError>,
    ) -> Result<(), CompileError> {
        let m = self.mask.clone();
        let bits = self.mask_bits(&m);
        let [head, body, exit] = [(); 3].map(|_| self.b.create_block());
        self.b.append_block_param(head, types::I32);
        self.b.ins().jump(head, &[ir::BlockArg::Value(bits)]);
        self.b.switch_to_block(head);
        let bits = self.b.block_params(head)[0];
        let done = self.b.ins().icmp_imm_s(IntCC::Equal, bits, 0);
        self.b.ins().brif(done, exit, &[], body, &[]);
        self.b.switch_to_block(body);
        self.b.seal_block(body);
        let lane = self.b.ins().ctz(bits);
        let lane = self.b.ins().uextend(types::I64, lane);
        let full_before = self.mask_full;
        f(self, lane)?;
        self.mask_full = full_before;
        let less = self.b.ins().iadd_imm_s(bits, -1);
        let rest = self.b.ins().band(bits, less);
        self.b.ins().jump(head, &[ir::BlockArg::Value(rest)]);
        self.b.seal_block(head);
        self.b.switch_to_block(exit);
        self.b.seal_block(exit);
        Ok(())
    }

    /// The loads of [`super::memory`]'s per-lane path for the active lanes only
    /// (inactive lanes get zeros).
    ///
    /// One active lane (boundary code: `if (lx == 0) ... = in[..]`) loads its scalar
    /// and masks a splat of it. Two or more go through the stack slot: each lane's
    /// scalar stored in its place, the vectors read back once the loop is done. A
    /// vector load that overlaps earlier narrow stores cannot take its data from the
    /// store buffer and waits until they retire (some 15 cycles), which the one-lane
    /// path, the common case, avoids.
    pub(super) fn sparse_load(
        &mut self,
        p: &Lv,
        elems: &[Elem],
        offs: &[u64],
    ) -> Result<Vec<Lv>, CompileError> {
        let fl = self.mem_flags();
        let tfl = ir::MemFlagsData::trusted();
        let area = self.sparse_area();
        self.spill_lanes(Elem::I64, p, area, 0);
        let m = self.mask.clone();
        let bits = self.mask_bits(&m);
        let count = self.b.ins().popcnt(bits);
        let one = self.b.ins().icmp_imm_s(IntCC::Equal, count, 1);
        let [single, several, join] = [(); 3].map(|_| self.b.create_block());
        let mut tys = Vec::new();
        for e in elems {
            let (ty, _) = e.chunk();
            for _ in 0..self.nchunks(*e) {
                self.b.append_block_param(join, ty);
                tys.push(ty);
            }
        }
        self.b.ins().brif(one, single, &[], several, &[]);

        self.b.switch_to_block(single);
        self.b.seal_block(single);
        let lane = self.b.ins().ctz(bits);
        let lane = self.b.ins().uextend(types::I64, lane);
        let a_at = self.lane_addr(area, 0, lane, 8);
        let a = self.b.ins().load(types::I64, tfl, a_at, 0);
        let mut args = Vec::new();
        for (e, o) in elems.iter().zip(offs) {
            let v = self.b.ins().load(e.scalar(), fl, a, *o as i32);
            let (ty, _) = e.chunk();
            let s = self.b.ins().splat(ty, v);
            let z = self.vconst_bytes(ty, vec![0; 16]);
            let n = self.nchunks(*e);
            let r = self.select_vec(*e, &m, &Lv::V(vec![s; n]), &Lv::V(vec![z; n]));
            args.extend(self.chunks_of(*e, &r).into_iter().map(ir::BlockArg::Value));
        }
        self.b.ins().jump(join, &args);

        self.b.switch_to_block(several);
        self.b.seal_block(several);
        for (k, e) in elems.iter().enumerate() {
            let (ty, _) = e.chunk();
            let z = Lv::V(vec![self.vconst_bytes(ty, vec![0; 16]); self.nchunks(*e)]);
            let at = self.leaf_area(k);
            self.spill_lanes(*e, &z, area, at);
        }
        self.for_active_lanes(|t, lane| {
            let a_at = t.lane_addr(area, 0, lane, 8);
            let a = t.b.ins().load(types::I64, tfl, a_at, 0);
            for (k, (e, o)) in elems.iter().zip(offs).enumerate() {
                let v = t.b.ins().load(e.scalar(), fl, a, *o as i32);
                let at = t.leaf_area(k);
                let to = t.lane_addr(area, at, lane, e.bytes());
                t.b.ins().store(tfl, v, to, 0);
            }
            Ok(())
        })?;
        let mut args = Vec::new();
        for (k, e) in elems.iter().enumerate() {
            let (ty, _) = e.chunk();
            let at = self.leaf_area(k);
            for c in 0..self.nchunks(*e) {
                let v = self
                    .b
                    .ins()
                    .load(ty, tfl, area, (at + 16 * c as u32) as i32);
                args.push(ir::BlockArg::Value(v));
            }
        }
        self.b.ins().jump(join, &args);

        self.b.switch_to_block(join);
        self.b.seal_block(join);
        let out = self.b.block_params(join).to_vec();
        debug_assert_eq!(out.len(), tys.len());
        let mut k0 = 0;
        Ok(elems
            .iter()
            .map(|e| {
                let n = self.nchunks(*e);
                let lv = Lv::V(out[k0..k0 + n].to_vec());
                k0 += n;
                lv
            })
            .collect())
    }

    /// Whether [`Self::store_last_lane`] takes these leaves.
    pub(super) fn last_lane_store_ok(&self, elems: &[Elem]) -> bool {
        !elems.is_empty() && elems.len() <= MAX_LEAVES && elems.iter().all(|e| *e != Elem::Bool)
    }

    /// A store of varying leaves to one address `a` for all active lanes: only the
    /// last active lane's values (the ones left after the lanes' stores in order).
    pub(super) fn store_last_lane(
        &mut self,
        a: Value,
        leaves: &[Lv],
        elems: &[Elem],
        offs: &[u64],
    ) -> Result<(), CompileError> {
        let fl = self.mem_flags();
        if self.full_state == Some(true) {
            let last = self.w as usize - 1;
            for ((l, e), o) in leaves.iter().zip(elems).zip(offs) {
                let x = match l {
                    Lv::U(x) => *x,
                    _ => {
                        let (_, lpc) = e.chunk();
                        let ch = self.chunks_of(*e, l);
                        let c = ch[last / lpc as usize];
                        self.lane_scalar(c, (last % lpc as usize) as u8)
                    }
                };
                self.b.ins().store(fl, x, a, *o as i32);
            }
            return Ok(());
        }
        let tfl = ir::MemFlagsData::trusted();
        let area = self.sparse_area();
        for (k, (l, e)) in leaves.iter().zip(elems).enumerate() {
            let at = self.leaf_area(k);
            self.spill_lanes(*e, l, area, at);
        }
        let m = self.mask.clone();
        let bits = self.mask_bits(&m);
        let [store, done] = [(); 2].map(|_| self.b.create_block());
        self.b.ins().brif(bits, store, &[], done, &[]);
        self.b.switch_to_block(store);
        self.b.seal_block(store);
        let lz = self.b.ins().clz(bits);
        let c31 = self.b.ins().iconst(types::I32, 31);
        let lane = self.b.ins().isub(c31, lz);
        let lane = self.b.ins().uextend(types::I64, lane);
        for (k, (e, o)) in elems.iter().zip(offs).enumerate() {
            let at = self.leaf_area(k);
            let from = self.lane_addr(area, at, lane, e.bytes());
            let v = self.b.ins().load(e.scalar(), tfl, from, 0);
            self.b.ins().store(fl, v, a, *o as i32);
        }
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        self.b.seal_block(done);
        Ok(())
    }

    /// The stores of [`super::memory`]'s per-lane path for the active lanes only.
    pub(super) fn sparse_store(
        &mut self,
        p: &Lv,
        leaves: &[Lv],
        elems: &[Elem],
        offs: &[u64],
    ) -> Result<(), CompileError> {
        let fl = self.mem_flags();
        let tfl = ir::MemFlagsData::trusted();
        let area = self.sparse_area();
        self.spill_lanes(Elem::I64, p, area, 0);
        for (k, (l, e)) in leaves.iter().zip(elems).enumerate() {
            let at = self.leaf_area(k);
            self.spill_lanes(*e, l, area, at);
        }
        self.for_active_lanes(|t, lane| {
            let a_at = t.lane_addr(area, 0, lane, 8);
            let a = t.b.ins().load(types::I64, tfl, a_at, 0);
            for (k, (e, o)) in elems.iter().zip(offs).enumerate() {
                let at = t.leaf_area(k);
                let from = t.lane_addr(area, at, lane, e.bytes());
                let v = t.b.ins().load(e.scalar(), tfl, from, 0);
                t.b.ins().store(fl, v, a, *o as i32);
            }
            Ok(())
        })
    }
}
