//! Calls of imported (body-less) functions: OpenCL C built-ins that clang leaves as
//! calls with Itanium-mangled names (the OpenCL 1.x `atomic_*`/`atom_*` functions,
//! `convert_half*`/`convert_double*`, `mem_fence` and its read/write forms).
//! Anything else is an error naming the function.

use super::value::Val;
use super::Tr;
use crate::spirv::{AtomicOp, ConvOp, Id, Rounding};
use crate::CompileError;
use cranelift_codegen::ir::InstBuilder;

use super::value::Elem;

/// Splits an Itanium-mangled name into (base name, rest of the mangling).
fn demangle(name: &str) -> Option<(&str, &str)> {
    let s = name.strip_prefix("_Z")?;
    let digits = s.chars().take_while(|c| c.is_ascii_digit()).count();
    let len: usize = s[..digits].parse().ok()?;
    let rest = &s[digits..];
    if rest.len() < len {
        return None;
    }
    Some((&rest[..len], &rest[len..]))
}

/// Element type of the first (pointer) parameter from its mangling, e.g. `PU3AS1Vj`.
fn pointee_elem(params: &str) -> Option<(Elem, bool)> {
    // Skip pointer, address space and qualifiers: take the first builtin type code.
    let mut chars = params.chars().peekable();
    let mut in_as = false;
    while let Some(c) = chars.next() {
        match c {
            'P' | 'V' | 'K' | 'U' => in_as = c == 'U',
            '0'..='9' => {}
            'A' if in_as => {
                // "AS<n>"
                chars.next();
            }
            _ => {
                return Some(match c {
                    'i' => (Elem::I32, true),
                    'j' => (Elem::I32, false),
                    'l' | 'x' => (Elem::I64, true),
                    'm' | 'y' => (Elem::I64, false),
                    'f' => (Elem::F32, true),
                    'd' => (Elem::F64, true),
                    _ => return None,
                })
            }
        }
    }
    None
}

/// Parses the part of a `convert_<type><n>[_sat][_rt?]` name after `convert_`:
/// (destination signed, saturating, rounding mode).
fn parse_convert(s: &str) -> Option<(bool, bool, Option<Rounding>)> {
    let (s, rounding) = match s.len().checked_sub(4).map(|i| s.split_at(i)) {
        Some((head, "_rte")) => (head, Some(Rounding::Rte)),
        Some((head, "_rtz")) => (head, Some(Rounding::Rtz)),
        Some((head, "_rtp")) => (head, Some(Rounding::Rtp)),
        Some((head, "_rtn")) => (head, Some(Rounding::Rtn)),
        _ => (s, None),
    };
    let (s, saturate) = match s.strip_suffix("_sat") {
        Some(head) => (head, true),
        None => (s, false),
    };
    let ty = s.trim_end_matches(|c: char| c.is_ascii_digit());
    let signed = match ty {
        "char" | "short" | "int" | "long" | "half" | "float" | "double" => true,
        "uchar" | "ushort" | "uint" | "ulong" => false,
        _ => return None,
    };
    Some((signed, saturate, rounding))
}

/// (is a float, is signed) of the first parameter's mangled type (`f`, `Dv4_j`, `Dh`).
fn source_kind(params: &str) -> Option<(bool, bool)> {
    let s = match params.strip_prefix("Dv") {
        Some(v) => v.split_once('_')?.1,
        None => params,
    };
    Some(match s.as_bytes().first()? {
        b'c' | b'a' | b's' | b'i' | b'l' | b'x' => (false, true),
        b'h' | b't' | b'j' | b'm' | b'y' => (false, false),
        b'f' | b'd' => (true, true),
        b'D' if s.starts_with("Dh") => (true, true),
        _ => return None,
    })
}

impl Tr<'_, '_> {
    /// OpFunctionCall of an imported function.
    pub fn imported_call(
        &mut self,
        function: Id,
        args: &[Id],
        rty: Option<Id>,
    ) -> Result<Option<Val>, CompileError> {
        let f = self.m.functions.get(&function).ok_or_else(|| {
            CompileError::malformed(format!("call of %{function}, which is not a function"))
        })?;
        let name = f.import.clone().unwrap_or_else(|| f.name.clone());
        let unknown = || CompileError::unsupported(format!("call of unknown function {name}"));
        let (base, params) = demangle(&name).ok_or_else(unknown)?;
        if matches!(base, "mem_fence" | "read_mem_fence" | "write_mem_fence") {
            self.b.ins().fence();
            return Ok(None);
        }
        if let Some(conv) = base.strip_prefix("convert_") {
            let (to_signed, saturate, rounding) = parse_convert(conv).ok_or_else(unknown)?;
            let (from_float, from_signed) = source_kind(params).ok_or_else(unknown)?;
            let value = *args
                .first()
                .ok_or_else(|| CompileError::malformed(format!("{name} without an operand")))?;
            let rty =
                rty.ok_or_else(|| CompileError::malformed(format!("{name} without a type")))?;
            let to_float = matches!(
                self.elems(rty)?.first(),
                Some(Elem::F16 | Elem::F32 | Elem::F64)
            );
            let op = match (from_float, to_float) {
                (true, true) => ConvOp::FConvert,
                (false, true) if from_signed => ConvOp::SToF,
                (false, true) => ConvOp::UToF,
                (true, false) if to_signed => ConvOp::FToS,
                (true, false) => ConvOp::FToU,
                (false, false) => match (from_signed, to_signed) {
                    (true, true) => ConvOp::SConvert,
                    (false, false) => ConvOp::UConvert,
                    (true, false) => ConvOp::SatSToU,
                    (false, true) => ConvOp::SatUToS,
                },
            };
            // OpenCL's default rounding: to nearest even for float results, toward
            // zero for integer results.
            let rounding = rounding.or(if to_float { Some(Rounding::Rte) } else { None });
            return Ok(Some(self.convert(op, value, rty, saturate, rounding)?));
        }
        let op_name = base
            .strip_prefix("atomic_")
            .or_else(|| base.strip_prefix("atom_"))
            .ok_or_else(unknown)?;
        let (e, signed) = pointee_elem(params).ok_or_else(unknown)?;
        let op = match op_name {
            "add" => AtomicOp::IAdd,
            "sub" => AtomicOp::ISub,
            "inc" => AtomicOp::IIncrement,
            "dec" => AtomicOp::IDecrement,
            "xchg" => AtomicOp::Exchange,
            "min" if signed => AtomicOp::SMin,
            "min" => AtomicOp::UMin,
            "max" if signed => AtomicOp::SMax,
            "max" => AtomicOp::UMax,
            "and" => AtomicOp::And,
            "or" => AtomicOp::Or,
            "xor" => AtomicOp::Xor,
            "cmpxchg" => AtomicOp::CompareExchange,
            _ => return Err(unknown()),
        };
        let ptr = *args
            .first()
            .ok_or_else(|| CompileError::malformed(format!("{name} without a pointer")))?;
        let p = self.get(ptr)?.leaves[0].clone();
        let mut vals: Vec<Val> = args[1..]
            .iter()
            .map(|a| self.get(*a))
            .collect::<Result<_, _>>()?;
        if op == AtomicOp::CompareExchange {
            // atomic_cmpxchg(p, cmp, val) -> operands (value, comparator).
            vals.reverse();
        }
        self.atomic_lanes(op, &p, e, &vals, rty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_atomics() {
        assert_eq!(
            demangle("_Z10atomic_incPU3AS1Vj"),
            Some(("atomic_inc", "PU3AS1Vj"))
        );
        assert_eq!(pointee_elem("PU3AS1Vj"), Some((Elem::I32, false)));
        assert_eq!(pointee_elem("PU3AS3Vii"), Some((Elem::I32, true)));
        assert_eq!(pointee_elem("PU3AS1Vll"), Some((Elem::I64, true)));
        assert_eq!(demangle("foo"), None);
    }

    #[test]
    fn parses_conversion_names() {
        assert_eq!(
            demangle("_Z15convert_double2Dv2_f"),
            Some(("convert_double2", "Dv2_f"))
        );
        assert_eq!(parse_convert("double2"), Some((true, false, None)));
        assert_eq!(
            parse_convert("half_rtp"),
            Some((true, false, Some(Rounding::Rtp)))
        );
        assert_eq!(
            parse_convert("uchar16_sat_rtn"),
            Some((false, true, Some(Rounding::Rtn)))
        );
        assert_eq!(parse_convert("quad"), None);
        assert_eq!(source_kind("Dv2_f"), Some((true, true)));
        assert_eq!(source_kind("Dh"), Some((true, true)));
        assert_eq!(source_kind("Dv3_Dh"), Some((true, true)));
        assert_eq!(source_kind("m"), Some((false, false)));
        assert_eq!(source_kind("c"), Some((false, true)));
        assert_eq!(source_kind("P"), None);
    }
}
