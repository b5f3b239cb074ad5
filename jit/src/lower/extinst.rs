//! OpenCL.std extended instructions (printf has its own module). The hot ones are inlined as lane (vector)
//! operations; vector-only ones (vloadn/vstoren, half loads/stores, shuffle, select,
//! cross, the geometric functions) are lowered here; everything else calls the scalar
//! implementation from [`crate::builtins`] once per lane and component.

use cranelift_codegen::ir::{
    self, condcodes::FloatCC, condcodes::IntCC, types, AbiParam, InstBuilder, Value,
};
use rspirv::spirv::OpenclStd100Op as C;

use super::value::{little, Elem, Lv, Val};
use super::Tr;
use crate::builtins::{self, Scalar};
use crate::spirv::{Id, Rounding};
use crate::CompileError;

fn scalar_of(e: Elem) -> Scalar {
    match e {
        Elem::Bool | Elem::I8 => Scalar::I8,
        Elem::I16 | Elem::F16 => Scalar::I16,
        Elem::I32 => Scalar::I32,
        Elem::I64 => Scalar::I64,
        Elem::F32 => Scalar::F32,
        Elem::F64 => Scalar::F64,
    }
}

fn abi(s: Scalar) -> AbiParam {
    match s {
        Scalar::I8 => AbiParam::new(types::I8).sext(),
        Scalar::I16 => AbiParam::new(types::I16).sext(),
        Scalar::I32 => AbiParam::new(types::I32),
        Scalar::I64 | Scalar::Ptr => AbiParam::new(types::I64),
        Scalar::F32 => AbiParam::new(types::F32),
        Scalar::F64 => AbiParam::new(types::F64),
    }
}

impl Tr<'_, '_> {
    /// Lowers `OpExtInst opcode args` with result type `rty`.
    pub fn ext_inst(
        &mut self,
        opcode: u32,
        args: &[Id],
        lits: &[u32],
        rty: Option<Id>,
    ) -> Result<Option<Val>, CompileError> {
        let op = C::from_u32(opcode).ok_or_else(|| {
            CompileError::unsupported(format!("unknown OpenCL.std instruction {opcode}"))
        })?;
        let arg = |t: &mut Self, i: usize| -> Result<Val, CompileError> {
            let id = *args.get(i).ok_or_else(|| {
                CompileError::malformed(format!("OpenCL.std {op:?} needs more operands"))
            })?;
            t.get(id)
        };
        match op {
            C::vloadn => {
                let rty =
                    rty.ok_or_else(|| CompileError::malformed("vloadn without a result type"))?;
                let elems = self.elems(rty)?;
                let off = arg(self, 0)?;
                let p = arg(self, 1)?;
                let n = elems.len() as i64;
                let es = i64::from(elems[0].bytes());
                let addr = self.scaled_address(&p, &off, n * es);
                let offs: Vec<u64> = (0..elems.len() as u64).map(|i| i * es as u64).collect();
                let private = self.ptr_is_private(args[1]);
                let leaves = self.load_leaves(&addr, &elems, &offs, private)?;
                return Ok(Some(Val { leaves, elems }));
            }
            C::vstoren => {
                let data = arg(self, 0)?;
                let off = arg(self, 1)?;
                let p = arg(self, 2)?;
                let n = data.elems.len() as i64;
                let es = i64::from(data.elems[0].bytes());
                let addr = self.scaled_address(&p, &off, n * es);
                let offs: Vec<u64> = (0..data.elems.len() as u64)
                    .map(|i| i * es as u64)
                    .collect();
                let private = self.ptr_is_private(args[2]);
                self.store_leaves(&addr, &data.leaves, &data.elems, &offs, private)?;
                return Ok(None);
            }
            C::vload_half | C::vload_halfn | C::vloada_halfn => {
                let rty =
                    rty.ok_or_else(|| CompileError::malformed("vload_half without a result type"))?;
                let elems = self.elems(rty)?;
                let off = arg(self, 0)?;
                let p = arg(self, 1)?;
                let n = elems.len() as i64;
                // vloada_half3 uses a stride of 4 halves.
                let stride_n = if op == C::vloada_halfn && n == 3 {
                    4
                } else {
                    n
                };
                let addr = self.scaled_address(&p, &off, stride_n * 2);
                let offs: Vec<u64> = (0..n as u64).map(|i| i * 2).collect();
                let hel = vec![Elem::I16; n as usize];
                let private = self.ptr_is_private(args[1]);
                let raw = self.load_leaves(&addr, &hel, &offs, private)?;
                let mut leaves = Vec::new();
                for (l, e) in raw.iter().zip(elems.iter()) {
                    let f = self.half_to_f32(l);
                    leaves.push(match e {
                        Elem::F32 => f,
                        Elem::F64 => self.convert_leaf(
                            crate::spirv::ConvOp::FConvert,
                            &f,
                            Elem::F32,
                            Elem::F64,
                            false,
                            None,
                        ),
                        _ => return Err(CompileError::malformed(format!("vload_half to {e:?}"))),
                    });
                }
                return Ok(Some(Val { leaves, elems }));
            }
            C::vstore_half
            | C::vstore_halfn
            | C::vstore_half_r
            | C::vstore_halfn_r
            | C::vstorea_halfn
            | C::vstorea_halfn_r => {
                let data = arg(self, 0)?;
                let off = arg(self, 1)?;
                let p = arg(self, 2)?;
                let mode = if matches!(
                    op,
                    C::vstore_half_r | C::vstore_halfn_r | C::vstorea_halfn_r
                ) {
                    // The literal FPRoundingMode operand.
                    lits.first().copied().unwrap_or(0)
                } else {
                    0
                };
                // FPRoundingMode: 0 rte, 1 rtz, 2 rtp, 3 rtn.
                let rounding = [Rounding::Rte, Rounding::Rtz, Rounding::Rtp, Rounding::Rtn]
                    [(mode as usize).min(3)];
                let n = data.elems.len() as i64;
                let stride_n = if matches!(op, C::vstorea_halfn | C::vstorea_halfn_r) && n == 3 {
                    4
                } else {
                    n
                };
                let addr = self.scaled_address(&p, &off, stride_n * 2);
                let mut halves = Vec::new();
                for (l, e) in data.leaves.iter().zip(data.elems.iter()) {
                    if !matches!(e, Elem::F32 | Elem::F64) {
                        return Err(CompileError::malformed(format!("vstore_half from {e:?}")));
                    }
                    halves.push(self.float_to_half(*e, l, Some(rounding))?);
                }
                let hel = vec![Elem::I16; n as usize];
                let offs: Vec<u64> = (0..n as u64).map(|i| i * 2).collect();
                let private = self.ptr_is_private(args[2]);
                self.store_leaves(&addr, &halves, &hel, &offs, private)?;
                return Ok(None);
            }
            C::prefetch => return Ok(None),
            C::printf => {
                return Err(CompileError::codegen(
                    "printf must be lowered by lower::printf",
                ));
            }
            _ => {}
        }
        let rty = rty.ok_or_else(|| {
            CompileError::malformed(format!("OpenCL.std {op:?} without a result type"))
        })?;
        let elems = self.elems(rty)?;
        let vals: Vec<Val> = (0..args.len())
            .map(|i| arg(self, i))
            .collect::<Result<_, _>>()?;
        let has_half =
            elems.contains(&Elem::F16) || vals.iter().any(|v| v.elems.contains(&Elem::F16));
        if has_half && !matches!(op, C::select | C::shuffle | C::shuffle2 | C::bitselect) {
            let leaves = self.half_ext_inst(op, opcode, args, &vals, &elems)?;
            return Ok(Some(Val { leaves, elems }));
        }
        if let Some(v) = self.ext_inline(op, &vals, &elems)? {
            return Ok(Some(Val { leaves: v, elems }));
        }
        if let Some(v) = self.pow_const(op, &vals, &elems)? {
            return Ok(Some(Val { leaves: v, elems }));
        }
        if let Some(v) = self.vmath(op, &vals, &elems)? {
            return Ok(Some(Val { leaves: v, elems }));
        }
        // Geometric functions on vectors.
        if matches!(op, C::length | C::distance | C::normalize) && vals[0].elems.len() > 1 {
            return Ok(Some(self.geometric_call(op, opcode, &vals, elems)?));
        }
        let leaves = self.ext_call(op, opcode, args, &vals, &elems)?;
        Ok(Some(Val { leaves, elems }))
    }

    fn ptr_is_private(&self, id: Id) -> bool {
        self.private_ptrs.contains(&id)
    }

    /// `p + off * scale` (byte address).
    fn scaled_address(&mut self, p: &Val, off: &Val, scale: i64) -> Lv {
        let o = self.int_resize(&off.leaves[0], off.elems[0], Elem::I64, false);
        let s = self.mul_const(Elem::I64, &o, scale);
        self.add_lv(Elem::I64, &p.leaves[0], &s)
    }

    /// Component `i` of argument `v` (scalars broadcast).
    pub(super) fn comp(v: &Val, i: usize) -> (Elem, Lv) {
        let k = if v.leaves.len() == 1 { 0 } else { i };
        (v.elems[k], v.leaves[k].clone())
    }

    /// OpenCL `fmin`/`fmax`: `fmax(x, y)` is `x < y ? y : x` (`fmin`: `y < x ? y : x`),
    /// and a NaN operand yields the other one: a NaN `y` fails the comparison, a NaN `x`
    /// is selected away. Two compares and two blends per vector, where Cranelift's
    /// IEEE `fmax` alone takes more (pyopencl's float `max` reduction); on equal
    /// operands (signed zeros) `x` is the result, as in the CTS reference.
    fn cl_fminmax(&mut self, e: Elem, a: &Lv, b: &Lv, max: bool) -> Lv {
        let take_b = if max {
            self.fcmp_lv(FloatCC::LessThan, e, a, b)
        } else {
            self.fcmp_lv(FloatCC::LessThan, e, b, a)
        };
        let r = self.select_lv(&take_b, e, b, a);
        let anan = self.fcmp_lv(FloatCC::Unordered, e, a, a);
        self.select_lv(&anan, e, b, &r)
    }

    pub(super) fn int_minmax(&mut self, e: Elem, a: &Lv, b: &Lv, max: bool, signed: bool) -> Lv {
        let f = move |t: &mut Tr<'_, '_>, x: Value, y: Value| match (max, signed) {
            (true, true) => t.b.ins().smax(x, y),
            (true, false) => t.b.ins().umax(x, y),
            (false, true) => t.b.ins().smin(x, y),
            (false, false) => t.b.ins().umin(x, y),
        };
        if e == Elem::I64 {
            self.per_lane(&[(e, a), (e, b)], e, |t, x| f(t, x[0], x[1]))
        } else {
            self.vec_op2(e, a, b, f, f)
        }
    }

    /// Inline lowering of common instructions; None = not handled here.
    pub(super) fn ext_inline(
        &mut self,
        op: C,
        vals: &[Val],
        elems: &[Elem],
    ) -> Result<Option<Vec<Lv>>, CompileError> {
        let n = elems.len();
        let fast = self.opts.fast_relaxed_math || self.opts.mad_enable;
        let mut out = Vec::with_capacity(n);
        match op {
            C::cross => {
                let a = &vals[0];
                let b = &vals[1];
                let e = elems[0];
                let mulsub = |t: &mut Self, i: usize, j: usize| -> Lv {
                    let p = t.vec_op2(
                        e,
                        &a.leaves[i],
                        &b.leaves[j],
                        |t, x, y| t.b.ins().fmul(x, y),
                        |t, x, y| t.b.ins().fmul(x, y),
                    );
                    let q = t.vec_op2(
                        e,
                        &a.leaves[j],
                        &b.leaves[i],
                        |t, x, y| t.b.ins().fmul(x, y),
                        |t, x, y| t.b.ins().fmul(x, y),
                    );
                    t.vec_op2(
                        e,
                        &p,
                        &q,
                        |t, x, y| t.b.ins().fsub(x, y),
                        |t, x, y| t.b.ins().fsub(x, y),
                    )
                };
                out.push(mulsub(self, 1, 2));
                out.push(mulsub(self, 2, 0));
                out.push(mulsub(self, 0, 1));
                if n == 4 {
                    let z = self.scalar_const(e, 0);
                    out.push(Lv::U(z));
                }
                return Ok(Some(out));
            }
            C::fast_length | C::fast_distance | C::fast_normalize => {
                let e = vals[0].elems[0];
                let d: Vec<Lv> = if op == C::fast_distance {
                    (0..vals[0].leaves.len())
                        .map(|i| {
                            self.vec_op2(
                                e,
                                &vals[0].leaves[i],
                                &vals[1].leaves[i],
                                |t, x, y| t.b.ins().fsub(x, y),
                                |t, x, y| t.b.ins().fsub(x, y),
                            )
                        })
                        .collect()
                } else {
                    vals[0].leaves.clone()
                };
                let dot = self.dot_leaves(e, &d, &d);
                let len = self.vec_op1(e, &dot, |t, x| t.b.ins().sqrt(x));
                if op == C::fast_normalize {
                    for l in &d {
                        out.push(self.vec_op2(
                            e,
                            l,
                            &len,
                            |t, x, y| t.b.ins().fdiv(x, y),
                            |t, x, y| t.b.ins().fdiv(x, y),
                        ));
                    }
                } else {
                    out.push(len);
                }
                return Ok(Some(out));
            }
            C::select => {
                // select(a, b, c): scalar c: c != 0 ? b : a; vector c: MSB of c_i ? b : a.
                let vector = vals[2].leaves.len() > 1;
                for i in 0..n {
                    let (ce, c) = Self::comp(&vals[2], i);
                    let (e, a) = Self::comp(&vals[0], i);
                    let (_, b) = Self::comp(&vals[1], i);
                    let z = self.iconst(ce, 0);
                    let cc = if vector {
                        IntCC::SignedLessThan
                    } else {
                        IntCC::NotEqual
                    };
                    let cond = self.icmp_lv(cc, ce, &c, &Lv::U(z));
                    out.push(self.select_lv(&cond, e, &b, &a));
                }
                return Ok(Some(out));
            }
            C::shuffle | C::shuffle2 => {
                let src: Vec<Lv> = if op == C::shuffle2 {
                    vals[0]
                        .leaves
                        .iter()
                        .chain(vals[1].leaves.iter())
                        .cloned()
                        .collect()
                } else {
                    vals[0].leaves.clone()
                };
                let mask = if op == C::shuffle2 {
                    &vals[2]
                } else {
                    &vals[1]
                };
                let e = elems[0];
                let me = mask.elems[0];
                let count = src.len() as i64;
                for i in 0..n {
                    let mi = &mask.leaves[i];
                    let k = self.iconst(me, count - 1);
                    let idx = self.vec_op2(
                        me,
                        mi,
                        &Lv::U(k),
                        |t, x, y| t.b.ins().band(x, y),
                        |t, x, y| t.b.ins().band(x, y),
                    );
                    let mut acc = src[0].clone();
                    for (j, s) in src.iter().enumerate().skip(1) {
                        let jc = self.iconst(me, j as i64);
                        let c = self.icmp_lv(IntCC::Equal, me, &idx, &Lv::U(jc));
                        acc = self.select_lv(&c, e, s, &acc);
                    }
                    out.push(acc);
                }
                return Ok(Some(out));
            }
            _ => {}
        }
        for i in 0..n {
            let e = elems[i];
            let a = vals.first().map(|v| Self::comp(v, i).1);
            let b = vals.get(1).map(|v| Self::comp(v, i).1);
            let c = vals.get(2).map(|v| Self::comp(v, i).1);
            let (a, b, c) = (a.as_ref(), b.as_ref(), c.as_ref());
            let need = |x: Option<&Lv>| {
                x.cloned().ok_or_else(|| {
                    CompileError::malformed(format!("OpenCL.std {op:?}: missing operand"))
                })
            };
            let r = match op {
                C::fabs => self.vec_op1(e, &need(a)?, |t, x| t.b.ins().fabs(x)),
                C::sqrt | C::native_sqrt | C::half_sqrt => {
                    self.vec_op1(e, &need(a)?, |t, x| t.b.ins().sqrt(x))
                }
                C::floor => self.vec_op1(e, &need(a)?, |t, x| t.b.ins().floor(x)),
                C::ceil => self.vec_op1(e, &need(a)?, |t, x| t.b.ins().ceil(x)),
                C::trunc => self.vec_op1(e, &need(a)?, |t, x| t.b.ins().trunc(x)),
                C::rint => self.vec_op1(e, &need(a)?, |t, x| t.b.ins().nearest(x)),
                C::fma => {
                    let (x, y, z) = (need(a)?, need(b)?, need(c)?);
                    self.fma3(e, &x, &y, &z)
                }
                C::mad => {
                    let (x, y, z) = (need(a)?, need(b)?, need(c)?);
                    if fast {
                        self.fma3(e, &x, &y, &z)
                    } else {
                        let p = self.vec_op2(
                            e,
                            &x,
                            &y,
                            |t, x, y| t.b.ins().fmul(x, y),
                            |t, x, y| t.b.ins().fmul(x, y),
                        );
                        self.vec_op2(
                            e,
                            &p,
                            &z,
                            |t, x, y| t.b.ins().fadd(x, y),
                            |t, x, y| t.b.ins().fadd(x, y),
                        )
                    }
                }
                C::fmin | C::fmin_common => self.cl_fminmax(e, &need(a)?, &need(b)?, false),
                C::fmax | C::fmax_common => self.cl_fminmax(e, &need(a)?, &need(b)?, true),
                C::fclamp => {
                    let lo = self.cl_fminmax(e, &need(a)?, &need(b)?, true);
                    self.cl_fminmax(e, &lo, &need(c)?, false)
                }
                C::s_max | C::u_max | C::s_min | C::u_min => {
                    let max = matches!(op, C::s_max | C::u_max);
                    let signed = matches!(op, C::s_max | C::s_min);
                    self.int_minmax(e, &need(a)?, &need(b)?, max, signed)
                }
                C::s_clamp | C::u_clamp => {
                    let signed = op == C::s_clamp;
                    let lo = self.int_minmax(e, &need(a)?, &need(b)?, true, signed);
                    self.int_minmax(e, &lo, &need(c)?, false, signed)
                }
                // Saturating add/sub of chars and shorts: one x86 instruction per 16
                // bytes (the generic path calls a built-in per lane).
                C::s_add_sat | C::u_add_sat | C::s_sub_sat | C::u_sub_sat
                    if matches!(e, Elem::I8 | Elem::I16) =>
                {
                    let f = match op {
                        C::s_add_sat => |t: &mut Tr<'_, '_>, x, y| t.b.ins().sadd_sat(x, y),
                        C::u_add_sat => |t: &mut Tr<'_, '_>, x, y| t.b.ins().uadd_sat(x, y),
                        C::s_sub_sat => |t: &mut Tr<'_, '_>, x, y| t.b.ins().ssub_sat(x, y),
                        _ => |t: &mut Tr<'_, '_>, x, y| t.b.ins().usub_sat(x, y),
                    };
                    let (x, y) = (need(a)?, need(b)?);
                    if x.is_uniform() && y.is_uniform() {
                        // Cranelift has no scalar saturating forms: splat, compute, take lane 0.
                        let (vx, vy) = (self.chunks_of(e, &x), self.chunks_of(e, &y));
                        let r = f(self, vx[0], vy[0]);
                        Lv::U(self.b.ins().extractlane(r, 0))
                    } else {
                        self.vec_op2(e, &x, &y, f, f)
                    }
                }
                C::native_divide | C::half_divide => self.vec_op2(
                    e,
                    &need(a)?,
                    &need(b)?,
                    |t, x, y| t.b.ins().fdiv(x, y),
                    |t, x, y| t.b.ins().fdiv(x, y),
                ),
                C::native_recip | C::half_recip => {
                    let one = if e == Elem::F64 {
                        self.b.ins().f64const(1.0)
                    } else {
                        self.b.ins().f32const(1.0)
                    };
                    self.vec_op2(
                        e,
                        &Lv::U(one),
                        &need(a)?,
                        |t, x, y| t.b.ins().fdiv(x, y),
                        |t, x, y| t.b.ins().fdiv(x, y),
                    )
                }
                C::native_rsqrt | C::half_rsqrt => {
                    let one = if e == Elem::F64 {
                        self.b.ins().f64const(1.0)
                    } else {
                        self.b.ins().f32const(1.0)
                    };
                    let s = self.vec_op1(e, &need(a)?, |t, x| t.b.ins().sqrt(x));
                    self.vec_op2(
                        e,
                        &Lv::U(one),
                        &s,
                        |t, x, y| t.b.ins().fdiv(x, y),
                        |t, x, y| t.b.ins().fdiv(x, y),
                    )
                }
                C::mix => {
                    let (x, y, z) = (need(a)?, need(b)?, need(c)?);
                    let d = self.vec_op2(
                        e,
                        &y,
                        &x,
                        |t, x, y| t.b.ins().fsub(x, y),
                        |t, x, y| t.b.ins().fsub(x, y),
                    );
                    let p = self.vec_op2(
                        e,
                        &d,
                        &z,
                        |t, x, y| t.b.ins().fmul(x, y),
                        |t, x, y| t.b.ins().fmul(x, y),
                    );
                    self.vec_op2(
                        e,
                        &x,
                        &p,
                        |t, x, y| t.b.ins().fadd(x, y),
                        |t, x, y| t.b.ins().fadd(x, y),
                    )
                }
                C::step => {
                    let (edge, x) = (need(a)?, need(b)?);
                    let lt = self.fcmp_lv(FloatCC::LessThan, e, &x, &edge);
                    let zero = self.scalar_const(e, 0);
                    let one = if e == Elem::F64 {
                        self.b.ins().f64const(1.0)
                    } else {
                        self.b.ins().f32const(1.0)
                    };
                    self.select_lv(&lt, e, &Lv::U(zero), &Lv::U(one))
                }
                C::degrees | C::radians => {
                    let k = if op == C::degrees {
                        180.0 / std::f64::consts::PI
                    } else {
                        std::f64::consts::PI / 180.0
                    };
                    let kv = if e == Elem::F64 {
                        self.b.ins().f64const(k)
                    } else {
                        self.b.ins().f32const(k as f32)
                    };
                    self.vec_op2(
                        e,
                        &need(a)?,
                        &Lv::U(kv),
                        |t, x, y| t.b.ins().fmul(x, y),
                        |t, x, y| t.b.ins().fmul(x, y),
                    )
                }
                C::bitselect if e.is_int() || e == Elem::F16 => {
                    let (x, y, z) = (need(a)?, need(b)?, need(c)?);
                    let hi = self.vec_op2(
                        e,
                        &y,
                        &z,
                        |t, x, y| t.b.ins().band(x, y),
                        |t, x, y| t.b.ins().band(x, y),
                    );
                    let lo = self.vec_op2(
                        e,
                        &x,
                        &z,
                        |t, x, y| t.b.ins().band_not(x, y),
                        |t, x, y| t.b.ins().band_not(x, y),
                    );
                    self.vec_op2(
                        e,
                        &hi,
                        &lo,
                        |t, x, y| t.b.ins().bor(x, y),
                        |t, x, y| t.b.ins().bor(x, y),
                    )
                }
                C::popcount => self.per_lane(&[(e, &need(a)?)], e, |t, x| t.b.ins().popcnt(x[0])),
                C::clz => self.per_lane(&[(e, &need(a)?)], e, |t, x| t.b.ins().clz(x[0])),
                C::ctz => self.per_lane(&[(e, &need(a)?)], e, |t, x| t.b.ins().ctz(x[0])),
                C::s_mul24 | C::u_mul24 => self.vec_op2(
                    e,
                    &need(a)?,
                    &need(b)?,
                    |t, x, y| t.b.ins().imul(x, y),
                    |t, x, y| t.b.ins().imul(x, y),
                ),
                C::u_mul_hi | C::s_mul_hi if e == Elem::I32 => {
                    self.mul_hi32(&need(a)?, &need(b)?, op == C::s_mul_hi)
                }
                C::u_mad_hi | C::s_mad_hi if e == Elem::I32 => {
                    let h = self.mul_hi32(&need(a)?, &need(b)?, op == C::s_mad_hi);
                    self.add_lv(e, &h, &need(c)?)
                }
                C::s_mad24 | C::u_mad24 => {
                    let p = self.vec_op2(
                        e,
                        &need(a)?,
                        &need(b)?,
                        |t, x, y| t.b.ins().imul(x, y),
                        |t, x, y| t.b.ins().imul(x, y),
                    );
                    self.add_lv(e, &p, &need(c)?)
                }
                _ => return Ok(None),
            };
            out.push(r);
        }
        Ok(Some(out))
    }

    /// A true fused multiply-add.
    fn fma3(&mut self, e: Elem, x: &Lv, y: &Lv, z: &Lv) -> Lv {
        if x.is_uniform() && y.is_uniform() && z.is_uniform() {
            if let (Lv::U(a), Lv::U(b), Lv::U(c)) = (x, y, z) {
                return Lv::U(self.b.ins().fma(*a, *b, *c));
            }
        }
        let (vx, vy, vz) = (
            self.chunks_of(e, x),
            self.chunks_of(e, y),
            self.chunks_of(e, z),
        );
        Lv::V(
            (0..vx.len())
                .map(|i| self.b.ins().fma(vx[i], vy[i], vz[i]))
                .collect(),
        )
    }

    /// Sum of products of two leaf lists (in order, not fused).
    fn dot_leaves(&mut self, e: Elem, a: &[Lv], b: &[Lv]) -> Lv {
        let mut acc: Option<Lv> = None;
        for (x, y) in a.iter().zip(b) {
            let p = self.vec_op2(
                e,
                x,
                y,
                |t, x, y| t.b.ins().fmul(x, y),
                |t, x, y| t.b.ins().fmul(x, y),
            );
            acc = Some(match acc {
                None => p,
                Some(s) => self.vec_op2(
                    e,
                    &s,
                    &p,
                    |t, x, y| t.b.ins().fadd(x, y),
                    |t, x, y| t.b.ins().fadd(x, y),
                ),
            });
        }
        acc.unwrap_or_else(|| Lv::U(self.scalar_const(e, 0)))
    }

    /// OpDot.
    pub fn dot(&mut self, a: Id, b: Id, rty: Id) -> Result<Val, CompileError> {
        let va = self.get(a)?;
        let vb = self.get(b)?;
        let elems = self.elems(rty)?;
        let r = if va.elems[0] == Elem::F16 {
            // Products and sums in f32, rounded to half once.
            let xs: Vec<Lv> = va.leaves.iter().map(|l| self.half_to_f32(l)).collect();
            let ys: Vec<Lv> = vb.leaves.iter().map(|l| self.half_to_f32(l)).collect();
            let d = self.dot_leaves(Elem::F32, &xs, &ys);
            self.f32_to_half(&d)
        } else {
            self.dot_leaves(va.elems[0], &va.leaves, &vb.leaves)
        };
        Ok(Val {
            leaves: vec![r],
            elems,
        })
    }

    /// length/distance/normalize of vectors through the library (overflow-safe).
    pub(super) fn geometric_call(
        &mut self,
        op: C,
        opcode: u32,
        vals: &[Val],
        elems: std::rc::Rc<Vec<Elem>>,
    ) -> Result<Val, CompileError> {
        let e = vals[0].elems[0];
        let width = vals[0].elems.len() as u32;
        let nf = builtins::geometric(opcode, scalar_of(e), width).ok_or_else(|| {
            CompileError::unsupported(format!("OpenCL.std {op:?} for {width} x {e:?}"))
        })?;
        let params: Vec<AbiParam> = nf.params.iter().map(|p| abi(*p)).collect();
        let f = self.import_fn(nf.symbol, &params, &[abi(nf.ret)])?;
        let es = e.bytes();
        let slot = self.b.create_sized_stack_slot(ir::StackSlotData::new(
            ir::StackSlotKind::ExplicitSlot,
            es * width * 3,
            4,
        ));
        let uniform = vals.iter().all(|v| v.leaves.iter().all(Lv::is_uniform));
        let nl = if uniform { 1 } else { self.w as usize };
        let lanes: Vec<Vec<Vec<Value>>> = vals
            .iter()
            .map(|v| {
                v.leaves
                    .iter()
                    .zip(v.elems.iter())
                    .map(|(l, e)| {
                        if uniform {
                            vec![match l {
                                Lv::U(x) => *x,
                                _ => unreachable!("uniform"),
                            }]
                        } else {
                            self.lanes_of(*e, l)
                        }
                    })
                    .collect()
            })
            .collect();
        let fl = ir::MemFlagsData::trusted();
        let nout = elems.len();
        let mut outs: Vec<Vec<Value>> = vec![Vec::new(); nout];
        for lane in 0..nl {
            let mut ptrs = Vec::new();
            for (k, v) in lanes.iter().enumerate() {
                let base = (k as u32 * width * es) as i32;
                for (c, comp) in v.iter().enumerate() {
                    let a =
                        self.b
                            .ins()
                            .stack_addr(types::I64, slot, base + (c as u32 * es) as i32);
                    self.b.ins().store(fl, comp[lane], a, 0);
                }
                ptrs.push(self.b.ins().stack_addr(types::I64, slot, base));
            }
            if op == C::normalize {
                let outp = self
                    .b
                    .ins()
                    .stack_addr(types::I64, slot, (2 * width * es) as i32);
                self.b.ins().call(f, &[ptrs[0], outp]);
                for (c, o) in outs.iter_mut().enumerate() {
                    o.push(
                        self.b
                            .ins()
                            .load(e.scalar(), fl, outp, (c as u32 * es) as i32),
                    );
                }
            } else {
                let call = self.b.ins().call(f, &ptrs);
                outs[0].push(self.b.inst_results(call)[0]);
            }
        }
        let leaves = outs
            .iter()
            .zip(elems.iter())
            .map(|(o, e)| {
                if uniform {
                    Lv::U(o[0])
                } else {
                    self.pack_lanes(*e, o)
                }
            })
            .collect();
        Ok(Val { leaves, elems })
    }

    /// A call of the scalar library function per lane and component.
    pub(super) fn ext_call(
        &mut self,
        op: C,
        opcode: u32,
        ids: &[Id],
        vals: &[Val],
        elems: &[Elem],
    ) -> Result<Vec<Lv>, CompileError> {
        // Key: the result element type, except ilogb (operand type).
        let key = if op == C::ilogb {
            vals[0].elems[0]
        } else {
            elems[0]
        };
        // modf/fract/sincos with a `half*` out-parameter (on widened operands).
        let half_out = matches!(op, C::modf | C::fract | C::sincos)
            && match ids.get(1) {
                Some(&p) => {
                    let pty = self.type_of(p)?;
                    let (_, pointee) = self.m.pointee(pty)?;
                    self.elems(pointee)?.first() == Some(&Elem::F16)
                }
                None => false,
            };
        let nf = if half_out {
            builtins::half_std(opcode)
        } else {
            builtins::opencl_std(opcode, scalar_of(key))
        };
        let nf = nf.ok_or_else(|| {
            CompileError::unsupported(format!(
                "OpenCL.std instruction {op:?} for {key:?} is not implemented"
            ))
        })?;
        let params: Vec<AbiParam> = nf.params.iter().map(|p| abi(*p)).collect();
        let f = self.import_fn(nf.symbol, &params, &[abi(nf.ret)])?;
        if nf.params.len() != vals.len() {
            return Err(CompileError::malformed(format!(
                "OpenCL.std {op:?} with {} operands, the library takes {}",
                vals.len(),
                nf.params.len()
            )));
        }
        let has_ptr = nf.params.contains(&Scalar::Ptr);
        let mut out = Vec::with_capacity(elems.len());
        for (i, e) in elems.iter().enumerate() {
            let mut args: Vec<(Elem, Lv)> = Vec::new();
            for (k, p) in nf.params.iter().enumerate() {
                if *p == Scalar::Ptr {
                    // Component i of the pointed-to vector.
                    let pty = self.type_of(ids[k])?;
                    let (_, pointee) = self.m.pointee(pty)?;
                    let pel = self.elems(pointee)?;
                    let step = i64::from(pel[0].bytes()) * i as i64;
                    let base = vals[k].leaves[0].clone();
                    let a = if step == 0 {
                        base
                    } else {
                        let k = self.b.ins().iconst(types::I64, step);
                        self.add_lv(Elem::I64, &base, &Lv::U(k))
                    };
                    args.push((Elem::I64, a));
                } else {
                    args.push(Self::comp(&vals[k], i));
                }
            }
            let arg_refs: Vec<(Elem, &Lv)> = args.iter().map(|(e, l)| (*e, l)).collect();
            if has_ptr {
                // Writes through a pointer: only active lanes (a uniform pointer too:
                // inactive lanes must not overwrite the active lanes' result).
                let lanes: Vec<Vec<Value>> =
                    arg_refs.iter().map(|(e, l)| self.lanes_of(*e, l)).collect();
                let rt = e.scalar();
                let res = self.guarded(&[rt], |t, l| {
                    let a: Vec<Value> = lanes.iter().map(|v| v[l]).collect();
                    let c = t.b.ins().call(f, &a);
                    Ok(vec![t.b.inst_results(c)[0]])
                })?;
                let r: Vec<Value> = res.iter().map(|v| v[0]).collect();
                out.push(self.pack_lanes(*e, &r));
            } else {
                out.push(self.per_lane(&arg_refs, *e, |t, x| {
                    let c = t.b.ins().call(f, x);
                    t.b.inst_results(c)[0]
                }));
            }
        }
        let _ = little;
        Ok(out)
    }
}
