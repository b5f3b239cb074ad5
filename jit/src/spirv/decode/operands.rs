//! Reading the operands of an `rspirv` instruction as ids and literals, each a
//! `Malformed` error naming the instruction when the operand has another kind.

use rspirv::dr::{self, Operand};
use rspirv::spirv;

use super::{malformed, unsupported};
use crate::spirv::{Id, Storage};
use crate::CompileError;

pub(super) fn id_at(inst: &dr::Instruction, i: usize) -> Result<Id, CompileError> {
    match inst.operands.get(i) {
        Some(Operand::IdRef(id))
        | Some(Operand::IdScope(id))
        | Some(Operand::IdMemorySemantics(id)) => Ok(*id),
        other => Err(malformed(format!(
            "Op{:?}: operand {i} should be an id, found {other:?}",
            inst.class.opcode
        ))),
    }
}

pub(super) fn lit_at(inst: &dr::Instruction, i: usize) -> Result<u32, CompileError> {
    match inst.operands.get(i) {
        Some(Operand::LiteralBit32(v)) | Some(Operand::LiteralExtInstInteger(v)) => Ok(*v),
        other => Err(malformed(format!(
            "Op{:?}: operand {i} should be a literal, found {other:?}",
            inst.class.opcode
        ))),
    }
}

pub(super) fn ids_from(inst: &dr::Instruction, start: usize) -> Result<Vec<Id>, CompileError> {
    (start..inst.operands.len())
        .map(|i| id_at(inst, i))
        .collect()
}

pub(super) fn lits_from(inst: &dr::Instruction, start: usize) -> Result<Vec<u32>, CompileError> {
    (start..inst.operands.len())
        .map(|i| lit_at(inst, i))
        .collect()
}

pub(super) fn result(inst: &dr::Instruction) -> Result<Id, CompileError> {
    inst.result_id
        .ok_or_else(|| malformed(format!("Op{:?} without a result id", inst.class.opcode)))
}

pub(super) fn result_ty(inst: &dr::Instruction) -> Result<Id, CompileError> {
    inst.result_type
        .ok_or_else(|| malformed(format!("Op{:?} without a result type", inst.class.opcode)))
}

pub(super) fn storage_of(sc: spirv::StorageClass) -> Result<Storage, CompileError> {
    use spirv::StorageClass as S;
    Ok(match sc {
        S::Function => Storage::Function,
        // Private needs the Shader (or VectorComputeINTEL) capability, which an
        // OpenCL module cannot declare.
        S::Private => return Err(malformed(
            "storage class Private requires the Shader capability (not in the OpenCL environment)",
        )),
        S::CrossWorkgroup => Storage::CrossWorkgroup,
        S::UniformConstant => Storage::UniformConstant,
        S::Workgroup => Storage::Workgroup,
        S::Input => Storage::Input,
        S::Generic => Storage::Generic,
        other => return Err(unsupported(format!("unsupported storage class {other:?}"))),
    })
}
