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
//! other code runs between the read and the write. Outside the block (a span reaching
//! past either end) the lane-by-lane access runs as before.

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
        let inside = match Self::local_masked_elem(e)
            .then(|| self.local_span_inside(base, 16 * n as u64))
            .flatten()
        {
            Some(c) => c,
            None => return lanes(self),
        };
        let fl = self.mem_flags();
        let tys = vec![vt; n];
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
        let inside = match Self::local_masked_elem(e)
            .then(|| self.local_span_inside(base, 16 * n as u64))
            .flatten()
        {
            Some(c) => c,
            None => return lanes(self),
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
                lanes(t)?;
                Ok(vec![])
            },
        )?;
        Ok(())
    }
}
