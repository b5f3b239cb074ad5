//! Function bodies: blocks, their instructions and terminators.

use rspirv::dr::{self, Operand};
use rspirv::spirv::Op as SOp;

use super::operands::*;
use super::{malformed, Decoder};
use crate::spirv::*;
use crate::CompileError;

impl Decoder {
    pub(super) fn function(&mut self, f: &dr::Function) -> Result<(), CompileError> {
        let def = f
            .def
            .as_ref()
            .ok_or_else(|| malformed("OpFunction missing"))?;
        let id = result(def)?;
        let ret = result_ty(def)?;
        let name = self.m.name_of(id);
        let mut params = Vec::new();
        for p in &f.parameters {
            params.push((result(p)?, result_ty(p)?));
        }
        let import = self.m.decorations.get(&id).and_then(|d| d.import.clone());
        let mut blocks = Vec::new();
        for b in &f.blocks {
            let label =
                b.label.as_ref().and_then(|l| l.result_id).ok_or_else(|| {
                    malformed(format!("block without a label in function {name}"))
                })?;
            let mut insts = Vec::new();
            let mut term = None;
            for inst in &b.instructions {
                if term.is_some() {
                    return Err(malformed(format!(
                        "instruction after the terminator of block %{label} in function {name}"
                    )));
                }
                match self.terminator(inst)? {
                    Some(t) => term = Some(t),
                    None => {
                        let op = self.inst(inst).map_err(|mut e| {
                            e.message = format!("{} in function {name}", e.message);
                            e
                        })?;
                        insts.push(Inst {
                            result: inst.result_id,
                            ty: inst.result_type,
                            op,
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
                params,
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
            SOp::Unreachable | SOp::Kill => Terminator::Unreachable,
            _ => return Ok(None),
        }))
    }
}
