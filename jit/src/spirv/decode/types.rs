//! The module-scope section: types, constants and global variables, each checked to
//! name only types and constants declared before it.

use rspirv::dr::{self, Operand};
use rspirv::spirv::Op as SOp;

use super::operands::*;
use super::{malformed, unsupported, Decoder};
use crate::spirv::*;
use crate::CompileError;

impl Decoder {
    pub(super) fn type_or_global(&mut self, t: &dr::Instruction) -> Result<(), CompileError> {
        let op = t.class.opcode;
        if let Some(id) = t.result_id {
            self.def(id)?;
        }
        let ty = match op {
            SOp::TypeVoid => Some(Type::Void),
            SOp::TypeBool => Some(Type::Bool),
            SOp::TypeInt => {
                let bits = lit_at(t, 0)?;
                if lit_at(t, 1)? != 0 {
                    return Err(malformed(format!(
                        "OpTypeInt %{}: the OpenCL environment only has signedness 0",
                        result(t)?
                    )));
                }
                if ![8, 16, 32, 64].contains(&bits) {
                    return Err(unsupported(format!("unsupported integer width {bits}")));
                }
                Some(Type::Int { bits })
            }
            SOp::TypeFloat => {
                let bits = lit_at(t, 0)?;
                if ![16, 32, 64].contains(&bits) {
                    return Err(unsupported(format!("unsupported float width {bits}")));
                }
                Some(Type::Float { bits })
            }
            SOp::TypeVector => Some(Type::Vector {
                elem: id_at(t, 0)?,
                count: lit_at(t, 1)?,
            }),
            SOp::TypeArray => {
                let len_id = id_at(t, 1)?;
                let len = match self.m.constants.get(&len_id) {
                    Some(Constant {
                        value: ConstValue::Scalar(v),
                        ty,
                    }) if matches!(self.m.types.get(ty), Some(Type::Int { .. })) => *v,
                    _ => {
                        return Err(malformed(format!(
                            "array type %{} has a length %{len_id} that is not an integer constant",
                            result(t)?
                        )))
                    }
                };
                Some(Type::Array {
                    elem: id_at(t, 0)?,
                    len,
                })
            }
            SOp::TypeRuntimeArray => Some(Type::RuntimeArray { elem: id_at(t, 0)? }),
            SOp::TypeStruct => {
                let id = result(t)?;
                let packed = self.m.decorations.get(&id).is_some_and(|d| d.packed);
                Some(Type::Struct {
                    members: ids_from(t, 0)?,
                    packed,
                })
            }
            SOp::TypePointer => {
                let Some(Operand::StorageClass(sc)) = t.operands.first() else {
                    return Err(malformed("OpTypePointer without a storage class"));
                };
                Some(Type::Pointer {
                    storage: storage_of(*sc)?,
                    pointee: id_at(t, 1)?,
                })
            }
            SOp::TypeFunction => Some(Type::Function {
                ret: id_at(t, 0)?,
                params: ids_from(t, 1)?,
            }),
            SOp::TypeEvent | SOp::TypeDeviceEvent | SOp::TypeReserveId => Some(Type::Event),
            SOp::TypeQueue => Some(Type::Queue),
            SOp::TypeOpaque => Some(Type::Opaque(match t.operands.first() {
                Some(Operand::LiteralString(n)) => n.clone(),
                _ => String::new(),
            })),
            SOp::TypeImage => Some(Type::Unsupported("image")),
            SOp::TypeSampler => Some(Type::Unsupported("sampler")),
            SOp::TypeSampledImage => Some(Type::Unsupported("sampled image")),
            // Access qualifier: ReadOnly 0, WriteOnly 1, ReadWrite 2.
            SOp::TypePipe => Some(Type::Pipe {
                write: matches!(
                    t.operands.first(),
                    Some(Operand::AccessQualifier(
                        rspirv::spirv::AccessQualifier::WriteOnly
                    ))
                ),
            }),
            SOp::TypeForwardPointer => {
                // Structs may use the pointer before its OpTypePointer.
                self.forward_pointers.insert(id_at(t, 0)?);
                return Ok(());
            }
            _ => None,
        };
        if let Some(ty) = ty {
            // Composite types may only use types declared before them (no cycles: the
            // layout and lowering recurse through them).
            let parts: Vec<Id> = match &ty {
                Type::Vector { elem, .. }
                | Type::Array { elem, .. }
                | Type::RuntimeArray { elem } => vec![*elem],
                Type::Struct { members, .. } => members.clone(),
                Type::Function { ret, params } => std::iter::once(*ret)
                    .chain(params.iter().copied())
                    .collect(),
                _ => Vec::new(),
            };
            if let Type::Pointer { pointee, .. } = &ty {
                if !self.m.types.contains_key(pointee) {
                    return Err(malformed(format!(
                        "pointer type %{} points to %{pointee}, which is not a type declared before it",
                        result(t)?
                    )));
                }
            }
            if let Some(bad) = parts
                .iter()
                .find(|p| !self.m.types.contains_key(p) && !self.forward_pointers.contains(p))
            {
                return Err(malformed(format!(
                    "type %{} uses %{bad}, which is not a type declared before it",
                    result(t)?
                )));
            }
            self.m.types.insert(result(t)?, ty);
            return Ok(());
        }
        let value = match op {
            SOp::Constant | SOp::SpecConstant => {
                let v = match t.operands.first() {
                    Some(Operand::LiteralBit32(v)) => u64::from(*v),
                    Some(Operand::LiteralBit64(v)) => *v,
                    other => return Err(malformed(format!("OpConstant with operand {other:?}"))),
                };
                // Narrow types: the literal's high-order bits are 0 (signedness 0,
                // floats).
                let bits = match self.m.types.get(&result_ty(t)?) {
                    Some(Type::Int { bits } | Type::Float { bits }) => *bits,
                    _ => 64,
                };
                if bits < 64 && v >> bits != 0 {
                    return Err(malformed(format!(
                        "OpConstant %{}: {v:#x} does not fit its {bits}-bit type",
                        result(t)?
                    )));
                }
                ConstValue::Scalar(v)
            }
            SOp::ConstantTrue | SOp::SpecConstantTrue => ConstValue::Scalar(1),
            SOp::ConstantFalse | SOp::SpecConstantFalse => ConstValue::Scalar(0),
            SOp::ConstantNull => ConstValue::Null,
            SOp::Undef => match self.lifted_spec_ops.remove(&result(t)?) {
                Some(lifted) => self.spec_constant_op(&lifted, result_ty(t)?)?,
                None => ConstValue::Undef,
            },
            SOp::ConstantComposite | SOp::SpecConstantComposite => {
                ConstValue::Composite(ids_from(t, 0)?)
            }
            SOp::Variable => {
                let id = result(t)?;
                let ty = result_ty(t)?;
                let Some(Operand::StorageClass(sc)) = t.operands.first() else {
                    return Err(malformed("OpVariable without a storage class"));
                };
                let storage = storage_of(*sc)?;
                let init = match t.operands.get(1) {
                    Some(Operand::IdRef(i)) => Some(*i),
                    _ => None,
                };
                let builtin = self.m.decorations.get(&id).and_then(|d| d.builtin);
                if storage == Storage::Input && builtin.is_none() {
                    return Err(unsupported(format!(
                        "input variable {} is not a built-in",
                        self.m.name_of(id)
                    )));
                }
                let name = self.m.name_of(id);
                self.m.globals.insert(
                    id,
                    GlobalVar {
                        ty,
                        storage,
                        builtin,
                        init,
                        name,
                    },
                );
                self.m.global_order.push(id);
                return Ok(());
            }
            SOp::ConstantSampler => {
                return Err(unsupported(
                    "samplers (OpConstantSampler) are not supported yet",
                ))
            }
            SOp::SpecConstantOp => {
                let ty = result_ty(t)?;
                if !self.m.types.contains_key(&ty) {
                    return Err(malformed(format!(
                        "constant %{} has type %{ty}, which is not a type",
                        result(t)?
                    )));
                }
                self.spec_constant_op(t, ty)?
            }
            // Non-semantic instructions may sit between the types; the async copies
            // of NonSemantic.Codeplay.GroupAsyncCopies have semantics and need a
            // work-group: only in a function.
            SOp::ExtInst => {
                let set = t.operands.first().and_then(|o| match o {
                    Operand::IdRef(s) => self.ext_sets.get(s),
                    _ => None,
                });
                if set.is_some_and(|s| s == super::GROUP_ASYNC_COPIES_SET) {
                    return Err(malformed(
                        "a NonSemantic.Codeplay.GroupAsyncCopies instruction at module scope",
                    ));
                }
                return Ok(());
            }
            SOp::Line | SOp::NoLine => return Ok(()),
            other => {
                return Err(unsupported(format!(
                    "unsupported SPIR-V instruction Op{other:?} at module scope"
                )))
            }
        };
        if let ConstValue::Composite(parts) = &value {
            // A part may be a module-scope variable: its address (`{ &v, 1 }`).
            let known = |p: &Id| self.m.constants.contains_key(p) || self.m.globals.contains_key(p);
            if let Some(bad) = parts.iter().find(|p| !known(p)) {
                return Err(malformed(format!(
                    "constant %{} uses %{bad}, which is not a constant declared before it",
                    result(t)?
                )));
            }
        }
        let ty = result_ty(t)?;
        if !self.m.types.contains_key(&ty) {
            return Err(malformed(format!(
                "constant %{} has type %{ty}, which is not a type",
                result(t)?
            )));
        }
        self.m.constants.insert(result(t)?, Constant { ty, value });
        Ok(())
    }
}
