//! Calls of imported (body-less) functions: OpenCL C built-ins that clang leaves as
//! calls with Itanium-mangled names (the OpenCL 1.x `atomic_*`/`atom_*` functions,
//! `convert_half*`/`convert_double*`, `mem_fence` and its read/write forms,
//! `sub_group_barrier`, C11 `atomic_fetch_min`/`atomic_fetch_max`, the generic
//! address-space built-ins, the `intel_sub_group_2d_block_*` built-ins (lowered in
//! [`super::block2d`]), and the cl_khr_extended_async_copies
//! `async_work_group_copy_2D2D`/`_3D3D`).
//! Anything else is an error naming the function.

use super::atomic::AtomicMemory;
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

/// Element type of the first (pointer) parameter from its mangling, e.g. `PU3AS1Vj`
/// or `PU3AS4VU7_Atomicii` (pointer, vendor qualifiers such as the address space
/// and `_Atomic`, cv-qualifiers, then the builtin type code), with its signedness.
fn pointee_elem(params: &str) -> Option<(Elem, bool)> {
    let bytes = params.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'P' | b'V' | b'K' | b'r' => i += 1,
            b'U' => {
                // Vendor qualifier: U <length> <name>.
                let digits = bytes[i + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                let len: usize = params.get(i + 1..i + 1 + digits)?.parse().ok()?;
                i += 1 + digits + len;
            }
            c => {
                return Some(match c {
                    b'i' => (Elem::I32, true),
                    b'j' => (Elem::I32, false),
                    b'l' | b'x' => (Elem::I64, true),
                    b'm' | b'y' => (Elem::I64, false),
                    b'f' => (Elem::F32, true),
                    b'd' => (Elem::F64, true),
                    _ => return None,
                })
            }
        }
    }
    None
}

/// The atomic operation of a built-in name without its `atomic_`/`atom_` prefix:
/// OpenCL 1.x (`add`, `min`, `cmpxchg`, ...) and the C11 operations clang-22 leaves
/// as calls (`fetch_min`, `fetch_max`, with or without `_explicit`).
fn atomic_op(op_name: &str, e: Elem, signed: bool) -> Option<AtomicOp> {
    let op_name = op_name.strip_suffix("_explicit").unwrap_or(op_name);
    let float = e.is_float();
    Some(match op_name {
        "add" if !float => AtomicOp::IAdd,
        "sub" if !float => AtomicOp::ISub,
        "inc" if !float => AtomicOp::IIncrement,
        "dec" if !float => AtomicOp::IDecrement,
        "xchg" => AtomicOp::Exchange,
        "min" | "fetch_min" if float => AtomicOp::FMin,
        "max" | "fetch_max" if float => AtomicOp::FMax,
        "min" | "fetch_min" if signed => AtomicOp::SMin,
        "min" | "fetch_min" => AtomicOp::UMin,
        "max" | "fetch_max" if signed => AtomicOp::SMax,
        "max" | "fetch_max" => AtomicOp::UMax,
        "and" if !float => AtomicOp::And,
        "or" if !float => AtomicOp::Or,
        "xor" if !float => AtomicOp::Xor,
        "cmpxchg" if !float => AtomicOp::CompareExchange,
        _ => return None,
    })
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
        if let Some(v) = self.device_enqueue_call(&name, args, rty)? {
            return Ok(v);
        }
        if let Some(v) = self.address_space_call(&name, args, rty)? {
            return Ok(Some(v));
        }
        // cl_intel_subgroup_2d_block_io: overloadable in the driver header (mangled),
        // or declared by the program itself (plain name).
        let plain = demangle(&name).map_or(name.as_str(), |(base, _)| base);
        if let Some(shape) = super::block2d::builtin_shape(plain) {
            self.block2d_call(&name, shape, args)?;
            return Ok(None);
        }
        let (base, params) = demangle(&name).ok_or_else(unknown)?;
        if let Some(three_d) = match base {
            "async_work_group_copy_2D2D" => Some(false),
            "async_work_group_copy_3D3D" => Some(true),
            _ => None,
        } {
            let rty =
                rty.ok_or_else(|| CompileError::malformed(format!("{name} without a result")))?;
            return Ok(Some(self.async_copy_nd(three_d, args, rty)?));
        }
        // cl_khr_async_work_group_copy_fence: every copy is complete when the call
        // that starts it returns (`async_copy`), in program order, so copies before
        // the fence are done before any after it starts; nothing to emit.
        if base == "async_work_group_copy_fence" {
            return Ok(None);
        }
        // A sub-group runs its lanes together, instruction by instruction: every
        // lane's accesses before a sub-group barrier are done when it is reached, so
        // the barrier is its memory fence.
        if matches!(
            base,
            "mem_fence" | "read_mem_fence" | "write_mem_fence" | "sub_group_barrier"
        ) {
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
        let op = atomic_op(op_name, e, signed).ok_or_else(unknown)?;
        let ptr = *args
            .first()
            .ok_or_else(|| CompileError::malformed(format!("{name} without a pointer")))?;
        let p = self.get(ptr)?.leaves[0].clone();
        let (storage, _) = self.m.pointee(self.type_of(ptr)?)?;
        // The C11 `_explicit` forms end with the memory order (and scope): not operands.
        let nvals = match op {
            AtomicOp::CompareExchange => 2,
            AtomicOp::IIncrement | AtomicOp::IDecrement => 0,
            _ => 1,
        };
        let mut vals: Vec<Val> = args[1..]
            .iter()
            .take(nvals)
            .map(|a| self.get(*a))
            .collect::<Result<_, _>>()?;
        if op == AtomicOp::CompareExchange {
            // atomic_cmpxchg(p, cmp, val) -> operands (value, comparator).
            vals.reverse();
        }
        self.atomic_lanes(op, &p, e, &vals, rty, AtomicMemory::of(storage))
    }

    /// clang-22's spellings of the generic address-space built-ins: `__to_global`,
    /// `__to_local`, `__to_private` (unmangled) and `get_fence`. None for other names.
    fn address_space_call(
        &mut self,
        name: &str,
        args: &[Id],
        rty: Option<Id>,
    ) -> Result<Option<Val>, CompileError> {
        let is_cast = matches!(name, "__to_global" | "__to_local" | "__to_private");
        let is_fence = demangle(name).is_some_and(|(base, _)| base == "get_fence");
        if !is_cast && !is_fence {
            return Ok(None);
        }
        let (Some(&ptr), Some(rty)) = (args.first(), rty) else {
            return Err(CompileError::malformed(format!(
                "{name} needs a pointer argument and a result"
            )));
        };
        Ok(Some(if is_cast {
            self.generic_cast_explicit(ptr, rty)?
        } else {
            self.generic_fence(ptr, rty, super::generic::FenceSpelling::OpenClFlags)?
        }))
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
        // C11 forms: the `_Atomic` vendor qualifier, generic pointers, trailing order.
        assert_eq!(
            demangle("_Z25atomic_fetch_max_explicitPU3AS1VU7_Atomicii12memory_order12memory_scope"),
            Some((
                "atomic_fetch_max_explicit",
                "PU3AS1VU7_Atomicii12memory_order12memory_scope"
            ))
        );
        assert_eq!(
            pointee_elem("PU3AS4VU7_Atomicjj12memory_order"),
            Some((Elem::I32, false))
        );
        assert_eq!(pointee_elem("PU3AS1VU7_Atomicmm"), Some((Elem::I64, false)));
        assert_eq!(pointee_elem("PU3AS1VU7_Atomicdd"), Some((Elem::F64, true)));
        assert_eq!(pointee_elem("PU3AS1VU7_Atomic"), None);
        assert_eq!(pointee_elem("PU99AS1i"), None);
    }

    #[test]
    fn maps_atomic_names() {
        assert_eq!(
            atomic_op("fetch_min", Elem::I32, true),
            Some(AtomicOp::SMin)
        );
        assert_eq!(
            atomic_op("fetch_max_explicit", Elem::I64, false),
            Some(AtomicOp::UMax)
        );
        assert_eq!(
            atomic_op("fetch_min", Elem::F32, true),
            Some(AtomicOp::FMin)
        );
        assert_eq!(atomic_op("add", Elem::F32, true), None);
        assert_eq!(atomic_op("fetch_add", Elem::I32, true), None);
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
