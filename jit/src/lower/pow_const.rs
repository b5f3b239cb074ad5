//! `pow(x, y)` whose exponent is a constant half-integer `y` in {0.5, 1, ..., 4}
//! (`pow(v, 1.5f)`, `pow(r, 2.0f)`, `pow(x, 0.5f)`: the common forms in kernels), lowered
//! inline to multiplications and at most one square root instead of the general
//! `exp2(y log2 x)` routine (`vmath`), which is about as costly as `exp` and `log` together.
//!
//! Accuracy: with `y = k + h/2` (`k` in 0..=4, `h` in {0, 1}) the result is
//! `x^k * sqrt(x)^h` from at most four correctly rounded operations, each adding at most
//! half an ulp of relative error (or, for subnormal intermediates of `|x| < 1`, half a
//! subnormal ulp, which the later factors below 1 only shrink): a few ulp at worst,
//! inside OpenCL's 16-ulp limit for `pow` in both `float` and `double`. For `|x| > 1`
//! every partial product is below the result and for `|x| < 1` above it, so no
//! intermediate overflows or underflows where the result does not.
//!
//! Special values (C99 Annex F, as OpenCL's `pow`): integer `y` needs no fix (products of
//! `+-0`, `+-inf` and NaN give the signs `pow` wants). For half-integer `y` (not an odd
//! integer, positive) `pow(-0, y) = +0` and `pow(-inf, y) = +inf`, while `sqrt` gives
//! `-0` and NaN: the result is made non-negative (`fabs`; a NaN stays NaN, finite
//! negative `x` still gives NaN through `sqrt`) and `x = -inf` selects `+inf`.

use cranelift_codegen::ir::{self, condcodes::FloatCC, InstBuilder, Value};
use rspirv::spirv::OpenclStd100Op as C;

use super::value::{Elem, Lv, Val};
use super::Tr;
use crate::CompileError;

/// Twice the largest exponent lowered inline: `y` up to 4.
const MAX_TWICE_Y: f64 = 8.0;

impl Tr<'_, '_> {
    /// The inline lowering of `pow(x, c)` for a constant `c` (per component) in
    /// {0.5, 1, 1.5, ..., 4} on `f32` or `f64`; None = not handled here.
    pub(super) fn pow_const(
        &mut self,
        op: C,
        vals: &[Val],
        elems: &[Elem],
    ) -> Result<Option<Vec<Lv>>, CompileError> {
        if op != C::pow || vals.len() != 2 {
            return Ok(None);
        }
        let Some(e) = elems.first().copied() else {
            return Ok(None);
        };
        if !matches!(e, Elem::F32 | Elem::F64) || elems.iter().any(|x| *x != e) {
            return Ok(None);
        }
        let mut twice = Vec::with_capacity(elems.len());
        for i in 0..elems.len() {
            let (ye, y) = Self::comp(&vals[1], i);
            let Some(t) = self.half_int_exponent(ye, e, &y) else {
                return Ok(None);
            };
            twice.push(t);
        }
        let out = twice
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let (_, x) = Self::comp(&vals[0], i);
                self.pow_half_int(e, &x, t)
            })
            .collect();
        Ok(Some(out))
    }

    /// `2y` when `y` is a constant of element `e` with `2y` an integer in 1..=8.
    fn half_int_exponent(&self, ye: Elem, e: Elem, y: &Lv) -> Option<u32> {
        let Lv::U(v) = y else { return None };
        if ye != e {
            return None;
        }
        let c = self.float_const_of(*v)?;
        let t = c * 2.0;
        (t.fract() == 0.0 && (1.0..=MAX_TWICE_Y).contains(&t)).then_some(t as u32)
    }

    /// The value of an `f32const`/`f64const`, as `f64`.
    fn float_const_of(&self, v: Value) -> Option<f64> {
        let dfg = &self.b.func.dfg;
        let inst = dfg.value_def(v).inst()?;
        match dfg.insts[inst] {
            ir::InstructionData::UnaryIeee32 {
                opcode: ir::Opcode::F32const,
                imm,
            } => Some(f64::from(f32::from_bits(imm.bits()))),
            ir::InstructionData::UnaryIeee64 {
                opcode: ir::Opcode::F64const,
                imm,
            } => Some(f64::from_bits(imm.bits())),
            _ => None,
        }
    }

    /// `x^(t/2)` by products and a square root (see the module doc).
    fn pow_half_int(&mut self, e: Elem, x: &Lv, t: u32) -> Lv {
        let mul = |t: &mut Tr<'_, '_>, a: &Lv, b: &Lv| {
            t.vec_op2(
                e,
                a,
                b,
                |t, x, y| t.b.ins().fmul(x, y),
                |t, x, y| t.b.ins().fmul(x, y),
            )
        };
        let k = t / 2;
        // x^k by squaring: x, x^2, x^2 x, x^2 x^2.
        let int_part = match k {
            0 => None,
            1 => Some(x.clone()),
            _ => {
                let x2 = mul(self, x, x);
                Some(match k {
                    2 => x2,
                    3 => mul(self, &x2, x),
                    _ => mul(self, &x2, &x2),
                })
            }
        };
        if t.is_multiple_of(2) {
            return int_part.expect("t >= 1 and even: k >= 1");
        }
        let s = self.vec_op1(e, x, |t, x| t.b.ins().sqrt(x));
        let r = match int_part {
            Some(p) => mul(self, &p, &s),
            None => s,
        };
        let r = self.vec_op1(e, &r, |t, x| t.b.ins().fabs(x));
        let inf = self.scalar_const(
            e,
            if e == Elem::F32 {
                u64::from(f32::INFINITY.to_bits())
            } else {
                f64::INFINITY.to_bits()
            },
        );
        let ninf = self.b.ins().fneg(inf);
        let is_ninf = self.fcmp_lv(FloatCC::Equal, e, x, &Lv::U(ninf));
        self.select_lv(&is_ninf, e, &Lv::U(inf), &r)
    }
}
