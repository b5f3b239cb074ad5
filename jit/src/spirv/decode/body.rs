//! Function bodies: blocks, their instructions and terminators.

use rspirv::dr::{self, Operand};
use rspirv::spirv::Op as SOp;

use super::operands::*;
use super::{malformed, unsupported, Decoder};
use crate::spirv::*;
use crate::CompileError;

impl Decoder {
    pub(super) fn function(&mut self, f: &dr::Function) -> Result<(), CompileError> {
        let def = f
            .def
            .as_ref()
            .ok_or_else(|| malformed("OpFunction missing"))?;
        let id = result(def)?;
        self.def(id)?;
        let ret = result_ty(def)?;
        let ty = id_at(def, 1)?;
        let name = self.m.name_of(id);
        let mut params = Vec::new();
        for p in &f.parameters {
            self.def(result(p)?)?;
            params.push((result(p)?, result_ty(p)?));
        }
        let import = self.m.decorations.get(&id).and_then(|d| d.import.clone());
        let mut blocks = Vec::new();
        let mut merges = Vec::new();
        for b in &f.blocks {
            let label =
                b.label.as_ref().and_then(|l| l.result_id).ok_or_else(|| {
                    malformed(format!("block without a label in function {name}"))
                })?;
            self.def(label)?;
            let mut insts = Vec::new();
            let mut term = None;
            for (k, inst) in b.instructions.iter().enumerate() {
                if term.is_some() {
                    return Err(malformed(format!(
                        "instruction after the terminator of block %{label} in function {name}"
                    )));
                }
                if let Some(m) = merge(inst, label, b.instructions.get(k + 1))
                    .map_err(|e| malformed(format!("{e} in function {name}")))?
                {
                    merges.push(m);
                    continue;
                }
                match self.terminator(inst)? {
                    Some(t) => term = Some(t),
                    None => {
                        if let Some(r) = inst.result_id {
                            self.def(r)?;
                        }
                        let op = self.inst(inst).map_err(|mut e| {
                            e.message = format!("{} in function {name}", e.message);
                            e
                        })?;
                        let wrap = inst
                            .result_id
                            .and_then(|r| self.m.decorations.get(&r))
                            .map(|d| d.no_wrap)
                            .unwrap_or_default();
                        insts.push(Inst {
                            result: inst.result_id,
                            ty: inst.result_type,
                            op,
                            wrap,
                        });
                    }
                }
            }
            let term = term.ok_or_else(|| {
                malformed(format!(
                    "block %{label} of function {name} has no terminator"
                ))
            })?;
            blocks.push(Block { label, insts, term });
        }
        self.m.functions.insert(
            id,
            Function {
                id,
                name,
                ret,
                ty,
                params,
                merges,
                blocks,
                import,
            },
        );
        Ok(())
    }

    pub(super) fn terminator(
        &self,
        inst: &dr::Instruction,
    ) -> Result<Option<Terminator>, CompileError> {
        Ok(Some(match inst.class.opcode {
            SOp::Branch => Terminator::Branch(id_at(inst, 0)?),
            SOp::BranchConditional => Terminator::BranchCond {
                cond: id_at(inst, 0)?,
                t: id_at(inst, 1)?,
                f: id_at(inst, 2)?,
            },
            SOp::Switch => {
                let selector = id_at(inst, 0)?;
                let default = id_at(inst, 1)?;
                let mut targets = Vec::new();
                let mut i = 2;
                while i + 1 < inst.operands.len() + 1 && i < inst.operands.len() {
                    let v = match &inst.operands[i] {
                        Operand::LiteralBit32(v) => u64::from(*v),
                        Operand::LiteralBit64(v) => *v,
                        other => return Err(malformed(format!("OpSwitch literal {other:?}"))),
                    };
                    let target = id_at(inst, i + 1)?;
                    targets.push((v, target));
                    i += 2;
                }
                Terminator::Switch {
                    selector,
                    default,
                    targets,
                }
            }
            SOp::Return => Terminator::Return,
            SOp::ReturnValue => Terminator::ReturnValue(id_at(inst, 0)?),
            SOp::Unreachable => Terminator::Unreachable,
            SOp::Kill => {
                return Err(unsupported(
                    "OpKill is a fragment-shader instruction (Shader capability)",
                ))
            }
            _ => return Ok(None),
        }))
    }
}

/// A merge instruction of block `label` (None for other instructions), checked to
/// come right before the terminator it qualifies.
fn merge(
    inst: &dr::Instruction,
    label: Id,
    next: Option<&dr::Instruction>,
) -> Result<Option<Merge>, String> {
    let (continue_target, allowed): (Option<Id>, &[SOp]) = match inst.class.opcode {
        SOp::SelectionMerge => (None, &[SOp::BranchConditional, SOp::Switch]),
        SOp::LoopMerge => (
            Some(id_at(inst, 1).map_err(|e| e.message)?),
            &[SOp::Branch, SOp::BranchConditional],
        ),
        _ => return Ok(None),
    };
    let merge = id_at(inst, 0).map_err(|e| e.message)?;
    match next.map(|n| n.class.opcode) {
        Some(op) if allowed.contains(&op) => Ok(Some(Merge {
            block: label,
            merge,
            continue_target,
        })),
        other => Err(format!(
            "Op{:?} in block %{label} must come right before {}, found {}",
            inst.class.opcode,
            allowed
                .iter()
                .map(|o| format!("Op{o:?}"))
                .collect::<Vec<_>>()
                .join(" or "),
            other.map_or("the end of the block".into(), |o| format!("Op{o:?}"))
        )),
    }
}
