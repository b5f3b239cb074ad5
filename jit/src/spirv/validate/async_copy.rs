//! Operand rules of the cl_khr_extended_async_copies copies: the
//! `NonSemantic.Codeplay.GroupAsyncCopies` instructions and the OpenCL C built-ins
//! `async_work_group_copy_2D2D`/`_3D3D` (calls of imported functions) share them, so
//! that lowering meets one shape whichever way the copy arrived.

use super::{err, Validator, Values};
use crate::spirv::{Id, Storage, Type};
use crate::CompileError;

/// Whether the imported function `name` is one of the built-ins: `Some(three_d)`.
pub(crate) fn builtin(name: &str) -> Option<bool> {
    match name.get(..30)? {
        "_Z26async_work_group_copy_2D2D" => Some(false),
        "_Z26async_work_group_copy_3D3D" => Some(true),
        _ => None,
    }
}

impl Validator<'_> {
    /// `args` (the operands after the result, in the instruction's order) and the
    /// result type of a 2D or 3D copy.
    pub(super) fn async_copy_nd(
        &self,
        three_d: bool,
        args: &[Id],
        rty: Option<Id>,
        values: &Values<'_>,
    ) -> Result<(), CompileError> {
        let (what, count) = if three_d {
            ("GroupAsyncCopy3D3D", 13)
        } else {
            ("GroupAsyncCopy2D2D", 10)
        };
        if args.len() != count {
            return Err(err(format!(
                "{what} takes {count} operands after its result, not {}",
                args.len()
            )));
        }
        let is_event = |t: Option<Id>| matches!(t.and_then(|t| self.ty(t)), Some(Type::Event));
        if !is_event(rty) {
            return Err(err(format!("the result of {what} must be an event")));
        }
        let (ds, _) = self.pointer_operand(values, args[0])?;
        let (ss, _) = self.pointer_operand(values, args[2])?;
        if !matches!(
            (ds, ss),
            (Storage::Workgroup, Storage::CrossWorkgroup)
                | (Storage::CrossWorkgroup, Storage::Workgroup)
        ) {
            return Err(err(format!(
                "{what} copies between Workgroup and CrossWorkgroup pointers, not from \
                 {ss:?} to {ds:?}"
            )));
        }
        let last = count - 1;
        for (i, a) in args.iter().enumerate() {
            if i == 0 || i == 2 || i == last {
                continue;
            }
            if self.int_scalar(values, *a)? != 64 {
                return Err(err(format!(
                    "{what} operand %{a} must be a 64-bit integer (Physical64)"
                )));
            }
        }
        let event = args[last];
        if !is_event(Some(self.operand(values, event)?)) {
            return Err(err(format!("{what} operand %{event} must be an event")));
        }
        Ok(())
    }
}
