//! Operand rules of the OpenCL.std extended instructions (the OpenCL extended
//! instruction set specification): how many operands, which are pointers, and how
//! each operand's type relates to the result type.

use rspirv::spirv::OpenclStd100Op as C;

use super::{err, Kind, Shape, Validator, Values};
use crate::spirv::{Id, Storage, Type};
use crate::CompileError;

/// What an operand must be, relative to the result type `R` (a scalar or vector).
#[derive(Clone, Copy, Debug)]
enum Arg {
    /// Exactly `R`.
    Same,
    /// `R` or its component type (functions with scalar forms: clamp, mix, step...).
    SameOrScalar,
    /// An integer of `R`'s component count (32-bit: ldexp's exponent, pown's power).
    Int32Like,
    /// An integer of `R`'s component count and width (select's condition, nan's code).
    IntSameWidth,
    /// A pointer to `R` (fract, modf, sincos).
    PtrSame,
    /// A pointer to a 32-bit integer of `R`'s component count (frexp, lgamma_r,
    /// remquo).
    PtrInt,
    /// A float scalar or vector (geometric functions of a float scalar result).
    FloatAny,
    /// An integer scalar (offsets, sizes).
    IntScalar,
    /// A pointer to a scalar (vloadn, vstoren).
    Ptr,
    /// A pointer to anything (prefetch, printf's format).
    PtrAny,
    /// Any value (the vector operand of vstore*, printf's arguments).
    Any,
}

/// The result a function produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Res {
    Float,
    Int,
    /// Integer or float (bitselect, select).
    Numeric,
    /// No result (stores, prefetch).
    Void,
    /// Checked by the instruction's own rule.
    Special,
}

fn signature(op: C) -> (Res, &'static [Arg]) {
    use Arg::*;
    match op {
        C::acos
        | C::acosh
        | C::acospi
        | C::asin
        | C::asinh
        | C::asinpi
        | C::atan
        | C::atanh
        | C::atanpi
        | C::cbrt
        | C::ceil
        | C::cos
        | C::cosh
        | C::cospi
        | C::erfc
        | C::erf
        | C::exp
        | C::exp2
        | C::exp10
        | C::expm1
        | C::fabs
        | C::floor
        | C::lgamma
        | C::log
        | C::log2
        | C::log10
        | C::log1p
        | C::logb
        | C::rint
        | C::round
        | C::rsqrt
        | C::sin
        | C::sinh
        | C::sinpi
        | C::sqrt
        | C::tan
        | C::tanh
        | C::tanpi
        | C::tgamma
        | C::trunc
        | C::half_cos
        | C::half_exp
        | C::half_exp2
        | C::half_exp10
        | C::half_log
        | C::half_log2
        | C::half_log10
        | C::half_recip
        | C::half_rsqrt
        | C::half_sin
        | C::half_sqrt
        | C::half_tan
        | C::native_cos
        | C::native_exp
        | C::native_exp2
        | C::native_exp10
        | C::native_log
        | C::native_log2
        | C::native_log10
        | C::native_recip
        | C::native_rsqrt
        | C::native_sin
        | C::native_sqrt
        | C::native_tan
        | C::degrees
        | C::radians
        | C::sign
        | C::normalize
        | C::fast_normalize => (Res::Float, &[Same]),
        C::atan2
        | C::atan2pi
        | C::copysign
        | C::fdim
        | C::fmod
        | C::hypot
        | C::maxmag
        | C::minmag
        | C::nextafter
        | C::pow
        | C::powr
        | C::remainder
        | C::half_divide
        | C::half_powr
        | C::native_divide
        | C::native_powr
        | C::cross => (Res::Float, &[Same, Same]),
        C::fmax | C::fmin | C::fmax_common | C::fmin_common => (Res::Float, &[Same, SameOrScalar]),
        C::step => (Res::Float, &[SameOrScalar, Same]),
        C::fma | C::mad => (Res::Float, &[Same, Same, Same]),
        C::fclamp => (Res::Float, &[Same, SameOrScalar, SameOrScalar]),
        C::mix => (Res::Float, &[Same, Same, SameOrScalar]),
        C::smoothstep => (Res::Float, &[SameOrScalar, SameOrScalar, Same]),
        C::ldexp | C::pown | C::rootn => (Res::Float, &[Same, Int32Like]),
        C::nan => (Res::Float, &[IntSameWidth]),
        C::fract | C::modf | C::sincos => (Res::Float, &[Same, PtrSame]),
        C::frexp | C::lgamma_r => (Res::Float, &[Same, PtrInt]),
        C::remquo => (Res::Float, &[Same, Same, PtrInt]),
        C::ilogb => (Res::Special, &[FloatAny]),
        C::length | C::fast_length => (Res::Special, &[FloatAny]),
        C::distance | C::fast_distance => (Res::Special, &[FloatAny, FloatAny]),
        C::s_abs | C::u_abs | C::clz | C::ctz | C::popcount => (Res::Int, &[Same]),
        C::s_abs_diff
        | C::u_abs_diff
        | C::s_add_sat
        | C::u_add_sat
        | C::s_hadd
        | C::u_hadd
        | C::s_rhadd
        | C::u_rhadd
        | C::s_mul_hi
        | C::u_mul_hi
        | C::rotate
        | C::s_sub_sat
        | C::u_sub_sat
        | C::s_mul24
        | C::u_mul24 => (Res::Int, &[Same, Same]),
        C::s_max | C::u_max | C::s_min | C::u_min => (Res::Int, &[Same, SameOrScalar]),
        C::s_clamp | C::u_clamp => (Res::Int, &[Same, SameOrScalar, SameOrScalar]),
        C::s_mad_hi | C::u_mad_hi | C::u_mad_sat | C::s_mad_sat | C::s_mad24 | C::u_mad24 => {
            (Res::Int, &[Same, Same, Same])
        }
        C::u_upsample | C::s_upsample => (Res::Special, &[Any, Any]),
        C::bitselect => (Res::Numeric, &[Same, Same, Same]),
        C::select => (Res::Numeric, &[Same, Same, IntSameWidth]),
        C::vloadn => (Res::Special, &[IntScalar, Ptr]),
        // Half loads and stores address 16-bit units whatever the pointee type says:
        // clang's backend may deduce another one (an i16 array for a cast __local
        // array), and the lowering never reads it.
        C::vload_half | C::vload_halfn | C::vloada_halfn => (Res::Special, &[IntScalar, PtrAny]),
        C::vstoren => (Res::Void, &[Any, IntScalar, Ptr]),
        C::vstore_half
        | C::vstore_half_r
        | C::vstore_halfn
        | C::vstore_halfn_r
        | C::vstorea_halfn
        | C::vstorea_halfn_r => (Res::Void, &[Any, IntScalar, PtrAny]),
        C::shuffle => (Res::Special, &[Any, Any]),
        C::shuffle2 => (Res::Special, &[Any, Any, Any]),
        C::prefetch => (Res::Void, &[PtrAny, IntScalar]),
        C::printf => (Res::Special, &[PtrAny]),
    }
}

impl Validator<'_> {
    pub(super) fn ext_inst(
        &self,
        opcode: u32,
        args: &[Id],
        lits: &[u32],
        rty: Option<Id>,
        values: &Values<'_>,
    ) -> Result<(), CompileError> {
        let op = C::from_u32(opcode)
            .ok_or_else(|| err(format!("unknown OpenCL.std instruction {opcode}")))?;
        let (res, sig) = signature(op);
        let variadic = op == C::printf;
        if args.len() != sig.len() && !(variadic && args.len() >= sig.len()) {
            return Err(err(format!(
                "{op:?} takes {} operands, found {}",
                sig.len(),
                args.len()
            )));
        }
        let want_lits = match op {
            C::vloadn
            | C::vload_halfn
            | C::vloada_halfn
            | C::vstore_half_r
            | C::vstore_halfn_r
            | C::vstorea_halfn_r => 1,
            _ => 0,
        };
        if lits.len() != want_lits {
            return Err(err(format!(
                "{op:?} takes {want_lits} literal operands, found {}",
                lits.len()
            )));
        }
        let r = rty.ok_or_else(|| err("no result type"))?;
        let rshape = self.shape(r);
        match res {
            Res::Float | Res::Int | Res::Numeric => {
                let ok = rshape.is_some_and(|s| match res {
                    Res::Float => s.kind == Kind::Float,
                    Res::Int => s.kind == Kind::Int,
                    _ => s.kind != Kind::Bool,
                });
                if !ok {
                    return Err(err(format!("{op:?} cannot produce {}", self.type_name(r))));
                }
            }
            Res::Void => {
                if !matches!(self.ty(r), Some(Type::Void)) {
                    return Err(err(format!("{op:?} has no result value")));
                }
            }
            Res::Special => {}
        }
        for (i, (a, kind)) in args.iter().zip(sig.iter()).enumerate() {
            self.ext_arg(op, i, *a, *kind, r, rshape, values)?;
        }
        self.ext_special(op, args, lits, r, rshape, values)
    }

    #[allow(clippy::too_many_arguments)]
    fn ext_arg(
        &self,
        op: C,
        i: usize,
        a: Id,
        kind: Arg,
        r: Id,
        rshape: Option<Shape>,
        values: &Values<'_>,
    ) -> Result<(), CompileError> {
        let t = self.operand(values, a)?;
        let bad = || {
            err(format!(
                "{op:?}: operand {i} (%{a}) has type {}, which does not fit a result of {}",
                self.type_name(t),
                self.type_name(r)
            ))
        };
        let ts = self.shape(t);
        let ok = match kind {
            Arg::Same => self.same(t, r),
            Arg::SameOrScalar => {
                self.same(t, r)
                    || matches!((ts, rshape), (Some(a), Some(b)) if a.count == 1 && a.kind == b.kind && a.bits == b.bits)
            }
            Arg::Int32Like => matches!((ts, rshape),
                (Some(a), Some(b)) if a.kind == Kind::Int && a.bits == 32 && a.count == b.count),
            Arg::IntSameWidth => matches!((ts, rshape),
                (Some(a), Some(b)) if a.kind == Kind::Int && a.bits == b.bits && a.count == b.count),
            Arg::PtrSame => self
                .pointer(t)
                .is_some_and(|(s, p)| s != Storage::UniformConstant && self.same(p, r)),
            Arg::PtrInt => self.pointer(t).is_some_and(|(s, p)| {
                s != Storage::UniformConstant
                    && matches!((self.shape(p), rshape),
                        (Some(a), Some(b)) if a.kind == Kind::Int && a.bits == 32 && a.count == b.count)
            }),
            Arg::FloatAny => ts.is_some_and(|s| s.kind == Kind::Float),
            Arg::IntScalar => ts.is_some_and(|s| s.kind == Kind::Int && s.count == 1),
            Arg::Ptr => self
                .pointer(t)
                .is_some_and(|(_, p)| self.shape(p).is_some_and(|s| s.count == 1)),
            Arg::PtrAny => self.pointer(t).is_some(),
            Arg::Any => true,
        };
        if ok {
            Ok(())
        } else {
            Err(bad())
        }
    }

    /// The instructions whose operand types depend on each other beyond [`Arg`].
    fn ext_special(
        &self,
        op: C,
        args: &[Id],
        lits: &[u32],
        r: Id,
        rshape: Option<Shape>,
        values: &Values<'_>,
    ) -> Result<(), CompileError> {
        let ty = |i: usize| self.operand(values, args[i]);
        let pointee = |i: usize| -> Result<Id, CompileError> {
            Ok(self.pointer(ty(i)?).map(|p| p.1).unwrap_or_default())
        };
        let shape_of = |i: usize| -> Result<Option<Shape>, CompileError> { Ok(self.shape(ty(i)?)) };
        let bad = |why: &str| err(format!("{op:?}: {why}"));
        match op {
            C::ilogb => match (shape_of(0)?, rshape) {
                (Some(x), Some(r)) if r.kind == Kind::Int && r.bits == 32 && r.count == x.count => {
                }
                _ => return Err(bad("the result is an int of the operand's component count")),
            },
            C::length | C::fast_length | C::distance | C::fast_distance => {
                let x = shape_of(0)?.ok_or_else(|| bad("float operand expected"))?;
                if args.len() == 2 && !self.same(ty(0)?, ty(1)?) {
                    return Err(bad("both operands must have the same type"));
                }
                if !matches!(rshape, Some(r) if r.kind == Kind::Float && r.count == 1 && r.bits == x.bits)
                    || x.count > 4
                {
                    return Err(bad(
                        "the result is a float scalar of the operand's component type",
                    ));
                }
            }
            C::cross if !matches!(rshape, Some(r) if r.count == 3 || r.count == 4) => {
                return Err(bad("cross takes 3- or 4-component vectors"));
            }
            C::normalize | C::fast_normalize if !matches!(rshape, Some(r) if r.count <= 4) => {
                return Err(bad("at most 4 components"));
            }
            C::u_upsample | C::s_upsample => {
                if !self.same(ty(0)?, ty(1)?) {
                    return Err(bad("hi and lo must have the same type"));
                }
                match (shape_of(0)?, rshape) {
                    (Some(x), Some(r))
                        if x.kind == Kind::Int
                            && r.kind == Kind::Int
                            && x.count == r.count
                            && r.bits == 2 * x.bits => {}
                    _ => return Err(bad("the result is twice as wide as the operands")),
                }
            }
            C::vloadn => {
                let p = pointee(1)?;
                let n = lits[0];
                match (self.ty(r), self.shape(p)) {
                    (Some(Type::Vector { elem, count }), Some(_))
                        if *count == n && self.same(*elem, p) => {}
                    _ => return Err(bad("the result is a vector of n pointee values")),
                }
            }
            C::vload_half | C::vload_halfn | C::vloada_halfn => {
                let want_n = if op == C::vload_half { 1 } else { lits[0] };
                match rshape {
                    Some(s) if s.kind == Kind::Float && s.bits >= 32 && s.count == want_n => {}
                    _ => return Err(bad("the result is n floats")),
                }
            }
            C::vstoren => {
                let p = pointee(2)?;
                match self.ty(ty(0)?) {
                    Some(Type::Vector { elem, .. }) if self.same(*elem, p) => {}
                    _ => return Err(bad("the data is a vector of the pointee type")),
                }
                if self
                    .pointer(ty(2)?)
                    .is_some_and(|(s, _)| s == Storage::UniformConstant)
                {
                    return Err(bad("a store to __constant memory"));
                }
            }
            C::vstore_half
            | C::vstore_half_r
            | C::vstore_halfn
            | C::vstore_halfn_r
            | C::vstorea_halfn
            | C::vstorea_halfn_r => {
                let scalar = matches!(op, C::vstore_half | C::vstore_half_r);
                match shape_of(0)? {
                    Some(s)
                        if s.kind == Kind::Float && s.bits >= 32 && (s.count == 1) == scalar => {}
                    _ => return Err(bad("the data must be float values")),
                }
                if self
                    .pointer(ty(2)?)
                    .is_some_and(|(s, _)| s == Storage::UniformConstant)
                {
                    return Err(bad("a store to __constant memory"));
                }
                if lits.first().is_some_and(|m| *m > 3) {
                    return Err(bad("rounding mode out of range"));
                }
            }
            C::shuffle | C::shuffle2 => {
                let mask = *args.last().unwrap_or(&0);
                let ms = self
                    .shape(self.operand(values, mask)?)
                    .filter(|s| s.kind == Kind::Int);
                let xs = shape_of(0)?;
                if args.len() == 3 && !self.same(ty(0)?, ty(1)?) {
                    return Err(bad("both vectors must have the same type"));
                }
                match (xs, ms, rshape) {
                    (Some(x), Some(m), Some(r))
                        if x.count > 1
                            && x.kind == r.kind
                            && x.bits == r.bits
                            && m.bits == x.bits
                            && m.count == r.count => {}
                    _ => return Err(bad(
                        "vectors, an integer mask of their width and a result of the mask's length",
                    )),
                }
            }
            C::printf => {
                if !matches!(rshape, Some(s) if s.kind == Kind::Int && s.bits == 32 && s.count == 1)
                {
                    return Err(bad("printf returns an int"));
                }
                if self.pointer(ty(0)?).map(|p| p.0) != Some(Storage::UniformConstant) {
                    return Err(bad("the format must be a __constant string"));
                }
            }
            _ => {}
        }
        Ok(())
    }
}
