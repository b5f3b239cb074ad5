//! The generic address space: `to_global`/`to_local`/`to_private`
//! (OpGenericCastToPtrExplicit, or clang-22's `__to_*` calls) and `get_fence`
//! (OpGenericPtrMemSemantics, or clang-22's `get_fence` call).
//!
//! Every pointer is a plain 64-bit address here, so casts to and from generic are
//! no-ops; what a generic pointer points into is found from the address itself: the
//! work-group's `__local` block (`WorkGroupState::local_mem`, `local_mem_size` bytes),
//! this sub-group's private area (W copies of every private variable), else global
//! memory. Generic pointers never point to `__constant` memory.

use cranelift_codegen::ir::{condcodes::IntCC, types, InstBuilder, Value};

use super::value::{Elem, Val};
use super::Tr;
use crate::spirv::{Id, Storage};
use crate::CompileError;

/// SPIR-V `WorkgroupMemory` memory-semantics bit.
const WORKGROUP_MEMORY: i64 = 0x100;
/// SPIR-V `CrossWorkgroupMemory` memory-semantics bit.
const CROSS_WORKGROUP_MEMORY: i64 = 0x200;

/// How a fence value is spelled: OpGenericPtrMemSemantics returns SPIR-V
/// memory-semantics bits, OpenCL C's `get_fence` returns `CLK_*_MEM_FENCE` flags
/// (the same bits shifted down by 8: `CLK_LOCAL_MEM_FENCE` = 1, `CLK_GLOBAL_MEM_FENCE` = 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenceSpelling {
    SpirvSemantics,
    OpenClFlags,
}

impl Tr<'_, '_> {
    /// i8 flags (is in `__local`, is private) of address `p` (i64) for the current
    /// sub-group.
    fn address_space_of(&mut self, p: Value) -> Result<(Value, Value), CompileError> {
        let (local_mem, local_size) = self
            .genv
            .as_ref()
            .map(|g| (g.local_mem, g.local_mem_size))
            .ok_or_else(|| CompileError::codegen("group env missing"))?;
        let private_base = self
            .sgenv
            .as_ref()
            .map(|s| s.private_base)
            .ok_or_else(|| CompileError::codegen("sub-group env missing"))?;
        let private_size = self.private_bytes.saturating_mul(u64::from(self.w));
        // base <= p < base + size as one unsigned comparison of p - base.
        let local_off = self.b.ins().isub(p, local_mem);
        let is_local = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThan, local_off, local_size);
        let private_off = self.b.ins().isub(p, private_base);
        let is_private = self.b.ins().icmp_imm_s(
            IntCC::UnsignedLessThan,
            private_off,
            i64::try_from(private_size).unwrap_or(i64::MAX),
        );
        Ok((is_local, is_private))
    }

    /// `to_global`/`to_local`/`to_private` of `ptr` into the address space of the
    /// pointer type `rty`: the pointer itself when it points there, else null.
    pub fn generic_cast_explicit(&mut self, ptr: Id, rty: Id) -> Result<Val, CompileError> {
        let (target, _) = self.m.pointee(rty)?;
        let elems = self.elems(rty)?;
        let p = self.get(ptr)?.leaves[0].clone();
        let mut failed = None;
        let lv = self.per_lane(&[(Elem::I64, &p)], Elem::I64, |t, xs| {
            let x = xs[0];
            let (is_local, is_private) = match t.address_space_of(x) {
                Ok(r) => r,
                Err(e) => {
                    failed = Some(e);
                    return x;
                }
            };
            let inside = match target {
                Storage::Workgroup => is_local,
                Storage::Function => is_private,
                // Global: neither local nor private.
                _ => {
                    let either = t.b.ins().bor(is_local, is_private);
                    t.b.ins().bxor_imm_u(either, 1)
                }
            };
            let null = t.b.ins().iconst(types::I64, 0);
            t.b.ins().select(inside, x, null)
        });
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(Val {
            leaves: vec![lv],
            elems,
        })
    }

    /// The fence of the address space `ptr` points into: local, global, or none for
    /// private memory.
    pub fn generic_fence(
        &mut self,
        ptr: Id,
        rty: Id,
        spelling: FenceSpelling,
    ) -> Result<Val, CompileError> {
        let elems = self.elems(rty)?;
        let e = *elems
            .first()
            .ok_or_else(|| CompileError::malformed("get_fence with an empty result type"))?;
        if !e.is_int() {
            return Err(CompileError::malformed(
                "get_fence / OpGenericPtrMemSemantics must return an integer",
            ));
        }
        let shift = match spelling {
            FenceSpelling::SpirvSemantics => 0,
            FenceSpelling::OpenClFlags => 8,
        };
        let p = self.get(ptr)?.leaves[0].clone();
        let mut failed = None;
        let lv = self.per_lane(&[(Elem::I64, &p)], e, |t, xs| {
            let (is_local, is_private) = match t.address_space_of(xs[0]) {
                Ok(r) => r,
                Err(err) => {
                    failed = Some(err);
                    return t.b.ins().iconst(e.scalar(), 0);
                }
            };
            let st = e.scalar();
            let local = t.b.ins().iconst(st, WORKGROUP_MEMORY >> shift);
            let global = t.b.ins().iconst(st, CROSS_WORKGROUP_MEMORY >> shift);
            let none = t.b.ins().iconst(st, 0);
            let shared = t.b.ins().select(is_local, local, global);
            t.b.ins().select(is_private, none, shared)
        });
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(Val {
            leaves: vec![lv],
            elems,
        })
    }
}
