//! Kernel metadata: arguments (names, kinds, sizes, offsets in the argument block,
//! OpenCL type names), attributes from execution modes, `__local` variable layout and
//! the bytes of constant data. Pure functions of the decoded module; no code here.

use std::collections::{HashMap, HashSet};

use rspirv::spirv::FunctionParameterAttribute as Fpa;

use crate::analysis::flatten::FlatFunction;
use crate::spirv::{ConstValue, EntryPoint, Id, Module, Storage, Type};
use crate::{AddressQualifier, ArgKind, CompileError, KernelArg};

/// `CL_KERNEL_ARG_TYPE_*` bits.
const TYPE_CONST: u64 = 1;
const TYPE_RESTRICT: u64 = 2;
const TYPE_VOLATILE: u64 = 4;

/// Arguments of kernel `ep` and the size of its argument block.
pub fn kernel_args(m: &Module, ep: &EntryPoint) -> Result<(Vec<KernelArg>, usize), CompileError> {
    let f = m
        .functions
        .get(&ep.function)
        .ok_or_else(|| CompileError::malformed(format!("kernel {} has no function", ep.name)))?;
    let names = type_names(m, &ep.name);
    let mut args = Vec::new();
    let mut off = 0usize;
    for (i, (id, ty)) in f.params.iter().enumerate() {
        let decos = m.decos(*id);
        let by_val = decos.is_some_and(|d| d.param_attrs.contains(&Fpa::ByVal));
        let (kind, aq, size, align) = match m.ty(*ty)? {
            Type::Pointer { storage, pointee } if by_val => {
                let l = m.layout(*pointee)?;
                let _ = storage;
                (
                    ArgKind::Value,
                    AddressQualifier::Private,
                    l.size as usize,
                    l.align as usize,
                )
            }
            Type::Pointer { storage, .. } => {
                let (k, q) = match storage {
                    Storage::CrossWorkgroup | Storage::Generic => {
                        (ArgKind::GlobalPtr, AddressQualifier::Global)
                    }
                    Storage::UniformConstant => (ArgKind::ConstantPtr, AddressQualifier::Constant),
                    Storage::Workgroup => (ArgKind::LocalPtr, AddressQualifier::Local),
                    _ => (ArgKind::Value, AddressQualifier::Private),
                };
                (k, q, 8, 8)
            }
            Type::Unsupported("sampler") => (ArgKind::Sampler, AddressQualifier::Private, 8, 8),
            Type::Unsupported("image") => (ArgKind::Image, AddressQualifier::Global, 8, 8),
            _ => {
                let l = m.layout(*ty)?;
                (
                    ArgKind::Value,
                    AddressQualifier::Private,
                    l.size as usize,
                    l.align as usize,
                )
            }
        };
        off = off.next_multiple_of(align.max(1));
        let mut tq = 0;
        if let Some(d) = decos {
            if d.param_attrs.contains(&Fpa::NoWrite)
                && matches!(kind, ArgKind::GlobalPtr | ArgKind::ConstantPtr)
            {
                tq |= TYPE_CONST;
            }
            if d.param_attrs.contains(&Fpa::NoAlias) {
                tq |= TYPE_RESTRICT;
            }
            if d.volatile {
                tq |= TYPE_VOLATILE;
            }
        }
        if kind == ArgKind::ConstantPtr {
            tq |= TYPE_CONST;
        }
        let type_name = match names.as_ref().and_then(|n| n.get(i)) {
            Some(n) => n.clone(),
            None => spirv_type_name(m, *ty, by_val),
        };
        args.push(KernelArg {
            name: m.names.get(id).cloned().unwrap_or_default(),
            type_name,
            kind,
            address_qualifier: aq,
            type_qualifier: tq,
            size,
            offset: off,
        });
        off += size;
    }
    Ok((args, off.next_multiple_of(8)))
}

/// clang's `kernel_arg_type.<kernel>.<t1>,<t2>,` string (with -cl-kernel-arg-info).
fn type_names(m: &Module, kernel: &str) -> Option<Vec<String>> {
    let prefix = format!("kernel_arg_type.{kernel}.");
    let s = m.strings.iter().find(|s| s.starts_with(&prefix))?;
    Some(
        s[prefix.len()..]
            .split(',')
            .filter(|t| !t.is_empty())
            .map(|t| t.trim().to_string())
            .collect(),
    )
}

/// A best-effort OpenCL C name for a SPIR-V type (signedness is not in SPIR-V).
fn spirv_type_name(m: &Module, ty: Id, by_val: bool) -> String {
    match m.types.get(&ty) {
        Some(Type::Bool) => "bool".into(),
        Some(Type::Int { bits }) => match bits {
            8 => "char",
            16 => "short",
            32 => "int",
            _ => "long",
        }
        .into(),
        Some(Type::Float { bits }) => match bits {
            16 => "half",
            32 => "float",
            _ => "double",
        }
        .into(),
        Some(Type::Vector { elem, count }) => {
            format!("{}{count}", spirv_type_name(m, *elem, false))
        }
        Some(Type::Pointer { pointee, .. }) if by_val => spirv_type_name(m, *pointee, false),
        Some(Type::Pointer { pointee, .. }) => {
            let inner = match m.types.get(pointee) {
                Some(Type::Void) => "void".to_string(),
                _ => spirv_type_name(m, *pointee, false),
            };
            format!("{inner}*")
        }
        Some(Type::Struct { .. }) => m
            .names
            .get(&ty)
            .map(|n| n.trim_start_matches("struct.").to_string())
            .map(|n| format!("struct {n}"))
            .unwrap_or_else(|| "struct".into()),
        Some(Type::Event) => "event_t".into(),
        Some(Type::Unsupported(n)) => (*n).into(),
        Some(Type::Opaque(n)) => n.clone(),
        _ => "void".into(),
    }
}

/// `CL_KERNEL_ATTRIBUTES` text and the required/hinted sizes.
pub fn attributes(ep: &EntryPoint) -> String {
    let mut parts = Vec::new();
    if let Some([x, y, z]) = ep.modes.local_size {
        parts.push(format!("reqd_work_group_size({x},{y},{z})"));
    }
    if let Some([x, y, z]) = ep.modes.local_size_hint {
        parts.push(format!("work_group_size_hint({x},{y},{z})"));
    }
    if let Some(n) = ep.modes.sub_group_size {
        parts.push(format!("intel_reqd_sub_group_size({n})"));
    }
    parts.join(" ")
}

/// Calls `f` on the module-scope variable `id` is, or whose address the constant `id`
/// computes or contains (`(ulong)&local_array[1]` is a constant expression).
fn variables_in(m: &Module, id: Id, f: &mut impl FnMut(Id)) {
    if m.globals.contains_key(&id) {
        f(id);
        return;
    }
    match m.constants.get(&id).map(|c| &c.value) {
        Some(ConstValue::Expr(op)) => {
            // Operands are declared before the expression: no cycles.
            let mut ids = Vec::new();
            crate::analysis::for_each_operand(op, |x| ids.push(x));
            for x in ids {
                variables_in(m, x, f);
            }
        }
        Some(ConstValue::Composite(parts)) => {
            for p in parts {
                variables_in(m, *p, f);
            }
        }
        _ => {}
    }
}

/// Module-scope `__local` variables the kernel uses, with offsets; returns the map and
/// the total bytes.
pub fn local_layout(m: &Module, f: &FlatFunction) -> Result<(HashMap<Id, u64>, u64), CompileError> {
    let mut used: HashSet<Id> = HashSet::new();
    for b in &f.blocks {
        for i in &b.insts {
            crate::analysis::for_each_operand(&i.op, |id| {
                variables_in(m, id, &mut |v| {
                    if m.globals
                        .get(&v)
                        .is_some_and(|g| g.storage == Storage::Workgroup)
                    {
                        used.insert(v);
                    }
                });
            });
        }
    }
    let mut map = HashMap::new();
    let mut off = 0u64;
    for id in &m.global_order {
        if !used.contains(id) {
            continue;
        }
        let g = &m.globals[id];
        let (_, pointee) = m.pointee(g.ty)?;
        let l = m.layout(pointee)?;
        off = off.next_multiple_of(l.align.max(16));
        map.insert(*id, off);
        off += l.size;
    }
    Ok((map, off.next_multiple_of(16)))
}

/// Writes the bytes of constant `id` (of type `ty`) at `buf[off..]`; `address_of`
/// gives the absolute address of a module-scope variable (for pointer constants).
/// A variable id stands for its own address (`global T* p = &v;`).
pub fn constant_bytes(
    m: &Module,
    id: Id,
    ty: Id,
    buf: &mut [u8],
    off: usize,
    address_of: &dyn Fn(Id) -> Option<u64>,
) -> Result<(), CompileError> {
    if m.globals.contains_key(&id) {
        return address_bytes(m, id, ty, buf, off, address_of);
    }
    let c = m
        .constants
        .get(&id)
        .ok_or_else(|| CompileError::malformed(format!("initializer %{id} is not a constant")))?;
    match &c.value {
        ConstValue::Null | ConstValue::Undef => Ok(()),
        ConstValue::Expr(_) => address_bytes(m, id, ty, buf, off, address_of),
        ConstValue::Scalar(v) => {
            let size = m.layout(ty)?.size as usize;
            let bytes = v.to_le_bytes();
            let n = size.min(8);
            let dst = buf
                .get_mut(off..off + n)
                .ok_or_else(|| CompileError::malformed("constant initializer out of range"))?;
            dst.copy_from_slice(&bytes[..n]);
            Ok(())
        }
        ConstValue::Composite(parts) => {
            let (children, offsets): (Vec<Id>, Vec<u64>) = match m.ty(ty)? {
                Type::Vector { elem, count } => {
                    let s = m.layout(*elem)?.size;
                    (
                        vec![*elem; *count as usize],
                        (0..u64::from(*count)).map(|i| i * s).collect(),
                    )
                }
                Type::Array { elem, len } => {
                    let l = m.layout(*elem)?;
                    let s = l.size.next_multiple_of(l.align);
                    (
                        vec![*elem; *len as usize],
                        (0..*len).map(|i| i * s).collect(),
                    )
                }
                Type::Struct { members, .. } => (members.clone(), m.member_offsets(ty)?),
                other => {
                    return Err(CompileError::malformed(format!(
                        "composite constant of type {other:?}"
                    )))
                }
            };
            for ((p, t), o) in parts.iter().zip(children).zip(offsets) {
                constant_bytes(m, *p, t, buf, off + o as usize, address_of)?;
            }
            Ok(())
        }
    }
}

/// Writes the address constant (or variable) `id` as a pointer or integer of type `ty`.
fn address_bytes(
    m: &Module,
    id: Id,
    ty: Id,
    buf: &mut [u8],
    off: usize,
    address_of: &dyn Fn(Id) -> Option<u64>,
) -> Result<(), CompileError> {
    let address = crate::spirv::const_addr::evaluate(m, id)?.ok_or_else(|| {
        CompileError::unsupported(format!(
            "initializer %{id} is computed from addresses in a way not supported (OpSpecConstantOp)"
        ))
    })?;
    let base = match address.var {
        Some(var) => address_of(var).ok_or_else(|| {
            CompileError::unsupported(format!(
                "initializer takes the address of {}, which has no program-scope storage",
                m.name_of(var)
            ))
        })?,
        None => 0,
    };
    // A pointer, or an integer made from one (`(ulong)&v`).
    let n = (m.layout(ty)?.size as usize).min(8);
    let dst = buf
        .get_mut(off..off + n)
        .ok_or_else(|| CompileError::malformed("constant initializer out of range"))?;
    dst.copy_from_slice(&base.wrapping_add(address.offset).to_le_bytes()[..n]);
    Ok(())
}
