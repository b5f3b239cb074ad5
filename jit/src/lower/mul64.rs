//! `i64x2` chunk products of zero-extended 32-bit lanes (`(ulong)a * b` with `uint` a,
//! b: Random123's `mulhilo32`, `mul_hi`/`mad_hi` of `uint`, `mul24`-like hashes).
//! Cranelift lowers `imul(uwiden_low(x), uwiden_low(y))` (and the `_high` pair) to one
//! `pmuludq` (latency 5) on two shuffled inputs; any other `i64x2` product costs three
//! `pmuludq` and five shifts and adds (or `vpmullq`: three micro-ops, latency 15). A
//! splat constant below 2^32 is rewritten as such a widening of a 32-bit vector
//! constant so that the pattern matches. The host ISA leaves out AVX-512DQ
//! (`codegen::host_isa`), whose `vpmullq` rule would otherwise take precedence.

use cranelift_codegen::ir::{self, types, InstBuilder, Value};

use super::value::{Elem, Lv};
use super::Tr;

/// How an `i64x2` chunk is known to be made of zero-extended `u32` lanes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Widened {
    /// `uwiden_low`/`uwiden_high` (the opcode) of an `i32x4`.
    Of(ir::Opcode),
    /// A splat of this constant, below 2^32.
    Const(u32),
    /// Lanes with a zero upper half (`x & 0xffffffff`, `x >> 32`, ...): what clang
    /// leaves of `(ulong)a` with `uint` a after folding the conversions.
    Masked,
}

/// How many bitwise operations [`Tr::widened_u32`] looks through: Philox needs two
/// (`(k >> 32) ^ (p & m)`).
const WIDENED_DEPTH: u32 = 4;

impl Tr<'_, '_> {
    /// `mul_hi` of 32-bit lanes (`signed` for `int`): the widening products of the low
    /// and the high lane pairs of each chunk (one `pmuludq`/`pmuldq` each), their high
    /// halves gathered by one shuffle; instead of a library call per lane.
    pub(super) fn mul_hi32(&mut self, x: &Lv, y: &Lv, signed: bool) -> Lv {
        if let (Lv::U(a), Lv::U(b)) = (x, y) {
            let ext = |t: &mut Self, v: Value| {
                if signed {
                    t.b.ins().sextend(types::I64, v)
                } else {
                    t.b.ins().uextend(types::I64, v)
                }
            };
            let (a, b) = (ext(self, *a), ext(self, *b));
            let p = self.b.ins().imul(a, b);
            let h = self.b.ins().ushr_imm_u(p, 32);
            return Lv::U(self.b.ins().ireduce(types::I32, h));
        }
        let (cx, cy) = (self.chunks_of(Elem::I32, x), self.chunks_of(Elem::I32, y));
        let mut wide = Vec::with_capacity(2 * cx.len());
        for (a, b) in cx.into_iter().zip(cy) {
            for high in [false, true] {
                let w = |t: &mut Self, v: Value| match (signed, high) {
                    (false, false) => t.b.ins().uwiden_low(v),
                    (false, true) => t.b.ins().uwiden_high(v),
                    (true, false) => t.b.ins().swiden_low(v),
                    (true, true) => t.b.ins().swiden_high(v),
                };
                let (wa, wb) = (w(self, a), w(self, b));
                let p = self.b.ins().imul(wa, wb);
                // The low half of p >> 32 is the high word, signed or not.
                wide.push(self.b.ins().ushr_imm_u(p, 32));
            }
        }
        Lv::V(self.narrow_i64_chunks(&wide))
    }

    /// `x * y` on `i64x2` chunks, through the widening-multiply pattern when both are
    /// zero-extended 32-bit lanes.
    pub(super) fn imul_i64_chunk(&mut self, x: Value, y: Value) -> Value {
        let (wx, wy) = (self.widened_u32(x), self.widened_u32(y));
        let (Some(wx), Some(wy)) = (wx, wy) else {
            return self.b.ins().imul(x, y);
        };
        // The widening both factors take: that of an `Of` factor, else `uwiden_low`.
        let op = match (wx, wy) {
            (Widened::Of(a), Widened::Of(b)) if a != b => return self.b.ins().imul(x, y),
            (Widened::Of(a), _) | (_, Widened::Of(a)) => a,
            _ => ir::Opcode::UwidenLow,
        };
        let rebuilt = Some((self.as_widened(x, wx, op), self.as_widened(y, wy, op)));
        match rebuilt {
            Some((a, b)) => self.b.ins().imul(a, b),
            None => self.b.ins().imul(x, y),
        }
    }

    /// What makes `v` a chunk of zero-extended `u32` lanes, if anything visible.
    fn widened_u32(&self, v: Value) -> Option<Widened> {
        self.widened_within(v, WIDENED_DEPTH)
    }

    /// [`Self::widened_u32`], looking through at most `depth` bitwise operations (a
    /// bound on the walk, which could otherwise revisit shared operands exponentially).
    fn widened_within(&self, v: Value, depth: u32) -> Option<Widened> {
        let dfg = &self.b.func.dfg;
        if dfg.value_type(v) != types::I64X2 {
            return None;
        }
        let inst = dfg.value_def(v).inst()?;
        match dfg.insts[inst] {
            ir::InstructionData::Unary { opcode, arg }
                if matches!(opcode, ir::Opcode::UwidenLow | ir::Opcode::UwidenHigh)
                    && dfg.value_type(arg) == types::I32X4 =>
            {
                Some(Widened::Of(opcode))
            }
            ir::InstructionData::Unary {
                opcode: ir::Opcode::Splat,
                arg,
            } => {
                let c = self.const_of(arg)?;
                u32::try_from(c).ok().map(Widened::Const)
            }
            // `x & m` has a zero upper half when either side has one.
            ir::InstructionData::Binary {
                opcode: ir::Opcode::Band,
                args,
            } => args
                .iter()
                .any(|a| depth > 0 && self.widened_within(*a, depth - 1).is_some())
                .then_some(Widened::Masked),
            // `x ^ y` and `x | y` when both sides have: Philox's two key words packed
            // in one `ulong` by clang, `(k >> 32) ^ (p & 0xffffffff)`.
            ir::InstructionData::Binary {
                opcode: ir::Opcode::Bxor | ir::Opcode::Bor,
                args,
            } => args
                .iter()
                .all(|a| depth > 0 && self.widened_within(*a, depth - 1).is_some())
                .then_some(Widened::Masked),
            ir::InstructionData::Binary {
                opcode: ir::Opcode::Ushr,
                args: [_, amount],
            } => {
                let k = self.const_of(amount)?;
                (32..64).contains(&k).then_some(Widened::Masked)
            }
            _ => None,
        }
    }

    /// `v` (known as `w`) as `op` of an `i32x4`, `v` itself when it is one already.
    fn as_widened(&mut self, v: Value, w: Widened, op: ir::Opcode) -> Value {
        let narrow = match w {
            Widened::Of(_) => return v,
            Widened::Const(c) => return self.widened_const(op, c),
            // The low halves of both lanes, in lanes 0, 1 and again 2, 3.
            Widened::Masked => {
                let fl = super::value::little();
                let bytes = self.b.ins().bitcast(types::I8X16, fl, v);
                let mask: Vec<u8> = [0u8, 8, 0, 8]
                    .iter()
                    .flat_map(|b| (0..4).map(move |k| b + k))
                    .collect();
                let imm = self.b.func.dfg.immediates.push(mask.into());
                let r = self.b.ins().shuffle(bytes, bytes, imm);
                self.b.ins().bitcast(types::I32X4, fl, r)
            }
        };
        if op == ir::Opcode::UwidenHigh {
            self.b.ins().uwiden_high(narrow)
        } else {
            self.b.ins().uwiden_low(narrow)
        }
    }

    /// The splat of `c` as `op` (`uwiden_low`/`uwiden_high`) of a 32-bit vector
    /// constant (a `vconst`: a splat would be folded back into the 64-bit splat).
    fn widened_const(&mut self, op: ir::Opcode, c: u32) -> Value {
        let bytes: Vec<u8> = (0..4).flat_map(|_| c.to_le_bytes()).collect();
        let v = self.vconst_bytes(types::I32X4, bytes);
        if op == ir::Opcode::UwidenHigh {
            self.b.ins().uwiden_high(v)
        } else {
            self.b.ins().uwiden_low(v)
        }
    }
}
