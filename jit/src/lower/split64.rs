//! `long` lanes also held as their two 32-bit halves (`i32x4` chunks of four lanes),
//! so that 64-bit arithmetic whose results are only truncated, shifted down by 32 or
//! masked to 32 bits runs on 32-bit lanes.
//!
//! clang writes Random123's `mulhilo32` (pyopencl's Philox generator) as `ulong`
//! products of zero-extended `uint`s, xors and key additions on `ulong`s with
//! garbage upper halves, `& 0xffffffff`, `>> 32` and truncations. On `i64x2` chunks
//! each product is two shuffles and a `pmuludq` for two lanes plus shuffles to
//! narrow, and each xor and add costs twice the instructions of its 32-bit form.
//! Here every such operation on varying `long`s also records, for each group of four
//! lanes, the halves of its result: a product of two values with zero upper halves
//! is the even and odd `pmuludq` (its `i64x2` chunks themselves) and one shuffle per
//! half; xor/or/and work on the halves; an add carries with one unsigned compare;
//! `>> 32..63` is the upper half shifted. A truncation to `int` then reads the low
//! half ([`Tr::narrow_i64_chunks`]) and the 64-bit chunks nobody else uses are dead
//! code the mid-end removes. The halves are keyed by the `i64x2` chunk values they
//! describe and emitted right after them, so they dominate every use those values
//! have.

use cranelift_codegen::ir::{self, condcodes::IntCC, types, InstBuilder, Value};

use super::value::{little, Elem, Lv};
use super::Tr;
use crate::spirv::BinOp;

/// The halves of four `long` lanes (two `i64x2` chunks).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Halves {
    /// The low 32 bits of each lane (`i32x4`).
    pub lo: Value,
    /// The high 32 bits (`i32x4`), None when known to be zero.
    pub hi: Option<Value>,
    /// The lanes' value when they are all this constant.
    pub c: Option<u64>,
}

/// How [`Tr::halves_of`] found the halves of a leaf's lanes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    /// Recorded or visible in the definition: free to use.
    Known,
    /// A uniform value (halves of a scalar, splat).
    Uniform,
    /// Computed from the `i64x2` chunks here (shuffles): worth it only next to a
    /// known operand.
    Derived,
}

impl Tr<'_, '_> {
    /// Whether the lane layout allows halves: four-lane groups of two chunks each.
    fn halves_apply(&self) -> bool {
        self.single_lane.is_none() && self.nchunks(Elem::I64) == 2 * self.nchunks(Elem::I32)
    }

    /// The recorded or visible halves of chunks `x`, `y` (lanes 4k..4k+3).
    pub(super) fn known_halves(&self, x: Value, y: Value) -> Option<Halves> {
        if let Some(h) = self.halves.get(&(x, y)) {
            return Some(*h);
        }
        // `uwiden_low(s)`, `uwiden_high(s)`: the zero extension of `uint` lanes.
        let dfg = &self.b.func.dfg;
        let unary = |v: Value| match dfg.insts[dfg.value_def(v).inst()?] {
            ir::InstructionData::Unary { opcode, arg } => Some((opcode, arg)),
            _ => None,
        };
        match (unary(x)?, unary(y)?) {
            ((ir::Opcode::UwidenLow, s), (ir::Opcode::UwidenHigh, t))
                if s == t && dfg.value_type(s) == types::I32X4 =>
            {
                Some(Halves {
                    lo: s,
                    hi: None,
                    c: None,
                })
            }
            _ => None,
        }
    }

    /// A splat of `c` as an `i32x4` constant (a `vconst`, which the mid-end does not
    /// fold into the `uwiden` of a product the way it folds a splat).
    fn splat32(&mut self, c: u32) -> Value {
        let bytes: Vec<u8> = (0..4).flat_map(|_| c.to_le_bytes()).collect();
        self.vconst_bytes(types::I32X4, bytes)
    }

    /// The halves of lanes 4k..4k+3 of `long` leaf `l`, and how they were found.
    fn halves_of(&mut self, l: &Lv, k: usize) -> (Halves, Source) {
        match l {
            Lv::U(u) => {
                if let Some(c) = self.const_of(*u) {
                    let c = c as u64;
                    let lo = self.splat32(c as u32);
                    let hi = ((c >> 32) != 0).then(|| self.splat32((c >> 32) as u32));
                    return (Halves { lo, hi, c: Some(c) }, Source::Uniform);
                }
                let lo = self.b.ins().ireduce(types::I32, *u);
                let h = self.b.ins().ushr_imm_u(*u, 32);
                let h = self.b.ins().ireduce(types::I32, h);
                let lo = self.b.ins().splat(types::I32X4, lo);
                let hi = self.b.ins().splat(types::I32X4, h);
                let h = Halves {
                    lo,
                    hi: Some(hi),
                    c: None,
                };
                (h, Source::Uniform)
            }
            Lv::V(ch) => {
                if let Some(h) = self.known_halves(ch[2 * k], ch[2 * k + 1]) {
                    return (h, Source::Known);
                }
                let h = self.derive_halves(ch[2 * k], ch[2 * k + 1]);
                (h, Source::Derived)
            }
            Lv::A(..) => {
                let ch = self.chunks_of(Elem::I64, l);
                let h = self.derive_halves(ch[2 * k], ch[2 * k + 1]);
                (h, Source::Derived)
            }
        }
    }

    /// Halves computed from chunks `x`, `y`: the low words gathered, the high words
    /// shifted down and gathered.
    fn derive_halves(&mut self, x: Value, y: Value) -> Halves {
        let lo = self.gather_words(x, y, false);
        let hi = self.gather_words(x, y, true);
        Halves {
            lo,
            hi: Some(hi),
            c: None,
        }
    }

    /// The low (or `high`) 32-bit words of the four lanes of chunks `x`, `y`.
    fn gather_words(&mut self, x: Value, y: Value, high: bool) -> Value {
        let fl = little();
        let off = if high { 4 } else { 0 };
        let mut mask = [0u8; 16];
        for (i, m) in mask.iter_mut().enumerate() {
            *m = 8 * (i / 4) as u8 + off + (i % 4) as u8;
        }
        let imm = self.shuffle_imm(mask);
        let a = self.b.ins().bitcast(types::I8X16, fl, x);
        let b = self.b.ins().bitcast(types::I8X16, fl, y);
        let r = self.b.ins().shuffle(a, b, imm);
        self.b.ins().bitcast(types::I32X4, fl, r)
    }

    /// `a * b` on `long` lanes (element `e`) when both have zero upper halves: per
    /// four lanes the even and odd widening products (the result's chunks) and their
    /// halves recorded. None otherwise (the caller's generic product).
    pub(super) fn imul_halves(&mut self, e: Elem, a: &Lv, b: &Lv) -> Option<Lv> {
        if e != Elem::I64
            || !self.halves_apply()
            || !(matches!(a, Lv::V(_)) || matches!(b, Lv::V(_)))
        {
            return None;
        }
        let groups = self.nchunks(Elem::I32);
        let mut factors = Vec::with_capacity(groups);
        for k in 0..groups {
            let (ha, sa) = self.halves_of(a, k);
            let (hb, sb) = self.halves_of(b, k);
            if ha.hi.is_some() || hb.hi.is_some() || sa == Source::Derived || sb == Source::Derived
            {
                return None;
            }
            factors.push((ha.lo, hb.lo));
        }
        let mut chunks = Vec::with_capacity(2 * groups);
        for (x, y) in factors {
            let (xl, yl) = (self.b.ins().uwiden_low(x), self.b.ins().uwiden_low(y));
            let even = self.b.ins().imul(xl, yl);
            let (xh, yh) = (self.b.ins().uwiden_high(x), self.b.ins().uwiden_high(y));
            let odd = self.b.ins().imul(xh, yh);
            let lo = self.gather_words(even, odd, false);
            let hi = self.gather_words(even, odd, true);
            let h = Halves {
                lo,
                hi: Some(hi),
                c: None,
            };
            self.halves.insert((even, odd), h);
            chunks.push(even);
            chunks.push(odd);
        }
        Some(Lv::V(chunks))
    }

    /// Records the halves of `r = a op b` (`long` lanes) when an operand's halves are
    /// known: xor, or, and, add, and logical right shifts by 32 to 63.
    pub(super) fn note_halves(&mut self, op: BinOp, e: Elem, a: &Lv, b: &Lv, r: &Lv) {
        let (Elem::I64, Lv::V(rc)) = (e, r) else {
            return;
        };
        if !self.halves_apply() {
            return;
        }
        let rc = rc.clone();
        let groups = self.nchunks(Elem::I32);
        if op == BinOp::LShr {
            let Some(c) = (if let Lv::U(u) = b {
                self.const_of(*u)
            } else {
                None
            }) else {
                return;
            };
            let c = c & 63;
            if c < 32 {
                return;
            }
            for k in 0..groups {
                let (h, s) = self.halves_of(a, k);
                if s != Source::Known {
                    continue;
                }
                let lo = match h.hi {
                    None => self.splat32(0),
                    Some(hi) if c == 32 => hi,
                    Some(hi) => self.b.ins().ushr_imm_u(hi, c - 32),
                };
                let h = Halves {
                    lo,
                    hi: None,
                    c: None,
                };
                self.halves.insert((rc[2 * k], rc[2 * k + 1]), h);
            }
            return;
        }
        if !matches!(op, BinOp::Xor | BinOp::Or | BinOp::And | BinOp::IAdd) {
            return;
        }
        for k in 0..groups {
            let (ha, sa) = self.halves_of(a, k);
            let (hb, sb) = self.halves_of(b, k);
            // A value whose halves are derived here pays for them once; every
            // operation with a uniform then saves its 64-bit form (Philox adds the
            // key schedule's constants to one packed key twenty times).
            let worth = sa == Source::Known
                || sb == Source::Known
                || (sa == Source::Derived && sb == Source::Uniform)
                || (sa == Source::Uniform && sb == Source::Derived);
            if !worth {
                continue;
            }
            let h = self.combine_halves(op, ha, hb);
            self.halves.insert((rc[2 * k], rc[2 * k + 1]), h);
        }
    }

    /// The halves of `a op b` from those of `a` and `b`.
    fn combine_halves(&mut self, op: BinOp, a: Halves, b: Halves) -> Halves {
        let (a, b) = if a.c.is_some() { (b, a) } else { (a, b) };
        if let Some(c) = b.c {
            // Identities with a constant operand, which the mid-end does not see
            // through vector constants: `x & 0xffffffff`, `x ^ 0`, `x + (k << 32)`.
            let (cl, ch) = (c as u32, (c >> 32) as u32);
            match op {
                BinOp::And if cl == u32::MAX && ch == 0 => {
                    return Halves {
                        lo: a.lo,
                        hi: None,
                        c: None,
                    }
                }
                BinOp::Xor | BinOp::Or if c == 0 => return a,
                BinOp::IAdd if cl == 0 => {
                    // No carry out of the low words; `b.hi` is None when `ch` is 0.
                    let hi = match (a.hi, b.hi) {
                        (x, None) => x,
                        (None, y) => y,
                        (Some(x), Some(y)) => Some(self.b.ins().iadd(x, y)),
                    };
                    return Halves {
                        lo: a.lo,
                        hi,
                        c: None,
                    };
                }
                _ => {}
            }
        }
        let f = |t: &mut Self, x: Value, y: Value| match op {
            BinOp::Xor => t.b.ins().bxor(x, y),
            BinOp::Or => t.b.ins().bor(x, y),
            BinOp::And => t.b.ins().band(x, y),
            _ => t.b.ins().iadd(x, y),
        };
        let lo = f(self, a.lo, b.lo);
        let hi = match (op, a.hi, b.hi) {
            (BinOp::IAdd, ..) => {
                // The carry out of the low words: all ones (-1) where the sum wrapped.
                let carry = self.b.ins().icmp(IntCC::UnsignedLessThan, lo, a.lo);
                let base = match (a.hi, b.hi) {
                    (Some(x), Some(y)) => self.b.ins().iadd(x, y),
                    (Some(x), None) | (None, Some(x)) => x,
                    (None, None) => self.splat32(0),
                };
                Some(self.b.ins().isub(base, carry))
            }
            (BinOp::And, None, _) | (BinOp::And, _, None) => None,
            (_, None, None) => None,
            (_, Some(x), None) | (_, None, Some(x)) => Some(x),
            (_, Some(x), Some(y)) => Some(f(self, x, y)),
        };
        Halves { lo, hi, c: None }
    }
}
