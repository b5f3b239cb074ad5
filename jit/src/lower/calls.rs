//! Calls of imported (body-less) functions: OpenCL C built-ins that clang leaves as
//! calls with Itanium-mangled names (the OpenCL 1.x `atomic_*`/`atom_*` functions).
//! Anything else is an error naming the function.

use super::value::Val;
use super::Tr;
use crate::spirv::{AtomicOp, Id};
use crate::CompileError;

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
}
