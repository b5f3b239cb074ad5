//! Work-group async copies between `__local` and `__global` memory:
//! `OpGroupAsyncCopy` (`async_work_group_(strided_)copy`) and the
//! cl_khr_extended_async_copies 2D/3D copies (`NonSemantic.Codeplay.GroupAsyncCopies`
//! or the OpenCL C built-ins `async_work_group_copy_2D2D`/`_3D3D`).
//!
//! A copy is done synchronously, once per work-group, by sub-group 0: sub-groups run
//! one after the other through each barrier region, so sub-group 0 has finished the
//! copy before any other sub-group reaches it, and `wait_group_events` is only a
//! fence. Every event is the same value (0). OpenCL requires the same arguments in
//! every work-item, so lane 0's are everyone's.

use cranelift_codegen::ir::{self, condcodes::IntCC, types, InstBuilder, Value};

use super::value::{Lv, Val};
use super::Tr;
use crate::spirv::{Id, Storage, Type};
use crate::CompileError;

/// The symbol of [`copy_nd`].
pub(crate) const COPY_ND_SYMBOL: &str = "cranecl_async_copy_nd";

/// Operands of [`copy_nd`], in this order, as 64-bit words: destination, its offset,
/// source, its offset (offsets in elements), element size in bytes, elements per
/// line, lines, planes, source line length, source plane area, destination line
/// length, destination plane area (lengths and areas in elements).
const COPY_ND_WORDS: usize = 12;

/// The 2D/3D copy: `planes` planes of `lines` lines of `per_line` elements, each
/// line one contiguous run of bytes. Addresses wrap like the generated code's.
///
/// # Safety
/// `p` points at [`COPY_ND_WORDS`] words; the ranges they describe are valid for
/// reading (source) and writing (destination), as OpenCL requires of the kernel.
pub(crate) unsafe extern "C" fn copy_nd(p: *const u64) {
    // SAFETY: the caller passes COPY_ND_WORDS initialised words.
    let w = unsafe { std::slice::from_raw_parts(p, COPY_ND_WORDS) };
    let [dst, dst_off, src, src_off, elem, per_line, lines, planes, src_line, src_plane, dst_line, dst_plane] =
        <[u64; COPY_ND_WORDS]>::try_from(w).unwrap_or([0; COPY_ND_WORDS]);
    let bytes = per_line.wrapping_mul(elem) as usize;
    if bytes == 0 {
        return;
    }
    for plane in 0..planes {
        for line in 0..lines {
            let at = |base: u64, off: u64, line_len: u64, plane_area: u64| {
                let e = off
                    .wrapping_add(plane.wrapping_mul(plane_area))
                    .wrapping_add(line.wrapping_mul(line_len));
                base.wrapping_add(e.wrapping_mul(elem))
            };
            let s = at(src, src_off, src_line, src_plane) as *const u8;
            let d = at(dst, dst_off, dst_line, dst_plane) as *mut u8;
            // SAFETY: the kernel's arguments describe valid, line-wise non-overlapping
            // ranges of __local and __global memory (undefined behaviour otherwise, as
            // the extension says); `copy` tolerates overlap anyway.
            unsafe { std::ptr::copy(s, d, bytes) };
        }
    }
}

impl Tr<'_, '_> {
    /// Lane 0's value of the integer or pointer `id`, as an `i64`.
    fn lane0_i64(&mut self, id: Id) -> Result<Value, CompileError> {
        let v = self.get(id)?;
        let (Some(e), Some(lv)) = (v.elems.first().copied(), v.leaves.first()) else {
            return Err(CompileError::malformed(format!("%{id} has no value")));
        };
        let x = match lv {
            Lv::U(x) | Lv::A(x, _) => *x,
            Lv::V(_) => self.lanes_of(e, lv)[0],
        };
        let t = self.b.func.dfg.value_type(x);
        if t == types::I64 {
            Ok(x)
        } else if t.is_int() && t.bits() < 64 {
            Ok(self.b.ins().uextend(types::I64, x))
        } else {
            Err(CompileError::malformed(format!(
                "async copy operand %{id} is not an integer or pointer"
            )))
        }
    }

    /// Branches to a new block when this is sub-group 0: returns (that block, the
    /// block after the copy). The caller fills the first and jumps to the second.
    fn sub_group_zero(&mut self) -> Result<(ir::Block, ir::Block), CompileError> {
        let sg = self
            .sgenv
            .as_ref()
            .map(|x| x.sg)
            .ok_or_else(|| CompileError::codegen("sub-group env missing"))?;
        let first = self.b.ins().icmp_imm_s(IntCC::Equal, sg, 0);
        let copy = self.b.create_block();
        let done = self.b.create_block();
        self.b.ins().brif(first, copy, &[], done, &[]);
        self.b.switch_to_block(copy);
        Ok((copy, done))
    }

    /// The event every copy returns, of type `rty`.
    fn event(&mut self, rty: Id) -> Result<Val, CompileError> {
        let elems = self.elems(rty)?;
        let ev = self.b.ins().iconst(types::I64, 0);
        Ok(Val {
            leaves: vec![Lv::U(ev)],
            elems,
        })
    }

    /// `async_work_group_(strided_)copy`: `num` elements of the destination's pointee,
    /// the global side strided by `stride` elements.
    pub fn async_copy(
        &mut self,
        dst: Id,
        src: Id,
        num: Id,
        stride: Id,
        rty: Id,
    ) -> Result<Val, CompileError> {
        let dty = self.type_of(dst)?;
        let (dst_storage, mut pointee) = self.m.pointee(dty)?;
        // clang-22 passes a `__local T data[N]` as a pointer to the array: the copy's
        // element (a scalar or vector gentype) is the array's element.
        while let Type::Array { elem, .. } = self.m.ty(pointee)? {
            pointee = *elem;
        }
        let l = self.m.layout(pointee)?;
        let size = l.size as i64;
        // (`gid - lid` is uniform although both operands vary: lane 0's is right.)
        let d = self.lane0_i64(dst)?;
        let s = self.lane0_i64(src)?;
        let n = self.lane0_i64(num)?;
        let st = self.lane0_i64(stride)?;
        // Local destination: gather with the stride from global; else scatter.
        let gather = dst_storage == Storage::Workgroup;
        let (_, done) = self.sub_group_zero()?;
        let head = self.b.create_block();
        let body = self.b.create_block();
        self.b.append_block_param(head, types::I64);
        let z = self.b.ins().iconst(types::I64, 0);
        self.b.ins().jump(head, &[ir::BlockArg::Value(z)]);
        self.b.switch_to_block(head);
        let i = self.b.block_params(head)[0];
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, i, n);
        self.b.ins().brif(more, body, &[], done, &[]);
        self.b.switch_to_block(body);
        let packed = self.b.ins().imul_imm_s(i, size);
        let strided = {
            let k = self.b.ins().imul(i, st);
            self.b.ins().imul_imm_s(k, size)
        };
        let (doff, soff) = if gather {
            (packed, strided)
        } else {
            (strided, packed)
        };
        let da = self.b.ins().iadd(d, doff);
        let sa = self.b.ins().iadd(s, soff);
        let (piece, ty) = if size % 8 == 0 {
            (8, types::I64)
        } else if size % 4 == 0 {
            (4, types::I32)
        } else if size % 2 == 0 {
            (2, types::I16)
        } else {
            (1, types::I8)
        };
        let fl = self.mem_flags();
        for k in 0..(size / piece) {
            let v = self.b.ins().load(ty, fl, sa, (k * piece) as i32);
            self.b.ins().store(fl, v, da, (k * piece) as i32);
        }
        let i1 = self.b.ins().iadd_imm_s(i, 1);
        self.b.ins().jump(head, &[ir::BlockArg::Value(i1)]);
        self.b.switch_to_block(done);
        self.event(rty)
    }

    /// `GroupAsyncCopy2D2D`/`3D3D` (or the OpenCL C built-ins): `args` are the
    /// operands after the result in the instruction's order, checked by the validator
    /// (`spirv::validate::async_copy`).
    pub fn async_copy_nd(
        &mut self,
        three_d: bool,
        args: &[Id],
        rty: Id,
    ) -> Result<Val, CompileError> {
        let want = if three_d { 13 } else { 10 };
        if args.len() != want {
            return Err(CompileError::malformed(format!(
                "an async copy with {} operands",
                args.len()
            )));
        }
        // The helper's order: 2D has one plane and no plane areas.
        let order: [Option<usize>; COPY_ND_WORDS] = if three_d {
            [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map(Some)
        } else {
            [
                Some(0),
                Some(1),
                Some(2),
                Some(3),
                Some(4),
                Some(5),
                Some(6),
                None,
                Some(7),
                None,
                Some(8),
                None,
            ]
        };
        let mut words = Vec::with_capacity(COPY_ND_WORDS);
        for (k, o) in order.iter().enumerate() {
            words.push(match o {
                Some(i) => self.lane0_i64(args[*i])?,
                // planes = 1, plane areas = 0
                None => self.b.ins().iconst(types::I64, i64::from(k == 7)),
            });
        }
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            (COPY_ND_WORDS * 8) as u32,
            3,
        ));
        let (_, done) = self.sub_group_zero()?;
        let p = self.b.ins().stack_addr(types::I64, slot, 0);
        let fl = ir::MemFlagsData::trusted();
        for (k, w) in words.into_iter().enumerate() {
            self.b.ins().store(fl, w, p, (k * 8) as i32);
        }
        let f = self.import_fn(COPY_ND_SYMBOL, &[ir::AbiParam::new(types::I64)], &[])?;
        self.b.ins().call(f, &[p]);
        self.b.ins().jump(done, &[]);
        self.b.switch_to_block(done);
        self.event(rty)
    }
}
