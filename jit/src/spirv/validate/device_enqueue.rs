//! Operand rules of the device-side enqueue instructions (`Op::DeviceEnqueue`), so
//! that `lower::enqueue_spirv` meets queues, events, ND-ranges, block literals and
//! invoke functions where it expects them.
//!
//! Producers differ from the letter of the SPIR-V spec in two places, both accepted:
//! the `ND Range` operand of `OpEnqueueKernel` and the sub-group queries may be a
//! pointer to the `ndrange_t` struct instead of the struct value, and the `Local Size`
//! operands may be pointers to the sizes (SPIRV-LLVM-Translator and LLVM's SPIR-V
//! backend pass both as pointers).

use super::{err, Validator, Values};
use crate::spirv::{EnqueueOp, Id, Storage, Type};
use crate::CompileError;

impl EnqueueOp {
    /// The instruction's name in the SPIR-V spec (without `Op`).
    pub fn spirv_name(self) -> &'static str {
        use EnqueueOp as E;
        match self {
            E::BuildNdRange => "BuildNDRange",
            E::GetDefaultQueue => "GetDefaultQueue",
            E::EnqueueKernel => "EnqueueKernel",
            E::EnqueueMarker => "EnqueueMarker",
            E::KernelWorkGroupSize => "GetKernelWorkGroupSize",
            E::KernelPreferredMultiple => "GetKernelPreferredWorkGroupSizeMultiple",
            E::KernelNdRangeSubGroupCount => "GetKernelNDrangeSubGroupCount",
            E::KernelNdRangeMaxSubGroupSize => "GetKernelNDrangeMaxSubGroupSize",
            E::KernelLocalSizeForSubgroupCount => "GetKernelLocalSizeForSubgroupCount",
            E::KernelMaxNumSubgroups => "GetKernelMaxNumSubgroups",
            E::CreateUserEvent => "CreateUserEvent",
            E::RetainEvent => "RetainEvent",
            E::ReleaseEvent => "ReleaseEvent",
            E::IsValidEvent => "IsValidEvent",
            E::SetUserEventStatus => "SetUserEventStatus",
            E::CaptureEventProfilingInfo => "CaptureEventProfilingInfo",
        }
    }

    /// Number of id operands after the result, `Invoke` not counted (`OpEnqueueKernel`:
    /// the least number, before its `Local Size` operands).
    pub fn operand_count(self) -> usize {
        use EnqueueOp as E;
        match self {
            E::BuildNdRange => 3,
            E::GetDefaultQueue | E::CreateUserEvent => 0,
            E::EnqueueKernel => 9,
            E::EnqueueMarker => 4,
            E::KernelWorkGroupSize | E::KernelPreferredMultiple | E::KernelMaxNumSubgroups => 3,
            E::KernelNdRangeSubGroupCount
            | E::KernelNdRangeMaxSubGroupSize
            | E::KernelLocalSizeForSubgroupCount => 4,
            E::RetainEvent | E::ReleaseEvent | E::IsValidEvent => 1,
            E::SetUserEventStatus => 2,
            E::CaptureEventProfilingInfo => 3,
        }
    }
}

impl Validator<'_> {
    /// Whether `ty` is the `ndrange_t` struct of the 64-bit OpenCL environment:
    /// `{ i32 dims, [3 x i64] offset, [3 x i64] global, [3 x i64] local }`.
    pub(super) fn is_ndrange_type(&self, ty: Id) -> bool {
        let Some(Type::Struct { members, .. }) = self.ty(ty) else {
            return false;
        };
        let size_array = |t: Id| match self.ty(t) {
            Some(Type::Array { elem, len: 3 }) => {
                matches!(self.ty(*elem), Some(Type::Int { bits: 64 }))
            }
            _ => false,
        };
        members.len() == 4
            && matches!(self.ty(members[0]), Some(Type::Int { bits: 32 }))
            && members[1..].iter().all(|&m| size_array(m))
    }

    /// `args` (ids after the result, `Invoke` apart), `invoke` and result type of
    /// device-enqueue instruction `op`.
    pub(super) fn device_enqueue_op(
        &self,
        op: EnqueueOp,
        args: &[Id],
        invoke: Option<Id>,
        rty: Option<Id>,
        values: &Values<'_>,
    ) -> Result<(), CompileError> {
        use EnqueueOp as E;
        let n = op.operand_count();
        if args.len() < n || (op != E::EnqueueKernel && args.len() != n) {
            return Err(err(format!(
                "takes {} operands, not {}",
                n + usize::from(invoke.is_some()),
                args.len() + usize::from(invoke.is_some())
            )));
        }
        let int32 = |id: Id, what: &str| -> Result<(), CompileError> {
            if self.int_scalar(values, id).ok() != Some(32) {
                return Err(err(format!("{what} %{id} must be a 32-bit integer")));
            }
            Ok(())
        };
        let queue = |id: Id| -> Result<(), CompileError> {
            match self.ty(self.operand(values, id)?) {
                Some(Type::Queue) => Ok(()),
                _ => Err(err(format!("Queue %{id} must be an OpTypeQueue value"))),
            }
        };
        let event = |id: Id| -> Result<(), CompileError> {
            match self.ty(self.operand(values, id)?) {
                Some(Type::Event) => Ok(()),
                _ => Err(err(format!(
                    "Event %{id} must be an OpTypeDeviceEvent value"
                ))),
            }
        };
        let event_ptr = |id: Id, what: &str| -> Result<(), CompileError> {
            let (_, p) = self
                .pointer_operand(values, id)
                .map_err(|_| err(format!("{what} %{id} must be a pointer to device events")))?;
            match self.ty(p) {
                Some(Type::Event) => Ok(()),
                _ => Err(err(format!("{what} %{id} must point to device events"))),
            }
        };
        let ndrange = |id: Id| -> Result<(), CompileError> {
            let t = self.operand(values, id)?;
            let ok = self.is_ndrange_type(t)
                || self
                    .pointer(t)
                    .is_some_and(|(_, p)| self.is_ndrange_type(p));
            if !ok {
                return Err(err(format!(
                    "ND Range %{id} must be an ndrange_t struct (OpBuildNDRange's result type) or a pointer to one"
                )));
            }
            Ok(())
        };
        // Param, Param Size, Param Align.
        let block = |ids: &[Id]| -> Result<(), CompileError> {
            self.pointer_operand(values, ids[0])
                .map_err(|_| err(format!("Param %{} must be a pointer", ids[0])))?;
            int32(ids[1], "Param Size")?;
            int32(ids[2], "Param Align")
        };
        match op {
            E::BuildNdRange => {
                let mut dims = None;
                for &a in args {
                    let t = self.operand(values, a)?;
                    let d = match self.ty(t) {
                        Some(Type::Int { bits: 64 }) => 1,
                        Some(Type::Array {
                            elem,
                            len: len @ (2 | 3),
                        }) if matches!(self.ty(*elem), Some(Type::Int { bits: 64 })) => *len,
                        _ => {
                            return Err(err(format!(
                                "%{a} must be a 64-bit integer or an array of 2 or 3 of them"
                            )))
                        }
                    };
                    if dims.is_some_and(|x| x != d) {
                        return Err(err(
                            "the global size, local size and offset differ in dimensions",
                        ));
                    }
                    dims = Some(d);
                }
            }
            E::GetDefaultQueue | E::CreateUserEvent => {}
            E::EnqueueKernel => {
                queue(args[0])?;
                int32(args[1], "Flags")?;
                ndrange(args[2])?;
                int32(args[3], "Num Events")?;
                event_ptr(args[4], "Wait Events")?;
                event_ptr(args[5], "Ret Event")?;
                block(&args[6..9])?;
                for &l in &args[9..] {
                    let t = self.operand(values, l)?;
                    let t = self.pointer(t).map_or(t, |(_, p)| p);
                    if !matches!(self.ty(t), Some(Type::Int { bits: 32 | 64 })) {
                        return Err(err(format!(
                            "Local Size %{l} must be a 32- or 64-bit integer (or a pointer to one)"
                        )));
                    }
                }
            }
            E::EnqueueMarker => {
                queue(args[0])?;
                int32(args[1], "Num Events")?;
                event_ptr(args[2], "Wait Events")?;
                event_ptr(args[3], "Ret Event")?;
            }
            E::KernelWorkGroupSize | E::KernelPreferredMultiple | E::KernelMaxNumSubgroups => {
                block(args)?
            }
            E::KernelNdRangeSubGroupCount | E::KernelNdRangeMaxSubGroupSize => {
                ndrange(args[0])?;
                block(&args[1..])?;
            }
            E::KernelLocalSizeForSubgroupCount => {
                int32(args[0], "Subgroup Count")?;
                block(&args[1..])?;
            }
            E::RetainEvent | E::ReleaseEvent | E::IsValidEvent => event(args[0])?,
            E::SetUserEventStatus => {
                event(args[0])?;
                int32(args[1], "Status")?;
            }
            E::CaptureEventProfilingInfo => {
                event(args[0])?;
                int32(args[1], "Profiling Info")?;
                self.pointer_operand(values, args[2])?;
            }
        }
        if let Some(f) = invoke {
            self.invoke_function(f, (op == E::EnqueueKernel).then(|| args.len() - 9))?;
        }
        let r = rty.and_then(|t| self.ty(t));
        let ok = match op {
            E::BuildNdRange => rty.is_some_and(|t| self.is_ndrange_type(t)),
            E::GetDefaultQueue => matches!(r, Some(Type::Queue)),
            E::CreateUserEvent => matches!(r, Some(Type::Event)),
            E::IsValidEvent => matches!(r, Some(Type::Bool)),
            E::RetainEvent
            | E::ReleaseEvent
            | E::SetUserEventStatus
            | E::CaptureEventProfilingInfo => rty.is_none(),
            _ => matches!(r, Some(Type::Int { bits: 32 })),
        };
        if !ok {
            return Err(err("wrong result type"));
        }
        Ok(())
    }

    /// `Invoke` is a defined function returning void whose first parameter is a
    /// pointer (the block literal) and whose others are `__local` pointers, one per
    /// `Local Size` operand (`locals`, for `OpEnqueueKernel`).
    fn invoke_function(&self, f: Id, locals: Option<usize>) -> Result<(), CompileError> {
        let func = self
            .m
            .functions
            .get(&f)
            .filter(|func| func.import.is_none() && !func.blocks.is_empty())
            .ok_or_else(|| {
                err(format!(
                    "Invoke %{f} must be a function defined in the module"
                ))
            })?;
        if !matches!(self.ty(func.ret), Some(Type::Void)) {
            return Err(err(format!("Invoke %{f} must return void")));
        }
        let Some(((_, first), rest)) = func.params.split_first() else {
            return Err(err(format!(
                "Invoke %{f} must take the block literal pointer"
            )));
        };
        if self.pointer(*first).is_none() {
            return Err(err(format!(
                "the first parameter of Invoke %{f} must be a pointer"
            )));
        }
        if rest
            .iter()
            .any(|(_, t)| !matches!(self.pointer(*t), Some((Storage::Workgroup, _))))
        {
            return Err(err(format!(
                "the parameters of Invoke %{f} after the first must be Workgroup pointers"
            )));
        }
        if locals.is_some_and(|n| n != rest.len()) {
            return Err(err(format!(
                "Invoke %{f} takes {} __local pointers, given {} Local Size operands",
                rest.len(),
                locals.unwrap_or(0)
            )));
        }
        Ok(())
    }
}
