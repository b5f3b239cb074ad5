//! Conversions to and from `double` lanes on whole chunks: `cvtps2pd`, `cvtpd2ps`
//! and `cvtdq2pd` (Cranelift's `fvpromote_low`, `fvdemote`, and `fcvt_from_sint` of
//! `swiden_low`) instead of one scalar conversion and a lane insert per lane.
//! pyopencl passes Python floats as `double` kernel arguments, so `x - 0.5` on a
//! `float32` array converts every element there and back (its `axpb` kernel:
//! `z[i] = a*x[i] + b` with `double b`).

use cranelift_codegen::ir::{types, InstBuilder, Value};

use super::value::{Elem, Lv};
use super::Tr;

impl Tr<'_, '_> {
    /// `double` lanes of the `float` lanes of `l` (exact).
    pub(super) fn promote_f32_chunks(&mut self, l: &Lv) -> Lv {
        let chunks = self.chunks_of(Elem::F32, l);
        let mut out = Vec::with_capacity(2 * chunks.len());
        for c in chunks {
            out.push(self.b.ins().fvpromote_low(c));
            let high = self.shuffle32(c, c, [2, 3, 2, 3]);
            out.push(self.b.ins().fvpromote_low(high));
        }
        Lv::V(out)
    }

    /// `float` lanes of the `double` lanes of `l`, rounded to nearest even (the
    /// scalar `fdemote`'s rounding: the current MXCSR mode, which OpenCL code never
    /// changes).
    pub(super) fn demote_f64_chunks(&mut self, l: &Lv) -> Lv {
        let chunks = self.chunks_of(Elem::F64, l);
        let out = chunks
            .chunks(2)
            .map(|pair| {
                let lo = self.b.ins().fvdemote(pair[0]);
                match pair.get(1) {
                    Some(&h) => {
                        let hi = self.b.ins().fvdemote(h);
                        self.shuffle32(lo, hi, [0, 1, 4, 5])
                    }
                    None => lo,
                }
            })
            .collect::<Vec<Value>>();
        debug_assert!(out
            .iter()
            .all(|v| self.b.func.dfg.value_type(*v) == types::F32X4));
        Lv::V(out)
    }

    /// `double` lanes of the `int` lanes of `l` (exact).
    pub(super) fn int_to_f64_chunks(&mut self, l: &Lv) -> Lv {
        let chunks = self.chunks_of(Elem::I32, l);
        let mut out = Vec::with_capacity(2 * chunks.len());
        for c in chunks {
            // `fcvt_from_sint(swiden_low(x))` is one `cvtdq2pd` (the x64 rule).
            for x in [c, self.shuffle32(c, c, [2, 3, 2, 3])] {
                let wide = self.b.ins().swiden_low(x);
                out.push(self.b.ins().fcvt_from_sint(types::F64X2, wide));
            }
        }
        Lv::V(out)
    }
}
