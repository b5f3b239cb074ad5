//! Lanes of vectors the lowering built from scalars, read back as those scalars.
//!
//! Per-lane fallbacks (gathers, scatters, `__local` atomics, per-lane built-ins)
//! take a varying value apart lane by lane. Often that value was itself packed from
//! per-lane scalars a moment before (a gathered `uchar4` whose bytes index a local
//! histogram, a per-lane result fed to a scattered store), with a little integer
//! arithmetic in between (widening, scaling, adding a base address). Moving each
//! scalar into a vector register and out again costs two cross-domain moves per
//! lane and keeps the register allocator busy with both forms; reading the scalar
//! (and redoing the little arithmetic on it) costs nothing of the kind. Cranelift's
//! optimiser does not look through `insertlane` chains, so this is done here, on the
//! data-flow graph, before the `extractlane` would be emitted.

use cranelift_codegen::ir::{self, InstBuilder, Opcode, Value};

use super::Tr;

/// How deep the arithmetic between a lane's use and its scalar source may be.
const MAX_DEPTH: u32 = 3;
/// Scalar instructions one lane may cost before an `extractlane` is cheaper.
const MAX_OPS: u32 = 3;

impl Tr<'_, '_> {
    /// Lane `lane` of vector `v` as a scalar of its lane type, without an
    /// `extractlane` when the data-flow graph shows where the lane came from (a
    /// splat, an `insertlane`, a constant, elementwise integer arithmetic or
    /// widening of such lanes) and recomputing it takes at most [`MAX_OPS`]
    /// instructions; otherwise the `extractlane`.
    pub(super) fn lane_scalar(&mut self, v: Value, lane: u8) -> Value {
        match self.lane_source(v, lane, MAX_DEPTH, false) {
            Some((_, ops)) if ops <= MAX_OPS => match self.lane_source(v, lane, MAX_DEPTH, true) {
                Some((Some(x), _)) => x,
                _ => self.b.ins().extractlane(v, lane),
            },
            _ => self.b.ins().extractlane(v, lane),
        }
    }

    /// Where lane `lane` of `v` comes from: the scalar (emitted only when `emit`)
    /// and the number of instructions recomputing it takes; None when unknown.
    fn lane_source(
        &mut self,
        v: Value,
        lane: u8,
        depth: u32,
        emit: bool,
    ) -> Option<(Option<Value>, u32)> {
        let dfg = &self.b.func.dfg;
        let v = dfg.resolve_aliases(v);
        let vty = dfg.value_type(v);
        if !vty.is_vector() || u32::from(lane) >= vty.lane_count() {
            return None;
        }
        let lty = vty.lane_type();
        let inst = dfg.value_def(v).inst()?;
        let data = dfg.insts[inst];
        match data {
            ir::InstructionData::Unary {
                opcode: Opcode::Splat,
                arg,
            } => Some((Some(arg), 0)),
            ir::InstructionData::TernaryImm8 {
                opcode: Opcode::Insertlane,
                args: [vec, x],
                imm,
            } => {
                if imm == lane {
                    Some((Some(x), 0))
                } else {
                    // Walking the chain emits nothing: no depth spent.
                    self.lane_source(vec, lane, depth, emit)
                }
            }
            ir::InstructionData::UnaryConst {
                opcode: Opcode::Vconst,
                constant_handle,
            } => {
                if !lty.is_int() || lty.bits() > 64 {
                    return None;
                }
                let bytes = dfg.constants.get(constant_handle).as_slice();
                let size = (lty.bits() / 8) as usize;
                let at = usize::from(lane) * size;
                let raw = bytes.get(at..at + size)?;
                let mut le = [0u8; 8];
                le[..size].copy_from_slice(raw);
                let x = emit.then(|| self.b.ins().iconst(lty, i64::from_le_bytes(le)));
                Some((x, 1))
            }
            _ if depth == 0 || !lty.is_int() => None,
            ir::InstructionData::Unary { opcode, arg } => {
                let signed = match opcode {
                    Opcode::UwidenLow | Opcode::UwidenHigh => false,
                    Opcode::SwidenLow | Opcode::SwidenHigh => true,
                    _ => return None,
                };
                let high = matches!(opcode, Opcode::UwidenHigh | Opcode::SwidenHigh);
                let from = u8::try_from(vty.lane_count()).ok()?;
                let src_lane = if high { lane.checked_add(from)? } else { lane };
                // A widening of a widening of the same kind (`uchar` to `ulong` is
                // three) is one extension of the narrowest lane: it costs no depth
                // and no instruction of its own.
                let inner_same = dfg
                    .value_def(dfg.resolve_aliases(arg))
                    .inst()
                    .is_some_and(|i| {
                        matches!(
                            (dfg.insts[i].opcode(), signed),
                            (Opcode::UwidenLow | Opcode::UwidenHigh, false)
                                | (Opcode::SwidenLow | Opcode::SwidenHigh, true)
                        )
                    });
                let d = if inner_same { depth } else { depth - 1 };
                let (x, ops) = self.lane_source(arg, src_lane, d, emit)?;
                let x = x.map(|x| {
                    // Extend the narrowest scalar directly.
                    let dfg = &self.b.func.dfg;
                    let narrow = match dfg.value_def(x).inst().map(|i| dfg.insts[i]) {
                        Some(ir::InstructionData::Unary {
                            opcode: Opcode::Uextend,
                            arg,
                        }) if !signed => arg,
                        Some(ir::InstructionData::Unary {
                            opcode: Opcode::Sextend,
                            arg,
                        }) if signed => arg,
                        _ => x,
                    };
                    if signed {
                        self.b.ins().sextend(lty, narrow)
                    } else {
                        self.b.ins().uextend(lty, narrow)
                    }
                });
                Some((x, if inner_same { ops } else { ops + 1 }))
            }
            ir::InstructionData::Binary { opcode, args } => {
                let shift = matches!(opcode, Opcode::Ishl | Opcode::Ushr | Opcode::Sshr);
                let elementwise = matches!(
                    opcode,
                    Opcode::Iadd
                        | Opcode::Isub
                        | Opcode::Imul
                        | Opcode::Band
                        | Opcode::Bor
                        | Opcode::Bxor
                );
                if !shift && !elementwise {
                    return None;
                }
                let (a, ops_a) = self.lane_source(args[0], lane, depth - 1, emit)?;
                // A vector shift's amount is one scalar for every lane.
                let (b, ops_b) = if shift {
                    (Some(args[1]), 0)
                } else {
                    self.lane_source(args[1], lane, depth - 1, emit)?
                };
                let x = match (a, b) {
                    (Some(a), Some(b)) => {
                        let ins = self.b.ins();
                        Some(match opcode {
                            Opcode::Iadd => ins.iadd(a, b),
                            Opcode::Isub => ins.isub(a, b),
                            Opcode::Imul => ins.imul(a, b),
                            Opcode::Band => ins.band(a, b),
                            Opcode::Bor => ins.bor(a, b),
                            Opcode::Bxor => ins.bxor(a, b),
                            Opcode::Ishl => ins.ishl(a, b),
                            Opcode::Ushr => ins.ushr(a, b),
                            _ => ins.sshr(a, b),
                        })
                    }
                    _ => None,
                };
                Some((x, ops_a + ops_b + 1))
            }
            _ => None,
        }
    }
}
