//! Lowering of the OpenCL.std `printf` extended instruction (opcode 184).
//!
//! At compile time the format (a constant string in the constant address space) is
//! resolved and parsed once into a [`PrintfSite`] (see [`crate::printf`]); `%s`
//! arguments that are constant strings become part of the site. At run time one call
//! of a sub-group claims room for one record per active lane with a single atomic add
//! on the launch's [`crate::abi::PrintfBuffer`], then writes the records of the active
//! lanes in lane (work-item) order. Inactive lanes write nothing. The call returns 0,
//! or -1 when the launch has no buffer or the buffer is full (then nothing is written).

use std::collections::HashMap;

use cranelift_codegen::ir::{self, condcodes::IntCC, types, AtomicRmwOp, InstBuilder, Value};

use super::value::{Lv, Val};
use super::Tr;
use crate::abi::{NdRangeInfo, PrintfBuffer};
use crate::printf::{
    build_site, until_nul, ArgShape, ConstString, PrintfInfo, PrintfSite, ScalarKind, SitePiece,
};
use crate::spirv::{Id, Op, Storage, Type};
use crate::CompileError;

/// The OpenCL.std opcode of printf.
pub(super) const OPCODE: u32 = rspirv::spirv::OpenclStd100Op::printf as u32;

/// How many pointer-forwarding instructions a format or `%s` pointer is traced through.
const MAX_TRACE: usize = 64;

/// The printf call sites of the kernel being lowered.
#[derive(Default)]
pub(crate) struct PrintfState {
    sites: Vec<PrintfSite>,
    /// Site index of each printf instruction (a block lowered twice, for full and
    /// partial masks, shares its sites).
    by_inst: HashMap<Id, u32>,
    /// Pointer-forwarding instructions of the flat function (casts, copies, access
    /// chains), by result id; built at the first printf.
    pointer_defs: Option<HashMap<Id, Op>>,
    /// Constant strings for `%s` pointers known only at run time.
    strings: Option<Vec<ConstString>>,
}

impl PrintfState {
    /// What the runtime needs to format this kernel's records.
    pub fn finish(&mut self) -> PrintfInfo {
        PrintfInfo {
            sites: std::mem::take(&mut self.sites),
            strings: self.strings.take().unwrap_or_default(),
        }
    }
}

impl Tr<'_, '_> {
    /// Lowers `printf(format, args...)` with result id `res` of type `rty` (int).
    pub fn printf(&mut self, res: Id, args: &[Id], rty: Id) -> Result<Val, CompileError> {
        let (&format, values) = args
            .split_first()
            .ok_or_else(|| CompileError::malformed("OpenCL.std printf without a format"))?;
        if !matches!(self.m.ty(rty)?, Type::Int { bits: 32 }) {
            return Err(CompileError::malformed(format!(
                "OpenCL.std printf %{res} must return a 32-bit integer"
            )));
        }
        let index = match self.printf.by_inst.get(&res) {
            Some(i) => *i,
            None => {
                let site = self.printf_site(format, values)?;
                let i = u32::try_from(self.printf.sites.len())
                    .map_err(|_| CompileError::unsupported("too many printf calls"))?;
                self.printf.sites.push(site);
                self.printf.by_inst.insert(res, i);
                i
            }
        };
        let site = self.printf.sites[index as usize].clone();
        // Every lane value to store, computed before any branching below.
        let mut stores: Vec<(u32, Vec<Value>)> = Vec::new();
        for piece in &site.pieces {
            let slot = match piece {
                SitePiece::Value { slot, .. } | SitePiece::StrPointer { slot, .. } => slot,
                _ => continue,
            };
            let v = self.get(values[slot.arg])?;
            for (k, (lv, e)) in v.leaves.iter().zip(v.elems.iter()).enumerate() {
                let offset = slot.offset + k as u32 * slot.kind.bytes();
                stores.push((offset, self.lanes_of(*e, lv)));
            }
        }
        let count = self.active_lanes();
        let result = self.printf_emit(index, site.record_size, count, &stores)?;
        let elems = self.elems(rty)?;
        Ok(Val {
            leaves: vec![Lv::U(result)],
            elems,
        })
    }

    /// i64: the number of active lanes of the current mask.
    fn active_lanes(&mut self) -> Value {
        if self.full_state == Some(true) {
            return self.b.ins().iconst(types::I64, i64::from(self.w));
        }
        let mask = self.mask.clone();
        let mut total: Option<Value> = None;
        for chunk in mask {
            let bits = self.b.ins().vhigh_bits(types::I32, chunk);
            let n = self.b.ins().popcnt(bits);
            total = Some(match total {
                None => n,
                Some(t) => self.b.ins().iadd(t, n),
            });
        }
        let total = total.unwrap_or_else(|| self.b.ins().iconst(types::I32, 0));
        self.b.ins().uextend(types::I64, total)
    }

    /// Claims `count` records of `size` bytes and writes site `index` and the lane
    /// values `stores` (offset in the record, one value per lane) for each active lane;
    /// returns the i32 result (0, or -1 when nothing was written).
    fn printf_emit(
        &mut self,
        index: u32,
        size: u32,
        count: Value,
        stores: &[(u32, Vec<Value>)],
    ) -> Result<Value, CompileError> {
        let g = self
            .genv
            .clone()
            .ok_or_else(|| CompileError::codegen("group env missing"))?;
        let fl = ir::MemFlagsData::trusted();
        let buffer = self.b.ins().load(
            types::I64,
            fl.with_readonly(),
            g.ndrange,
            offset(std::mem::offset_of!(NdRangeInfo, printf_buffer)),
        );
        let claim = self.b.create_block();
        let full = self.b.create_block();
        let write = self.b.create_block();
        let join = self.b.create_block();
        self.b.append_block_param(join, types::I32);
        let failed = self.b.ins().iconst(types::I32, -1);
        let ok = self.b.ins().iconst(types::I32, 0);
        self.b
            .ins()
            .brif(buffer, claim, &[], join, &[ir::BlockArg::Value(failed)]);

        self.b.switch_to_block(claim);
        let bytes = self.b.ins().imul_imm_s(count, i64::from(size));
        let used = self.b.ins().iadd_imm_s(
            buffer,
            i64::from(offset(std::mem::offset_of!(PrintfBuffer, used))),
        );
        let start = self
            .b
            .ins()
            .atomic_rmw(types::I64, fl, AtomicRmwOp::Add, used, bytes);
        let end = self.b.ins().iadd(start, bytes);
        let capacity = self.b.ins().load(
            types::I64,
            fl,
            buffer,
            offset(std::mem::offset_of!(PrintfBuffer, capacity)),
        );
        let fits = self
            .b
            .ins()
            .icmp(IntCC::UnsignedLessThanOrEqual, end, capacity);
        self.b.ins().brif(fits, write, &[], full, &[]);

        self.b.switch_to_block(full);
        let limit = self.b.ins().iadd_imm_s(
            buffer,
            i64::from(offset(std::mem::offset_of!(PrintfBuffer, limit))),
        );
        self.b
            .ins()
            .atomic_rmw(types::I64, fl, AtomicRmwOp::Umin, limit, start);
        self.b.ins().jump(join, &[ir::BlockArg::Value(failed)]);

        self.b.switch_to_block(write);
        let data = self.b.ins().load(
            types::I64,
            fl,
            buffer,
            offset(std::mem::offset_of!(PrintfBuffer, data)),
        );
        let first = self.b.ins().iadd(data, start);
        let cursor = self.b.declare_var(types::I64);
        self.b.def_var(cursor, first);
        let site = self.b.ins().iconst(types::I32, i64::from(index));
        self.guarded(&[], |t, lane| {
            let at = t.b.use_var(cursor);
            t.b.ins().store(fl, site, at, 0);
            for (off, lanes) in stores {
                t.b.ins().store(fl, lanes[lane], at, offset(*off as usize));
            }
            let next = t.b.ins().iadd_imm_s(at, i64::from(size));
            t.b.def_var(cursor, next);
            Ok(Vec::new())
        })?;
        self.b.ins().jump(join, &[ir::BlockArg::Value(ok)]);

        self.b.switch_to_block(join);
        Ok(self.b.block_params(join)[0])
    }

    /// Resolves the format and `%s` strings of a call and binds its arguments.
    fn printf_site(&mut self, format: Id, values: &[Id]) -> Result<PrintfSite, CompileError> {
        let kernel = self.f.name.clone();
        let text = self.constant_string(format).ok_or_else(|| {
            CompileError::unsupported(format!(
                "kernel {kernel}: the printf format must be a string literal in the constant address space"
            ))
        })?;
        let mut shapes = Vec::with_capacity(values.len());
        for (i, v) in values.iter().enumerate() {
            shapes.push(self.arg_shape(*v).ok_or_else(|| {
                CompileError::unsupported(format!(
                    "kernel {kernel}: printf(\"{}\"): argument {} is not a scalar, vector or pointer",
                    escape(&text),
                    i + 1
                ))
            })?);
        }
        let mut dynamic = false;
        let site = build_site(&text, &shapes, |i| {
            let s = self.constant_string(values[i]);
            dynamic |= s.is_none();
            s
        })
        .map_err(|why| {
            CompileError::unsupported(format!(
                "kernel {kernel}: printf(\"{}\"): {why}",
                escape(&text)
            ))
        })?;
        if dynamic && self.printf.strings.is_none() {
            self.printf.strings = Some(self.constant_strings());
        }
        Ok(site)
    }

    /// How argument `id` is stored in a record.
    fn arg_shape(&self, id: Id) -> Option<ArgShape> {
        let ty = self.type_of(id).ok()?;
        let scalar = |t: &Type| match t {
            Type::Bool => Some(ScalarKind::Int { bytes: 1 }),
            Type::Int { bits } => Some(ScalarKind::Int {
                bytes: u8::try_from(bits / 8).ok()?,
            }),
            Type::Float { bits } => Some(ScalarKind::Float {
                bytes: u8::try_from(bits / 8).ok()?,
            }),
            Type::Pointer { .. } => Some(ScalarKind::Int { bytes: 8 }),
            _ => None,
        };
        match self.m.ty(ty).ok()? {
            Type::Vector { elem, count } => Some(ArgShape {
                kind: scalar(self.m.ty(*elem).ok()?)?,
                count: u8::try_from(*count).ok()?,
                is_vector: true,
                is_pointer: false,
            }),
            t => Some(ArgShape {
                kind: scalar(t)?,
                count: 1,
                is_vector: false,
                is_pointer: matches!(t, Type::Pointer { .. }),
            }),
        }
    }

    /// The text (up to its NUL) of the constant string `ptr` points into, when that
    /// is known at compile time.
    fn constant_string(&mut self, ptr: Id) -> Option<Vec<u8>> {
        let (global, at) = self.pointer_origin(ptr)?;
        let bytes = self.global_bytes(global)?;
        let rest = bytes.get(usize::try_from(at).ok()?..)?;
        Some(until_nul(rest).to_vec())
    }

    /// The initialised `__constant` global `ptr` points into and the byte offset, by
    /// following casts, copies and access chains with constant indices.
    fn pointer_origin(&mut self, mut ptr: Id) -> Option<(Id, u64)> {
        if self.printf.pointer_defs.is_none() {
            let defs = self
                .f
                .blocks
                .iter()
                .flat_map(|b| &b.insts)
                .filter(|i| {
                    matches!(
                        i.op,
                        Op::Bitcast(_)
                            | Op::PtrCast(_)
                            | Op::CopyObject(_)
                            | Op::AccessChain { .. }
                    )
                })
                .filter_map(|i| Some((i.result?, i.op.clone())))
                .collect();
            self.printf.pointer_defs = Some(defs);
        }
        let mut at = 0u64;
        for _ in 0..MAX_TRACE {
            if let Some(g) = self.m.globals.get(&ptr) {
                return (g.storage == Storage::UniformConstant && g.init.is_some())
                    .then_some((ptr, at));
            }
            match self.printf.pointer_defs.as_ref()?.get(&ptr)? {
                Op::Bitcast(x) | Op::PtrCast(x) | Op::CopyObject(x) => ptr = *x,
                Op::AccessChain {
                    base,
                    element,
                    indices,
                } => {
                    let (base, element, indices) = (*base, *element, indices.clone());
                    at = at.wrapping_add(self.chain_offset(base, element, &indices)?);
                    ptr = base;
                }
                _ => return None,
            }
        }
        None
    }

    /// Byte offset of an access chain with constant indices from its base.
    fn chain_offset(&self, base: Id, element: Option<Id>, indices: &[Id]) -> Option<u64> {
        let t = self.type_of(base).ok()?;
        Some(self.m.constant_chain_offset(t, element, indices)? as u64)
    }

    /// The initial bytes of the `__constant` global `id`.
    fn global_bytes(&self, id: Id) -> Option<Vec<u8>> {
        let g = self.m.globals.get(&id)?;
        let (_, pointee) = self.m.pointee(g.ty).ok()?;
        let size = usize::try_from(self.m.layout(pointee).ok()?.size).ok()?;
        let mut bytes = vec![0u8; size];
        let address_of = |v: Id| self.data_addrs.get(&v).copied();
        crate::meta::constant_bytes(self.m, g.init?, pointee, &mut bytes, 0, &address_of).ok()?;
        Some(bytes)
    }

    /// Every initialised `__constant` array of bytes of the program with its address.
    fn constant_strings(&self) -> Vec<ConstString> {
        let mut out = Vec::new();
        for (id, g) in &self.m.globals {
            if g.storage != Storage::UniformConstant {
                continue;
            }
            let (Some(&address), Some(bytes)) = (self.data_addrs.get(id), self.global_bytes(*id))
            else {
                continue;
            };
            out.push(ConstString { address, bytes });
        }
        out
    }
}

/// A Cranelift memory offset for a field offset.
fn offset(at: usize) -> i32 {
    i32::try_from(at).expect("record and ABI offsets are small")
}

/// `text` as a C string literal body, for messages.
fn escape(text: &[u8]) -> String {
    text.escape_ascii().to_string()
}
