//! Lowering of arithmetic, comparisons, conversions, bit casts and composite
//! instructions in the lane model. Memory, OpenCL.std, sub-group operations and
//! barriers are dispatched to their own modules.

use std::rc::Rc;

use cranelift_codegen::ir::{
    self,
    condcodes::{FloatCC, IntCC},
    types, InstBuilder, Value,
};

use super::affine_cmp;
use super::value::{little, Elem, Lv, Val};
use super::Tr;
use crate::analysis::exact::Fact;
use crate::spirv::{BinOp, ConstValue, ConvOp, Id, Inst, Op, Rounding, Type, UnOp};
use crate::CompileError;

impl Tr<'_, '_> {
    /// Lowers instruction `k` of block `bi`.
    pub fn lower_inst(&mut self, bi: usize, k: usize, inst: &Inst) -> Result<(), CompileError> {
        if let (Op::Load { ptr, align }, Some(r), Some(ty)) = (&inst.op, inst.result, inst.ty) {
            if self.defer_load(r, *ptr, ty, *align) {
                return Ok(());
            }
        }
        let out = self.op_value(bi, k, inst)?;
        if let (Some(r), Some(v)) = (inst.result, out) {
            self.define(r, v);
            self.derive_hint(inst)?;
        }
        if matches!(inst.op, Op::ControlBarrier { .. } | Op::Group { .. })
            || matches!(&inst.op, Op::Pipe { op, .. } if op.is_group())
        {
            // Code after a barrier point may resume in another region.
            self.clear_hints();
        }
        Ok(())
    }

    /// Emits instruction `k` of block `bi` (or a constant expression: `bi` is
    /// `usize::MAX`) and returns its value, if it has one.
    pub fn op_value(
        &mut self,
        bi: usize,
        k: usize,
        inst: &Inst,
    ) -> Result<Option<Val>, CompileError> {
        let res = inst.result;
        let rty = inst.ty;
        let out: Option<Val> = match &inst.op {
            Op::Nop | Op::Uses(_) => None,
            Op::Binary(op, a, b) => {
                let ty = need(rty)?;
                Some(self.binary(*op, *a, *b, ty)?)
            }
            Op::Unary(op, a) => Some(self.unary(*op, *a, need(rty)?)?),
            Op::Convert {
                op,
                value,
                saturate,
                rounding,
            } => Some(self.convert(*op, *value, need(rty)?, *saturate, *rounding)?),
            Op::Bitcast(v) => Some(self.bitcast(*v, need(rty)?)?),
            Op::Wide(op, a, b) => Some(self.wide(*op, *a, *b, need(rty)?)?),
            Op::VectorTimesScalar(v, s) => Some(self.vector_times_scalar(*v, *s, need(rty)?)?),
            Op::PtrDiff(a, b) => Some(self.ptr_diff(*a, *b, need(rty)?)?),
            Op::SizeOf(p) => {
                let (_, pointee) = self.m.pointee(self.type_of(*p)?)?;
                let size = self.m.layout(pointee)?.size;
                let elems = self.elems(need(rty)?)?;
                let e = *elems.first().ok_or_else(|| {
                    CompileError::malformed("OpSizeOf needs an integer result type")
                })?;
                Some(Val {
                    leaves: vec![Lv::U(self.scalar_const(e, size))],
                    elems,
                })
            }
            Op::Undef => {
                let elems = self.elems(need(rty)?)?;
                let leaves = elems
                    .iter()
                    .map(|e| Lv::U(self.scalar_const(*e, 0)))
                    .collect();
                Some(Val { leaves, elems })
            }
            Op::PtrCast(v) | Op::CopyObject(v) | Op::CopyLogical(v) => {
                let x = self.get(*v)?;
                let elems = self.elems(need(rty)?)?;
                Some(Val {
                    leaves: x.leaves,
                    elems,
                })
            }
            Op::GenericCastToPtrExplicit(p) => Some(self.generic_cast_explicit(*p, need(rty)?)?),
            Op::GenericPtrMemSemantics(p) => Some(self.generic_fence(
                *p,
                need(rty)?,
                super::generic::FenceSpelling::SpirvSemantics,
            )?),
            Op::ConvertPtrToU(v) => {
                let x = self.get(*v)?;
                let elems = self.elems(need(rty)?)?;
                let e = elems[0];
                let l = self.int_resize(&x.leaves[0], Elem::I64, e, false);
                Some(Val {
                    leaves: vec![l],
                    elems,
                })
            }
            Op::ConvertUToPtr(v) => {
                let x = self.get(*v)?;
                let elems = self.elems(need(rty)?)?;
                let l = self.int_resize(&x.leaves[0], x.elems[0], Elem::I64, false);
                Some(Val {
                    leaves: vec![l],
                    elems,
                })
            }
            Op::Select { cond, a, b } => Some(self.select_op(*cond, *a, *b)?),
            Op::Phi(_) => None,
            Op::CompositeExtract { composite, indices } => {
                let c = self.get(*composite)?;
                let cty = self.type_of(*composite)?;
                let (start, len) = self.leaf_range(cty, indices)?;
                let elems = self.elems(need(rty)?)?;
                if start + len > c.leaves.len() || len != elems.len() {
                    return Err(CompileError::malformed(
                        "OpCompositeExtract index out of range",
                    ));
                }
                Some(Val {
                    leaves: c.leaves[start..start + len].to_vec(),
                    elems,
                })
            }
            Op::CompositeInsert {
                object,
                composite,
                indices,
            } => {
                let mut c = self.get(*composite)?;
                let o = self.get(*object)?;
                let cty = self.type_of(*composite)?;
                let (start, len) = self.leaf_range(cty, indices)?;
                if start + len > c.leaves.len() || len != o.leaves.len() {
                    return Err(CompileError::malformed(
                        "OpCompositeInsert index out of range",
                    ));
                }
                c.leaves.splice(start..start + len, o.leaves);
                c.elems = self.elems(need(rty)?)?;
                Some(c)
            }
            Op::CompositeConstruct(parts) => {
                let elems = self.elems(need(rty)?)?;
                let mut leaves = Vec::new();
                for p in parts {
                    leaves.extend(self.get(*p)?.leaves);
                }
                if leaves.len() != elems.len() {
                    return Err(CompileError::malformed(format!(
                        "OpCompositeConstruct with {} components for a type of {}",
                        leaves.len(),
                        elems.len()
                    )));
                }
                Some(Val { leaves, elems })
            }
            Op::VectorShuffle { a, b, components } => {
                let va = self.get(*a)?;
                let vb = self.get(*b)?;
                let elems = self.elems(need(rty)?)?;
                let all: Vec<Lv> = va.leaves.iter().chain(vb.leaves.iter()).cloned().collect();
                let mut leaves = Vec::new();
                for (i, c) in components.iter().enumerate() {
                    let e = *elems.get(i).ok_or_else(|| {
                        CompileError::malformed("OpVectorShuffle result too short")
                    })?;
                    leaves.push(match all.get(*c as usize) {
                        Some(l) => l.clone(),
                        None => Lv::U(self.scalar_const(e, 0)),
                    });
                }
                Some(Val { leaves, elems })
            }
            Op::VectorExtractDynamic { vector, index } => {
                let v = self.get(*vector)?;
                let idx = self.get(*index)?;
                let ie = idx.elems[0];
                let e = v.elems[0];
                let mut acc = v.leaves[0].clone();
                for (kk, leaf) in v.leaves.iter().enumerate().skip(1) {
                    let kc = self.iconst(ie, kk as i64);
                    let c = self.icmp_lv(IntCC::Equal, ie, &idx.leaves[0], &Lv::U(kc));
                    acc = self.select_lv(&c, e, leaf, &acc);
                }
                let elems = self.elems(need(rty)?)?;
                Some(Val {
                    leaves: vec![acc],
                    elems,
                })
            }
            Op::VectorInsertDynamic {
                vector,
                component,
                index,
            } => {
                let mut v = self.get(*vector)?;
                let comp = self.get(*component)?;
                let idx = self.get(*index)?;
                let ie = idx.elems[0];
                for kk in 0..v.leaves.len() {
                    let e = v.elems[kk];
                    let kc = self.iconst(ie, kk as i64);
                    let c = self.icmp_lv(IntCC::Equal, ie, &idx.leaves[0], &Lv::U(kc));
                    v.leaves[kk] = self.select_lv(&c, e, &comp.leaves[0], &v.leaves[kk]);
                }
                Some(v)
            }
            Op::Load { ptr, align } => Some(self.load(*ptr, need(rty)?, *align)?),
            Op::Store { ptr, value, align } => {
                self.store(*ptr, *value, *align)?;
                None
            }
            Op::CopyMemory { dst, src, size } => {
                self.copy_memory(*dst, *src, *size)?;
                None
            }
            Op::AccessChain {
                base,
                element,
                indices,
            } => Some(self.access_chain(need(res)?, *base, *element, indices, need(rty)?)?),
            Op::Variable { init } => {
                self.private_variable(need(res)?, need(rty)?, *init)?;
                None
            }
            Op::ExtInst { opcode, args, .. } if *opcode == super::printf::OPCODE => {
                Some(self.printf(need(res)?, args, need(rty)?)?)
            }
            Op::ExtInst { opcode, args, lits } => self.ext_inst(*opcode, args, lits, rty)?,
            Op::Dot(a, b) => Some(self.dot(*a, *b, need(rty)?)?),
            Op::BitFieldInsert {
                base,
                insert,
                offset,
                count,
            } => Some(self.bitfield_insert(*base, *insert, *offset, *count, need(rty)?)?),
            Op::BitFieldExtract {
                signed,
                base,
                offset,
                count,
            } => Some(self.bitfield_extract(*signed, *base, *offset, *count, need(rty)?)?),
            Op::IntDot {
                a_signed,
                b_signed,
                a,
                b,
                acc,
                packed,
            } => Some(self.int_dot((*a_signed, *b_signed), *a, *b, *acc, *packed, need(rty)?)?),
            Op::Call { function, args } => self.imported_call(*function, args, rty)?,
            Op::Atomic {
                op,
                ptr,
                scope: _,
                args,
            } => self.atomic(*op, *ptr, args, rty)?,
            Op::ControlBarrier {
                exec_scope,
                mem_scope,
            } => {
                self.control_barrier(bi, k, *exec_scope, *mem_scope)?;
                None
            }
            Op::AsyncCopy {
                dst,
                src,
                num,
                stride,
            } => Some(self.async_copy(*dst, *src, *num, *stride, need(rty)?)?),
            Op::AsyncCopyNd { three_d, args } => {
                Some(self.async_copy_nd(*three_d, args, need(rty)?)?)
            }
            Op::MemoryBarrier => {
                self.b.ins().fence();
                None
            }
            Op::Block2d {
                shape,
                base,
                width,
                height,
                pitch,
                coord,
                private,
            } => {
                self.block2d(*shape, [*base, *width, *height, *pitch, *coord], *private)?;
                None
            }
            Op::Pipe { op, args } => self.pipe_inst(*op, args, rty, bi, k)?,
            Op::DeviceEnqueue { op, args, invoke } => self.enqueue_inst(*op, args, *invoke, rty)?,
            Op::Group {
                op,
                scope,
                mode,
                args,
            } => {
                if *op == crate::spirv::GroupOp::BlockWrite {
                    self.group_block_write(args)?;
                    None
                } else {
                    Some(self.group_op(*op, *scope, *mode, args, need(rty)?, bi, k)?)
                }
            }
        };
        Ok(out)
    }

    /// The leaves of type `ty` selected by composite `indices`: (first leaf, count).
    pub fn leaf_range(&mut self, ty: Id, indices: &[u32]) -> Result<(usize, usize), CompileError> {
        let mut start = 0usize;
        let mut t = ty;
        for &i in indices {
            let (children, _) = self.children(t)?;
            let i = i as usize;
            if i >= children.len() {
                return Err(CompileError::malformed(format!(
                    "composite index {i} out of range"
                )));
            }
            for c in &children[..i] {
                start += self.elems(*c)?.len();
            }
            t = children[i];
        }
        Ok((start, self.elems(t)?.len()))
    }

    /// Component types of a composite type.
    pub fn children(&self, ty: Id) -> Result<(Vec<Id>, bool), CompileError> {
        Ok(match self.m.ty(ty)? {
            Type::Vector { elem, count } => (vec![*elem; *count as usize], true),
            Type::Array { elem, len } => (vec![*elem; (*len).min(1 << 16) as usize], false),
            Type::Struct { members, .. } => (members.clone(), false),
            other => {
                return Err(CompileError::malformed(format!(
                    "composite access into non-composite type {other:?}"
                )))
            }
        })
    }

    /// Integer comparison of two leaves, as a bool leaf.
    pub fn icmp_lv(&mut self, cc: IntCC, e: Elem, a: &Lv, b: &Lv) -> Lv {
        if let (Lv::U(x), Lv::U(y)) = (a, b) {
            return Lv::U(self.b.ins().icmp(cc, *x, *y));
        }
        let vector_ok = matches!(e, Elem::I32 | Elem::I16 | Elem::I8)
            || (e == Elem::I64
                && matches!(
                    cc,
                    IntCC::Equal
                        | IntCC::NotEqual
                        | IntCC::SignedGreaterThan
                        | IntCC::SignedLessThan
                ));
        if vector_ok {
            let r = self.vec_op2(
                e,
                a,
                b,
                |t, x, y| t.b.ins().icmp(cc, x, y),
                |t, x, y| t.b.ins().icmp(cc, x, y),
            );
            let m = self.int_cmp_to_mask(e, r);
            self.note_affine_cmp(cc, e, a, b, &m);
            return Lv::V(m);
        }
        if e == Elem::I64 {
            return self.icmp_i64_vec(cc, a, b);
        }
        self.per_lane(&[(e, a), (e, b)], Elem::Bool, |t, x| {
            t.b.ins().icmp(cc, x[0], x[1])
        })
    }

    /// The other comparisons of `long` lanes in vector registers, through the two
    /// the backend has (`pcmpgtq`): unsigned ones with both sides' sign bits flipped,
    /// `<=` and `>=` as the complement of `>` and `<`. Instead of a scalar compare
    /// and an insert per lane (`size_t` loop conditions: 7 instructions a lane).
    fn icmp_i64_vec(&mut self, cc: IntCC, a: &Lv, b: &Lv) -> Lv {
        use IntCC as C;
        let (unsigned, strict, negate) = match cc {
            C::UnsignedLessThan => (true, C::SignedLessThan, false),
            C::UnsignedGreaterThan => (true, C::SignedGreaterThan, false),
            C::UnsignedLessThanOrEqual => (true, C::SignedGreaterThan, true),
            C::UnsignedGreaterThanOrEqual => (true, C::SignedLessThan, true),
            C::SignedLessThanOrEqual => (false, C::SignedGreaterThan, true),
            C::SignedGreaterThanOrEqual => (false, C::SignedLessThan, true),
            _ => unreachable!("equality and strict signed compares are vector_ok"),
        };
        let r = self.vec_op2(
            Elem::I64,
            a,
            b,
            |t, x, y| t.b.ins().icmp(cc, x, y),
            move |t, x, y| {
                let (x, y) = if unsigned {
                    let sign = t.b.ins().iconst(types::I64, i64::MIN);
                    let sign = t.b.ins().splat(types::I64X2, sign);
                    (t.b.ins().bxor(x, sign), t.b.ins().bxor(y, sign))
                } else {
                    (x, y)
                };
                let m = t.b.ins().icmp(strict, x, y);
                if negate {
                    t.b.ins().bnot(m)
                } else {
                    m
                }
            },
        );
        let m = self.int_cmp_to_mask(Elem::I64, r);
        self.note_affine_cmp(cc, Elem::I64, a, b, &m);
        Lv::V(m)
    }

    /// Float comparison of two leaves, as a bool leaf.
    pub fn fcmp_lv(&mut self, cc: FloatCC, e: Elem, a: &Lv, b: &Lv) -> Lv {
        if let (Lv::U(x), Lv::U(y)) = (a, b) {
            return Lv::U(self.b.ins().fcmp(cc, *x, *y));
        }
        match cc {
            FloatCC::OrderedNotEqual => {
                let o = self.fcmp_lv(FloatCC::Ordered, e, a, b);
                let n = self.fcmp_lv(FloatCC::NotEqual, e, a, b);
                let (mo, mn) = (self.bool_mask(&o), self.bool_mask(&n));
                return Lv::V(self.mask_and(&mo, &mn));
            }
            FloatCC::UnorderedOrEqual => {
                let u = self.fcmp_lv(FloatCC::Unordered, e, a, b);
                let q = self.fcmp_lv(FloatCC::Equal, e, a, b);
                let (mu, mq) = (self.bool_mask(&u), self.bool_mask(&q));
                return Lv::V(self.mask_or(&mu, &mq));
            }
            _ => {}
        }
        let r = self.vec_op2(
            e,
            a,
            b,
            |t, x, y| t.b.ins().fcmp(cc, x, y),
            |t, x, y| t.b.ins().fcmp(cc, x, y),
        );
        let ie = if e == Elem::F64 { Elem::I64 } else { Elem::I32 };
        Lv::V(self.int_cmp_to_mask(ie, r))
    }

    /// `c ? a : b` on leaves of element `e`.
    pub fn select_lv(&mut self, c: &Lv, e: Elem, a: &Lv, b: &Lv) -> Lv {
        match c {
            Lv::U(cv) => {
                if let (Lv::U(x), Lv::U(y)) = (a, b) {
                    return Lv::U(self.b.ins().select(*cv, *x, *y));
                }
                let va = self.chunks_of(e, a);
                let vb = self.chunks_of(e, b);
                let cv = *cv;
                Lv::V(
                    va.iter()
                        .zip(&vb)
                        .map(|(x, y)| self.b.ins().select(cv, *x, *y))
                        .collect(),
                )
            }
            _ => {
                let m = self.bool_mask(c);
                self.select_vec(e, &m, a, b)
            }
        }
    }

    fn select_op(&mut self, cond: Id, a: Id, b: Id) -> Result<Val, CompileError> {
        let c = self.get(cond)?;
        let va = self.get(a)?;
        let vb = self.get(b)?;
        let mut leaves = Vec::with_capacity(va.leaves.len());
        // `c ? true : b` is `c || b` and `c ? a : false` is `c && a` (clang's form of
        // `||` and `&&` of comparisons): recorded for `affine_cmp`.
        let truth = |t: &Self, id: Id| {
            let k = t.m.constants.get(&id)?;
            if !matches!(t.m.types.get(&k.ty), Some(Type::Bool)) {
                return None;
            }
            match k.value {
                ConstValue::Scalar(v) => Some(v != 0),
                ConstValue::Null => Some(false),
                _ => None,
            }
        };
        let comb = match (truth(self, a), truth(self, b)) {
            (Some(true), _) => Some((affine_cmp::CombOp::Or, 1)),
            (_, Some(false)) => Some((affine_cmp::CombOp::And, 0)),
            _ => None,
        };
        for i in 0..va.leaves.len() {
            let cl = c.leaves.get(i).unwrap_or(&c.leaves[0]).clone();
            let r = self.select_lv(&cl, va.elems[i], &va.leaves[i], &vb.leaves[i]);
            if let (Some((op, side)), Elem::Bool) = (comb, va.elems[i]) {
                let other = if side == 1 {
                    &vb.leaves[i]
                } else {
                    &va.leaves[i]
                };
                self.note_bool_comb(op, &cl, Some(other), &r);
            }
            leaves.push(r);
        }
        Ok(Val {
            leaves,
            elems: va.elems,
        })
    }

    /// `a + b` keeping affine forms.
    pub fn add_lv(&mut self, e: Elem, a: &Lv, b: &Lv) -> Lv {
        match (a, b) {
            (Lv::U(x), Lv::U(y)) => Lv::U(self.b.ins().iadd(*x, *y)),
            (Lv::A(x, s), Lv::U(y)) | (Lv::U(y), Lv::A(x, s)) => {
                Lv::A(self.b.ins().iadd(*x, *y), *s)
            }
            (Lv::A(x, s), Lv::A(y, t)) => Lv::A(self.b.ins().iadd(*x, *y), s.wrapping_add(*t)),
            _ => self.vec_op2(
                e,
                a,
                b,
                |t, x, y| t.b.ins().iadd(x, y),
                |t, x, y| t.b.ins().iadd(x, y),
            ),
        }
    }

    /// The constant an integer value was made from, if it is an `iconst`.
    pub(crate) fn const_of(&self, v: Value) -> Option<i64> {
        let dfg = &self.b.func.dfg;
        let inst = dfg.value_def(v).inst()?;
        let ty = dfg.value_type(v);
        let bits = ty.bits();
        let wrap = |x: i64| -> i64 {
            if bits >= 64 {
                x
            } else {
                (x << (64 - bits)) >> (64 - bits)
            }
        };
        match dfg.insts[inst] {
            ir::InstructionData::UnaryImm {
                opcode: ir::Opcode::Iconst,
                imm,
            } => Some(wrap(imm.bits())),
            ir::InstructionData::Unary {
                opcode: ir::Opcode::Uextend,
                arg,
            } => {
                let ab = dfg.value_type(arg).bits();
                self.const_of(arg).map(|x| {
                    if ab >= 64 {
                        x
                    } else {
                        ((x as u64) & ((1u64 << ab) - 1)) as i64
                    }
                })
            }
            ir::InstructionData::Unary {
                opcode: ir::Opcode::Sextend | ir::Opcode::Ireduce,
                arg,
            } => self.const_of(arg).map(wrap),
            ir::InstructionData::Binary {
                opcode: ir::Opcode::Iadd,
                args,
            } => Some(wrap(
                self.const_of(args[0])?
                    .wrapping_add(self.const_of(args[1])?),
            )),
            _ => None,
        }
    }

    /// The C fmod of element `e` (scalar library function).
    fn libm_fmod(&mut self, e: Elem) -> Result<ir::FuncRef, CompileError> {
        let (sym, t) = if e == Elem::F64 {
            ("cranecl_fmod", types::F64)
        } else {
            ("cranecl_fmodf", types::F32)
        };
        self.import_fn(
            sym,
            &[ir::AbiParam::new(t), ir::AbiParam::new(t)],
            &[ir::AbiParam::new(t)],
        )
    }

    /// Integer `a op b` per leaf; `fa` is what is known about `a`'s lanes (right
    /// shifts and masks keep an affine `a` affine only if its lanes do not wrap).
    pub(crate) fn int_binary(
        &mut self,
        op: BinOp,
        e: Elem,
        a: &Lv,
        b: &Lv,
        fa: Fact,
    ) -> Result<Lv, CompileError> {
        let r = self.int_binary_lanes(op, e, a, b, fa)?;
        self.note_halves(op, e, a, b, &r);
        Ok(r)
    }

    /// [`Self::int_binary`] without recording 32-bit halves.
    fn int_binary_lanes(
        &mut self,
        op: BinOp,
        e: Elem,
        a: &Lv,
        b: &Lv,
        fa: Fact,
    ) -> Result<Lv, CompileError> {
        use BinOp as B;
        Ok(match op {
            B::IAdd => self.add_lv(e, a, b),
            B::ISub => match (a, b) {
                (Lv::U(x), Lv::U(y)) => Lv::U(self.b.ins().isub(*x, *y)),
                (Lv::A(x, s), Lv::U(y)) => Lv::A(self.b.ins().isub(*x, *y), *s),
                (Lv::U(y), Lv::A(x, s)) => Lv::A(self.b.ins().isub(*y, *x), s.wrapping_neg()),
                (Lv::A(x, s), Lv::A(y, t)) => Lv::A(self.b.ins().isub(*x, *y), s.wrapping_sub(*t)),
                _ => self.vec_op2(
                    e,
                    a,
                    b,
                    |t, x, y| t.b.ins().isub(x, y),
                    |t, x, y| t.b.ins().isub(x, y),
                ),
            },
            B::IMul => {
                let ca = if let Lv::U(x) = a {
                    self.const_of(*x)
                } else {
                    None
                };
                let cb = if let Lv::U(x) = b {
                    self.const_of(*x)
                } else {
                    None
                };
                match (a, b, ca, cb) {
                    (Lv::A(x, s), Lv::U(y), _, Some(c)) | (Lv::U(y), Lv::A(x, s), Some(c), _) => {
                        Lv::A(self.b.ins().imul(*x, *y), s.wrapping_mul(c))
                    }
                    _ if e == Elem::I8 => {
                        self.per_lane(&[(e, a), (e, b)], e, |t, x| t.b.ins().imul(x[0], x[1]))
                    }
                    _ => match self.imul_halves(e, a, b) {
                        Some(r) => r,
                        None => self.vec_op2(
                            e,
                            a,
                            b,
                            |t, x, y| t.b.ins().imul(x, y),
                            |t, x, y| {
                                if e == Elem::I64 {
                                    t.imul_i64_chunk(x, y)
                                } else {
                                    t.b.ins().imul(x, y)
                                }
                            },
                        ),
                    },
                }
            }
            B::UDiv | B::SDiv | B::UMod | B::SRem | B::SMod => {
                if let Some(k) = self.pow2_divisor(e, a, b) {
                    return self.div_pow2(op, e, a, k, fa);
                }
                self.per_lane(&[(e, a), (e, b)], e, |t, x| t.int_div(op, e, x[0], x[1]))
            }
            B::Shl | B::LShr | B::AShr => {
                let cb = if let Lv::U(x) = b {
                    self.const_of(*x)
                } else {
                    None
                };
                if let (B::Shl, Lv::A(x, s), Some(c)) = (op, a, cb) {
                    let c = c & i64::from(e.bits() - 1);
                    return Ok(Lv::A(
                        self.b.ins().ishl_imm_s(*x, c),
                        s.wrapping_shl(c as u32),
                    ));
                }
                if let (B::LShr | B::AShr, Lv::A(x, s), Some(c)) = (op, a, cb) {
                    // (b + l*s) >> c == (b >> c) + l*(s >> c) when 2^c divides s (the
                    // sign-extension idiom `(x << 32) >> 32` of affine indices) and the
                    // lanes do not wrap in the shift's reading.
                    let c = c & i64::from(e.bits() - 1);
                    if c < 63 && s.rem_euclid(1i64 << c) == 0 && fa.widens(op == B::AShr) {
                        let base = if op == B::AShr {
                            self.b.ins().sshr_imm_s(*x, c)
                        } else {
                            self.b.ins().ushr_imm_s(*x, c)
                        };
                        return Ok(Lv::A(base, s >> c));
                    }
                }
                let f = move |t: &mut Tr<'_, '_>, x: Value, y: Value| match op {
                    B::Shl => t.b.ins().ishl(x, y),
                    B::LShr => t.b.ins().ushr(x, y),
                    _ => t.b.ins().sshr(x, y),
                };
                match (b, e) {
                    (Lv::U(y), Elem::I16 | Elem::I32 | Elem::I64) => {
                        let y = *y;
                        if let Lv::U(x) = a {
                            Lv::U(f(self, *x, y))
                        } else {
                            let va = self.chunks_of(e, a);
                            Lv::V(va.iter().map(|x| f(self, *x, y)).collect())
                        }
                    }
                    _ => self.per_lane(&[(e, a), (e, b)], e, |t, x| f(t, x[0], x[1])),
                }
            }
            // `x & (2^k - 1)` with k >= 32 on an affine index whose lanes are known to
            // be in [0, 2^k) (the zero-extension idiom of 32-bit ids): the identity.
            B::And
                if matches!((a, b), (Lv::A(..), Lv::U(_)))
                    && crate::analysis::affine::low_mask_keeps(
                        fa,
                        if let Lv::U(y) = b {
                            self.const_of(*y)
                        } else {
                            None
                        },
                    ) =>
            {
                match (a, b) {
                    (Lv::A(x, s), Lv::U(y)) => Lv::A(self.b.ins().band(*x, *y), *s),
                    _ => unreachable!("matched above"),
                }
            }
            B::And | B::LogicalAnd => {
                let r = self.vec_op2(
                    e,
                    a,
                    b,
                    |t, x, y| t.b.ins().band(x, y),
                    |t, x, y| t.b.ins().band(x, y),
                );
                if e == Elem::Bool {
                    self.note_bool_comb(affine_cmp::CombOp::And, a, Some(b), &r);
                }
                r
            }
            B::Or | B::LogicalOr => {
                let r = self.vec_op2(
                    e,
                    a,
                    b,
                    |t, x, y| t.b.ins().bor(x, y),
                    |t, x, y| t.b.ins().bor(x, y),
                );
                if e == Elem::Bool {
                    self.note_bool_comb(affine_cmp::CombOp::Or, a, Some(b), &r);
                }
                r
            }
            B::Xor | B::LogicalNotEqual => self.vec_op2(
                e,
                a,
                b,
                |t, x, y| t.b.ins().bxor(x, y),
                |t, x, y| t.b.ins().bxor(x, y),
            ),
            B::LogicalEqual => {
                let x = self.vec_op2(
                    e,
                    a,
                    b,
                    |t, x, y| t.b.ins().bxor(x, y),
                    |t, x, y| t.b.ins().bxor(x, y),
                );
                match x {
                    Lv::U(v) => Lv::U(self.b.ins().bxor_imm_s(v, 1)),
                    other => self.vec_op1(e, &other, |t, v| t.b.ins().bnot(v)),
                }
            }
            B::IEqual => self.icmp_lv(IntCC::Equal, e, a, b),
            B::INotEqual => self.icmp_lv(IntCC::NotEqual, e, a, b),
            B::UGreaterThan => self.icmp_lv(IntCC::UnsignedGreaterThan, e, a, b),
            B::SGreaterThan => self.icmp_lv(IntCC::SignedGreaterThan, e, a, b),
            B::UGreaterThanEqual => self.icmp_lv(IntCC::UnsignedGreaterThanOrEqual, e, a, b),
            B::SGreaterThanEqual => self.icmp_lv(IntCC::SignedGreaterThanOrEqual, e, a, b),
            B::ULessThan => self.icmp_lv(IntCC::UnsignedLessThan, e, a, b),
            B::SLessThan => self.icmp_lv(IntCC::SignedLessThan, e, a, b),
            B::ULessThanEqual => self.icmp_lv(IntCC::UnsignedLessThanOrEqual, e, a, b),
            B::SLessThanEqual => self.icmp_lv(IntCC::SignedLessThanOrEqual, e, a, b),
            _ => {
                return Err(CompileError::codegen(format!(
                    "internal: {op:?} is not an integer operation"
                )))
            }
        })
    }

    /// `k` when `b` is the constant 2^k (0 < k < bits - 1) and `a` varies across
    /// lanes in a type with vector shifts: such a division becomes shifts and masks
    /// on whole vectors instead of one scalar division per lane (`offset % K`,
    /// `offset / K` of pyopencl's scan kernels).
    fn pow2_divisor(&self, e: Elem, a: &Lv, b: &Lv) -> Option<i64> {
        if matches!(a, Lv::U(_)) || !matches!(e, Elem::I16 | Elem::I32 | Elem::I64) {
            return None;
        }
        let Lv::U(y) = b else { return None };
        let c = self.const_of(*y)?;
        let k = i64::from(c.trailing_zeros());
        (c > 1 && c & (c - 1) == 0 && k < i64::from(e.bits()) - 1).then_some(k)
    }

    /// `a op 2^k` (see [`Self::pow2_divisor`]) by shifts: signed division rounds
    /// toward zero by adding 2^k - 1 to negative dividends first; `SMod` by a positive
    /// divisor is the low bits.
    fn div_pow2(
        &mut self,
        op: BinOp,
        e: Elem,
        a: &Lv,
        k: i64,
        fa: Fact,
    ) -> Result<Lv, CompileError> {
        use BinOp as B;
        let ty = e.scalar();
        let bits = i64::from(e.bits());
        let kv = Lv::U(self.b.ins().iconst(ty, k));
        let nonneg = fa.range.is_some_and(|(lo, _)| lo >= 0);
        match op {
            B::UDiv => self.int_binary(B::LShr, e, a, &kv, fa),
            B::SDiv if nonneg => self.int_binary(B::LShr, e, a, &kv, fa),
            B::UMod | B::SMod => {
                let m = Lv::U(self.b.ins().iconst(ty, (1i64 << k) - 1));
                self.int_binary(B::And, e, a, &m, fa)
            }
            B::SRem if nonneg => {
                let m = Lv::U(self.b.ins().iconst(ty, (1i64 << k) - 1));
                self.int_binary(B::And, e, a, &m, fa)
            }
            _ => {
                // q = (a + ((a >>s (bits-1)) >>u (bits-k))) >>s k
                let top = Lv::U(self.b.ins().iconst(ty, bits - 1));
                let sign = self.int_binary(B::AShr, e, a, &top, Fact::NONE)?;
                let rest = Lv::U(self.b.ins().iconst(ty, bits - k));
                let bias = self.int_binary(B::LShr, e, &sign, &rest, Fact::NONE)?;
                let t = self.int_binary(B::IAdd, e, a, &bias, Fact::NONE)?;
                let q = self.int_binary(B::AShr, e, &t, &kv, Fact::NONE)?;
                if op == B::SDiv {
                    return Ok(q);
                }
                let qk = self.int_binary(B::Shl, e, &q, &kv, Fact::NONE)?;
                self.int_binary(B::ISub, e, a, &qk, Fact::NONE)
            }
        }
    }

    /// Scalar integer division/remainder that never traps (x/0 and MIN/-1 give
    /// unspecified values, as OpenCL allows).
    fn int_div(&mut self, op: BinOp, e: Elem, x: Value, y: Value) -> Value {
        let ty = e.scalar();
        let one = self.b.ins().iconst(ty, 1);
        let zero = self.b.ins().iconst(ty, 0);
        let is0 = self.b.ins().icmp(IntCC::Equal, y, zero);
        let mut d = self.b.ins().select(is0, one, y);
        let signed = matches!(op, BinOp::SDiv | BinOp::SRem | BinOp::SMod);
        if signed {
            // MIN / -1 overflows: divide by 1 instead (result MIN; remainder 0 below).
            let m1 = self.b.ins().iconst(ty, -1);
            let ism1 = self.b.ins().icmp(IntCC::Equal, d, m1);
            let min = self.b.ins().iconst(ty, i64::MIN >> (64 - e.bits()));
            let ismin = self.b.ins().icmp(IntCC::Equal, x, min);
            let ovf = self.b.ins().band(ism1, ismin);
            d = self.b.ins().select(ovf, one, d);
        }
        match op {
            BinOp::UDiv => self.b.ins().udiv(x, d),
            BinOp::SDiv => self.b.ins().sdiv(x, d),
            BinOp::UMod => self.b.ins().urem(x, d),
            BinOp::SRem => self.b.ins().srem(x, d),
            _ => {
                // SMod: sign of the divisor.
                let r = self.b.ins().srem(x, d);
                let rz = self.b.ins().icmp(IntCC::Equal, r, zero);
                let rx = self.b.ins().bxor(r, d);
                let diff = self.b.ins().icmp(IntCC::SignedLessThan, rx, zero);
                let adj = self.b.ins().iadd(r, d);
                let fix = self.b.ins().select(rz, r, adj);
                self.b.ins().select(diff, fix, r)
            }
        }
    }

    /// Whether `v` is the floating-point constant 2.0 (a scalar or a splat of one).
    fn is_float_two(&self, v: Value) -> bool {
        let dfg = &self.b.func.dfg;
        let ir::ValueDef::Result(inst, _) = dfg.value_def(v) else {
            return false;
        };
        match dfg.insts[inst] {
            ir::InstructionData::UnaryIeee32 { imm, .. } => imm.as_f32() == 2.0,
            ir::InstructionData::UnaryIeee64 { imm, .. } => imm.as_f64() == 2.0,
            ir::InstructionData::Unary {
                opcode: ir::Opcode::Splat,
                arg,
            } => self.is_float_two(arg),
            _ => false,
        }
    }

    fn float_binary(&mut self, op: BinOp, e: Elem, a: &Lv, b: &Lv) -> Result<Lv, CompileError> {
        use BinOp as B;
        if e == Elem::F16 {
            // Through f32: comparisons are exact there, arithmetic rounds back once.
            let (x, y) = (self.half_to_f32(a), self.half_to_f32(b));
            let r = self.float_binary(op, Elem::F32, &x, &y)?;
            return Ok(match op {
                B::FAdd | B::FSub | B::FMul | B::FDiv | B::FRem | B::FMod => self.f32_to_half(&r),
                _ => r,
            });
        }
        let arith = |tr: &mut Self, f: fn(&mut Tr<'_, '_>, Value, Value) -> Value| {
            tr.vec_op2(e, a, b, f, f)
        };
        Ok(match op {
            B::FAdd => arith(self, |t, x, y| t.b.ins().fadd(x, y)),
            B::FSub => arith(self, |t, x, y| t.b.ins().fsub(x, y)),
            // x * 2 is x + x exactly (both round 2x once), without a constant register
            // and at an adder's latency: the escape-time loops' `2 * zr * zi`.
            B::FMul => arith(self, |t, x, y| {
                if t.is_float_two(y) {
                    t.b.ins().fadd(x, x)
                } else if t.is_float_two(x) {
                    t.b.ins().fadd(y, y)
                } else {
                    t.b.ins().fmul(x, y)
                }
            }),
            B::FDiv => arith(self, |t, x, y| t.b.ins().fdiv(x, y)),
            B::FRem | B::FMod => {
                let fmod = self.libm_fmod(e)?;
                let r = self.per_lane(&[(e, a), (e, b)], e, |t, x| {
                    let call = t.b.ins().call(fmod, &[x[0], x[1]]);
                    t.b.inst_results(call)[0]
                });
                if op == B::FMod {
                    // Result takes the sign of the divisor.
                    self.per_lane(&[(e, &r), (e, b)], e, |t, x| {
                        let zero = t.zero_scalar(e.scalar());
                        let rz = t.b.ins().fcmp(FloatCC::Equal, x[0], zero);
                        let rneg = t.b.ins().fcmp(FloatCC::LessThan, x[0], zero);
                        let yneg = t.b.ins().fcmp(FloatCC::LessThan, x[1], zero);
                        let differ = t.b.ins().bxor(rneg, yneg);
                        let nz = t.b.ins().bxor_imm_s(rz, 1);
                        let fix = t.b.ins().band(differ, nz);
                        let adj = t.b.ins().fadd(x[0], x[1]);
                        t.b.ins().select(fix, adj, x[0])
                    })
                } else {
                    r
                }
            }
            B::FOrdEqual => self.fcmp_lv(FloatCC::Equal, e, a, b),
            B::FUnordEqual => self.fcmp_lv(FloatCC::UnorderedOrEqual, e, a, b),
            B::FOrdNotEqual | B::LessOrGreater => self.fcmp_lv(FloatCC::OrderedNotEqual, e, a, b),
            B::FUnordNotEqual => self.fcmp_lv(FloatCC::NotEqual, e, a, b),
            B::FOrdLessThan => self.fcmp_lv(FloatCC::LessThan, e, a, b),
            B::FUnordLessThan => self.fcmp_lv(FloatCC::UnorderedOrLessThan, e, a, b),
            B::FOrdGreaterThan => self.fcmp_lv(FloatCC::GreaterThan, e, a, b),
            B::FUnordGreaterThan => self.fcmp_lv(FloatCC::UnorderedOrGreaterThan, e, a, b),
            B::FOrdLessThanEqual => self.fcmp_lv(FloatCC::LessThanOrEqual, e, a, b),
            B::FUnordLessThanEqual => self.fcmp_lv(FloatCC::UnorderedOrLessThanOrEqual, e, a, b),
            B::FOrdGreaterThanEqual => self.fcmp_lv(FloatCC::GreaterThanOrEqual, e, a, b),
            B::FUnordGreaterThanEqual => {
                self.fcmp_lv(FloatCC::UnorderedOrGreaterThanOrEqual, e, a, b)
            }
            B::Ordered => self.fcmp_lv(FloatCC::Ordered, e, a, b),
            B::Unordered => self.fcmp_lv(FloatCC::Unordered, e, a, b),
            _ => {
                return Err(CompileError::codegen(format!(
                    "internal: {op:?} is not a float operation"
                )))
            }
        })
    }

    fn binary(&mut self, op: BinOp, a: Id, b: Id, rty: Id) -> Result<Val, CompileError> {
        let va = self.get(a)?;
        let vb = self.get(b)?;
        let elems = self.elems(rty)?;
        if va.leaves.len() != vb.leaves.len() || va.leaves.len() != elems.len() {
            return Err(CompileError::malformed(format!(
                "{op:?} on operands of different shapes"
            )));
        }
        let mut leaves = Vec::with_capacity(elems.len());
        for i in 0..elems.len() {
            let e = va.elems[i];
            // A shift amount may have another width than the value shifted.
            let b = if vb.elems[i] != e && matches!(op, BinOp::Shl | BinOp::LShr | BinOp::AShr) {
                self.int_resize(&vb.leaves[i], vb.elems[i], e, false)
            } else {
                vb.leaves[i].clone()
            };
            leaves.push(if e.is_float() {
                self.float_binary(op, e, &va.leaves[i], &b)?
            } else {
                let fa = self.fact(a);
                self.int_binary(op, e, &va.leaves[i], &b, fa)?
            });
        }
        Ok(Val { leaves, elems })
    }

    /// `OpVectorTimesScalar`: each component of float vector `v` times scalar `s`.
    fn vector_times_scalar(&mut self, v: Id, s: Id, rty: Id) -> Result<Val, CompileError> {
        let vv = self.get(v)?;
        let vs = self.get(s)?;
        let elems = self.elems(rty)?;
        if vs.leaves.len() != 1 || vv.leaves.len() != elems.len() {
            return Err(CompileError::malformed(
                "OpVectorTimesScalar needs a vector of the result type and a scalar",
            ));
        }
        let mut leaves = Vec::with_capacity(elems.len());
        for (i, l) in vv.leaves.iter().enumerate() {
            let e = vv.elems[i];
            if !e.is_float() || vs.elems[0] != e {
                return Err(CompileError::malformed(
                    "OpVectorTimesScalar needs float operands of one type",
                ));
            }
            leaves.push(self.float_binary(BinOp::FMul, e, l, &vs.leaves[0])?);
        }
        Ok(Val { leaves, elems })
    }

    /// `OpPtrDiff`: the distance between two pointers in elements of their pointee.
    fn ptr_diff(&mut self, a: Id, b: Id, rty: Id) -> Result<Val, CompileError> {
        let (_, pointee) = self.m.pointee(self.type_of(a)?)?;
        let l = self.m.layout(pointee)?;
        let stride = l.size.next_multiple_of(l.align.max(1)).max(1);
        let va = self.get(a)?;
        let vb = self.get(b)?;
        let elems = self.elems(rty)?;
        if va.leaves.len() != 1 || vb.leaves.len() != 1 || elems.len() != 1 {
            return Err(CompileError::malformed(
                "OpPtrDiff needs two pointers and a scalar integer result",
            ));
        }
        let bytes = self.int_binary(
            BinOp::ISub,
            Elem::I64,
            &va.leaves[0],
            &vb.leaves[0],
            Fact::NONE,
        )?;
        let s = Lv::U(self.iconst(Elem::I64, stride as i64));
        let n = self.int_binary(BinOp::SDiv, Elem::I64, &bytes, &s, Fact::NONE)?;
        let leaf = self.int_resize(&n, Elem::I64, elems[0], true);
        Ok(Val {
            leaves: vec![leaf],
            elems,
        })
    }

    fn unary(&mut self, op: UnOp, a: Id, rty: Id) -> Result<Val, CompileError> {
        let va = self.get(a)?;
        let elems = self.elems(rty)?;
        if matches!(op, UnOp::Any | UnOp::All) {
            // OpenCL C's any/all take integer (vectors) and test each component's sign
            // bit; clang emits OpAny/OpAll on them directly, so integer operands are
            // turned into bools (x < 0) first.
            let bools: Vec<Lv> = va
                .leaves
                .iter()
                .zip(va.elems.iter())
                .map(|(l, e)| {
                    if *e == Elem::Bool {
                        l.clone()
                    } else {
                        let zero = self.iconst(*e, 0);
                        self.icmp_lv(IntCC::SignedLessThan, *e, l, &Lv::U(zero))
                    }
                })
                .collect();
            let mut acc = bools[0].clone();
            for l in &bools[1..] {
                acc = self.vec_op2(
                    Elem::Bool,
                    &acc,
                    l,
                    move |t, x, y| {
                        if op == UnOp::Any {
                            t.b.ins().bor(x, y)
                        } else {
                            t.b.ins().band(x, y)
                        }
                    },
                    move |t, x, y| {
                        if op == UnOp::Any {
                            t.b.ins().bor(x, y)
                        } else {
                            t.b.ins().band(x, y)
                        }
                    },
                );
            }
            return Ok(Val {
                leaves: vec![acc],
                elems,
            });
        }
        let mut leaves = Vec::with_capacity(elems.len());
        for (i, l) in va.leaves.iter().enumerate() {
            let e = va.elems[i];
            leaves.push(match op {
                UnOp::SNegate => match l {
                    Lv::A(x, s) => Lv::A(self.b.ins().ineg(*x), s.wrapping_neg()),
                    _ if e == Elem::I8 => self.per_lane(&[(e, l)], e, |t, x| t.b.ins().ineg(x[0])),
                    _ => self.vec_op1(e, l, |t, x| t.b.ins().ineg(x)),
                },
                UnOp::FNegate if e == Elem::F16 => {
                    let sign = self.iconst(Elem::I16, 0x8000u16 as i16 as i64);
                    self.vec_op2(
                        e,
                        l,
                        &Lv::U(sign),
                        |t, x, y| t.b.ins().bxor(x, y),
                        |t, x, y| t.b.ins().bxor(x, y),
                    )
                }
                UnOp::FNegate => self.vec_op1(e, l, |t, x| t.b.ins().fneg(x)),
                UnOp::SignBitSet if e == Elem::F16 => {
                    let zero = self.iconst(Elem::I16, 0);
                    self.icmp_lv(IntCC::SignedLessThan, Elem::I16, l, &Lv::U(zero))
                }
                UnOp::IsNan | UnOp::IsInf | UnOp::IsFinite | UnOp::IsNormal if e == Elem::F16 => {
                    // On the bits: exponent field all ones (inf/NaN) or zero (subnormal).
                    let mag_mask = self.iconst(Elem::I16, 0x7fff);
                    let mag = self.vec_op2(
                        Elem::I16,
                        l,
                        &Lv::U(mag_mask),
                        |t, x, y| t.b.ins().band(x, y),
                        |t, x, y| t.b.ins().band(x, y),
                    );
                    let inf = self.iconst(Elem::I16, 0x7c00);
                    let min = self.iconst(Elem::I16, 0x0400);
                    let (cc, bound) = match op {
                        UnOp::IsNan => (IntCC::SignedGreaterThan, inf),
                        UnOp::IsInf => (IntCC::Equal, inf),
                        _ => (IntCC::SignedLessThan, inf),
                    };
                    let r = self.icmp_lv(cc, Elem::I16, &mag, &Lv::U(bound));
                    if op == UnOp::IsNormal {
                        let lo = self.icmp_lv(
                            IntCC::SignedGreaterThanOrEqual,
                            Elem::I16,
                            &mag,
                            &Lv::U(min),
                        );
                        self.vec_op2(
                            Elem::Bool,
                            &lo,
                            &r,
                            |t, x, y| t.b.ins().band(x, y),
                            |t, x, y| t.b.ins().band(x, y),
                        )
                    } else {
                        r
                    }
                }
                UnOp::Not => self.vec_op1(e, l, |t, x| t.b.ins().bnot(x)),
                UnOp::LogicalNot => match l {
                    Lv::U(x) => Lv::U(self.b.ins().bxor_imm_s(*x, 1)),
                    _ => {
                        let r = self.vec_op1(e, l, |t, x| t.b.ins().bnot(x));
                        self.note_bool_comb(affine_cmp::CombOp::Not, l, None, &r);
                        r
                    }
                },
                UnOp::IsNan => self.fcmp_lv(FloatCC::Unordered, e, l, l),
                UnOp::IsInf | UnOp::IsFinite | UnOp::IsNormal => {
                    let abs = self.vec_op1(e, l, |t, x| t.b.ins().fabs(x));
                    let inf = if e == Elem::F64 {
                        self.b.ins().f64const(f64::INFINITY)
                    } else {
                        self.b.ins().f32const(f32::INFINITY)
                    };
                    match op {
                        UnOp::IsInf => self.fcmp_lv(FloatCC::Equal, e, &abs, &Lv::U(inf)),
                        UnOp::IsFinite => self.fcmp_lv(FloatCC::LessThan, e, &abs, &Lv::U(inf)),
                        _ => {
                            let min = if e == Elem::F64 {
                                self.b.ins().f64const(f64::MIN_POSITIVE)
                            } else {
                                self.b.ins().f32const(f32::MIN_POSITIVE)
                            };
                            let lo =
                                self.fcmp_lv(FloatCC::GreaterThanOrEqual, e, &abs, &Lv::U(min));
                            let hi = self.fcmp_lv(FloatCC::LessThan, e, &abs, &Lv::U(inf));
                            self.vec_op2(
                                Elem::Bool,
                                &lo,
                                &hi,
                                |t, x, y| t.b.ins().band(x, y),
                                |t, x, y| t.b.ins().band(x, y),
                            )
                        }
                    }
                }
                UnOp::SignBitSet => {
                    let ie = if e == Elem::F64 { Elem::I64 } else { Elem::I32 };
                    let it = ie.scalar();
                    self.per_lane(&[(e, l)], Elem::Bool, |t, x| {
                        let bits = t.b.ins().bitcast(it, little(), x[0]);
                        t.b.ins().icmp_imm_s(IntCC::SignedLessThan, bits, 0)
                    })
                }
                UnOp::BitCount => self.per_lane(&[(e, l)], e, |t, x| t.b.ins().popcnt(x[0])),
                UnOp::BitReverse => self.per_lane(&[(e, l)], e, |t, x| t.b.ins().bitrev(x[0])),
                UnOp::Any | UnOp::All => unreachable!("handled above"),
            });
        }
        Ok(Val { leaves, elems })
    }

    /// Integer width change of a leaf (`signed` picks sign extension).
    pub fn int_resize(&mut self, l: &Lv, from: Elem, to: Elem, signed: bool) -> Lv {
        self.int_resize_keep(l, from, to, signed, false)
    }

    /// What is known about the lanes of integer value `id`.
    pub fn fact(&self, id: Id) -> Fact {
        self.exact.get(&id).copied().unwrap_or(Fact::NONE)
    }

    /// [`Self::int_resize`]; an affine `l` stays affine when widened only if
    /// `keep_affine` (its lanes are known not to wrap, see `analysis::exact`).
    /// Otherwise its lanes are materialised first: `zext(base) + l*stride` is wrong
    /// for lanes past a wrap (`(ulong)(uint)(x - 3)` for lanes where x < 3).
    pub fn int_resize_keep(
        &mut self,
        l: &Lv,
        from: Elem,
        to: Elem,
        signed: bool,
        keep_affine: bool,
    ) -> Lv {
        let (fb, tb) = (from.bits(), to.bits());
        let ty = to.scalar();
        let f = move |t: &mut Tr<'_, '_>, x: Value| -> Value {
            if fb == tb {
                x
            } else if tb < fb {
                t.b.ins().ireduce(ty, x)
            } else if signed {
                t.b.ins().sextend(ty, x)
            } else {
                t.b.ins().uextend(ty, x)
            }
        };
        match l {
            Lv::U(x) => Lv::U(f(self, *x)),
            // Truncation commutes with the affine form; widening only without wraps.
            Lv::A(x, s) if tb <= fb || keep_affine => Lv::A(f(self, *x), *s),
            Lv::A(..) => {
                let chunks = self.chunks_of(from, l);
                self.int_resize(&Lv::V(chunks), from, to, signed)
            }
            Lv::V(_) => {
                if fb == tb {
                    return l.clone();
                }
                if let (Lv::V(ch), true) = (l, from.is_int() && to.is_int()) {
                    return Lv::V(self.int_resize_chunks(ch, from, to, signed));
                }
                self.per_lane(&[(from, l)], to, |t, x| f(t, x[0]))
            }
        }
    }

    pub(crate) fn convert(
        &mut self,
        op: ConvOp,
        v: Id,
        rty: Id,
        saturate: bool,
        rounding: Option<Rounding>,
    ) -> Result<Val, CompileError> {
        let x = self.get(v)?;
        let elems = self.elems(rty)?;
        let mut leaves = Vec::with_capacity(elems.len());
        for (i, l) in x.leaves.iter().enumerate() {
            let from = x.elems[i];
            let to = *elems
                .get(i)
                .ok_or_else(|| CompileError::malformed("conversion changes the component count"))?;
            leaves.push(if from == Elem::F16 || to == Elem::F16 {
                self.convert_half_leaf(op, l, from, to, saturate, rounding)?
            } else if matches!(op, ConvOp::UConvert | ConvOp::SConvert) && !saturate {
                // Widening keeps an affine value affine only where no lane wraps.
                let signed = op == ConvOp::SConvert;
                let keep = self.fact(v).widens(signed);
                self.int_resize_keep(l, from, to, signed, keep)
            } else {
                self.convert_leaf(op, l, from, to, saturate, rounding)
            });
        }
        Ok(Val { leaves, elems })
    }

    /// One leaf of a conversion between non-half types.
    pub(crate) fn convert_leaf(
        &mut self,
        op: ConvOp,
        l: &Lv,
        from: Elem,
        to: Elem,
        saturate: bool,
        rounding: Option<Rounding>,
    ) -> Lv {
        match op {
            ConvOp::UConvert | ConvOp::SConvert | ConvOp::SatSToU | ConvOp::SatUToS => {
                let src_signed = matches!(op, ConvOp::SConvert | ConvOp::SatSToU);
                let dst_signed = matches!(op, ConvOp::SConvert | ConvOp::SatUToS);
                if saturate {
                    if let Some(v) = self.int_saturate_vec(l, from, to, src_signed, dst_signed) {
                        return v;
                    }
                    self.per_lane(&[(from, l)], to, |t, x| {
                        t.int_saturate(x[0], from, to, src_signed, op)
                    })
                } else {
                    self.int_resize(l, from, to, src_signed)
                }
            }
            ConvOp::SToF | ConvOp::UToF => {
                let signed = op == ConvOp::SToF;
                if from == Elem::I32
                    && to == Elem::F32
                    && rounding.is_none_or(|r| r == Rounding::Rte)
                {
                    self.vec_op1(from, l, move |t, x| {
                        let ty = if t.b.func.dfg.value_type(x).is_vector() {
                            types::F32X4
                        } else {
                            types::F32
                        };
                        if signed {
                            t.b.ins().fcvt_from_sint(ty, x)
                        } else {
                            t.b.ins().fcvt_from_uint(ty, x)
                        }
                    })
                } else if signed && from == Elem::I32 && to == Elem::F64 && !l.is_uniform() {
                    // Exact whatever the rounding mode.
                    self.int_to_f64_chunks(l)
                } else if matches!(from, Elem::I8 | Elem::I16) && to == Elem::F32 && !l.is_uniform()
                {
                    // Exact in f32 whatever the rounding mode: widen, then convert.
                    let Lv::V(ch) = self.int_resize(l, from, Elem::I32, signed) else {
                        unreachable!("a varying value stays varying")
                    };
                    Lv::V(
                        ch.iter()
                            .map(|c| self.b.ins().fcvt_from_sint(types::F32X4, *c))
                            .collect(),
                    )
                } else {
                    self.per_lane(&[(from, l)], to, |t, x| {
                        t.int_to_float(x[0], from, to, signed, rounding)
                    })
                }
            }
            ConvOp::FToS | ConvOp::FToU => {
                let signed = op == ConvOp::FToS;
                let r = rounding.unwrap_or(Rounding::Rtz);
                let rounded = match r {
                    Rounding::Rtz => l.clone(),
                    Rounding::Rte => self.vec_op1(from, l, |t, x| t.b.ins().nearest(x)),
                    Rounding::Rtp => self.vec_op1(from, l, |t, x| t.b.ins().ceil(x)),
                    Rounding::Rtn => self.vec_op1(from, l, |t, x| t.b.ins().floor(x)),
                };
                if from == Elem::F32 && to == Elem::I32 && signed {
                    self.vec_op1(from, &rounded, |t, x| {
                        let vt = if t.b.func.dfg.value_type(x).is_vector() {
                            types::I32X4
                        } else {
                            types::I32
                        };
                        t.b.ins().fcvt_to_sint_sat(vt, x)
                    })
                } else if from == Elem::F32
                    && matches!(to, Elem::I8 | Elem::I16 | Elem::I32)
                    && !rounded.is_uniform()
                {
                    self.float_to_int_vec(&rounded, to, signed)
                } else {
                    self.per_lane(&[(from, &rounded)], to, |t, x| {
                        t.float_to_int(x[0], to, signed)
                    })
                }
            }
            ConvOp::FConvert => {
                if from == to {
                    l.clone()
                } else if (from, to) == (Elem::F32, Elem::F64) && matches!(l, Lv::V(_)) {
                    self.promote_f32_chunks(l)
                } else if (from, to) == (Elem::F64, Elem::F32)
                    && matches!(l, Lv::V(_))
                    && rounding.is_none_or(|r| r == Rounding::Rte)
                {
                    self.demote_f64_chunks(l)
                } else if to == Elem::F64 {
                    self.per_lane(&[(from, l)], to, |t, x| {
                        t.b.ins().fpromote(types::F64, x[0])
                    })
                } else {
                    self.per_lane(&[(from, l)], to, |t, x| t.f64_to_f32(x[0], rounding))
                }
            }
        }
    }

    /// Saturating integer conversion of a scalar.
    fn int_saturate(
        &mut self,
        x: Value,
        from: Elem,
        to: Elem,
        src_signed: bool,
        op: ConvOp,
    ) -> Value {
        // Destination signedness: SConvert/SatUToS give signed, UConvert/SatSToU unsigned.
        let dst_signed = matches!(op, ConvOp::SConvert | ConvOp::SatUToS);
        // Work in i64 (wide enough for every source except u64 > i64::MAX, handled by
        // the unsigned comparisons below).
        let wide = if from.bits() < 64 {
            if src_signed {
                self.b.ins().sextend(types::I64, x)
            } else {
                self.b.ins().uextend(types::I64, x)
            }
        } else {
            x
        };
        let tb = to.bits();
        let (lo, hi): (i64, i64) = if dst_signed {
            (i64::MIN >> (64 - tb), i64::MAX >> (64 - tb))
        } else {
            (
                0,
                if tb == 64 {
                    -1
                } else {
                    ((1u64 << tb) - 1) as i64
                },
            )
        };
        let hiv = self.b.ins().iconst(types::I64, hi);
        let lov = self.b.ins().iconst(types::I64, lo);
        let clamped = if src_signed {
            let c = if dst_signed || tb < 64 {
                let c = self.b.ins().smin(wide, hiv);
                if tb == 64 && !dst_signed {
                    c
                } else {
                    self.b.ins().smax(c, lov)
                }
            } else {
                wide
            };
            if !dst_signed {
                // Negative -> 0.
                let z = self.b.ins().iconst(types::I64, 0);
                self.b.ins().smax(c, z)
            } else {
                c
            }
        } else if tb != 64 || dst_signed {
            self.b.ins().umin(wide, hiv)
        } else {
            wide
        };
        if tb < 64 {
            self.b.ins().ireduce(to.scalar(), clamped)
        } else {
            clamped
        }
    }

    fn int_to_float(
        &mut self,
        x: Value,
        from: Elem,
        to: Elem,
        signed: bool,
        rounding: Option<Rounding>,
    ) -> Value {
        let x64 = if from.bits() < 64 {
            if signed {
                self.b.ins().sextend(types::I64, x)
            } else {
                self.b.ins().uextend(types::I64, x)
            }
        } else {
            x
        };
        let r = rounding.unwrap_or(Rounding::Rte);
        let direct = |t: &mut Self, ty: ir::Type| {
            if signed {
                t.b.ins().fcvt_from_sint(ty, x64)
            } else {
                t.b.ins().fcvt_from_uint(ty, x64)
            }
        };
        if r == Rounding::Rte || (from.bits() <= 32 && to == Elem::F64) {
            return direct(self, to.scalar());
        }
        if from.bits() <= 32 && to == Elem::F32 {
            // Exact in f64, then round to f32 with the mode.
            let d = direct(self, types::F64);
            return self.f64_to_f32(d, Some(r));
        }
        // 64-bit integers with a directed rounding: round to nearest, then step one ulp
        // towards the requested direction if the result overshot.
        let f = direct(self, to.scalar());
        let back = if signed {
            self.b.ins().fcvt_to_sint_sat(types::I64, f)
        } else {
            self.b.ins().fcvt_to_uint_sat(types::I64, f)
        };
        let cc_gt = if signed {
            IntCC::SignedGreaterThan
        } else {
            IntCC::UnsignedGreaterThan
        };
        let cc_lt = if signed {
            IntCC::SignedLessThan
        } else {
            IntCC::UnsignedLessThan
        };
        // At the saturation edge the float is 2^63 (2^64 unsigned), above every
        // integer, though `back` saturates to the largest one.
        let above = self.b.ins().icmp(cc_gt, back, x64);
        let edge = if signed { 2f64.powi(63) } else { 2f64.powi(64) };
        let edge = if to == Elem::F64 {
            self.b.ins().f64const(edge)
        } else {
            self.b.ins().f32const(edge as f32)
        };
        let at_edge = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, f, edge);
        let above = self.b.ins().bor(above, at_edge);
        let below = self.b.ins().icmp(cc_lt, back, x64);
        let zero = self.zero_scalar(to.scalar());
        let is_neg = self.b.ins().fcmp(FloatCC::LessThan, f, zero);
        // Step towards -inf when the rounded value is above the exact one (rtn, or rtz
        // for positives); towards +inf when below (rtp, or rtz for negatives).
        let toward_neg = match r {
            Rounding::Rtn => above,
            Rounding::Rtp => self.b.ins().iconst(types::I8, 0),
            _ => self.b.ins().band_not(above, is_neg),
        };
        let toward_pos = match r {
            Rounding::Rtp => below,
            Rounding::Rtn => self.b.ins().iconst(types::I8, 0),
            _ => self.b.ins().band(below, is_neg),
        };
        let dn = self.next_toward(f, to, false);
        let upv = self.next_toward(f, to, true);
        let f1 = self.b.ins().select(toward_neg, dn, f);
        self.b.ins().select(toward_pos, upv, f1)
    }

    /// The next representable float after `f` towards +inf (`up`) or -inf.
    fn next_toward(&mut self, f: Value, e: Elem, up: bool) -> Value {
        let it = if e == Elem::F64 {
            types::I64
        } else {
            types::I32
        };
        let bits = self.b.ins().bitcast(it, little(), f);
        let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, bits, 0);
        let is_zero = {
            let mag = self.b.ins().band_imm_s(
                bits,
                if e == Elem::F64 {
                    i64::MAX
                } else {
                    0x7fff_ffff
                },
            );
            self.b.ins().icmp_imm_s(IntCC::Equal, mag, 0)
        };
        // Moving away from zero increments the magnitude; towards zero decrements.
        let inc = self.b.ins().iadd_imm_s(bits, 1);
        let dec = self.b.ins().iadd_imm_s(bits, -1);
        let away = if up {
            self.b.ins().bxor_imm_s(neg, 1)
        } else {
            neg
        };
        let r = self.b.ins().select(away, inc, dec);
        // From zero: the smallest subnormal of the right sign.
        let tiny = if up {
            1i64
        } else if e == Elem::F64 {
            i64::MIN | 1
        } else {
            0x8000_0001u32 as i32 as i64
        };
        let tiny = self.b.ins().iconst(it, tiny);
        let r = self.b.ins().select(is_zero, tiny, r);
        self.b.ins().bitcast(e.scalar(), little(), r)
    }

    /// f64 -> f32 with a rounding mode (default: to nearest even).
    fn f64_to_f32(&mut self, d: Value, rounding: Option<Rounding>) -> Value {
        let f = self.b.ins().fdemote(types::F32, d);
        let r = rounding.unwrap_or(Rounding::Rte);
        if r == Rounding::Rte {
            return f;
        }
        let back = self.b.ins().fpromote(types::F64, f);
        let above = self.b.ins().fcmp(FloatCC::GreaterThan, back, d);
        let below = self.b.ins().fcmp(FloatCC::LessThan, back, d);
        let zero = self.b.ins().f64const(0.0);
        let neg = self.b.ins().fcmp(FloatCC::LessThan, d, zero);
        let (to_neg, to_pos) = match r {
            Rounding::Rtn => (above, self.b.ins().iconst(types::I8, 0)),
            Rounding::Rtp => (self.b.ins().iconst(types::I8, 0), below),
            _ => (
                self.b.ins().band_not(above, neg),
                self.b.ins().band(below, neg),
            ),
        };
        let dn = self.next_toward(f, Elem::F32, false);
        let up = self.next_toward(f, Elem::F32, true);
        let f1 = self.b.ins().select(to_neg, dn, f);
        self.b.ins().select(to_pos, up, f1)
    }

    /// Saturating float -> integer (already rounded): NaN gives 0.
    fn float_to_int(&mut self, x: Value, to: Elem, signed: bool) -> Value {
        let tb = to.bits();
        if tb >= 32 {
            let ty = to.scalar();
            return if signed {
                self.b.ins().fcvt_to_sint_sat(ty, x)
            } else {
                self.b.ins().fcvt_to_uint_sat(ty, x)
            };
        }
        let w = if signed {
            self.b.ins().fcvt_to_sint_sat(types::I32, x)
        } else {
            self.b.ins().fcvt_to_uint_sat(types::I32, x)
        };
        let (lo, hi) = super::int_vec::int_range(to, signed);
        let hv = self.b.ins().iconst(types::I32, hi);
        let lv = self.b.ins().iconst(types::I32, lo);
        let c = if signed {
            let c = self.b.ins().smin(w, hv);
            self.b.ins().smax(c, lv)
        } else {
            self.b.ins().umin(w, hv)
        };
        self.b.ins().ireduce(to.scalar(), c)
    }

    fn bitcast(&mut self, v: Id, rty: Id) -> Result<Val, CompileError> {
        let x = self.get(v)?;
        let elems = self.elems(rty)?;
        // Same leaf structure: leaf-wise reinterpretation.
        if x.elems.len() == elems.len()
            && x.elems
                .iter()
                .zip(elems.iter())
                .all(|(a, b)| a.bits() == b.bits())
        {
            let mut leaves = Vec::new();
            for (i, l) in x.leaves.iter().enumerate() {
                let (from, to) = (x.elems[i], elems[i]);
                // Same Cranelift representation (ints of one width, half <-> short).
                let same_repr = from == to
                    || (from != Elem::Bool && to != Elem::Bool && from.scalar() == to.scalar());
                leaves.push(if same_repr {
                    l.clone()
                } else {
                    let (tvec, _) = to.chunk();
                    let ts = to.scalar();
                    match l {
                        Lv::U(s) => Lv::U(self.b.ins().bitcast(ts, little(), *s)),
                        _ => {
                            let ch = self.chunks_of(from, l);
                            Lv::V(
                                ch.iter()
                                    .map(|c| self.b.ins().bitcast(tvec, little(), *c))
                                    .collect(),
                            )
                        }
                    }
                });
            }
            return Ok(Val { leaves, elems });
        }
        // Different structure (e.g. uchar4 <-> uint): through a small stack buffer.
        let total: u32 = x.elems.iter().map(|e| e.bytes()).sum();
        let total_out: u32 = elems.iter().map(|e| e.bytes()).sum();
        if total != total_out {
            return Err(CompileError::malformed(format!(
                "OpBitcast between types of {total} and {total_out} bytes"
            )));
        }
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            total.max(8),
            4,
        ));
        let all_uniform = x.leaves.iter().all(Lv::is_uniform);
        let lanes_in: Vec<Vec<Value>> = x
            .leaves
            .iter()
            .zip(x.elems.iter())
            .map(|(l, e)| {
                if all_uniform {
                    vec![match l {
                        Lv::U(v) => *v,
                        _ => unreachable!("uniform"),
                    }]
                } else {
                    self.lanes_of(*e, l)
                }
            })
            .collect();
        let nl = if all_uniform { 1 } else { self.w as usize };
        let mut outs: Vec<Vec<Value>> = vec![Vec::new(); elems.len()];
        let fl = ir::MemFlagsData::trusted();
        for lane in 0..nl {
            let mut off = 0i32;
            for (k, e) in x.elems.iter().enumerate() {
                let mut val = lanes_in[k][lane];
                if *e == Elem::Bool {
                    val = self.b.ins().iadd_imm_s(val, 0);
                }
                let addr = self.b.ins().stack_addr(types::I64, slot, off);
                self.b.ins().store(fl, val, addr, 0);
                off += e.bytes() as i32;
            }
            let mut off = 0i32;
            for (k, e) in elems.iter().enumerate() {
                let addr = self.b.ins().stack_addr(types::I64, slot, off);
                let v = self.b.ins().load(e.scalar(), fl, addr, 0);
                outs[k].push(v);
                off += e.bytes() as i32;
            }
        }
        let leaves = outs
            .iter()
            .zip(elems.iter())
            .map(|(o, e)| {
                if all_uniform {
                    Lv::U(o[0])
                } else {
                    self.pack_lanes(*e, o)
                }
            })
            .collect();
        Ok(Val {
            leaves,
            elems: Rc::clone(&elems),
        })
    }
}

/// An id an instruction must have (result or type).
pub(crate) fn need(x: Option<Id>) -> Result<Id, CompileError> {
    x.ok_or_else(|| CompileError::malformed("instruction without a required result id or type"))
}
