//! Operand rules of the pipe instructions (`Op::Pipe`), so that `lower::pipe` meets
//! a pipe, 32-bit integers, constant packet sizes and reserve ids where it expects
//! them.

use super::{err, Validator, Values};
use crate::spirv::{ConstValue, Id, PipeOp, Type};
use crate::CompileError;

impl Validator<'_> {
    /// `args` (ids after the result, in the instruction's order) and result type of
    /// pipe instruction `op`.
    pub(super) fn pipe_op(
        &self,
        op: PipeOp,
        args: &[Id],
        rty: Option<Id>,
        values: &Values<'_>,
    ) -> Result<(), CompileError> {
        use PipeOp as P;
        if args.len() != op.operand_count() {
            return Err(err(format!(
                "{op:?} takes {} operands, not {}",
                op.operand_count(),
                args.len()
            )));
        }
        let rest = if op.is_group() { &args[1..] } else { args };
        let reserve_id = |id: Id| -> Result<(), CompileError> {
            match self.ty(self.operand(values, id)?) {
                Some(Type::Event) => Ok(()),
                _ => Err(err(format!("operand %{id} must be a reserve id"))),
            }
        };
        let u32_operand = |id: Id| -> Result<(), CompileError> {
            if self.int_scalar(values, id)? != 32 {
                return Err(err(format!("operand %{id} must be a 32-bit integer")));
            }
            Ok(())
        };
        if op == P::IsValidReserveId {
            reserve_id(args[0])?;
            if !matches!(rty.and_then(|t| self.ty(t)), Some(Type::Bool)) {
                return Err(err("the result of OpIsValidReserveId must be a bool"));
            }
            return Ok(());
        }
        // The pipe and its access.
        let pipe = rest[0];
        let write = match self.ty(self.operand(values, pipe)?) {
            Some(Type::Pipe { write }) => *write,
            _ => return Err(err(format!("operand %{pipe} must be a pipe"))),
        };
        let wants_write = match op {
            P::Write | P::ReservedWrite | P::ReserveWrite | P::CommitWrite => Some(true),
            P::GroupReserveWrite | P::GroupCommitWrite => Some(true),
            P::Read | P::ReservedRead | P::ReserveRead | P::CommitRead => Some(false),
            P::GroupReserveRead | P::GroupCommitRead => Some(false),
            _ => None,
        };
        if wants_write.is_some_and(|w| w != write) {
            return Err(err(format!(
                "{op:?} on a {} pipe",
                if write { "write_only" } else { "read_only" }
            )));
        }
        // Packet size and alignment: the last two operands, 32-bit constants.
        let n = rest.len();
        for &c in &rest[n - 2..] {
            u32_operand(c)?;
            if !matches!(
                self.m.constants.get(&c).map(|k| &k.value),
                Some(ConstValue::Scalar(_))
            ) {
                return Err(err(format!(
                    "the packet size and alignment %{c} must be constants"
                )));
            }
        }
        match op {
            P::Read | P::Write => {
                self.pointer_operand(values, rest[1])?;
            }
            P::ReservedRead | P::ReservedWrite => {
                reserve_id(rest[1])?;
                u32_operand(rest[2])?;
                self.pointer_operand(values, rest[3])?;
            }
            P::ReserveRead | P::ReserveWrite | P::GroupReserveRead | P::GroupReserveWrite => {
                u32_operand(rest[1])?;
            }
            P::CommitRead | P::CommitWrite | P::GroupCommitRead | P::GroupCommitWrite => {
                reserve_id(rest[1])?;
            }
            P::NumPackets | P::MaxPackets | P::IsValidReserveId => {}
        }
        let r = rty.and_then(|t| self.ty(t));
        let ok = match op {
            P::Read
            | P::Write
            | P::ReservedRead
            | P::ReservedWrite
            | P::NumPackets
            | P::MaxPackets => {
                matches!(r, Some(Type::Int { bits: 32 }))
            }
            P::ReserveRead | P::ReserveWrite | P::GroupReserveRead | P::GroupReserveWrite => {
                matches!(r, Some(Type::Event))
            }
            _ => rty.is_none(),
        };
        if !ok {
            return Err(err(format!("{op:?} has the wrong result type")));
        }
        Ok(())
    }
}
