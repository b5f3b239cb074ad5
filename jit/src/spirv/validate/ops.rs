//! Operand types of every instruction against its result type (SPIR-V 3.x rules,
//! restricted to what the OpenCL environment allows), so that lowering only meets
//! operands of the shapes it expects.

use super::{err, Kind, Shape, Validator, Values};
use crate::spirv::{
    AtomicOp, BinOp, ConvOp, GroupMode, GroupOp, Id, Inst, Op, Storage, Type, UnOp,
};
use crate::CompileError;

/// A short description of `inst` for messages: the instruction and its result
/// (with its `OpName`, when the module has one).
pub(super) fn describe(inst: &Inst, m: &crate::spirv::Module) -> String {
    let name = match &inst.op {
        Op::Binary(b, ..) => format!("Op{b:?}"),
        Op::Unary(u, _) => format!("Op{u:?}"),
        Op::Convert { op, .. } => format!("Op{op:?}"),
        Op::Wide(w, ..) => format!("Op{w:?}"),
        Op::Atomic { op, .. } => format!("OpAtomic{op:?}"),
        Op::Group { op, .. } => format!("group operation {op:?}"),
        Op::Pipe { op, .. } => format!("pipe instruction {op:?}"),
        Op::DeviceEnqueue { op, .. } => format!("Op{}", op.spirv_name()),
        Op::AsyncCopyNd { three_d, .. } => format!(
            "OpExtInst GroupAsyncCopy{}",
            if *three_d { "3D3D" } else { "2D2D" }
        ),
        Op::ExtInst { opcode, .. } => format!(
            "OpExtInst {}",
            rspirv::spirv::OpenclStd100Op::from_u32(*opcode)
                .map_or_else(|| opcode.to_string(), |o| format!("{o:?}"))
        ),
        other => {
            let d = format!("{other:?}");
            let end = d.find(['(', ' ', '{']).unwrap_or(d.len());
            format!("Op{}", &d[..end])
        }
    };
    match inst.result {
        Some(r) => match m.names.get(&r) {
            Some(n) if !n.is_empty() => format!("{name} %{r} (\"{n}\")"),
            _ => format!("{name} %{r}"),
        },
        None => name,
    }
}

/// How messages name a component kind.
fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Bool => "bool",
        Kind::Int => "integer",
        Kind::Float => "float",
    }
}

impl Validator<'_> {
    /// The type of operand `id`, or an error.
    pub(super) fn operand(&self, values: &Values<'_>, id: Id) -> Result<Id, CompileError> {
        values
            .ty(id)
            .ok_or_else(|| err(format!("operand %{id} is not a value")))
    }

    /// Shape of operand `id`, which must be a scalar or vector of `kind`.
    fn operand_shape(
        &self,
        values: &Values<'_>,
        id: Id,
        kind: Kind,
    ) -> Result<Shape, CompileError> {
        let t = self.operand(values, id)?;
        match self.shape(t) {
            Some(s) if s.kind == kind => Ok(s),
            _ => Err(err(format!(
                "operand %{id} has type {}; a {} scalar or vector is needed",
                self.type_name(t),
                kind_name(kind)
            ))),
        }
    }

    /// The result type, which must be a scalar or vector of `kind`.
    fn result_shape(&self, rty: Option<Id>, kind: Kind) -> Result<Shape, CompileError> {
        let t = rty.ok_or_else(|| err("no result type"))?;
        match self.shape(t) {
            Some(s) if s.kind == kind => Ok(s),
            _ => Err(err(format!(
                "result type {} is not a {} scalar or vector",
                self.type_name(t),
                kind_name(kind)
            ))),
        }
    }

    /// Operand `id` has exactly type `want`.
    fn expect(&self, values: &Values<'_>, id: Id, want: Id) -> Result<(), CompileError> {
        let t = self.operand(values, id)?;
        if self.same(t, want) {
            Ok(())
        } else {
            Err(err(format!(
                "operand %{id} has type {}, expected {}",
                self.type_name(t),
                self.type_name(want)
            )))
        }
    }

    /// Operand `id` is an integer scalar.
    pub(super) fn int_scalar(&self, values: &Values<'_>, id: Id) -> Result<u32, CompileError> {
        let s = self.operand_shape(values, id, Kind::Int)?;
        if s.count != 1 {
            return Err(err(format!("operand %{id} must be an integer scalar")));
        }
        Ok(s.bits)
    }

    /// Operand `id` is a pointer: its `(storage, pointee)`.
    pub(super) fn pointer_operand(
        &self,
        values: &Values<'_>,
        id: Id,
    ) -> Result<(Storage, Id), CompileError> {
        let t = self.operand(values, id)?;
        self.pointer(t).ok_or_else(|| {
            err(format!(
                "operand %{id} has type {}, not a pointer",
                self.type_name(t)
            ))
        })
    }

    /// A scope operand: a 32-bit integer constant.
    fn scope(&self, values: &Values<'_>, id: Id) -> Result<(), CompileError> {
        let is_const = matches!(
            self.m.constants.get(&id).map(|c| &c.value),
            Some(crate::spirv::ConstValue::Scalar(_) | crate::spirv::ConstValue::Null)
        );
        if !is_const || self.int_scalar(values, id)? != 32 {
            return Err(err(format!(
                "scope %{id} must be a 32-bit integer constant"
            )));
        }
        // CrossDevice, Device, Workgroup, Subgroup, Invocation.
        if let Some(crate::spirv::ConstValue::Scalar(v)) =
            self.m.constants.get(&id).map(|c| &c.value)
        {
            if *v > 4 {
                return Err(err(format!("scope %{id} has the invalid value {v}")));
            }
        }
        Ok(())
    }

    /// The scope operand of OpAtomicLoad. clang-22 lowers `atomic_load_explicit(p,
    /// order[, scope])` with the OpenCL C arguments unconverted: the memory order
    /// (0..5, seq_cst = 5, or a variable when the order is one) stands where the
    /// scope belongs and the OpenCL scope where the semantics belong. Every atomic is
    /// sequentially consistent here and lowering reads neither, so any 32-bit
    /// integer is accepted.
    fn atomic_load_scope(&self, values: &Values<'_>, id: Id) -> Result<(), CompileError> {
        if self.int_scalar(values, id)? != 32 {
            return Err(err(format!("scope %{id} must be a 32-bit integer")));
        }
        Ok(())
    }

    /// The type reached from `ty` through composite `indices` (literals).
    fn walk_literal(&self, ty: Id, indices: &[u32]) -> Result<Id, CompileError> {
        if indices.is_empty() {
            return Err(err("at least one index is needed"));
        }
        let mut t = ty;
        for &i in indices {
            t = match self.ty(t) {
                Some(Type::Vector { elem, count }) if i < *count => *elem,
                Some(Type::Array { elem, len }) if u64::from(i) < *len => *elem,
                Some(Type::Struct { members, .. }) if (i as usize) < members.len() => {
                    members[i as usize]
                }
                _ => {
                    return Err(err(format!(
                        "index {i} is out of range of {}",
                        self.type_name(t)
                    )))
                }
            };
        }
        Ok(t)
    }

    /// Checks instruction `op` (result type `rty`, result `res`) against the types
    /// of its operands.
    pub(super) fn op_types(
        &self,
        op: &Op,
        rty: Option<Id>,
        values: &Values<'_>,
    ) -> Result<(), CompileError> {
        if let Some(t) = rty {
            if self.ty(t).is_none() {
                return Err(err(format!("result type %{t} is not a type")));
            }
        }
        let result = || rty.ok_or_else(|| err("no result type"));
        match op {
            Op::Nop | Op::MemoryBarrier => {}
            Op::Uses(ids) => {
                for id in ids {
                    self.operand(values, *id)?;
                }
            }
            Op::Binary(b, a, c) => self.binary(*b, *a, *c, rty, values)?,
            Op::Unary(u, a) => self.unary(*u, *a, rty, values)?,
            Op::Convert { op, value, .. } => {
                let (from, to) = match op {
                    ConvOp::FToU | ConvOp::FToS => (Kind::Float, Kind::Int),
                    ConvOp::SToF | ConvOp::UToF => (Kind::Int, Kind::Float),
                    ConvOp::FConvert => (Kind::Float, Kind::Float),
                    ConvOp::UConvert | ConvOp::SConvert | ConvOp::SatSToU | ConvOp::SatUToS => {
                        (Kind::Int, Kind::Int)
                    }
                };
                let r = self.result_shape(rty, to)?;
                let s = self.operand_shape(values, *value, from)?;
                if r.count != s.count {
                    return Err(err("operand and result have different component counts"));
                }
                // clang-22 emits OpFConvert between identical 32/64-bit float types
                // for `convert_float(float)` and its rounding forms (CTS conversions):
                // lowered as a copy.
                let same_width_float = matches!(op, ConvOp::FConvert) && r.bits >= 32;
                if from == to
                    && r.bits == s.bits
                    && !matches!(op, ConvOp::SatSToU | ConvOp::SatUToS)
                    && !same_width_float
                {
                    return Err(err("a conversion between types of the same width"));
                }
            }
            Op::Bitcast(v) => {
                let t = self.operand(values, *v)?;
                let r = result()?;
                let bits = |t: Id| -> Option<u64> {
                    match self.ty(t)? {
                        Type::Pointer { .. } => Some(64),
                        _ => self
                            .shape(t)
                            .filter(|s| s.kind != Kind::Bool)
                            .map(|s| u64::from(s.bits) * u64::from(s.count)),
                    }
                };
                // With a pointer on one side, the other is a pointer or an integer
                // scalar (or, from SPIR-V 1.5, an integer vector).
                let is_ptr = |t: Id| matches!(self.ty(t), Some(Type::Pointer { .. }));
                let pointer_peer = |t: Id| {
                    is_ptr(t)
                        || self.shape(t).is_some_and(|s| {
                            s.kind == Kind::Int && (s.count == 1 || self.m.version >= 0x0001_0500)
                        })
                };
                let peers_ok = (!is_ptr(t) || pointer_peer(r)) && (!is_ptr(r) || pointer_peer(t));
                match (bits(t), bits(r)) {
                    (Some(a), Some(b)) if a == b && peers_ok => {}
                    _ => {
                        return Err(err(format!(
                            "cannot bit-cast {} to {}",
                            self.type_name(t),
                            self.type_name(r)
                        )))
                    }
                }
            }
            Op::ConvertPtrToU(v) => {
                self.pointer_operand(values, *v)?;
                if self.result_shape(rty, Kind::Int)?.count != 1 {
                    return Err(err("the result must be an integer scalar"));
                }
            }
            Op::ConvertUToPtr(v) => {
                self.int_scalar(values, *v)?;
                if self.pointer(result()?).is_none() {
                    return Err(err("the result must be a pointer"));
                }
            }
            Op::GenericCastToPtrExplicit(v) => {
                let (storage, pointee) = self.pointer_operand(values, *v)?;
                match self.pointer(result()?) {
                    Some((rs, rp))
                        if storage == Storage::Generic
                            && matches!(
                                rs,
                                Storage::CrossWorkgroup | Storage::Workgroup | Storage::Function
                            )
                            && self.same(pointee, rp) => {}
                    _ => {
                        return Err(err(
                            "casts a generic pointer to a global, local or private pointer to the same type",
                        ))
                    }
                }
            }
            Op::GenericPtrMemSemantics(v) => {
                let (storage, _) = self.pointer_operand(values, *v)?;
                let r = self.result_shape(rty, Kind::Int)?;
                if storage != Storage::Generic || r.count != 1 || r.bits != 32 {
                    return Err(err("takes a generic pointer and gives a 32-bit integer"));
                }
            }
            Op::PtrCast(v) => {
                // (The pointee may differ: clang-22 casts `&a[0]` of a long array to
                // a generic char pointer; addresses are all the jit sees.)
                let (from, _) = self.pointer_operand(values, *v)?;
                let (to, _) = self
                    .pointer(result()?)
                    .ok_or_else(|| err("the result must be a pointer"))?;
                if (from == Storage::Generic) == (to == Storage::Generic) {
                    return Err(err(format!(
                        "a cast between {from:?} and {to:?} pointers (one side must be Generic)"
                    )));
                }
                // Only __global, __local and private memory is reachable through a
                // generic pointer (__constant is not).
                let named = if from == Storage::Generic { to } else { from };
                if !matches!(
                    named,
                    Storage::CrossWorkgroup | Storage::Workgroup | Storage::Function
                ) {
                    return Err(err(format!(
                        "a cast between Generic and {named:?} pointers (only CrossWorkgroup, \
                         Workgroup and Function convert to and from Generic)"
                    )));
                }
            }
            Op::Wide(w, a, b) => {
                let t = self.operand(values, *a)?;
                self.expect(values, *b, t)?;
                let ok = self.shape(t).is_some_and(|s| s.kind == Kind::Int);
                let members = match self.ty(result()?) {
                    Some(Type::Struct { members, .. }) => members.clone(),
                    _ => Vec::new(),
                };
                if !ok || members.len() != 2 || !members.iter().all(|m| self.same(*m, t)) {
                    return Err(err(format!(
                        "Op{w:?} needs integer operands of one type and a struct of two of them"
                    )));
                }
            }
            Op::VectorTimesScalar(v, s) => {
                let r = result()?;
                let rs = self.result_shape(rty, Kind::Float)?;
                if rs.count < 2 {
                    return Err(err("the result must be a float vector"));
                }
                self.expect(values, *v, r)?;
                let ss = self.operand_shape(values, *s, Kind::Float)?;
                if ss.count != 1 || ss.bits != rs.bits {
                    return Err(err(
                        "the scalar must be a float of the vector's component type",
                    ));
                }
            }
            Op::PtrDiff(a, b) => {
                let t = self.operand(values, *a)?;
                self.pointer_operand(values, *a)?;
                self.expect(values, *b, t)?;
                if self.result_shape(rty, Kind::Int)?.count != 1 {
                    return Err(err("the result must be an integer scalar"));
                }
            }
            Op::SizeOf(p) => {
                let (_, pointee) = self.pointer_operand(values, *p)?;
                if self.size(pointee, 16).is_none() {
                    return Err(err("the pointee has no size"));
                }
                if self.result_shape(rty, Kind::Int)?.count != 1 {
                    return Err(err("the result must be an integer scalar"));
                }
            }
            Op::Undef => {
                if !self.is_value_type(result()?) {
                    return Err(err("OpUndef of a type that has no values"));
                }
            }
            Op::Select { cond, a, b } => {
                let r = result()?;
                self.expect(values, *a, r)?;
                self.expect(values, *b, r)?;
                let c = self.operand_shape(values, *cond, Kind::Bool)?;
                if c.count != 1 && self.shape(r).map(|s| s.count) != Some(c.count) {
                    return Err(err(
                        "a vector condition needs a vector result of as many components",
                    ));
                }
            }
            Op::Phi(incoming) => {
                let r = result()?;
                if !self.is_value_type(r) {
                    return Err(err("OpPhi of a type that has no values"));
                }
                for (v, _) in incoming {
                    self.expect(values, *v, r)?;
                }
            }
            Op::Load { ptr, .. } => {
                let (_, pointee) = self.pointer_operand(values, *ptr)?;
                let r = result()?;
                if !self.same(pointee, r) {
                    return Err(err(format!(
                        "loads {} through a pointer to {}",
                        self.type_name(r),
                        self.type_name(pointee)
                    )));
                }
                if !self.is_value_type(r) {
                    return Err(err("loads a type that has no values"));
                }
            }
            Op::Store { ptr, value, .. } => {
                let (storage, pointee) = self.pointer_operand(values, *ptr)?;
                if matches!(storage, Storage::UniformConstant | Storage::Input) {
                    return Err(err(format!(
                        "stores through a read-only {storage:?} pointer"
                    )));
                }
                self.expect(values, *value, pointee)?;
            }
            Op::CopyMemory { dst, src, size } => {
                let (ds, dp) = self.pointer_operand(values, *dst)?;
                let (_, sp) = self.pointer_operand(values, *src)?;
                if matches!(ds, Storage::UniformConstant | Storage::Input) {
                    return Err(err(format!("copies into a read-only {ds:?} pointer")));
                }
                match size {
                    Some(s) => {
                        self.int_scalar(values, *s)?;
                    }
                    None => {
                        if !self.same(dp, sp) {
                            return Err(err("source and destination point to different types"));
                        }
                        if self.size(dp, 16).is_none() {
                            return Err(err("the pointee has no size"));
                        }
                    }
                }
            }
            Op::AccessChain {
                base,
                element,
                indices,
            } => {
                let (storage, pointee) = self.pointer_operand(values, *base)?;
                if let Some(e) = element {
                    self.int_scalar(values, *e)?;
                }
                let mut t = pointee;
                for idx in indices {
                    self.int_scalar(values, *idx)?;
                    t = match self.ty(t) {
                        Some(Type::Vector { elem, .. } | Type::Array { elem, .. }) => *elem,
                        Some(Type::Struct { members, .. }) => {
                            let k = match self.m.constants.get(idx).map(|c| &c.value) {
                                Some(crate::spirv::ConstValue::Scalar(k)) => *k,
                                _ => {
                                    return Err(err(format!(
                                        "struct index %{idx} must be an integer constant"
                                    )))
                                }
                            };
                            *members
                                .get(k as usize)
                                .ok_or_else(|| err(format!("struct index {k} is out of range")))?
                        }
                        _ => {
                            return Err(err(format!(
                                "indexes into {}, which is not a composite",
                                self.type_name(t)
                            )))
                        }
                    };
                }
                match self.pointer(result()?) {
                    Some((rs, rp)) if rs == storage && self.same(rp, t) => {}
                    _ => {
                        return Err(err(format!(
                            "the result must be a {storage:?} pointer to {}",
                            self.type_name(t)
                        )))
                    }
                }
            }
            Op::CompositeExtract { composite, indices } => {
                let t = self.operand(values, *composite)?;
                let m = self.walk_literal(t, indices)?;
                if !self.same(m, result()?) {
                    return Err(err(format!(
                        "the member has type {}, the result {}",
                        self.type_name(m),
                        self.type_name(result()?)
                    )));
                }
            }
            Op::CompositeInsert {
                object,
                composite,
                indices,
            } => {
                let r = result()?;
                self.expect(values, *composite, r)?;
                let m = self.walk_literal(r, indices)?;
                self.expect(values, *object, m)?;
            }
            Op::CompositeConstruct(parts) => self.construct(parts, result()?, values)?,
            Op::VectorExtractDynamic { vector, index } => {
                let t = self.operand(values, *vector)?;
                let elem = match self.ty(t) {
                    Some(Type::Vector { elem, .. }) => *elem,
                    _ => return Err(err(format!("operand %{vector} is not a vector"))),
                };
                if !self.same(elem, result()?) {
                    return Err(err("the result must be the vector's component type"));
                }
                self.int_scalar(values, *index)?;
            }
            Op::VectorInsertDynamic {
                vector,
                component,
                index,
            } => {
                let r = result()?;
                let elem = match self.ty(r) {
                    Some(Type::Vector { elem, .. }) => *elem,
                    _ => return Err(err("the result must be a vector")),
                };
                self.expect(values, *vector, r)?;
                self.expect(values, *component, elem)?;
                self.int_scalar(values, *index)?;
            }
            Op::VectorShuffle { a, b, components } => {
                let r = result()?;
                let vec_of = |t: Id| match self.ty(t) {
                    Some(Type::Vector { elem, count }) => Some((*elem, *count)),
                    _ => None,
                };
                let (re, rc) = vec_of(r).ok_or_else(|| err("the result must be a vector"))?;
                let (ae, ac) = vec_of(self.operand(values, *a)?)
                    .ok_or_else(|| err(format!("operand %{a} is not a vector")))?;
                let (be, bc) = vec_of(self.operand(values, *b)?)
                    .ok_or_else(|| err(format!("operand %{b} is not a vector")))?;
                // clang-22 pads a half shuffle with an undefined *ushort* vector
                // (`half8.even`); a vector none of whose components is selected is
                // never read, so only the selected vectors must match the result.
                let selects_a = components.iter().any(|c| *c < ac);
                let selects_b = components.iter().any(|c| *c != u32::MAX && *c >= ac);
                if (selects_a && !self.same(re, ae)) || (selects_b && !self.same(re, be)) {
                    return Err(err("the vectors' component types differ"));
                }
                if components.len() != rc as usize {
                    return Err(err(format!(
                        "{} components for a result of {rc}",
                        components.len()
                    )));
                }
                if let Some(c) = components
                    .iter()
                    .find(|c| **c != u32::MAX && **c >= ac + bc)
                {
                    return Err(err(format!("component {c} is out of range")));
                }
            }
            Op::CopyObject(v) => self.expect(values, *v, result()?)?,
            Op::CopyLogical(v) => {
                let t = self.operand(values, *v)?;
                if !self.logically_same(t, result()?) {
                    return Err(err(
                        "the operand's type does not logically match the result",
                    ));
                }
            }
            Op::Dot(a, b) => {
                let r = self.result_shape(rty, Kind::Float)?;
                let t = self.operand(values, *a)?;
                self.expect(values, *b, t)?;
                match self.shape(t) {
                    Some(s) if s.kind == Kind::Float && s.count > 1 && s.bits == r.bits => {}
                    _ => return Err(err("OpDot needs float vectors of the result's type")),
                }
                if r.count != 1 {
                    return Err(err("the result must be a float scalar"));
                }
            }
            Op::BitFieldInsert {
                base,
                insert,
                offset,
                count,
            } => {
                let r = result()?;
                self.result_shape(rty, Kind::Int)?;
                self.expect(values, *base, r)?;
                self.expect(values, *insert, r)?;
                self.int_scalar(values, *offset)?;
                self.int_scalar(values, *count)?;
            }
            Op::BitFieldExtract {
                base,
                offset,
                count,
                ..
            } => {
                let r = result()?;
                self.result_shape(rty, Kind::Int)?;
                self.expect(values, *base, r)?;
                self.int_scalar(values, *offset)?;
                self.int_scalar(values, *count)?;
            }
            Op::IntDot {
                a, b, acc, packed, ..
            } => {
                let r = self.result_shape(rty, Kind::Int)?;
                if r.count != 1 {
                    return Err(err("the result must be an integer scalar"));
                }
                let sa = self.operand_shape(values, *a, Kind::Int)?;
                let sb = self.operand_shape(values, *b, Kind::Int)?;
                if *packed {
                    if sa.count != 1 || sa.bits != 32 || sb.count != 1 || sb.bits != 32 {
                        return Err(err(
                            "packed 4x8-bit operands must be 32-bit integer scalars",
                        ));
                    }
                } else if sa.count < 2 || sa.count != sb.count || sa.bits != sb.bits || sa.bits > 16
                {
                    return Err(err(
                        "the operands must be integer vectors of one shape with components of at most 16 bits",
                    ));
                }
                let component_bits = if *packed { 8 } else { sa.bits };
                if r.bits < component_bits {
                    return Err(err("the result is narrower than the components"));
                }
                if let Some(acc) = acc {
                    self.expect(values, *acc, result()?)?;
                }
            }
            Op::Variable { init } => {
                let (_, pointee) = self
                    .pointer(result()?)
                    .ok_or_else(|| err("the result must be a pointer"))?;
                if self.size(pointee, 16).is_none() {
                    return Err(err("the variable's type has no size"));
                }
                if let Some(i) = init {
                    let is_const =
                        self.m.constants.contains_key(i) || self.m.globals.contains_key(i);
                    if !is_const {
                        return Err(err(format!(
                            "initializer %{i} is not a constant or module-scope variable"
                        )));
                    }
                    self.expect(values, *i, pointee)?;
                }
            }
            Op::ExtInst { opcode, args, lits } => {
                self.ext_inst(*opcode, args, lits, rty, values)?
            }
            Op::Call { function, args } => {
                let f = self
                    .m
                    .functions
                    .get(function)
                    .ok_or_else(|| err(format!("%{function} is not a function")))?;
                if args.len() != f.params.len() {
                    return Err(err(format!(
                        "calls {} with {} arguments; it takes {}",
                        f.name,
                        args.len(),
                        f.params.len()
                    )));
                }
                for (a, (_, t)) in args.iter().zip(&f.params) {
                    self.expect(values, *a, *t)?;
                }
                if !self.same(result()?, f.ret) {
                    return Err(err(format!(
                        "the result type differs from what {} returns",
                        f.name
                    )));
                }
                if let Some(three_d) = f.import.as_deref().and_then(super::async_copy::builtin) {
                    self.async_copy_nd(three_d, args, rty, values)?;
                }
            }
            Op::Atomic {
                op,
                ptr,
                scope,
                args,
            } => {
                let (storage, pointee) = self.pointer_operand(values, *ptr)?;
                if matches!(storage, Storage::UniformConstant | Storage::Input) {
                    return Err(err(format!("atomic on a read-only {storage:?} pointer")));
                }
                if *op == AtomicOp::Load {
                    self.atomic_load_scope(values, *scope)?;
                } else {
                    self.scope(values, *scope)?;
                }
                if matches!(op, AtomicOp::FlagTestAndSet | AtomicOp::FlagClear) {
                    if !args.is_empty()
                        || self.shape(pointee).map(|s| (s.kind, s.bits, s.count))
                            != Some((Kind::Int, 32, 1))
                    {
                        return Err(err("an atomic flag is a 32-bit integer and takes no value"));
                    }
                    return match (op, rty) {
                        (AtomicOp::FlagClear, None) => Ok(()),
                        (AtomicOp::FlagTestAndSet, Some(r))
                            if matches!(self.ty(r), Some(Type::Bool)) =>
                        {
                            Ok(())
                        }
                        _ => Err(err("flag test-and-set gives a bool, flag clear nothing")),
                    };
                }
                let s = self.shape(pointee).filter(|s| s.count == 1);
                let float_ok = matches!(
                    op,
                    AtomicOp::Load
                        | AtomicOp::Store
                        | AtomicOp::Exchange
                        | AtomicOp::FAdd
                        | AtomicOp::FMin
                        | AtomicOp::FMax
                );
                let float_only = matches!(op, AtomicOp::FAdd | AtomicOp::FMin | AtomicOp::FMax);
                match s {
                    Some(s) if s.kind == Kind::Int && !float_only && s.bits >= 32 => {}
                    Some(s) if s.kind == Kind::Float && float_ok && s.bits >= 32 => {}
                    _ => {
                        return Err(err(format!(
                            "atomic {op:?} on a pointer to {}",
                            self.type_name(pointee)
                        )))
                    }
                }
                let n_values = match op {
                    AtomicOp::Load | AtomicOp::IIncrement | AtomicOp::IDecrement => 0,
                    AtomicOp::CompareExchange => 2,
                    _ => 1,
                };
                if args.len() != n_values {
                    return Err(err(format!(
                        "{} value operands; {op:?} takes {n_values}",
                        args.len()
                    )));
                }
                for a in args {
                    self.expect(values, *a, pointee)?;
                }
                if *op == AtomicOp::Store {
                    if rty.is_some() {
                        return Err(err("OpAtomicStore has no result"));
                    }
                } else if !self.same(result()?, pointee) {
                    return Err(err("the result type differs from the pointee type"));
                }
            }
            Op::ControlBarrier {
                exec_scope,
                mem_scope,
            } => {
                self.scope(values, *exec_scope)?;
                self.scope(values, *mem_scope)?;
            }
            Op::Group {
                op,
                scope,
                mode,
                args,
            } => self.group(*op, *scope, *mode, args, rty, values)?,
            Op::Block2d {
                shape,
                base,
                width,
                height,
                pitch,
                coord,
                private,
            } => {
                if rty.is_some() {
                    return Err(err("a 2D block instruction has no result"));
                }
                let (bs, _) = self.pointer_operand(values, *base)?;
                if bs != Storage::CrossWorkgroup {
                    return Err(err(format!(
                        "the base pointer of a 2D block {:?} must be CrossWorkgroup",
                        shape.kind
                    )));
                }
                for v in [width, height, pitch] {
                    if self.int_scalar(values, *v)? != 32 {
                        return Err(err(format!(
                            "2D block width, height and pitch are 32-bit integers (%{v})"
                        )));
                    }
                }
                let c = self.operand_shape(values, *coord, Kind::Int)?;
                if c.count != 2 || c.bits != 32 {
                    return Err(err(format!(
                        "the 2D block coordinate %{coord} must be a vector of two 32-bit integers"
                    )));
                }
                if let Some(p) = private {
                    let (ps, _) = self.pointer_operand(values, *p)?;
                    if ps != Storage::Function {
                        return Err(err(format!(
                            "the private pointer %{p} of a 2D block {:?} must be Function",
                            shape.kind
                        )));
                    }
                }
            }
            Op::AsyncCopyNd { three_d, args } => self.async_copy_nd(*three_d, args, rty, values)?,
            Op::Pipe { op, args } => self.pipe_op(*op, args, rty, values)?,
            Op::DeviceEnqueue { op, args, invoke } => {
                self.device_enqueue_op(*op, args, *invoke, rty, values)?
            }
            Op::AsyncCopy {
                dst,
                src,
                num,
                stride,
            } => {
                let (ds, dp) = self.pointer_operand(values, *dst)?;
                let (ss, sp) = self.pointer_operand(values, *src)?;
                let ok = matches!(
                    (ds, ss),
                    (
                        Storage::Workgroup,
                        Storage::CrossWorkgroup | Storage::UniformConstant
                    ) | (Storage::CrossWorkgroup, Storage::Workgroup)
                );
                if !ok || !self.same(dp, sp) || self.size(dp, 16).is_none() {
                    return Err(err(
                        "an async copy goes between local and global memory of one type",
                    ));
                }
                self.int_scalar(values, *num)?;
                self.int_scalar(values, *stride)?;
                if !matches!(self.ty(result()?), Some(Type::Event)) {
                    return Err(err("the result must be an event"));
                }
            }
        }
        Ok(())
    }

    fn binary(
        &self,
        b: BinOp,
        a: Id,
        c: Id,
        rty: Option<Id>,
        values: &Values<'_>,
    ) -> Result<(), CompileError> {
        use BinOp as B;
        let ta = self.operand(values, a)?;
        match b {
            B::IAdd
            | B::ISub
            | B::IMul
            | B::UDiv
            | B::SDiv
            | B::UMod
            | B::SRem
            | B::SMod
            | B::And
            | B::Or
            | B::Xor => {
                self.result_shape(rty, Kind::Int)?;
                self.expect(values, a, rty.unwrap_or_default())?;
                self.expect(values, c, rty.unwrap_or_default())?;
            }
            B::Shl | B::LShr | B::AShr => {
                let r = self.result_shape(rty, Kind::Int)?;
                self.expect(values, a, rty.unwrap_or_default())?;
                let s = self.operand_shape(values, c, Kind::Int)?;
                if s.count != r.count {
                    return Err(err("the shift amount has a different component count"));
                }
            }
            B::FAdd | B::FSub | B::FMul | B::FDiv | B::FRem | B::FMod => {
                self.result_shape(rty, Kind::Float)?;
                self.expect(values, a, rty.unwrap_or_default())?;
                self.expect(values, c, rty.unwrap_or_default())?;
            }
            B::LogicalAnd | B::LogicalOr | B::LogicalEqual | B::LogicalNotEqual => {
                self.result_shape(rty, Kind::Bool)?;
                self.expect(values, a, rty.unwrap_or_default())?;
                self.expect(values, c, rty.unwrap_or_default())?;
            }
            _ => {
                // Comparisons: bool result, operands of one type.
                let r = self.result_shape(rty, Kind::Bool)?;
                self.expect(values, c, ta)?;
                let is_int_cmp = matches!(
                    b,
                    B::IEqual
                        | B::INotEqual
                        | B::UGreaterThan
                        | B::SGreaterThan
                        | B::UGreaterThanEqual
                        | B::SGreaterThanEqual
                        | B::ULessThan
                        | B::SLessThan
                        | B::ULessThanEqual
                        | B::SLessThanEqual
                );
                // OpPtrEqual / OpPtrNotEqual decode to IEqual / INotEqual.
                if matches!(b, B::IEqual | B::INotEqual) && self.pointer(ta).is_some() {
                    if r.count != 1 {
                        return Err(err("a pointer comparison gives a bool scalar"));
                    }
                    return Ok(());
                }
                let kind = if is_int_cmp { Kind::Int } else { Kind::Float };
                let s = self.operand_shape(values, a, kind)?;
                if s.count != r.count {
                    return Err(err("operands and result have different component counts"));
                }
            }
        }
        Ok(())
    }

    fn unary(
        &self,
        u: UnOp,
        a: Id,
        rty: Option<Id>,
        values: &Values<'_>,
    ) -> Result<(), CompileError> {
        use UnOp as U;
        match u {
            U::SNegate | U::Not | U::BitReverse => {
                self.result_shape(rty, Kind::Int)?;
                self.expect(values, a, rty.unwrap_or_default())?;
            }
            U::BitCount => {
                let r = self.result_shape(rty, Kind::Int)?;
                let s = self.operand_shape(values, a, Kind::Int)?;
                if s.count != r.count || s.bits != r.bits {
                    return Err(err(
                        "OpBitCount: operand and result must have the same integer type",
                    ));
                }
            }
            U::FNegate => {
                self.result_shape(rty, Kind::Float)?;
                self.expect(values, a, rty.unwrap_or_default())?;
            }
            U::LogicalNot => {
                self.result_shape(rty, Kind::Bool)?;
                self.expect(values, a, rty.unwrap_or_default())?;
            }
            U::IsNan | U::IsInf | U::IsFinite | U::IsNormal | U::SignBitSet => {
                let r = self.result_shape(rty, Kind::Bool)?;
                let s = self.operand_shape(values, a, Kind::Float)?;
                if s.count != r.count {
                    return Err(err("operand and result have different component counts"));
                }
            }
            U::Any | U::All => {
                // clang-22 also applies them to integer scalars and vectors (the
                // sign bits of OpenCL C's any/all), which lowering supports.
                let r = self.result_shape(rty, Kind::Bool)?;
                let t = self.operand(values, a)?;
                let ok = match self.shape(t) {
                    Some(s) if s.kind == Kind::Bool => s.count >= 2,
                    Some(s) => s.kind == Kind::Int,
                    None => false,
                };
                if r.count != 1 || !ok {
                    return Err(err("OpAny/OpAll reduce a bool vector to a bool"));
                }
            }
        }
        Ok(())
    }

    fn construct(&self, parts: &[Id], r: Id, values: &Values<'_>) -> Result<(), CompileError> {
        match self.ty(r) {
            Some(Type::Vector { elem, count }) => {
                let mut n = 0u32;
                for p in parts {
                    let t = self.operand(values, *p)?;
                    n += match self.ty(t) {
                        Some(Type::Vector { elem: e, count: c }) if self.same(*e, *elem) => *c,
                        _ if self.same(t, *elem) => 1,
                        _ => {
                            return Err(err(format!(
                                "constituent %{p} of type {} does not fit a vector of {}",
                                self.type_name(t),
                                self.type_name(*elem)
                            )))
                        }
                    };
                }
                if n != *count || parts.len() < 2 {
                    return Err(err(format!(
                        "{n} components in {} constituents for a vector of {count}",
                        parts.len()
                    )));
                }
            }
            Some(Type::Array { elem, len }) => {
                if parts.len() as u64 != *len {
                    return Err(err(format!(
                        "{} constituents for an array of {len}",
                        parts.len()
                    )));
                }
                for p in parts {
                    self.expect(values, *p, *elem)?;
                }
            }
            Some(Type::Struct { members, .. }) => {
                if parts.len() != members.len() {
                    return Err(err(format!(
                        "{} constituents for a struct of {}",
                        parts.len(),
                        members.len()
                    )));
                }
                for (p, m) in parts.iter().zip(members) {
                    self.expect(values, *p, *m)?;
                }
            }
            _ => return Err(err("the result must be a vector, array or struct")),
        }
        Ok(())
    }

    fn group(
        &self,
        op: GroupOp,
        scope: Id,
        mode: Option<GroupMode>,
        args: &[Id],
        rty: Option<Id>,
        values: &Values<'_>,
    ) -> Result<(), CompileError> {
        use GroupOp as G;
        // The Intel sub-group instructions have no scope operand (0).
        if scope != 0 {
            self.scope(values, scope)?;
        }
        if op == G::BlockWrite {
            if args.len() != 2 {
                return Err(err("a block write takes a pointer and data"));
            }
            let (storage, p) = self.pointer_operand(values, args[0])?;
            let ds = self.operand_shape(values, args[1], Kind::Int)?;
            return match self.shape(p) {
                Some(ps) if ps.kind == Kind::Int && ps.count == 1 && ps.bits == ds.bits => {
                    if storage == Storage::UniformConstant {
                        return Err(err("a block write to __constant memory"));
                    }
                    Ok(())
                }
                _ => Err(err("a block write stores integers of its pointee's width")),
            };
        }
        let r = rty.ok_or_else(|| err("no result type"))?;
        let args = if mode == Some(GroupMode::ClusteredReduce) {
            let Some((cs, rest)) = args.split_last() else {
                return Err(err("a clustered reduction needs a cluster size"));
            };
            self.cluster_size(values, *cs)?;
            rest
        } else {
            args
        };
        let nargs = |n: usize| -> Result<(), CompileError> {
            if args.len() == n {
                Ok(())
            } else {
                Err(err(format!(
                    "group operation {op:?} takes {n} operands, found {}",
                    args.len()
                )))
            }
        };
        let numeric = |kinds: &[Kind]| -> Result<(), CompileError> {
            match self.shape(r) {
                Some(s) if kinds.contains(&s.kind) => Ok(()),
                _ => Err(err(format!(
                    "group operation {op:?} cannot produce {}",
                    self.type_name(r)
                ))),
            }
        };
        match op {
            G::All | G::Any => {
                nargs(1)?;
                let s = self.operand_shape(values, args[0], Kind::Bool)?;
                if s.count != 1 || self.shape(r).map(|s| (s.kind, s.count)) != Some((Kind::Bool, 1))
                {
                    return Err(err("all/any take and give a bool"));
                }
            }
            G::Elect => {
                nargs(0)?;
                if self.shape(r).map(|s| (s.kind, s.count)) != Some((Kind::Bool, 1)) {
                    return Err(err("elect gives a bool"));
                }
            }
            G::Broadcast => {
                nargs(2)?;
                numeric(&[Kind::Bool, Kind::Int, Kind::Float])?;
                self.expect(values, args[0], r)?;
                let id = self.operand_shape(values, args[1], Kind::Int)?;
                if id.count > 3 {
                    return Err(err("the broadcast id has too many components"));
                }
            }
            G::IAdd | G::IMul | G::UMin | G::SMin | G::UMax | G::SMax | G::And | G::Or | G::Xor => {
                nargs(1)?;
                numeric(&[Kind::Int])?;
                self.expect(values, args[0], r)?;
            }
            G::FAdd | G::FMul | G::FMin | G::FMax => {
                nargs(1)?;
                numeric(&[Kind::Float])?;
                self.expect(values, args[0], r)?;
            }
            G::LogicalAnd | G::LogicalOr | G::LogicalXor => {
                nargs(1)?;
                numeric(&[Kind::Bool])?;
                self.expect(values, args[0], r)?;
            }
            G::Shuffle | G::ShuffleXor => {
                nargs(2)?;
                numeric(&[Kind::Bool, Kind::Int, Kind::Float])?;
                self.expect(values, args[0], r)?;
                self.int_scalar(values, args[1])?;
            }
            G::ShuffleDown | G::ShuffleUp => {
                nargs(3)?;
                numeric(&[Kind::Int, Kind::Float])?;
                self.expect(values, args[0], r)?;
                self.expect(values, args[1], r)?;
                self.int_scalar(values, args[2])?;
            }
            G::BlockRead => {
                nargs(1)?;
                numeric(&[Kind::Int])?;
                let (_, p) = self.pointer_operand(values, args[0])?;
                let (ps, rs) = (self.shape(p), self.shape(r));
                if !matches!((ps, rs), (Some(p), Some(r)) if p.kind == Kind::Int && p.count == 1 && p.bits == r.bits)
                {
                    return Err(err("a block read gives integers of its pointee's width"));
                }
            }
            G::BlockWrite => {}
            G::BroadcastFirst => {
                nargs(1)?;
                numeric(&[Kind::Bool, Kind::Int, Kind::Float])?;
                self.expect(values, args[0], r)?;
            }
            G::AllEqual => {
                nargs(1)?;
                if self.shape(r).map(|s| (s.kind, s.count)) != Some((Kind::Bool, 1)) {
                    return Err(err("all-equal gives a bool"));
                }
                let t = self.operand(values, args[0])?;
                if self.shape(t).is_none() {
                    return Err(err("all-equal compares a scalar or vector"));
                }
            }
            G::Ballot => {
                nargs(1)?;
                let s = self.operand_shape(values, args[0], Kind::Bool)?;
                if s.count != 1 || !self.is_uint4(r) {
                    return Err(err("a ballot takes a bool and gives a uint4"));
                }
            }
            G::InverseBallot | G::BallotBitExtract => {
                nargs(if op == G::InverseBallot { 1 } else { 2 })?;
                let t = self.operand(values, args[0])?;
                if !self.is_uint4(t)
                    || self.shape(r).map(|s| (s.kind, s.count)) != Some((Kind::Bool, 1))
                {
                    return Err(err("a ballot bit test takes a uint4 and gives a bool"));
                }
                if op == G::BallotBitExtract {
                    self.int_scalar(values, args[1])?;
                }
            }
            G::BallotBitCount | G::BallotFindLsb | G::BallotFindMsb => {
                nargs(1)?;
                let t = self.operand(values, args[0])?;
                if !self.is_uint4(t)
                    || self.shape(r).map(|s| (s.kind, s.count, s.bits)) != Some((Kind::Int, 1, 32))
                {
                    return Err(err("a ballot count or find takes a uint4 and gives a uint"));
                }
                if (op == G::BallotBitCount) != mode.is_some() {
                    return Err(err("only a ballot bit count has a group operation"));
                }
            }
            G::ShuffleUpKhr | G::ShuffleDownKhr | G::Rotate => {
                if op == G::Rotate && args.len() == 3 {
                    self.cluster_size(values, args[2])?;
                } else {
                    nargs(2)?;
                }
                numeric(&[Kind::Bool, Kind::Int, Kind::Float])?;
                self.expect(values, args[0], r)?;
                self.int_scalar(values, args[1])?;
            }
        }
        if mode == Some(GroupMode::ClusteredReduce)
            && !matches!(
                op,
                G::IAdd
                    | G::FAdd
                    | G::IMul
                    | G::FMul
                    | G::UMin
                    | G::SMin
                    | G::FMin
                    | G::UMax
                    | G::SMax
                    | G::FMax
                    | G::And
                    | G::Or
                    | G::Xor
                    | G::LogicalAnd
                    | G::LogicalOr
                    | G::LogicalXor
            )
        {
            return Err(err(format!("group operation {op:?} cannot be clustered")));
        }
        Ok(())
    }

    /// Type `t` is a 4-component vector of 32-bit integers (a ballot).
    fn is_uint4(&self, t: Id) -> bool {
        matches!(self.shape(t), Some(s) if s.kind == Kind::Int && s.count == 4 && s.bits == 32)
    }

    /// A cluster size: an integer constant, a power of two.
    fn cluster_size(&self, values: &Values<'_>, id: Id) -> Result<(), CompileError> {
        self.int_scalar(values, id)?;
        match self.m.constants.get(&id).map(|c| &c.value) {
            Some(crate::spirv::ConstValue::Scalar(v)) if v.is_power_of_two() => Ok(()),
            _ => Err(err(format!(
                "cluster size %{id} must be an integer constant power of two"
            ))),
        }
    }
}
