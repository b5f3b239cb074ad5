//! Affine stand-ins for varying values, checked at run time.
//!
//! Widening an affine value or shifting it right gives an affine result only if its
//! lanes do not wrap (`analysis::exact`); where that is not known at compile time the
//! lowering materialises the lanes, which is right for every lane (`(ulong)(uint)(x -
//! 3)` past a wrap, guarded-off lanes with negative indices). That alone would turn
//! `a[(long)(x + off)]` into per-lane or run-time-contiguity accesses, so next to the
//! lane values the lowering keeps the affine form and a flag "no lane wrapped",
//! computed from the first and last lane (a [`Hint`]). Hints follow the integer
//! arithmetic, conversions and access chains of one block; a load or store through a
//! hinted address takes the affine path when the flag is set, else the lane-by-lane
//! one. They are plain SSA values, so they live only within one copy of one block and
//! are dropped at barriers (which resume in another region).

use cranelift_codegen::ir::{condcodes::IntCC, types, InstBuilder, Value};

use super::value::{Elem, Lv};
use super::Tr;
use crate::spirv::{BinOp, ConvOp, Id, Inst, Op, Type};
use crate::CompileError;

/// The affine form of a varying value and the run-time condition (i8) under which it
/// equals the lanes.
#[derive(Clone, Debug)]
pub(crate) struct Hint {
    pub form: Lv,
    pub ok: Value,
}

/// An affine or uniform form and, unless it is exact, its condition.
type Form = (Lv, Option<Value>);

impl Tr<'_, '_> {
    /// Forgets every hint (a new block, or a barrier).
    pub fn clear_hints(&mut self) {
        self.hints.clear();
    }

    /// After `inst` was lowered: if its result came out varying but has a checked
    /// affine form, records it.
    pub fn derive_hint(&mut self, inst: &Inst) -> Result<(), CompileError> {
        let (Some(r), Some(rty)) = (inst.result, inst.ty) else {
            return Ok(());
        };
        if !self.vals.get(&r).is_some_and(|s| s.is_one_varying_leaf()) {
            return Ok(());
        }
        let elems = self.elems(rty)?;
        let [e] = elems.as_slice() else {
            return Ok(());
        };
        if !e.is_int() || *e == Elem::Bool {
            return Ok(());
        }
        let e = *e;
        let hint = match &inst.op {
            Op::Convert {
                op: op @ (ConvOp::UConvert | ConvOp::SConvert),
                value,
                saturate: false,
                ..
            } => {
                let from = self.int_elem(*value)?;
                match (self.form_of(*value)?, from) {
                    (Some((f, ok)), Some(from)) => {
                        self.resize_form(&f, ok, from, e, *op == ConvOp::SConvert)
                    }
                    _ => None,
                }
            }
            Op::Bitcast(v)
            | Op::CopyObject(v)
            | Op::PtrCast(v)
            | Op::ConvertPtrToU(v)
            | Op::ConvertUToPtr(v) => match (self.int_elem(*v)?, self.form_of(*v)?) {
                (Some(from), Some((f, ok))) if from.bits() == e.bits() => Some((f, ok)),
                _ => None,
            },
            Op::Binary(op, a, b) => self.binary_form(*op, e, *a, *b)?,
            Op::AccessChain {
                base,
                element,
                indices,
            } => self.chain_form(*base, *element, indices)?,
            _ => None,
        };
        if let Some((form @ (Lv::A(..) | Lv::U(_)), Some(ok))) = hint {
            self.hints.insert(r, Hint { form, ok });
        }
        Ok(())
    }

    /// The hint of pointer `ptr`'s varying value, if any.
    pub fn address_hint(&self, ptr: Id) -> Option<Hint> {
        self.hints.get(&ptr).cloned()
    }

    /// The integer element of scalar integer or pointer value `id`.
    fn int_elem(&mut self, id: Id) -> Result<Option<Elem>, CompileError> {
        let ty = self.type_of(id)?;
        let elems = self.elems(ty)?;
        Ok(match elems.as_slice() {
            [e] if e.is_int() && *e != Elem::Bool => Some(*e),
            _ => None,
        })
    }

    /// The affine or uniform form of scalar `id`: its own leaf, or its hint.
    fn form_of(&mut self, id: Id) -> Result<Option<Form>, CompileError> {
        if let Some(h) = self.hints.get(&id) {
            return Ok(Some((h.form.clone(), Some(h.ok))));
        }
        let v = self.get(id)?;
        Ok(match v.leaves.as_slice() {
            [l @ (Lv::U(_) | Lv::A(..))] => Some((l.clone(), None)),
            _ => None,
        })
    }

    fn and_ok(&mut self, a: Option<Value>, b: Option<Value>) -> Option<Value> {
        match (a, b) {
            (Some(x), Some(y)) => Some(self.b.ins().band(x, y)),
            (x, None) => x,
            (None, y) => y,
        }
    }

    /// `ok` for the lanes `b + l*s` (l < W) of a `bits`-bit affine value: whether
    /// `f(last)` equals `f(b) + (W-1)*s'`, i.e. `f` (an extension or right shift that
    /// maps the form `(b, s)` to `(f(b), s')`) did not meet a wrap. Only sound when the
    /// lanes span less than half the type (then they wrap at most once, which moves the
    /// last lane); None otherwise.
    fn no_wrap(
        &mut self,
        base: Value,
        stride: i64,
        bits: u32,
        new_base: Value,
        new_stride: i64,
        f: impl Fn(&mut Self, Value) -> Value,
    ) -> Option<Value> {
        let span = i128::from(stride).abs() * i128::from(self.w - 1);
        if span >= 1i128 << (bits - 1) {
            return None;
        }
        let steps = i64::from(self.w - 1);
        let last = self.b.ins().iadd_imm_s(base, stride.wrapping_mul(steps));
        let got = f(self, last);
        let want = self
            .b
            .ins()
            .iadd_imm_s(new_base, new_stride.wrapping_mul(steps));
        Some(self.b.ins().icmp(IntCC::Equal, got, want))
    }

    /// Form `f` (element `from`, condition `ok`) converted to element `to`.
    fn resize_form(
        &mut self,
        f: &Lv,
        ok: Option<Value>,
        from: Elem,
        to: Elem,
        signed: bool,
    ) -> Option<Form> {
        let (b, s) = match f {
            Lv::A(b, s) => (*b, *s),
            // One value in every lane: converts as a scalar.
            Lv::U(b) => {
                let nb = match to.bits().cmp(&from.bits()) {
                    std::cmp::Ordering::Less => self.b.ins().ireduce(to.scalar(), *b),
                    std::cmp::Ordering::Equal => *b,
                    std::cmp::Ordering::Greater if signed => self.b.ins().sextend(to.scalar(), *b),
                    std::cmp::Ordering::Greater => self.b.ins().uextend(to.scalar(), *b),
                };
                return Some((Lv::U(nb), ok));
            }
            _ => return None,
        };
        if to.bits() <= from.bits() {
            // Truncation commutes with the affine form.
            let nb = if to.bits() < from.bits() {
                self.b.ins().ireduce(to.scalar(), b)
            } else {
                b
            };
            return Some((Lv::A(nb, s), ok));
        }
        let ty = to.scalar();
        let ext = move |t: &mut Self, x: Value| {
            if signed {
                t.b.ins().sextend(ty, x)
            } else {
                t.b.ins().uextend(ty, x)
            }
        };
        let nb = ext(self, b);
        let w = self.no_wrap(b, s, from.bits(), nb, s, ext)?;
        Some((Lv::A(nb, s), self.and_ok(ok, Some(w))))
    }

    /// The form of integer `a op b`, when one operand is hinted.
    fn binary_form(
        &mut self,
        op: BinOp,
        e: Elem,
        a: Id,
        b: Id,
    ) -> Result<Option<Form>, CompileError> {
        if !self.hints.contains_key(&a) && !self.hints.contains_key(&b) {
            // Unhinted affine operands: only right shifts, masks and divisions of
            // affine values (that were not known to be exact) start a hint.
            if !matches!(
                op,
                BinOp::AShr
                    | BinOp::LShr
                    | BinOp::And
                    | BinOp::UDiv
                    | BinOp::SDiv
                    | BinOp::UMod
                    | BinOp::SRem
                    | BinOp::SMod
            ) {
                return Ok(None);
            }
        }
        let (Some((fa, oka)), Some((fb, okb))) = (self.form_of(a)?, self.form_of(b)?) else {
            return Ok(None);
        };
        let ok = self.and_ok(oka, okb);
        let c = match &fb {
            Lv::U(x) => self.const_of(*x),
            _ => None,
        };
        Ok(match (op, &fa, c) {
            (BinOp::IAdd | BinOp::ISub | BinOp::IMul | BinOp::Shl, _, _) => {
                // Homomorphic modulo 2^n: the condition carries over.
                let r = self.int_binary(op, e, &fa, &fb, crate::analysis::exact::Fact::NONE)?;
                matches!(r, Lv::A(..) | Lv::U(_)).then_some((r, ok))
            }
            (
                BinOp::UDiv | BinOp::SDiv | BinOp::UMod | BinOp::SRem | BinOp::SMod,
                Lv::A(x, s),
                Some(c),
            ) => {
                let (x, s) = (*x, *s);
                self.div_form(op, e, x, s, c)
                    .map(|(f, w)| (f, self.and_ok(ok, Some(w))))
            }
            (BinOp::AShr | BinOp::LShr, Lv::A(x, s), Some(c)) => {
                let c = c & i64::from(e.bits() - 1);
                if c >= 63 || s.rem_euclid(1i64 << c) != 0 {
                    return Ok(None);
                }
                let arith = op == BinOp::AShr;
                let shr = move |t: &mut Self, v: Value| {
                    if arith {
                        t.b.ins().sshr_imm_s(v, c)
                    } else {
                        t.b.ins().ushr_imm_s(v, c)
                    }
                };
                let (x, s) = (*x, *s);
                let nb = shr(self, x);
                self.no_wrap(x, s, e.bits(), nb, s >> c, shr)
                    .map(|w| (Lv::A(nb, s >> c), self.and_ok(ok, Some(w))))
            }
            (BinOp::And, Lv::A(x, s), Some(m))
                if m > 0 && (m as u64).wrapping_add(1).is_power_of_two() =>
            {
                // A mask of the low k bits: affine while no lane crosses a multiple of
                // 2^k (checked like a wrap of a k-bit value).
                let k = 64 - (m as u64).leading_zeros();
                let (x, s) = (*x, *s);
                let nb = self.b.ins().band_imm_s(x, m);
                let span = i128::from(s).abs() * i128::from(self.w - 1);
                if span >= 1i128 << k.saturating_sub(1) {
                    return Ok(None);
                }
                let mask = move |t: &mut Self, v: Value| t.b.ins().band_imm_s(v, m);
                self.no_wrap(x, s, e.bits(), nb, s, mask)
                    .map(|w| (Lv::A(nb, s), self.and_ok(ok, Some(w))))
            }
            _ => None,
        })
    }

    /// The form of an access chain whose base or indices are hinted.
    fn chain_form(
        &mut self,
        base: Id,
        element: Option<Id>,
        indices: &[Id],
    ) -> Result<Option<Form>, CompileError> {
        let hinted = std::iter::once(base)
            .chain(element)
            .chain(indices.iter().copied())
            .any(|id| self.hints.contains_key(&id));
        if !hinted
            || self
                .m
                .globals
                .get(&base)
                .is_some_and(|g| g.builtin.is_some())
        {
            return Ok(None);
        }
        let Some((bf, bok)) = self.form_of(base)? else {
            return Ok(None);
        };
        // Every non-constant index needs a form.
        for &i in element.iter().chain(indices) {
            if self.const_of_id(i).is_none() && self.form_of(i)?.is_none() {
                return Ok(None);
            }
        }
        let bty = self.type_of(base)?;
        let (_, t) = self.m.pointee(bty)?;
        let mut oks: Vec<Option<Value>> = vec![bok];
        let mut lost = false;
        let addr = self.chain_walk(bf, t, element, indices, &mut |tr: &mut Self, id| {
            let from = tr.int_elem(id)?.unwrap_or(Elem::I64);
            let Some((f, ok)) = tr.form_of(id)? else {
                lost = true;
                return Ok(Lv::U(tr.b.ins().iconst(types::I64, 0)));
            };
            if from == Elem::I64 {
                oks.push(ok);
                return Ok(f);
            }
            if let Lv::U(x) = f {
                oks.push(ok);
                return Ok(Lv::U(tr.b.ins().sextend(types::I64, x)));
            }
            match tr.resize_form(&f, ok, from, Elem::I64, true) {
                Some((g, ok)) => {
                    oks.push(ok);
                    Ok(g)
                }
                None => {
                    lost = true;
                    Ok(Lv::U(tr.b.ins().iconst(types::I64, 0)))
                }
            }
        })?;
        if lost {
            return Ok(None);
        }
        let mut ok = None;
        for o in oks {
            ok = self.and_ok(ok, o);
        }
        Ok(Some((addr, ok)))
    }

    /// The value of constant `id`, if it is an integer constant.
    fn const_of_id(&self, id: Id) -> Option<u64> {
        let c = self.m.constants.get(&id)?;
        if !matches!(self.m.types.get(&c.ty), Some(Type::Int { .. })) {
            return None;
        }
        match c.value {
            crate::spirv::ConstValue::Scalar(v) => Some(v),
            crate::spirv::ConstValue::Null => Some(0),
            _ => None,
        }
    }
}

impl Tr<'_, '_> {
    /// Loads leaves `elems` at `offs` through pointer `ptr` (lane addresses `p`): on the
    /// hinted affine address when its flag is set, else lane by lane (a partial mask:
    /// lane by lane from the lanes, which the form would only recompute).
    pub fn load_hinted(
        &mut self,
        ptr: Id,
        p: &Lv,
        elems: &[Elem],
        offs: &[u64],
        private: bool,
    ) -> Result<Vec<Lv>, CompileError> {
        // Under a partial mask both ways are per lane: the lanes themselves.
        let Some(h) = self
            .address_hint(ptr)
            .filter(|_| matches!(p, Lv::V(_)) && self.full_state != Some(false))
        else {
            return self.load_leaves(p, elems, offs, private);
        };
        let tys = self.chunk_types(elems);
        let merged = self.branch_merge(
            h.ok,
            &tys,
            |t| {
                let l = t.load_leaves(&h.form, elems, offs, private)?;
                Ok(t.flat_chunks(&l, elems))
            },
            |t| {
                // A wrapped form: the lanes are not contiguous either.
                let l = t.per_lane_load(p, elems, offs, private)?;
                Ok(t.flat_chunks(&l, elems))
            },
        )?;
        Ok(self.leaves_of_chunks(&merged, elems))
    }

    /// Stores leaves through pointer `ptr` (lane addresses `p`), on the hinted affine
    /// address when its flag is set.
    pub fn store_hinted(
        &mut self,
        ptr: Id,
        p: &Lv,
        leaves: &[Lv],
        elems: &[Elem],
        offs: &[u64],
        private: bool,
    ) -> Result<(), CompileError> {
        let Some(h) = self
            .address_hint(ptr)
            .filter(|_| matches!(p, Lv::V(_)) && self.full_state != Some(false))
        else {
            return self.store_leaves(p, leaves, elems, offs, private);
        };
        self.branch_merge(
            h.ok,
            &[],
            |t| {
                t.store_leaves(&h.form, leaves, elems, offs, private)?;
                Ok(vec![])
            },
            |t| {
                t.per_lane_store(p, leaves, elems, offs)?;
                Ok(vec![])
            },
        )?;
        Ok(())
    }

    /// `yes` if i8 `cond` is set, else `no`; both give values of types `tys`, merged.
    pub fn branch_merge(
        &mut self,
        cond: Value,
        tys: &[cranelift_codegen::ir::Type],
        yes: impl FnOnce(&mut Self) -> Result<Vec<Value>, CompileError>,
        no: impl FnOnce(&mut Self) -> Result<Vec<Value>, CompileError>,
    ) -> Result<Vec<Value>, CompileError> {
        use cranelift_codegen::ir::BlockArg;
        let by = self.b.create_block();
        let bn = self.b.create_block();
        let join = self.b.create_block();
        for t in tys {
            self.b.append_block_param(join, *t);
        }
        self.b.ins().brif(cond, by, &[], bn, &[]);
        // A full-mask test computed inside one side does not dominate the other
        // side or the join: each starts from what held before the branch.
        let full_before = self.mask_full;
        self.b.switch_to_block(by);
        let vy = yes(self)?;
        let args: Vec<BlockArg> = vy.iter().map(|v| BlockArg::Value(*v)).collect();
        self.b.ins().jump(join, &args);
        self.mask_full = full_before;
        self.b.switch_to_block(bn);
        let vn = no(self)?;
        let args: Vec<BlockArg> = vn.iter().map(|v| BlockArg::Value(*v)).collect();
        self.b.ins().jump(join, &args);
        self.mask_full = full_before;
        self.b.switch_to_block(join);
        Ok(self.b.block_params(join).to_vec())
    }
}
