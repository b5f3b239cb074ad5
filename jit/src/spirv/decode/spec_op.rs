//! `OpSpecConstantOp`: the operation is folded while decoding when its operands are
//! known numbers (specialization has already been applied to the words, see
//! [`crate::spirv::specialize`]), so array lengths, initializers and the analyses see
//! plain constants. Operations on addresses (access chains, pointer casts and
//! conversions of module-scope variables) cannot be folded here: they stay an
//! expression ([`ConstValue::Expr`]) that lowering evaluates where it is used.
//! Vector results get fresh ids for their components (above the module's bound).

use std::borrow::Cow;
use std::collections::HashMap;

use rspirv::dr::{self, Operand};
use rspirv::spirv::Op as SOp;

use super::{malformed, unsupported, Decoder};
use crate::spirv::*;
use crate::CompileError;

const OP_UNDEF: u32 = 1;
const OP_SPEC_CONSTANT_OP: u32 = 52;

/// Replaces each `OpSpecConstantOp` whose operation has a variable operand list
/// (`VectorShuffle`, `CompositeExtract/Insert`, the access chains), which `rspirv`
/// misparses (it reads one operand per list and then rejects the rest), by an
/// `OpUndef` of the same type and id, and returns those instructions decoded here.
/// The decoder swaps them back when it meets the `OpUndef`. Well-formedness of the
/// stream was checked before.
pub(super) fn lift_variadic_spec_ops(
    words: Cow<'_, [u32]>,
) -> (Cow<'_, [u32]>, HashMap<Id, dr::Instruction>) {
    let mut lifted = HashMap::new();
    let mut out: Option<Vec<u32>> = None;
    let mut i = 5;
    while i < words.len() {
        let count = ((words[i] >> 16) as usize).max(1);
        let end = (i + count).min(words.len());
        let w = &words[i..end];
        let variadic = w[0] & 0xffff == OP_SPEC_CONSTANT_OP && w.len() >= 5 && {
            let (ids, lits) = match SOp::from_u32(w[3]) {
                Some(SOp::VectorShuffle) => (2, true),
                Some(SOp::CompositeExtract) => (1, true),
                Some(SOp::CompositeInsert) => (2, true),
                Some(
                    SOp::AccessChain
                    | SOp::InBoundsAccessChain
                    | SOp::PtrAccessChain
                    | SOp::InBoundsPtrAccessChain,
                ) => (w.len() - 4, false),
                _ => (usize::MAX, false),
            };
            if ids <= w.len() - 4 {
                let mut operands = vec![Operand::LiteralSpecConstantOpInteger(
                    SOp::from_u32(w[3]).unwrap_or(SOp::Nop),
                )];
                operands.extend(w[4..4 + ids].iter().map(|&x| Operand::IdRef(x)));
                if lits {
                    operands.extend(w[4 + ids..].iter().map(|&x| Operand::LiteralBit32(x)));
                }
                lifted.insert(
                    w[2],
                    dr::Instruction::new(SOp::SpecConstantOp, Some(w[1]), Some(w[2]), operands),
                );
                true
            } else {
                false
            }
        };
        if variadic {
            let o = out.get_or_insert_with(|| words[..i].to_vec());
            o.extend_from_slice(&[(3 << 16) | OP_UNDEF, w[1], w[2]]);
        } else if let Some(o) = out.as_mut() {
            o.extend_from_slice(w);
        }
        i += count;
    }
    match out {
        Some(o) => (Cow::Owned(o), lifted),
        None => (words, lifted),
    }
}

/// The kind of a scalar component.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Bool,
    Int(u32),
    Float(u32),
}

impl Kind {
    fn bits(self) -> u32 {
        match self {
            Kind::Bool => 1,
            Kind::Int(b) | Kind::Float(b) => b,
        }
    }
}

/// Truncates `v` to `bits`.
fn trunc(v: u64, bits: u32) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// Sign-extends the low `bits` of `v`.
fn sext(v: u64, bits: u32) -> i64 {
    if bits >= 64 {
        v as i64
    } else {
        ((v << (64 - bits)) as i64) >> (64 - bits)
    }
}

fn to_f64(v: u64, bits: u32) -> Result<f64, CompileError> {
    match bits {
        32 => Ok(f64::from(f32::from_bits(v as u32))),
        64 => Ok(f64::from_bits(v)),
        _ => Err(unsupported(
            "OpSpecConstantOp on half-precision values is not supported",
        )),
    }
}

fn from_f64(x: f64, bits: u32) -> Result<u64, CompileError> {
    match bits {
        32 => Ok(u64::from((x as f32).to_bits())),
        64 => Ok(x.to_bits()),
        _ => Err(unsupported(
            "OpSpecConstantOp on half-precision values is not supported",
        )),
    }
}

/// Operations whose operands and result are all the same numeric shape.
fn int_binary(op: SOp, a: u64, b: u64, bits: u32) -> Option<u64> {
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    let sh = (trunc(b, bits) % u64::from(bits)) as u32;
    Some(trunc(
        match op {
            SOp::IAdd => a.wrapping_add(b),
            SOp::ISub => a.wrapping_sub(b),
            SOp::IMul => a.wrapping_mul(b),
            // Division by zero is undefined in SPIR-V: fold it to 0 rather than trap.
            SOp::UDiv => trunc(a, bits).checked_div(trunc(b, bits)).unwrap_or(0),
            SOp::UMod => trunc(a, bits).checked_rem(trunc(b, bits)).unwrap_or(0),
            SOp::SDiv => sa.checked_div(sb).unwrap_or(0) as u64,
            SOp::SRem => sa.checked_rem(sb).unwrap_or(0) as u64,
            SOp::SMod => match sa.checked_rem(sb) {
                Some(r) if r != 0 && ((r < 0) != (sb < 0)) => (r + sb) as u64,
                Some(r) => r as u64,
                None => 0,
            },
            SOp::ShiftLeftLogical => trunc(a, bits) << sh,
            SOp::ShiftRightLogical => trunc(a, bits) >> sh,
            SOp::ShiftRightArithmetic => (sa >> sh) as u64,
            SOp::BitwiseAnd => a & b,
            SOp::BitwiseOr => a | b,
            SOp::BitwiseXor => a ^ b,
            _ => return None,
        },
        bits,
    ))
}

fn int_compare(op: SOp, a: u64, b: u64, bits: u32) -> Option<bool> {
    let (ua, ub) = (trunc(a, bits), trunc(b, bits));
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    Some(match op {
        SOp::IEqual => ua == ub,
        SOp::INotEqual => ua != ub,
        SOp::ULessThan => ua < ub,
        SOp::SLessThan => sa < sb,
        SOp::UGreaterThan => ua > ub,
        SOp::SGreaterThan => sa > sb,
        SOp::ULessThanEqual => ua <= ub,
        SOp::SLessThanEqual => sa <= sb,
        SOp::UGreaterThanEqual => ua >= ub,
        SOp::SGreaterThanEqual => sa >= sb,
        _ => return None,
    })
}

fn float_binary(op: SOp, a: f64, b: f64) -> Option<f64> {
    Some(match op {
        SOp::FAdd => a + b,
        SOp::FSub => a - b,
        SOp::FMul => a * b,
        SOp::FDiv => a / b,
        // FRem: sign of the dividend (C fmod); FMod: sign of the divisor.
        SOp::FRem => a % b,
        SOp::FMod => {
            let r = a % b;
            if r != 0.0 && (r < 0.0) != (b < 0.0) {
                r + b
            } else {
                r
            }
        }
        _ => return None,
    })
}

/// Float-to-integer conversion as OpenCL defines the default (round toward zero,
/// saturating NaN/overflow the way Rust's `as` does; out-of-range is undefined).
fn float_to_int(x: f64, signed: bool, bits: u32) -> u64 {
    if signed {
        let lo = sext(1u64 << (bits - 1), bits) as f64;
        let hi = -lo - 1.0;
        trunc(x.clamp(lo, hi) as i64 as u64, bits)
    } else {
        let hi = if bits >= 64 {
            u64::MAX as f64
        } else {
            ((1u64 << bits) - 1) as f64
        };
        trunc(x.clamp(0.0, hi) as u64, bits)
    }
}

impl Decoder {
    /// The kind of scalar type `ty`.
    fn kind(&self, ty: Id) -> Result<Kind, CompileError> {
        match self.m.types.get(&ty) {
            Some(Type::Bool) => Ok(Kind::Bool),
            Some(Type::Int { bits }) => Ok(Kind::Int(*bits)),
            Some(Type::Float { bits }) => Ok(Kind::Float(*bits)),
            other => Err(malformed(format!(
                "OpSpecConstantOp: %{ty} ({other:?}) is not a scalar type"
            ))),
        }
    }

    /// Scalar component type and count of a scalar or vector type.
    fn shape(&self, ty: Id) -> Result<(Id, usize), CompileError> {
        match self.m.types.get(&ty) {
            Some(Type::Vector { elem, count }) => Ok((*elem, *count as usize)),
            Some(_) => Ok((ty, 1)),
            None => Err(malformed(format!("%{ty} is not a type"))),
        }
    }

    /// The component values of constant `id` when it is a folded number (scalar or
    /// vector); None when it is an expression on addresses or not a constant.
    fn components(&self, id: Id) -> Result<Option<(Id, Vec<u64>)>, CompileError> {
        let Some(c) = self.m.constants.get(&id) else {
            return Ok(None);
        };
        let (elem, n) = self.shape(c.ty)?;
        if !matches!(
            self.m.types.get(&elem),
            Some(Type::Bool | Type::Int { .. } | Type::Float { .. })
        ) {
            return Ok(None);
        }
        Ok(match &c.value {
            ConstValue::Scalar(v) if n == 1 => Some((elem, vec![*v])),
            ConstValue::Null | ConstValue::Undef => Some((elem, vec![0; n])),
            ConstValue::Composite(parts) if parts.len() == n => {
                let mut out = Vec::with_capacity(n);
                for p in parts {
                    match self.m.constants.get(p).map(|c| &c.value) {
                        Some(ConstValue::Scalar(v)) => out.push(*v),
                        Some(ConstValue::Null | ConstValue::Undef) => out.push(0),
                        _ => return Ok(None),
                    }
                }
                Some((elem, out))
            }
            _ => None,
        })
    }

    /// A new scalar constant (for the components of a folded vector).
    fn fresh_constant(&mut self, ty: Id, v: u64) -> Id {
        let id = self.m.bound;
        self.m.bound += 1;
        self.m.constants.insert(
            id,
            Constant {
                ty,
                value: ConstValue::Scalar(v),
            },
        );
        id
    }

    /// The value of a folded result of type `ty` with components `vals`.
    fn folded(&mut self, ty: Id, vals: Vec<u64>) -> Result<ConstValue, CompileError> {
        let (elem, n) = self.shape(ty)?;
        if n != vals.len() {
            return Err(malformed(format!(
                "OpSpecConstantOp: {} components for a result of {n}",
                vals.len()
            )));
        }
        let k = self.kind(elem)?;
        if matches!(self.m.types.get(&ty), Some(Type::Vector { .. })) {
            let parts = vals
                .into_iter()
                .map(|v| self.fresh_constant(elem, trunc(v, k.bits())))
                .collect();
            Ok(ConstValue::Composite(parts))
        } else {
            Ok(ConstValue::Scalar(trunc(vals[0], k.bits())))
        }
    }

    /// Decodes `OpSpecConstantOp` of result type `ty`.
    pub(super) fn spec_constant_op(
        &mut self,
        t: &dr::Instruction,
        ty: Id,
    ) -> Result<ConstValue, CompileError> {
        let Some(Operand::LiteralSpecConstantOpInteger(op)) = t.operands.first() else {
            return Err(malformed("OpSpecConstantOp without an opcode"));
        };
        let op = *op;
        let rest = &t.operands[1..];
        let id = |i: usize| -> Result<Id, CompileError> {
            match rest.get(i) {
                Some(Operand::IdRef(id)) => Ok(*id),
                other => Err(malformed(format!(
                    "OpSpecConstantOp {op:?}: operand {i} should be an id, found {other:?}"
                ))),
            }
        };
        let lits = |from: usize| -> Result<Vec<u32>, CompileError> {
            rest[from.min(rest.len())..]
                .iter()
                .map(|o| match o {
                    Operand::LiteralBit32(v) => Ok(*v),
                    other => Err(malformed(format!(
                        "OpSpecConstantOp {op:?}: literal expected, found {other:?}"
                    ))),
                })
                .collect()
        };
        let ids_all = || -> Result<Vec<Id>, CompileError> { (0..rest.len()).map(id).collect() };
        for used in rest.iter().filter_map(|o| match o {
            Operand::IdRef(i) => Some(*i),
            _ => None,
        }) {
            if !self.m.constants.contains_key(&used) && !self.m.globals.contains_key(&used) {
                return Err(malformed(format!(
                    "OpSpecConstantOp {op:?} uses %{used}, which is not a constant or \
                     module-scope variable declared before it"
                )));
            }
        }
        let (relem, rn) = self.shape(ty)?;
        use SOp as S;
        // Operations on composites (any component type).
        match op {
            S::CompositeExtract => return self.fold_extract(id(0)?, &lits(1)?, ty),
            S::CompositeInsert => return self.fold_insert(id(0)?, id(1)?, &lits(2)?, ty),
            S::VectorShuffle => {
                let (a, b) = (id(0)?, id(1)?);
                return match (self.components(a)?, self.components(b)?) {
                    (Some((_, va)), Some((_, vb))) => {
                        let all: Vec<u64> = va.into_iter().chain(vb).collect();
                        let vals = lits(2)?
                            .iter()
                            .map(|&c| {
                                if c == u32::MAX {
                                    Ok(0)
                                } else {
                                    all.get(c as usize).copied().ok_or_else(|| {
                                        malformed(format!(
                                            "OpSpecConstantOp VectorShuffle: component {c} out of range"
                                        ))
                                    })
                                }
                            })
                            .collect::<Result<Vec<u64>, _>>()?;
                        self.folded(ty, vals)
                    }
                    _ => Ok(ConstValue::Expr(Box::new(Op::VectorShuffle {
                        a,
                        b,
                        components: lits(2)?,
                    }))),
                };
            }
            _ => {}
        }
        // Operations on addresses: evaluated by lowering.
        let pointer_op = match op {
            S::AccessChain | S::InBoundsAccessChain => Some(Op::AccessChain {
                base: id(0)?,
                element: None,
                indices: (1..rest.len()).map(id).collect::<Result<_, _>>()?,
            }),
            S::PtrAccessChain | S::InBoundsPtrAccessChain => Some(Op::AccessChain {
                base: id(0)?,
                element: Some(id(1)?),
                indices: (2..rest.len()).map(id).collect::<Result<_, _>>()?,
            }),
            S::GenericCastToPtr | S::PtrCastToGeneric => Some(Op::PtrCast(id(0)?)),
            S::ConvertPtrToU => Some(Op::ConvertPtrToU(id(0)?)),
            S::ConvertUToPtr => Some(Op::ConvertUToPtr(id(0)?)),
            _ => None,
        };
        if let Some(p) = pointer_op {
            return Ok(ConstValue::Expr(Box::new(p)));
        }
        let operands = ids_all()?;
        let mut comps = Vec::with_capacity(operands.len());
        for o in &operands {
            match self.components(*o)? {
                Some(c) => comps.push(c),
                None => return Ok(ConstValue::Expr(Box::new(self.expr_op(op, &operands)?))),
            }
        }
        for (_, v) in &comps {
            if v.len() != rn && !(op == S::Select && v.len() == 1) {
                return Err(malformed(format!(
                    "OpSpecConstantOp {op:?}: operands of {} components for a result of {rn}",
                    v.len()
                )));
            }
        }
        let rk = self.kind(relem)?;
        let kinds = comps
            .iter()
            .map(|(e, _)| self.kind(*e))
            .collect::<Result<Vec<_>, _>>()?;
        let lane = |k: usize, i: usize| -> u64 {
            let v = &comps[k].1;
            if v.len() == 1 {
                v[0]
            } else {
                v[i]
            }
        };
        let need = |n: usize| -> Result<(), CompileError> {
            if comps.len() == n {
                Ok(())
            } else {
                Err(malformed(format!(
                    "OpSpecConstantOp {op:?} takes {n} operands, found {}",
                    comps.len()
                )))
            }
        };
        let mut vals = Vec::with_capacity(rn);
        for i in 0..rn {
            let v = match op {
                S::SNegate | S::Not | S::FNegate | S::LogicalNot => {
                    need(1)?;
                    let a = lane(0, i);
                    match (op, kinds[0]) {
                        (S::SNegate, Kind::Int(_)) => a.wrapping_neg(),
                        (S::Not, Kind::Int(_)) => !a,
                        (S::LogicalNot, Kind::Bool) => u64::from(a == 0),
                        (S::FNegate, Kind::Float(b)) => from_f64(-to_f64(a, b)?, b)?,
                        _ => return Err(self.bad_kinds(op)),
                    }
                }
                S::SConvert | S::UConvert => {
                    need(1)?;
                    match kinds[0] {
                        Kind::Int(b) if op == S::SConvert => sext(lane(0, i), b) as u64,
                        Kind::Int(b) => trunc(lane(0, i), b),
                        _ => return Err(self.bad_kinds(op)),
                    }
                }
                S::FConvert => {
                    need(1)?;
                    match (kinds[0], rk) {
                        (Kind::Float(b), Kind::Float(rb)) => from_f64(to_f64(lane(0, i), b)?, rb)?,
                        _ => return Err(self.bad_kinds(op)),
                    }
                }
                S::ConvertFToS | S::ConvertFToU => {
                    need(1)?;
                    match (kinds[0], rk) {
                        (Kind::Float(b), Kind::Int(rb)) => {
                            float_to_int(to_f64(lane(0, i), b)?, op == S::ConvertFToS, rb)
                        }
                        _ => return Err(self.bad_kinds(op)),
                    }
                }
                S::ConvertSToF | S::ConvertUToF => {
                    need(1)?;
                    match (kinds[0], rk) {
                        (Kind::Int(b), Kind::Float(rb)) => {
                            let x = if op == S::ConvertSToF {
                                sext(lane(0, i), b) as f64
                            } else {
                                trunc(lane(0, i), b) as f64
                            };
                            from_f64(x, rb)?
                        }
                        _ => return Err(self.bad_kinds(op)),
                    }
                }
                S::Bitcast => {
                    need(1)?;
                    return self.fold_bitcast(&comps[0], kinds[0], ty);
                }
                S::LogicalAnd | S::LogicalOr | S::LogicalEqual | S::LogicalNotEqual => {
                    need(2)?;
                    if kinds[0] != Kind::Bool || kinds[1] != Kind::Bool {
                        return Err(self.bad_kinds(op));
                    }
                    let (a, b) = (lane(0, i) != 0, lane(1, i) != 0);
                    u64::from(match op {
                        S::LogicalAnd => a && b,
                        S::LogicalOr => a || b,
                        S::LogicalEqual => a == b,
                        _ => a != b,
                    })
                }
                S::Select => {
                    need(3)?;
                    if kinds[0] != Kind::Bool {
                        return Err(self.bad_kinds(op));
                    }
                    if lane(0, i) != 0 {
                        lane(1, i)
                    } else {
                        lane(2, i)
                    }
                }
                _ => {
                    need(2)?;
                    match (kinds[0], kinds[1]) {
                        (Kind::Int(b), Kind::Int(_)) => {
                            if let Some(c) = int_compare(op, lane(0, i), lane(1, i), b) {
                                u64::from(c)
                            } else if let Some(v) = int_binary(op, lane(0, i), lane(1, i), b) {
                                v
                            } else {
                                return Err(self.bad_op(op));
                            }
                        }
                        (Kind::Float(b), Kind::Float(b2)) if b == b2 => {
                            match float_binary(op, to_f64(lane(0, i), b)?, to_f64(lane(1, i), b)?) {
                                Some(x) => from_f64(x, b)?,
                                None => return Err(self.bad_op(op)),
                            }
                        }
                        _ => return Err(self.bad_kinds(op)),
                    }
                }
            };
            vals.push(v);
        }
        self.folded(ty, vals)
    }

    fn bad_kinds(&self, op: SOp) -> CompileError {
        malformed(format!(
            "OpSpecConstantOp {op:?} on operands of the wrong type"
        ))
    }

    fn bad_op(&self, op: SOp) -> CompileError {
        malformed(format!(
            "Op{op:?} is not allowed in OpSpecConstantOp in the OpenCL environment"
        ))
    }

    /// An operation that cannot be folded (an operand is an address): the same
    /// instruction, evaluated where it is used.
    fn expr_op(&self, op: SOp, ids: &[Id]) -> Result<Op, CompileError> {
        use SOp as S;
        let a = |i: usize| -> Result<Id, CompileError> {
            ids.get(i)
                .copied()
                .ok_or_else(|| malformed(format!("OpSpecConstantOp {op:?}: operand missing")))
        };
        let bin = |b: BinOp| -> Result<Op, CompileError> { Ok(Op::Binary(b, a(0)?, a(1)?)) };
        Ok(match op {
            S::IAdd => bin(BinOp::IAdd)?,
            S::ISub => bin(BinOp::ISub)?,
            S::IMul => bin(BinOp::IMul)?,
            S::UDiv => bin(BinOp::UDiv)?,
            S::SDiv => bin(BinOp::SDiv)?,
            S::UMod => bin(BinOp::UMod)?,
            S::SRem => bin(BinOp::SRem)?,
            S::SMod => bin(BinOp::SMod)?,
            S::BitwiseAnd => bin(BinOp::And)?,
            S::BitwiseOr => bin(BinOp::Or)?,
            S::BitwiseXor => bin(BinOp::Xor)?,
            S::ShiftLeftLogical => bin(BinOp::Shl)?,
            S::ShiftRightLogical => bin(BinOp::LShr)?,
            S::ShiftRightArithmetic => bin(BinOp::AShr)?,
            S::IEqual => bin(BinOp::IEqual)?,
            S::INotEqual => bin(BinOp::INotEqual)?,
            S::UConvert | S::SConvert => Op::Convert {
                op: if op == S::UConvert {
                    ConvOp::UConvert
                } else {
                    ConvOp::SConvert
                },
                value: a(0)?,
                saturate: false,
                rounding: None,
            },
            S::Bitcast => Op::Bitcast(a(0)?),
            S::Select => Op::Select {
                cond: a(0)?,
                a: a(1)?,
                b: a(2)?,
            },
            _ => {
                return Err(unsupported(format!(
                    "OpSpecConstantOp {op:?} on an address is not supported"
                )))
            }
        })
    }

    /// `Bitcast` of folded components to `ty` (same total size, any shapes).
    fn fold_bitcast(
        &mut self,
        src: &(Id, Vec<u64>),
        kind: Kind,
        ty: Id,
    ) -> Result<ConstValue, CompileError> {
        let (relem, rn) = self.shape(ty)?;
        let rk = self.kind(relem)?;
        let (sb, rb) = (kind.bits(), rk.bits());
        if sb % 8 != 0 || rb % 8 != 0 || sb as usize * src.1.len() != rb as usize * rn {
            return Err(malformed(
                "OpSpecConstantOp Bitcast between types of different sizes",
            ));
        }
        let mut bytes = Vec::new();
        for v in &src.1 {
            bytes.extend_from_slice(&v.to_le_bytes()[..(sb / 8) as usize]);
        }
        let vals = bytes
            .chunks((rb / 8) as usize)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..c.len()].copy_from_slice(c);
                u64::from_le_bytes(b)
            })
            .collect();
        self.folded(ty, vals)
    }

    /// The constant reached from `id` through composite `indices`.
    fn extract_id(&mut self, id: Id, indices: &[u32]) -> Result<(Id, Id), CompileError> {
        let mut cur = id;
        for &i in indices {
            let c = self.m.constants.get(&cur).cloned().ok_or_else(|| {
                malformed(format!(
                    "OpSpecConstantOp CompositeExtract: %{cur} is not a constant"
                ))
            })?;
            let member = self.member_type(c.ty, i)?;
            cur = match &c.value {
                ConstValue::Composite(parts) => *parts.get(i as usize).ok_or_else(|| {
                    malformed(format!(
                        "OpSpecConstantOp CompositeExtract: index {i} out of range"
                    ))
                })?,
                ConstValue::Null | ConstValue::Undef => {
                    let z = self.m.bound;
                    self.m.bound += 1;
                    self.m.constants.insert(
                        z,
                        Constant {
                            ty: member,
                            value: c.value.clone(),
                        },
                    );
                    z
                }
                _ => {
                    return Err(malformed(
                        "OpSpecConstantOp CompositeExtract of a non-composite",
                    ))
                }
            };
        }
        let ty = self
            .m
            .constants
            .get(&cur)
            .map(|c| c.ty)
            .ok_or_else(|| malformed("OpSpecConstantOp CompositeExtract of a non-constant"))?;
        Ok((cur, ty))
    }

    /// Member `i` of composite type `ty`.
    fn member_type(&self, ty: Id, i: u32) -> Result<Id, CompileError> {
        let m = match self.m.types.get(&ty) {
            Some(Type::Vector { elem, count }) if i < *count => Some(*elem),
            Some(Type::Array { elem, len }) if u64::from(i) < *len => Some(*elem),
            Some(Type::Struct { members, .. }) => members.get(i as usize).copied(),
            _ => None,
        };
        m.ok_or_else(|| malformed(format!("composite index {i} out of range of %{ty}")))
    }

    fn fold_extract(
        &mut self,
        composite: Id,
        indices: &[u32],
        ty: Id,
    ) -> Result<ConstValue, CompileError> {
        let (cur, cty) = self.extract_id(composite, indices)?;
        if cty != ty && self.m.types.get(&cty) != self.m.types.get(&ty) {
            return Err(malformed(
                "OpSpecConstantOp CompositeExtract: result type differs from the member type",
            ));
        }
        Ok(self.m.constants[&cur].value.clone())
    }

    fn fold_insert(
        &mut self,
        object: Id,
        composite: Id,
        indices: &[u32],
        ty: Id,
    ) -> Result<ConstValue, CompileError> {
        let Some((&first, rest)) = indices.split_first() else {
            return Ok(self
                .m
                .constants
                .get(&object)
                .ok_or_else(|| malformed("OpSpecConstantOp CompositeInsert of a non-constant"))?
                .value
                .clone());
        };
        let c = self
            .m
            .constants
            .get(&composite)
            .cloned()
            .ok_or_else(|| malformed("OpSpecConstantOp CompositeInsert into a non-constant"))?;
        let n = match self.m.types.get(&ty) {
            Some(Type::Vector { count, .. }) => *count as usize,
            Some(Type::Array { len, .. }) if *len <= 1 << 16 => *len as usize,
            Some(Type::Struct { members, .. }) => members.len(),
            _ => {
                return Err(malformed(
                    "OpSpecConstantOp CompositeInsert: not a composite type",
                ))
            }
        };
        let mut parts = Vec::with_capacity(n);
        for i in 0..n as u32 {
            let (p, _) = self.extract_id(composite, &[i])?;
            parts.push(p);
        }
        let slot = parts.get_mut(first as usize).ok_or_else(|| {
            malformed(format!(
                "OpSpecConstantOp CompositeInsert: index {first} out of range"
            ))
        })?;
        let member_ty = self.member_type(c.ty, first)?;
        let inner = self.fold_insert(object, *slot, rest, member_ty)?;
        let id = self.m.bound;
        self.m.bound += 1;
        self.m.constants.insert(
            id,
            Constant {
                ty: member_ty,
                value: inner,
            },
        );
        parts[first as usize] = id;
        Ok(ConstValue::Composite(parts))
    }
}
