//! Half-precision (`cl_khr_fp16`) values: the one place that knows a half is carried
//! as its 16 bits ([`Elem::F16`]) and computed on through `f32`.
//!
//! Cranelift's x86-64 backend has next to no `f16` support, so half leaves are `I16`
//! (chunks `I16X8`) everywhere data only moves (loads, stores, phis, selects,
//! shuffles, bit casts). Arithmetic widens to `f32` (exact), computes there and rounds
//! back to half once. That is correctly rounded for `+ - * /` and `sqrt`: `f32` has
//! 24 >= 2 * 11 + 2 significand bits, so the double rounding is innocuous. Operations
//! where it would not be (`fma`) call a library function instead.
//!
//! Both conversions are inline integer code on `i32` lanes (scalar or `I32X4`), so
//! vectors of halves never leave SIMD registers. Other rounding modes and other
//! source types go through `crate::builtins` (per lane).

use cranelift_codegen::ir::{condcodes::IntCC, types, AbiParam, InstBuilder, Type, Value};
use rspirv::spirv::FPRoundingMode;

use super::value::{little, Elem, Lv};
use super::Tr;
use crate::builtins::{self, Scalar};
use crate::spirv::{ConvOp, Id, Rounding};
use crate::CompileError;
use rspirv::spirv::OpenclStd100Op as C;
use std::rc::Rc;

use super::value::Val;

/// `f32` bits of `(127 - 15) << 23`: rebias a half exponent to `f32`.
const REBIAS: i64 = 112 << 23;
/// `2^-14` (the smallest normal half) as `f32` bits.
const MIN_NORMAL_F32: i64 = 113 << 23;
/// `65536.0` as `f32` bits: at or above it a half is infinite (or NaN above `INF_F32`).
const OVERFLOW_F32: i64 = 0x4780_0000;
/// `+inf` as `f32` bits.
const INF_F32: i64 = 0x7f80_0000;
/// `0.5` as `f32` bits: adding it rounds a value below `2^-14` to a multiple of `2^-24`.
const HALF_ONE_F32: i64 = 0x3f00_0000;

impl Tr<'_, '_> {
    /// An `i32` constant of type `ty` (scalar `I32` or splatted `I32X4`).
    fn k32(&mut self, ty: Type, v: i64) -> Value {
        let c = self.b.ins().iconst(types::I32, v);
        if ty.is_vector() {
            self.b.ins().splat(ty, c)
        } else {
            c
        }
    }

    /// Half bits (zero-extended into `i32` lanes of `ty`) to `f32` bits, exact.
    fn half_bits_to_f32_bits(&mut self, h: Value, ty: Type) -> Value {
        let m8000 = self.k32(ty, 0x8000);
        let m7fff = self.k32(ty, 0x7fff);
        let sign = self.b.ins().band(h, m8000);
        let sign = self.b.ins().ishl_imm_s(sign, 16);
        let em = self.b.ins().band(h, m7fff);
        let o = self.b.ins().ishl_imm_s(em, 13);
        let rebias = self.k32(ty, REBIAS);
        let normal = self.b.ins().iadd(o, rebias);
        // Infinity and NaN: exponent 31 -> 255 (the payload shifts along).
        let special = self.b.ins().iadd(normal, rebias);
        // Zero and subnormals: (1.m * 2^-14) - 2^-14 in f32 arithmetic, exact.
        let magic = self.k32(ty, MIN_NORMAL_F32);
        let biased = self.b.ins().iadd(o, magic);
        let fty = if ty.is_vector() {
            types::F32X4
        } else {
            types::F32
        };
        let bf = self.b.ins().bitcast(fty, little(), biased);
        let mf = self.b.ins().bitcast(fty, little(), magic);
        let sub = self.b.ins().fsub(bf, mf);
        let sub = self.b.ins().bitcast(ty, little(), sub);
        let c7bff = self.k32(ty, 0x7bff);
        let c03ff = self.k32(ty, 0x03ff);
        let is_special = self.b.ins().icmp(IntCC::SignedGreaterThan, em, c7bff);
        let is_sub = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, em, c03ff);
        let r = self.select_bits(is_special, special, normal);
        let r = self.select_bits(is_sub, sub, r);
        self.b.ins().bor(r, sign)
    }

    /// `f32` bits (lanes of `ty`) to half bits in the low 16 bits, rounded to nearest
    /// even; NaNs stay quiet NaNs with the top payload bits.
    fn f32_bits_to_half_bits(&mut self, f: Value, ty: Type) -> Value {
        let m_sign = self.k32(ty, 0x8000_0000u32 as i32 as i64);
        let sign = self.b.ins().band(f, m_sign);
        let a = self.b.ins().bxor(f, sign);
        let sign = self.b.ins().ushr_imm_s(sign, 16);
        // Normal range: add the rebias, round half to even at bit 13.
        let odd = self.b.ins().ushr_imm_s(a, 13);
        let one = self.k32(ty, 1);
        let odd = self.b.ins().band(odd, one);
        let bias = self.k32(ty, 0xfff - REBIAS);
        let n = self.b.ins().iadd(a, bias);
        let n = self.b.ins().iadd(n, odd);
        let normal = self.b.ins().ushr_imm_s(n, 13);
        // Below 2^-14: f + 0.5 rounds to a multiple of 2^-24 in f32 arithmetic.
        let fty = if ty.is_vector() {
            types::F32X4
        } else {
            types::F32
        };
        let half_one = self.k32(ty, HALF_ONE_F32);
        let af = self.b.ins().bitcast(fty, little(), a);
        let hf = self.b.ins().bitcast(fty, little(), half_one);
        let s = self.b.ins().fadd(af, hf);
        let s = self.b.ins().bitcast(ty, little(), s);
        let sub = self.b.ins().isub(s, half_one);
        // Overflow to infinity; NaN to a quiet NaN.
        let inf = self.k32(ty, 0x7c00);
        let payload = self.b.ins().ushr_imm_s(a, 13);
        let c1ff = self.k32(ty, 0x1ff);
        let payload = self.b.ins().band(payload, c1ff);
        let qnan = self.k32(ty, 0x7e00);
        let nan = self.b.ins().bor(qnan, payload);
        let c_ovf = self.k32(ty, OVERFLOW_F32);
        let c_inf = self.k32(ty, INF_F32);
        let c_min = self.k32(ty, MIN_NORMAL_F32);
        let is_ovf = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, a, c_ovf);
        let is_nan = self.b.ins().icmp(IntCC::SignedGreaterThan, a, c_inf);
        let is_sub = self.b.ins().icmp(IntCC::SignedLessThan, a, c_min);
        let r = self.select_bits(is_sub, sub, normal);
        let r = self.select_bits(is_ovf, inf, r);
        let r = self.select_bits(is_nan, nan, r);
        self.b.ins().bor(r, sign)
    }

    /// `c ? a : b` for a scalar (`i8` condition) or lane-wise (`I32X4` mask).
    fn select_bits(&mut self, c: Value, a: Value, b: Value) -> Value {
        if self.b.func.dfg.value_type(a).is_vector() {
            self.b.ins().bitselect(c, a, b)
        } else {
            self.b.ins().select(c, a, b)
        }
    }

    /// A half leaf as an `f32` leaf (exact).
    pub fn half_to_f32(&mut self, l: &Lv) -> Lv {
        match l {
            Lv::U(h) => {
                let x = self.b.ins().uextend(types::I32, *h);
                let f = self.half_bits_to_f32_bits(x, types::I32);
                Lv::U(self.b.ins().bitcast(types::F32, little(), f))
            }
            _ => {
                let chunks = self.chunks_of(Elem::F16, l);
                let mut out = Vec::with_capacity(chunks.len() * 2);
                for c in chunks {
                    for high in [false, true] {
                        let w = if high {
                            self.b.ins().uwiden_high(c)
                        } else {
                            self.b.ins().uwiden_low(c)
                        };
                        let f = self.half_bits_to_f32_bits(w, types::I32X4);
                        out.push(self.b.ins().bitcast(types::F32X4, little(), f));
                    }
                }
                out.truncate(self.nchunks(Elem::F32));
                Lv::V(out)
            }
        }
    }

    /// An `f32` leaf rounded to a half leaf (to nearest even).
    pub fn f32_to_half(&mut self, l: &Lv) -> Lv {
        match l {
            Lv::U(f) => {
                let x = self.b.ins().bitcast(types::I32, little(), *f);
                let h = self.f32_bits_to_half_bits(x, types::I32);
                Lv::U(self.b.ins().ireduce(types::I16, h))
            }
            _ => {
                let chunks = self.chunks_of(Elem::F32, l);
                let mut halves = Vec::with_capacity(chunks.len());
                for c in chunks {
                    let x = self.b.ins().bitcast(types::I32X4, little(), c);
                    halves.push(self.f32_bits_to_half_bits(x, types::I32X4));
                }
                let mut out = Vec::with_capacity(self.nchunks(Elem::F16));
                for pair in halves.chunks(2) {
                    let hi = pair.get(1).copied().unwrap_or(pair[0]);
                    out.push(self.b.ins().unarrow(pair[0], hi));
                }
                Lv::V(out)
            }
        }
    }

    /// A float leaf (`F32`/`F64`) rounded to half in `rounding` (default: to nearest
    /// even). Inline for `f32` to nearest; otherwise one library call per lane, which
    /// rounds once from the source type.
    pub fn float_to_half(
        &mut self,
        from: Elem,
        l: &Lv,
        rounding: Option<Rounding>,
    ) -> Result<Lv, CompileError> {
        let mode = match rounding.unwrap_or(Rounding::Rte) {
            Rounding::Rte if from == Elem::F32 => return Ok(self.f32_to_half(l)),
            Rounding::Rte => FPRoundingMode::RTE,
            Rounding::Rtz => FPRoundingMode::RTZ,
            Rounding::Rtp => FPRoundingMode::RTP,
            Rounding::Rtn => FPRoundingMode::RTN,
        };
        let scalar = if from == Elem::F64 {
            Scalar::F64
        } else {
            Scalar::F32
        };
        let nf = builtins::half_to(scalar, mode).ok_or_else(|| {
            CompileError::codegen(format!("internal: no {from:?} -> half in {mode:?}"))
        })?;
        // The builtins' ABI: i16 results are sign-extended.
        let f = self.import_fn(
            nf.symbol,
            &[AbiParam::new(from.scalar())],
            &[AbiParam::new(types::I16).sext()],
        )?;
        Ok(self.per_lane(&[(from, l)], Elem::F16, |t, x| {
            let c = t.b.ins().call(f, &[x[0]]);
            t.b.inst_results(c)[0]
        }))
    }

    /// One leaf of a conversion from or to half (`OpFConvert`, `OpConvert*ToF`,
    /// `OpConvertFTo*`, and the `convert_half*` calls).
    pub fn convert_half_leaf(
        &mut self,
        op: ConvOp,
        l: &Lv,
        from: Elem,
        to: Elem,
        saturate: bool,
        rounding: Option<Rounding>,
    ) -> Result<Lv, CompileError> {
        if from == Elem::F16 {
            if to == Elem::F16 {
                return Ok(l.clone());
            }
            // Widening is exact, so the rest is a conversion from f32.
            let wide = self.half_to_f32(l);
            return Ok(if to == Elem::F32 {
                wide
            } else {
                self.convert_leaf(op, &wide, Elem::F32, to, saturate, rounding)
            });
        }
        match op {
            ConvOp::FConvert => self.float_to_half(from, l, rounding),
            ConvOp::SToF | ConvOp::UToF => {
                // Every integer of magnitude >= 2^17 rounds like 2^20 in every mode (to
                // infinity or to the largest half), so clamping there first makes the
                // integer exact in f32 and the result rounds once.
                let signed = op == ConvOp::SToF;
                let wide = if from.bits() > 16 {
                    self.per_lane(&[(from, l)], from, |t, x| {
                        let ty = from.scalar();
                        let hi = t.b.ins().iconst(ty, 1 << 20);
                        if signed {
                            let lo = t.b.ins().iconst(ty, -(1 << 20));
                            let c = t.b.ins().smin(x[0], hi);
                            t.b.ins().smax(c, lo)
                        } else {
                            t.b.ins().umin(x[0], hi)
                        }
                    })
                } else {
                    l.clone()
                };
                let f = self.convert_leaf(op, &wide, from, Elem::F32, false, None);
                self.float_to_half(Elem::F32, &f, rounding)
            }
            _ => Err(CompileError::malformed(format!(
                "{op:?} from {from:?} to {to:?}"
            ))),
        }
    }

    /// An OpenCL.std instruction with half operands or result: widened to `f32`,
    /// computed by the `f32` lowering, each half result rounded once; bit operations
    /// on the bits, and `fma`/`nextafter` through [`builtins::half_std`].
    pub fn half_ext_inst(
        &mut self,
        op: C,
        opcode: u32,
        ids: &[Id],
        vals: &[Val],
        elems: &Rc<Vec<Elem>>,
    ) -> Result<Vec<Lv>, CompileError> {
        let n = elems.len();
        match op {
            C::fabs | C::copysign => {
                let mag = self.iconst(Elem::I16, 0x7fff);
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    let (_, a) = Self::comp(&vals[0], i);
                    let m = self.vec_op2(
                        Elem::I16,
                        &a,
                        &Lv::U(mag),
                        |t, x, y| t.b.ins().band(x, y),
                        |t, x, y| t.b.ins().band(x, y),
                    );
                    out.push(if op == C::fabs {
                        m
                    } else {
                        let (_, b) = Self::comp(vals.get(1).ok_or_else(missing)?, i);
                        let s = self.vec_op2(
                            Elem::I16,
                            &b,
                            &Lv::U(mag),
                            |t, x, y| t.b.ins().band_not(x, y),
                            |t, x, y| t.b.ins().band_not(x, y),
                        );
                        self.vec_op2(
                            Elem::I16,
                            &m,
                            &s,
                            |t, x, y| t.b.ins().bor(x, y),
                            |t, x, y| t.b.ins().bor(x, y),
                        )
                    });
                }
                return Ok(out);
            }
            C::nan => {
                // nan(ushort): a quiet NaN carrying the low payload bits.
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    let (e, a) = Self::comp(&vals[0], i);
                    let a = self.int_resize(&a, e, Elem::I16, false);
                    let payload = self.iconst(Elem::I16, 0x1ff);
                    let qnan = self.iconst(Elem::I16, 0x7e00);
                    let p = self.vec_op2(
                        Elem::I16,
                        &a,
                        &Lv::U(payload),
                        |t, x, y| t.b.ins().band(x, y),
                        |t, x, y| t.b.ins().band(x, y),
                    );
                    out.push(self.vec_op2(
                        Elem::I16,
                        &p,
                        &Lv::U(qnan),
                        |t, x, y| t.b.ins().bor(x, y),
                        |t, x, y| t.b.ins().bor(x, y),
                    ));
                }
                return Ok(out);
            }
            C::fma | C::nextafter => {
                let nf = builtins::half_std(opcode)
                    .ok_or_else(|| CompileError::codegen(format!("internal: no half {op:?}")))?;
                let params: Vec<AbiParam> = nf
                    .params
                    .iter()
                    .map(|_| AbiParam::new(types::I16).sext())
                    .collect();
                let f = self.import_fn(nf.symbol, &params, &[AbiParam::new(types::I16).sext()])?;
                if vals.len() != nf.params.len() {
                    return Err(missing());
                }
                let mut out = Vec::with_capacity(n);
                for i in 0..n {
                    let args: Vec<(Elem, Lv)> = vals.iter().map(|v| Self::comp(v, i)).collect();
                    let refs: Vec<(Elem, &Lv)> = args.iter().map(|(e, l)| (*e, l)).collect();
                    out.push(self.per_lane(&refs, Elem::F16, |t, x| {
                        let c = t.b.ins().call(f, x);
                        t.b.inst_results(c)[0]
                    }));
                }
                return Ok(out);
            }
            _ => {}
        }
        let widen = |t: &mut Self, v: &Val| -> Val {
            let leaves = v
                .leaves
                .iter()
                .zip(v.elems.iter())
                .map(|(l, e)| {
                    if *e == Elem::F16 {
                        t.half_to_f32(l)
                    } else {
                        l.clone()
                    }
                })
                .collect();
            Val {
                leaves,
                elems: Rc::new(v.elems.iter().map(|e| wide_elem(*e)).collect()),
            }
        };
        let wide: Vec<Val> = vals.iter().map(|v| widen(self, v)).collect();
        let wide_elems: Rc<Vec<Elem>> = Rc::new(elems.iter().map(|e| wide_elem(*e)).collect());
        let leaves = if let Some(v) = self.ext_inline(op, &wide, &wide_elems)? {
            v
        } else if matches!(op, C::length | C::distance | C::normalize) && wide[0].elems.len() > 1 {
            self.geometric_call(op, opcode, &wide, wide_elems.clone())?
                .leaves
        } else {
            self.ext_call(op, opcode, ids, &wide, &wide_elems)?
        };
        Ok(leaves
            .iter()
            .zip(elems.iter())
            .map(|(l, e)| {
                if *e == Elem::F16 {
                    self.f32_to_half(l)
                } else {
                    l.clone()
                }
            })
            .collect())
    }
}

/// The element half values are computed in.
fn wide_elem(e: Elem) -> Elem {
    if e == Elem::F16 {
        Elem::F32
    } else {
        e
    }
}

fn missing() -> CompileError {
    CompileError::malformed("OpenCL.std instruction on half values with missing operands")
}
