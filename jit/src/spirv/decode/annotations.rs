//! Decorations (`OpDecorate` and friends) into [`Decorations`]: the ones that change
//! code generation are recorded, built-ins we do not provide are refused.

use rspirv::dr::{self, Operand};
use rspirv::spirv::{self, Op as SOp};

use super::operands::{id_at, ids_from};
use super::{malformed, unsupported, Decoder};
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
            | B::SubgroupEqMask
            | B::SubgroupGeMask
            | B::SubgroupGtMask
            | B::SubgroupLeMask
            | B::SubgroupLtMask
    )
}

impl Decoder {
    pub(super) fn annotation(&mut self, a: &dr::Instruction) -> Result<(), CompileError> {
        use spirv::Decoration as D;
        let targets: Vec<Id>;
        let deco_at: usize;
        match a.class.opcode {
            SOp::Decorate | SOp::DecorateId | SOp::DecorateString => {
                let target = id_at(a, 0)?;
                if let Some(group) = self.group_decorations.get_mut(&target) {
                    group.push(a.clone());
                    return Ok(());
                }
                targets = vec![target];
                deco_at = 1;
            }
            // Registered before the decorations are read (they precede it).
            SOp::DecorationGroup => return Ok(()),
            SOp::GroupDecorate => {
                // Each decoration of the group, applied to each target.
                let group = id_at(a, 0)?;
                let decos = self.group_decorations.get(&group).cloned().ok_or_else(|| {
                    malformed(format!(
                        "OpGroupDecorate of %{group}, which is not a decoration group"
                    ))
                })?;
                for target in ids_from(a, 1)? {
                    for d in &decos {
                        let mut one = d.clone();
                        one.operands[0] = Operand::IdRef(target);
                        self.in_group = true;
                        let r = self.annotation(&one);
                        self.in_group = false;
                        r?;
                    }
                }
                return Ok(());
            }
            // Member decorations (offsets, built-in members) change nothing for us.
            _ => return Ok(()),
        }
        let Some(Operand::Decoration(deco)) = a.operands.get(deco_at) else {
            return Err(malformed(format!(
                "Op{:?} without a decoration",
                a.class.opcode
            )));
        };
        // Decorations whose operands are ids go with OpDecorateId, and only they.
        let takes_id = matches!(
            deco,
            D::AlignmentId | D::MaxByteOffsetId | D::UniformId | D::CounterBuffer
        );
        if takes_id != (a.class.opcode == SOp::DecorateId) {
            return Err(malformed(format!(
                "decoration {deco:?} with Op{:?} (id operands need OpDecorateId, others OpDecorate)",
                a.class.opcode
            )));
        }
        for t in targets {
            self.m.decoration_list.push((t, *deco, self.in_group));
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
                D::NoSignedWrap => d.no_wrap.signed = true,
                D::NoUnsignedWrap => d.no_wrap.unsigned = true,
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
