//! Kernel metadata: arguments (names, kinds, sizes, offsets in the argument block;
//! OpenCL C type names come from clang, see the runtime's `build::arg_info`),
//! attributes from execution modes, `__local` variable layout and the bytes of
//! constant data. Pure functions of the decoded module; no code here.

use std::collections::{HashMap, HashSet};

use rspirv::spirv::FunctionParameterAttribute as Fpa;

use crate::analysis::flatten::FlatFunction;
use crate::spirv::{ConstValue, EntryPoint, Id, Module, Storage, Type};
use crate::{AddressQualifier, ArgKind, CompileError, KernelArg};

/// Arguments of kernel `ep` and the size of its argument block.
pub fn kernel_args(m: &Module, ep: &EntryPoint) -> Result<(Vec<KernelArg>, usize), CompileError> {
    let f = m
        .functions
        .get(&ep.function)
        .ok_or_else(|| CompileError::malformed(format!("kernel {} has no function", ep.name)))?;
    let mut args = Vec::new();
    let mut off = 0usize;
    for (id, ty) in f.params.iter() {
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
            Type::Queue => (ArgKind::Queue, AddressQualifier::Private, 8, 8),
            Type::Unsupported("sampler") => (ArgKind::Sampler, AddressQualifier::Private, 8, 8),
            Type::Unsupported("image") => (ArgKind::Image, AddressQualifier::Global, 8, 8),
            Type::Pipe { .. } => (ArgKind::Pipe, AddressQualifier::Global, 8, 8),
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
        args.push(KernelArg {
            name: m.names.get(id).cloned().unwrap_or_default(),
            kind,
            address_qualifier: aq,
            size,
            offset: off,
        });
        off += size;
    }
    Ok((args, off.next_multiple_of(8)))
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
    // VecTypeHint: component type in the low 16 bits, count in the high ones. Integer
    // hints are left out: SPIR-V loses their signedness (the runtime takes the text
    // from clang for OpenCL C sources that use vec_type_hint).
    if let Some(h) = ep.modes.vec_type_hint {
        let base = match h & 0xffff {
            4 => Some("half"),
            5 => Some("float"),
            6 => Some("double"),
            _ => None,
        };
        if let Some(base) = base {
            let n = h >> 16;
            let count = if n > 1 { n.to_string() } else { String::new() };
            parts.push(format!("vec_type_hint({base}{count})"));
        }
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
