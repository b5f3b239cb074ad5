//! Addresses in constants: module-scope variables and the `OpSpecConstantOp`
//! expressions on them ([`ConstValue::Expr`]: access chains, pointer casts,
//! `ConvertPtrToU`), as clang emits them for program-scope initializers
//! (`global int* p = &a[1];`, `struct S s = { &g, 1 };`) and for `(ulong)&arr[0]` of a
//! `__local` or `__constant` array. Folded to a variable plus a constant byte offset,
//! for the program's data and for lowering.

use super::{ConstValue, Id, Module, Op, Type};
use crate::CompileError;

/// A constant address: `var`'s address (none for an absolute address such as null)
/// plus `offset` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConstAddress {
    pub var: Option<Id>,
    pub offset: u64,
}

/// The address constant (or variable) `id` stands for; None when `id` is not an
/// address computation (for example arithmetic on a number).
pub fn evaluate(m: &Module, id: Id) -> Result<Option<ConstAddress>, CompileError> {
    if m.globals.contains_key(&id) {
        return Ok(Some(ConstAddress {
            var: Some(id),
            offset: 0,
        }));
    }
    let Some(c) = m.constants.get(&id) else {
        return Err(CompileError::malformed(format!(
            "%{id} is neither a constant nor a variable"
        )));
    };
    let absolute = |offset| Ok(Some(ConstAddress { var: None, offset }));
    match &c.value {
        ConstValue::Null => absolute(0),
        ConstValue::Scalar(v) => absolute(*v),
        ConstValue::Expr(op) => match &**op {
            Op::PtrCast(a) | Op::Bitcast(a) | Op::ConvertPtrToU(a) | Op::ConvertUToPtr(a) => {
                evaluate(m, *a)
            }
            Op::AccessChain {
                base,
                element,
                indices,
            } => {
                let Some(b) = evaluate(m, *base)? else {
                    return Ok(None);
                };
                let off = chain_offset(m, *base, *element, indices, c.ty)?;
                Ok(Some(ConstAddress {
                    var: b.var,
                    offset: b.offset.wrapping_add(off as u64),
                }))
            }
            _ => Ok(None),
        },
        _ => Ok(None),
    }
}

/// The byte offset of a constant access chain on `base` with result type `result_ty`.
fn chain_offset(
    m: &Module,
    base: Id,
    element: Option<Id>,
    indices: &[Id],
    result_ty: Id,
) -> Result<i64, CompileError> {
    let base_ty = match m.globals.get(&base) {
        Some(g) => g.ty,
        None => m
            .constants
            .get(&base)
            .map(|c| c.ty)
            .ok_or_else(|| CompileError::malformed(format!("%{base} has no type")))?,
    };
    let (_, pointee) = m.pointee(base_ty)?;
    let element_offset = match element {
        Some(e) => index(m, e)?.wrapping_mul(stride(m, pointee)? as i64),
        None => 0,
    };
    let indices: Vec<i64> = indices
        .iter()
        .map(|i| index(m, *i))
        .collect::<Result<_, _>>()?;
    let typed = typed_offset(m, pointee, &indices);
    let (_, result_pointee) = m.pointee(result_ty)?;
    // clang-22 writes `&a[2]` at program scope as the i8 GEP it has in LLVM: base `a`
    // typed as the whole variable, element 0, then the byte offset as the one index,
    // with an i8 pointer result. Read it so when the typed walk does not reach a byte.
    let clang_byte_gep = is_byte(m, result_pointee)
        && indices.len() == 1
        && !typed
            .as_ref()
            .is_ok_and(|(_, reached)| is_byte(m, *reached));
    Ok(if clang_byte_gep {
        element_offset.wrapping_add(indices[0])
    } else {
        element_offset.wrapping_add(typed?.0)
    })
}

/// Bytes between consecutive elements of type `t`.
fn stride(m: &Module, t: Id) -> Result<u64, CompileError> {
    let l = m.layout(t)?;
    Ok(l.size.next_multiple_of(l.align.max(1)))
}

/// Whether type `t` is an 8-bit integer.
fn is_byte(m: &Module, t: Id) -> bool {
    matches!(m.ty(t), Ok(Type::Int { bits: 8 }))
}

/// The byte offset of `indices` walked into type `t`, and the type reached.
fn typed_offset(m: &Module, mut t: Id, indices: &[i64]) -> Result<(i64, Id), CompileError> {
    let mut off: i64 = 0;
    for &k in indices {
        t = match m.ty(t)?.clone() {
            Type::Struct { members, .. } => {
                let offs = m.member_offsets(t)?;
                let slot = usize::try_from(k).ok().filter(|s| *s < members.len());
                let s = slot
                    .ok_or_else(|| CompileError::malformed("constant struct index out of range"))?;
                off = off.wrapping_add(offs[s] as i64);
                members[s]
            }
            Type::Array { elem, .. } | Type::RuntimeArray { elem } => {
                off = off.wrapping_add(k.wrapping_mul(stride(m, elem)? as i64));
                elem
            }
            Type::Vector { elem, .. } => {
                off = off.wrapping_add(k.wrapping_mul(m.layout(elem)?.size as i64));
                elem
            }
            other => {
                return Err(CompileError::malformed(format!(
                    "constant access chain into {other:?}"
                )))
            }
        };
    }
    Ok((off, t))
}

/// A sign-extended integer constant index.
fn index(m: &Module, id: Id) -> Result<i64, CompileError> {
    let c = m
        .constants
        .get(&id)
        .ok_or_else(|| CompileError::malformed(format!("index %{id} is not a constant")))?;
    let bits = match m.ty(c.ty)? {
        Type::Int { bits } => *bits,
        _ => return Err(CompileError::malformed("constant index is not an integer")),
    };
    match c.value {
        ConstValue::Scalar(v) => {
            let shift = 64 - bits.clamp(1, 64);
            Ok(((v << shift) as i64) >> shift)
        }
        ConstValue::Null => Ok(0),
        _ => Err(CompileError::malformed("constant index is not a scalar")),
    }
}
