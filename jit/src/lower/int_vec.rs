//! Integer width changes of varying values in vector registers: widening and
//! truncating between char, short, int and long chunks (long to int:
//! `Tr::narrow_i64_chunks`), saturating narrowings, and
//! float-to-integer conversions with OpenCL's saturation.
//!
//! `uchar` pixels become `float`s and back, `short` samples are scaled in `int`:
//! done lane by lane, each such conversion costs two cross-register moves per lane.
//! Here it is a few widen/narrow instructions per 16 bytes. The lane layouts are the
//! chunk layouts of [`Elem::chunk`]: 16 chars, 8 shorts, 4 ints or 2 longs per chunk.

use cranelift_codegen::ir::{types, InstBuilder, Value};

use super::value::{Elem, Lv};
use super::Tr;

impl Tr<'_, '_> {
    /// The chunks of varying integers `ch` of element `from` resized to `to`:
    /// sign (`signed`) or zero extension when widening, truncation when narrowing.
    pub(super) fn int_resize_chunks(
        &mut self,
        ch: &[Value],
        from: Elem,
        to: Elem,
        signed: bool,
    ) -> Vec<Value> {
        let mut cur = ch.to_vec();
        let mut e = from;
        while e.bits() < to.bits() {
            let next = int_elem(e.bits() * 2);
            let mut out = Vec::with_capacity(cur.len() * 2);
            for c in &cur {
                let (lo, hi) = if signed {
                    (self.b.ins().swiden_low(*c), self.b.ins().swiden_high(*c))
                } else {
                    (self.b.ins().uwiden_low(*c), self.b.ins().uwiden_high(*c))
                };
                out.push(lo);
                out.push(hi);
            }
            out.truncate(self.nchunks(next));
            cur = out;
            e = next;
        }
        while e.bits() > to.bits() {
            let next = int_elem(e.bits() / 2);
            if e == Elem::I64 {
                cur = self.narrow_i64_chunks(&cur);
                cur.truncate(self.nchunks(next));
                e = next;
                continue;
            }
            let mut out = Vec::with_capacity(cur.len().div_ceil(2));
            for pair in cur.chunks(2) {
                let (a, b) = (pair[0], *pair.get(1).unwrap_or(&pair[0]));
                out.push({
                    // Keep the low half of each lane, then pack: the unsigned
                    // saturation of the pack never bites on those values.
                    let (ty, _) = e.chunk();
                    let low = self.scalar_const(e, (1u64 << next.bits()) - 1);
                    let m = self.b.ins().splat(ty, low);
                    let a = self.b.ins().band(a, m);
                    let b = self.b.ins().band(b, m);
                    self.b.ins().unarrow(a, b)
                });
            }
            out.truncate(self.nchunks(next));
            cur = out;
            e = next;
        }
        cur
    }

    /// A saturating conversion of varying integers from `from` to the narrower `to`
    /// (short or int sources), clamped in vector registers; None for other shapes.
    pub(super) fn int_saturate_vec(
        &mut self,
        l: &Lv,
        from: Elem,
        to: Elem,
        src_signed: bool,
        dst_signed: bool,
    ) -> Option<Lv> {
        let Lv::V(ch) = l else {
            return None;
        };
        if !matches!(from, Elem::I16 | Elem::I32) || !to.is_int() || to.bits() >= from.bits() {
            return None;
        }
        let (lo, hi) = int_range(to, dst_signed);
        let clamped = self.clamp_chunks(ch, from, lo, hi, src_signed);
        Some(Lv::V(self.int_resize_chunks(&clamped, from, to, false)))
    }

    /// Varying floats to integers of `to` (char, short or int) as the per-lane
    /// conversion does it: saturating, NaN to 0.
    pub(super) fn float_to_int_vec(&mut self, l: &Lv, to: Elem, signed: bool) -> Lv {
        let ch = self.chunks_of(Elem::F32, l);
        let ints: Vec<Value> = ch
            .iter()
            .map(|c| {
                if signed {
                    self.b.ins().fcvt_to_sint_sat(types::I32X4, *c)
                } else {
                    self.b.ins().fcvt_to_uint_sat(types::I32X4, *c)
                }
            })
            .collect();
        if to == Elem::I32 {
            return Lv::V(ints);
        }
        let (lo, hi) = int_range(to, signed);
        let clamped = self.clamp_chunks(&ints, Elem::I32, lo, hi, signed);
        Lv::V(self.int_resize_chunks(&clamped, Elem::I32, to, false))
    }

    /// Clamps integer chunks of `e` to `lo..=hi` with the min/max of
    /// `OpenCL.std` clamp: signed comparisons for signed lanes; for unsigned ones
    /// only the upper bound applies (`lo` is then 0).
    fn clamp_chunks(
        &mut self,
        ch: &[Value],
        e: Elem,
        lo: i64,
        hi: i64,
        signed: bool,
    ) -> Vec<Value> {
        let hv = Lv::U(self.scalar_const(e, hi as u64));
        let mut x = self.int_minmax(e, &Lv::V(ch.to_vec()), &hv, false, signed);
        if signed {
            let lv = Lv::U(self.scalar_const(e, lo as u64));
            x = self.int_minmax(e, &x, &lv, true, true);
        }
        self.chunks_of(e, &x)
    }
}

/// The integer element of `bits` bits.
fn int_elem(bits: u32) -> Elem {
    match bits {
        8 => Elem::I8,
        16 => Elem::I16,
        32 => Elem::I32,
        _ => Elem::I64,
    }
}

/// The values of integer element `e` (at most 32 bits), signed or not.
pub(super) fn int_range(e: Elem, signed: bool) -> (i64, i64) {
    let b = e.bits();
    if signed {
        (-(1i64 << (b - 1)), (1i64 << (b - 1)) - 1)
    } else {
        (0, (1i64 << b) - 1)
    }
}
