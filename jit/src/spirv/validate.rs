//! The validator between decoding and analysis: every rule of the SPIR-V and OpenCL
//! environment specifications that analysis and lowering rely on is checked here, so
//! that a malformed module is refused with a message naming the instruction, and
//! never reaches code that would index out of range, mis-type Cranelift values,
//! touch memory through a non-pointer, or loop forever.
//!
//! What the decoder already guarantees (and this module builds on): well-formed
//! instruction words and operand kinds, each result id defined once and below the
//! bound, types and constants naming only earlier types and constants, a terminator
//! ending each block.
//!
//! Checked here, in `module_scope`: type shapes and sizes, constants against their
//! types, module-scope variables (storage, initializers, built-in types),
//! decoration targets, entry points and execution modes, capabilities the types
//! need. In `body`: per function, the function type, labels and branch targets,
//! entry-block rules, phi placement and predecessor lists, `OpVariable` placement,
//! merge targets, terminators, and that every operand is defined and dominates its
//! use. In `ops` (with `extinst` for OpenCL.std, `async_copy` for the
//! cl_khr_extended_async_copies copies): operand counts and types of every
//! instruction against its result type.
//!
//! It does not judge semantics (out-of-range indices, infinite loops are the
//! program's business) and does not allocate in proportion to any number in the
//! module.

mod async_copy;
mod body;
mod device_enqueue;
mod extinst;
mod module_scope;
mod ops;
mod pipe;

use std::collections::HashMap;

use super::{Id, Module, Storage, Type};
use crate::CompileError;

/// Largest SPIR-V version accepted (1.6).
const MAX_VERSION: u32 = 0x0001_0600;

/// Largest size of a type we lay out (beyond it, sizes are surely mutated words and
/// arithmetic on them could overflow).
const MAX_TYPE_BYTES: u64 = 1 << 40;

/// Largest module-scope `__constant` / `__global` variable: the program's data is
/// allocated at build time (`CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE`).
const MAX_PROGRAM_DATA_BYTES: u64 = crate::options::MAX_GLOBAL_VARIABLE_SIZE as u64;

/// Validates a decoded module.
pub(super) fn module(m: &Module) -> Result<(), CompileError> {
    if m.version > MAX_VERSION || m.version < 0x0001_0000 || m.version & 0xff00_00ff != 0 {
        return Err(CompileError::malformed(format!(
            "SPIR-V version word {:#010x}: only versions 1.0 to 1.6 are accepted",
            m.version
        )));
    }
    let v = Validator { m };
    v.module_scope()?;
    let mut ids: Vec<&Id> = m.functions.keys().collect();
    ids.sort();
    for id in ids {
        v.function(&m.functions[id])?;
    }
    Ok(())
}

/// Component kind of a scalar or vector type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Bool,
    Int,
    Float,
}

/// `(kind, bits, components)` of a scalar or vector type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape {
    pub kind: Kind,
    pub bits: u32,
    pub count: u32,
}

fn err(msg: impl Into<String>) -> CompileError {
    CompileError::malformed(msg)
}

struct Validator<'a> {
    m: &'a Module,
}

impl<'a> Validator<'a> {
    fn ty(&self, id: Id) -> Option<&'a Type> {
        self.m.types.get(&id)
    }

    /// Shape of scalar/vector type `ty` (None for other types).
    fn shape(&self, ty: Id) -> Option<Shape> {
        let scalar = |t: &Type| match t {
            Type::Bool => Some((Kind::Bool, 1)),
            Type::Int { bits } => Some((Kind::Int, *bits)),
            Type::Float { bits } => Some((Kind::Float, *bits)),
            _ => None,
        };
        match self.ty(ty)? {
            Type::Vector { elem, count } => {
                let (kind, bits) = scalar(self.ty(*elem)?)?;
                Some(Shape {
                    kind,
                    bits,
                    count: *count,
                })
            }
            t => {
                let (kind, bits) = scalar(t)?;
                Some(Shape {
                    kind,
                    bits,
                    count: 1,
                })
            }
        }
    }

    /// Whether `a` and `b` are the same type (structurally: modules may declare
    /// aggregates twice).
    fn same(&self, a: Id, b: Id) -> bool {
        self.same_at(a, b, 16, true)
    }

    /// Same shape ignoring struct decorations (`OpCopyLogical`).
    fn logically_same(&self, a: Id, b: Id) -> bool {
        self.same_at(a, b, 16, false)
    }

    fn same_at(&self, a: Id, b: Id, depth: u32, strict: bool) -> bool {
        if a == b {
            return true;
        }
        if depth == 0 {
            return false;
        }
        let (Some(ta), Some(tb)) = (self.ty(a), self.ty(b)) else {
            return false;
        };
        let d = depth - 1;
        match (ta, tb) {
            (
                Type::Vector {
                    elem: ea,
                    count: ca,
                },
                Type::Vector {
                    elem: eb,
                    count: cb,
                },
            ) => ca == cb && self.same_at(*ea, *eb, d, strict),
            (Type::Array { elem: ea, len: la }, Type::Array { elem: eb, len: lb }) => {
                la == lb && self.same_at(*ea, *eb, d, strict)
            }
            (
                Type::Struct {
                    members: ma,
                    packed: pa,
                },
                Type::Struct {
                    members: mb,
                    packed: pb,
                },
            ) => {
                (!strict || pa == pb)
                    && ma.len() == mb.len()
                    && ma
                        .iter()
                        .zip(mb)
                        .all(|(x, y)| self.same_at(*x, *y, d, strict))
            }
            (
                Type::Pointer {
                    storage: sa,
                    pointee: pa,
                },
                Type::Pointer {
                    storage: sb,
                    pointee: pb,
                },
            ) => sa == sb && self.same_at(*pa, *pb, d, strict),
            (
                Type::Function {
                    ret: ra,
                    params: pa,
                },
                Type::Function {
                    ret: rb,
                    params: pb,
                },
            ) => {
                self.same_at(*ra, *rb, d, strict)
                    && pa.len() == pb.len()
                    && pa
                        .iter()
                        .zip(pb)
                        .all(|(x, y)| self.same_at(*x, *y, d, strict))
            }
            (Type::Opaque(x), Type::Opaque(y)) => x == y,
            (x, y) => x == y,
        }
    }

    /// A readable name of type `ty` for messages.
    fn type_name(&self, ty: Id) -> String {
        match self.ty(ty) {
            None => format!("%{ty} (not a type)"),
            Some(t) => match t {
                Type::Void => "void".into(),
                Type::Bool => "bool".into(),
                Type::Int { bits } => format!("int{bits}"),
                Type::Float { bits } => format!("float{bits}"),
                Type::Vector { elem, count } => format!("{}x{count}", self.type_name(*elem)),
                Type::Array { len, .. } => format!("%{ty} (array of {len})"),
                Type::RuntimeArray { .. } => format!("%{ty} (runtime array)"),
                Type::Struct { .. } => format!("%{ty} (struct)"),
                Type::Pointer { storage, .. } => format!("%{ty} ({storage:?} pointer)"),
                Type::Function { .. } => format!("%{ty} (function type)"),
                Type::Event => "event".into(),
                Type::Pipe { .. } => "pipe".into(),
                Type::Queue => "queue".into(),
                Type::Opaque(n) => format!("opaque {n}"),
                Type::Unsupported(n) => (*n).into(),
            },
        }
    }

    /// `(storage, pointee)` of pointer type `ty`.
    fn pointer(&self, ty: Id) -> Option<(Storage, Id)> {
        match self.ty(ty)? {
            Type::Pointer { storage, pointee } => Some((*storage, *pointee)),
            _ => None,
        }
    }

    /// Whether `ty` is a type a value (SSA result) may have.
    fn is_value_type(&self, ty: Id) -> bool {
        matches!(
            self.ty(ty),
            Some(
                Type::Bool
                    | Type::Int { .. }
                    | Type::Float { .. }
                    | Type::Vector { .. }
                    | Type::Array { .. }
                    | Type::Struct { .. }
                    | Type::Pointer { .. }
                    | Type::Event
                    | Type::Pipe { .. }
                    | Type::Queue
            )
        )
    }

    /// Size in bytes of type `ty`, checked against overflow (None: unsized, or too
    /// large).
    fn size(&self, ty: Id, depth: u32) -> Option<u64> {
        if depth == 0 {
            return None;
        }
        let d = depth - 1;
        let t = self.ty(ty)?;
        Some(match t {
            Type::Void | Type::Bool => 1,
            Type::Int { bits } | Type::Float { bits } => u64::from(*bits / 8).max(1),
            Type::Vector { elem, count } => {
                let n = u64::from(count.next_power_of_two());
                self.size(*elem, d)?.checked_mul(n)?
            }
            Type::Array { elem, len } => self.size(*elem, d)?.checked_mul(*len)?,
            Type::Struct { members, .. } => {
                let mut total = 0u64;
                for mem in members {
                    total = total.checked_add(self.size(*mem, d)?.checked_mul(2)?)?;
                }
                total
            }
            Type::Pointer { .. } | Type::Event | Type::Pipe { .. } | Type::Queue => 8,
            _ => return None,
        })
        .filter(|s| *s <= MAX_TYPE_BYTES)
    }
}

/// Types of the values visible in one function: module constants and globals
/// (looked up in the module) and the function's parameters and results.
struct Values<'a> {
    m: &'a Module,
    local: HashMap<Id, Id>,
}

impl Values<'_> {
    /// The type of value `id`.
    fn ty(&self, id: Id) -> Option<Id> {
        if let Some(t) = self.local.get(&id) {
            return Some(*t);
        }
        if let Some(c) = self.m.constants.get(&id) {
            return Some(c.ty);
        }
        self.m.globals.get(&id).map(|g| g.ty)
    }
}
