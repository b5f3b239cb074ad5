//! The work-group entry's check of what the lane-contiguous layout's facts assume
//! (`analysis::guard`): each guarded sum's uniform part, recomputed from the kernel's
//! arguments and the work-group's built-ins, must lie in its range; a work-group for
//! which one does not runs the general layout.

use cranelift_codegen::ir::{condcodes::IntCC, types, InstBuilder, Value};

use super::value::Lv;
use super::Tr;
use crate::analysis::guard::Expr;
use crate::spirv::{BinOp, BuiltIn};
use crate::CompileError;

impl Tr<'_, '_> {
    /// Whether guard `i` holds for this work-group (i8), computed at the entry, after
    /// the parameters are defined.
    pub(super) fn guard_holds(&mut self, i: usize) -> Result<Value, CompileError> {
        let g = self.guards[i].clone();
        let v = self.entry_expr(&g.value)?;
        let v = if g.bits < 64 {
            let t = types::Type::int(g.bits as u16)
                .ok_or_else(|| CompileError::codegen("guard of an odd width"))?;
            let v = if self.b.func.dfg.value_type(v) == t {
                v
            } else {
                self.b.ins().ireduce(t, v)
            };
            self.b.ins().sextend(types::I64, v)
        } else {
            v
        };
        let clamp = |x: i128| x.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
        let lo = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, v, clamp(g.lo));
        let hi = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedLessThanOrEqual, v, clamp(g.hi));
        Ok(self.b.ins().band(lo, hi))
    }

    /// The value of `e` at the work-group's entry.
    fn entry_expr(&mut self, e: &Expr) -> Result<Value, CompileError> {
        let env = self
            .genv
            .clone()
            .ok_or_else(|| CompileError::codegen("group env missing"))?;
        Ok(match e {
            Expr::Param(id) => match self.get_direct(*id)?.leaves.as_slice() {
                [Lv::U(v)] => *v,
                _ => return Err(CompileError::codegen("guard on a non-scalar parameter")),
            },
            Expr::Const { value, bits } => {
                let t = types::Type::int(*bits as u16)
                    .ok_or_else(|| CompileError::codegen("guard constant of an odd width"))?;
                self.b.ins().iconst(t, *value as i64)
            }
            Expr::Builtin(b, d) => {
                let d = usize::from(*d);
                match b {
                    BuiltIn::WorkgroupId => env.group_id[d],
                    BuiltIn::NumWorkgroups => env.num_groups[d],
                    BuiltIn::GlobalSize => env.global_size[d],
                    BuiltIn::WorkgroupSize => env.local_size[d],
                    BuiltIn::EnqueuedWorkgroupSize => env.enqueued[d],
                    BuiltIn::GlobalOffset => env.global_offset[d],
                    BuiltIn::WorkDim => env.work_dim,
                    _ => return Err(CompileError::codegen("guard on a per-item built-in")),
                }
            }
            Expr::Bin(op, a, b) => {
                let x = self.entry_expr(a)?;
                let y = self.entry_expr(b)?;
                let ins = self.b.ins();
                match op {
                    BinOp::IAdd => ins.iadd(x, y),
                    BinOp::ISub => ins.isub(x, y),
                    BinOp::IMul => ins.imul(x, y),
                    BinOp::Shl => ins.ishl(x, y),
                    BinOp::LShr => ins.ushr(x, y),
                    BinOp::AShr => ins.sshr(x, y),
                    BinOp::And => ins.band(x, y),
                    BinOp::Or => ins.bor(x, y),
                    BinOp::Xor => ins.bxor(x, y),
                    _ => return Err(CompileError::codegen("guard on an unexpected operation")),
                }
            }
            Expr::Conv { signed, to, value } => {
                let v = self.entry_expr(value)?;
                let t = types::Type::int(*to as u16)
                    .ok_or_else(|| CompileError::codegen("guard conversion of an odd width"))?;
                let from = self.b.func.dfg.value_type(v);
                if t.bits() > from.bits() {
                    if *signed {
                        self.b.ins().sextend(t, v)
                    } else {
                        self.b.ins().uextend(t, v)
                    }
                } else if t.bits() < from.bits() {
                    self.b.ins().ireduce(t, v)
                } else {
                    v
                }
            }
        })
    }
}
