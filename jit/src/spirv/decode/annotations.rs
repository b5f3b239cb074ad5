//! Decorations (`OpDecorate` and friends) into [`Decorations`]: the ones that change
//! code generation are recorded, built-ins we do not provide are refused.

use rspirv::dr::{self, Operand};
use rspirv::spirv::{self, Op as SOp};

use super::operands::id_at;
use super::{unsupported, Decoder};
use crate::spirv::{BuiltIn, Id, Rounding};
use crate::CompileError;

/// Built-ins the code generator provides.
pub(super) fn builtin_supported(b: BuiltIn) -> bool {
    use BuiltIn as B;
    matches!(
        b,
        B::GlobalInvocationId
            | B::LocalInvocationId
            | B::WorkgroupId
            | B::NumWorkgroups
            | B::GlobalSize
            | B::WorkgroupSize
            | B::EnqueuedWorkgroupSize
            | B::GlobalOffset
            | B::GlobalLinearId
            | B::LocalInvocationIndex
            | B::WorkDim
            | B::SubgroupSize
            | B::SubgroupMaxSize
            | B::NumSubgroups
            | B::NumEnqueuedSubgroups
            | B::SubgroupId
            | B::SubgroupLocalInvocationId
    )
}

impl Decoder {
    pub(super) fn annotation(&mut self, a: &dr::Instruction) -> Result<(), CompileError> {
        use spirv::Decoration as D;
        let targets: Vec<Id>;
        let deco_at: usize;
        match a.class.opcode {
            SOp::Decorate => {
                targets = vec![id_at(a, 0)?];
                deco_at = 1;
            }
            SOp::MemberDecorate
            | SOp::DecorationGroup
            | SOp::GroupDecorate
            | SOp::GroupMemberDecorate => return Ok(()),
            _ => return Ok(()),
        }
        let Some(Operand::Decoration(deco)) = a.operands.get(deco_at) else {
            return Ok(());
        };
        for t in targets {
            let d = self.m.decorations.entry(t).or_default();
            match deco {
                D::Alignment => {
                    if let Some(Operand::LiteralBit32(v)) = a.operands.get(deco_at + 1) {
                        d.alignment = Some(*v);
                    }
                }
                D::FPRoundingMode => {
                    if let Some(Operand::FPRoundingMode(r)) = a.operands.get(deco_at + 1) {
                        d.rounding = Some(match r {
                            spirv::FPRoundingMode::RTE => Rounding::Rte,
                            spirv::FPRoundingMode::RTZ => Rounding::Rtz,
                            spirv::FPRoundingMode::RTP => Rounding::Rtp,
                            spirv::FPRoundingMode::RTN => Rounding::Rtn,
                        });
                    }
                }
                D::SaturatedConversion => d.saturated = true,
                D::CPacked => d.packed = true,
                D::Volatile => d.volatile = true,
                D::BuiltIn => {
                    if let Some(Operand::BuiltIn(b)) = a.operands.get(deco_at + 1) {
                        if !builtin_supported(*b) {
                            return Err(unsupported(format!(
                                "unsupported built-in variable {b:?}"
                            )));
                        }
                        d.builtin = Some(*b);
                    }
                }
                D::FuncParamAttr => {
                    if let Some(Operand::FunctionParameterAttribute(p)) =
                        a.operands.get(deco_at + 1)
                    {
                        d.param_attrs.push(*p);
                    }
                }
                D::LinkageAttributes => {
                    if let (
                        Some(Operand::LiteralString(name)),
                        Some(Operand::LinkageType(spirv::LinkageType::Import)),
                    ) = (a.operands.get(deco_at + 1), a.operands.get(deco_at + 2))
                    {
                        d.import = Some(name.clone());
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}
