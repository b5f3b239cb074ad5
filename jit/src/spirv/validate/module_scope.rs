//! Module-scope rules: types, constants, module-scope variables, decorations, entry
//! points and execution modes, and the capabilities the declared types need.

use std::collections::{HashMap, HashSet};

use rspirv::spirv::{BuiltIn, Capability, Decoration};

use super::{err, Kind, Validator, MAX_PROGRAM_DATA_BYTES};
use crate::spirv::{ConstValue, Id, Storage, Type};
use crate::CompileError;

/// The type a built-in variable must point to: a vector of 3 `size_t`, a `size_t` or
/// a `uint` (OpenCL SPIR-V environment, Physical64).
#[derive(PartialEq, Eq)]
enum BuiltinType {
    SizeT3,
    SizeT,
    Uint,
    /// The `get_sub_group_*_mask` built-ins: a uint4 bit mask.
    Uint4,
}

fn builtin_type(b: BuiltIn) -> Option<BuiltinType> {
    use BuiltIn as B;
    Some(match b {
        B::GlobalInvocationId
        | B::LocalInvocationId
        | B::WorkgroupId
        | B::NumWorkgroups
        | B::GlobalSize
        | B::WorkgroupSize
        | B::EnqueuedWorkgroupSize
        | B::GlobalOffset => BuiltinType::SizeT3,
        B::GlobalLinearId | B::LocalInvocationIndex => BuiltinType::SizeT,
        B::WorkDim
        | B::SubgroupSize
        | B::SubgroupMaxSize
        | B::NumSubgroups
        | B::NumEnqueuedSubgroups
        | B::SubgroupId
        | B::SubgroupLocalInvocationId => BuiltinType::Uint,
        B::SubgroupEqMask
        | B::SubgroupGeMask
        | B::SubgroupGtMask
        | B::SubgroupLeMask
        | B::SubgroupLtMask => BuiltinType::Uint4,
        _ => return None,
    })
}

/// Decorations an OpenCL (Kernel) module may use; the others need Shader, Matrix,
/// tessellation or transform-feedback capabilities.
fn kernel_decoration(d: Decoration) -> bool {
    use Decoration as D;
    matches!(
        d,
        D::SpecId
            | D::CPacked
            | D::BuiltIn
            | D::Restrict
            | D::Aliased
            | D::Volatile
            | D::Constant
            | D::Coherent
            | D::NonWritable
            | D::NonReadable
            | D::Uniform
            | D::UniformId
            | D::SaturatedConversion
            | D::FuncParamAttr
            | D::FPRoundingMode
            | D::FPFastMathMode
            | D::LinkageAttributes
            | D::Alignment
            | D::AlignmentId
            | D::MaxByteOffset
            | D::MaxByteOffsetId
            | D::NoSignedWrap
            | D::NoUnsignedWrap
            | D::UserSemantic
            | D::RestrictPointer
            | D::AliasedPointer
    )
}

impl Validator<'_> {
    pub(super) fn module_scope(&self) -> Result<(), CompileError> {
        self.capabilities_present()?;
        self.types()?;
        self.constants()?;
        self.globals()?;
        self.decorations()?;
        self.entry_points()?;
        Ok(())
    }

    fn has(&self, c: Capability) -> bool {
        self.m.capabilities.contains(&c)
    }

    fn capabilities_present(&self) -> Result<(), CompileError> {
        for (need, why) in [
            (Capability::Kernel, "an OpenCL module"),
            (Capability::Addresses, "the Physical64 addressing model"),
        ] {
            if !self.has(need) {
                return Err(err(format!("{why} must declare OpCapability {need:?}")));
            }
        }
        Ok(())
    }

    /// Sorted ids of a map, so the first error found does not depend on hashing.
    fn sorted<T>(map: &HashMap<Id, T>) -> Vec<Id> {
        let mut ids: Vec<Id> = map.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    fn types(&self) -> Result<(), CompileError> {
        let mut scalars: HashMap<String, Id> = HashMap::new();
        for id in Self::sorted(&self.m.types) {
            let t = &self.m.types[&id];
            let bad = |why: String| err(format!("type %{id}: {why}"));
            match t {
                Type::Int { bits } => {
                    let cap = match bits {
                        8 => Some(Capability::Int8),
                        16 => Some(Capability::Int16),
                        64 => Some(Capability::Int64),
                        _ => None,
                    };
                    if let Some(c) = cap.filter(|c| !self.has(*c)) {
                        return Err(bad(format!(
                            "{bits}-bit integers need OpCapability {c:?}"
                        )));
                    }
                }
                Type::Float { bits: 64 } if !self.has(Capability::Float64) => {
                    return Err(bad("doubles need OpCapability Float64".into()));
                }
                Type::Float { bits: 16 }
                    if !self.has(Capability::Float16) && !self.has(Capability::Float16Buffer) =>
                {
                    return Err(bad(
                        "half needs OpCapability Float16 or Float16Buffer".into()
                    ));
                }
                Type::Vector { elem, count } => {
                    if !matches!(
                        self.ty(*elem),
                        Some(Type::Bool | Type::Int { .. } | Type::Float { .. })
                    ) {
                        return Err(bad(format!(
                            "vector of {}, which is not a scalar type",
                            self.type_name(*elem)
                        )));
                    }
                    // SPIR-V allows 2, 3, 4 and (Vector16) 8, 16 components; clang-22
                    // also emits the sizes in between for the partial loads of a
                    // swizzle (`char8.even` loads a 7-component vector), which LLVM
                    // lays out like the next power of two. Lowering is per
                    // component, so they are accepted next to 8 and 16. It also
                    // types a `char2*` kernel parameter whose uses only load single
                    // components as a pointer to a 1-component vector (laid out as
                    // its component; CTS relationals shuffle_copy).
                    match count {
                        1..=4 => {}
                        5..=16 if self.has(Capability::Vector16) => {}
                        5..=16 => {
                            return Err(bad(format!(
                                "{count}-component vectors need OpCapability Vector16"
                            )))
                        }
                        _ => return Err(bad(format!("vector of {count} components"))),
                    }
                }
                Type::Array { elem, len } => {
                    if *len == 0 {
                        return Err(bad("array of length 0".into()));
                    }
                    if self.size(*elem, 16).is_none() {
                        return Err(bad(format!(
                            "array of {}, which has no size",
                            self.type_name(*elem)
                        )));
                    }
                }
                Type::RuntimeArray { .. } => {
                    return Err(bad(
                        "OpTypeRuntimeArray needs the Shader capability, which OpenCL modules cannot declare".into(),
                    ))
                }
                Type::Struct { members, .. } => {
                    for mem in members {
                        if self.size(*mem, 16).is_none() {
                            return Err(bad(format!(
                                "struct member of type {}, which has no size",
                                self.type_name(*mem)
                            )));
                        }
                    }
                }
                Type::Pointer { storage, pointee } => {
                    match self.ty(*pointee) {
                        None => {
                            return Err(bad(format!("pointer to %{pointee}, which is not a type")))
                        }
                        Some(Type::Function { .. }) => {
                            return Err(bad("pointer to a function type".into()))
                        }
                        _ => {}
                    }
                    if *storage == Storage::Generic && !self.has(Capability::GenericPointer) {
                        return Err(bad(
                            "Generic pointers need OpCapability GenericPointer".into()
                        ));
                    }
                }
                Type::Function { ret, params } => {
                    if !matches!(self.ty(*ret), Some(Type::Void)) && !self.is_value_type(*ret) {
                        return Err(bad(format!(
                            "function returning {}",
                            self.type_name(*ret)
                        )));
                    }
                    if let Some(p) = params.iter().find(|p| !self.is_value_type(**p)) {
                        return Err(bad(format!(
                            "function parameter of type {}",
                            self.type_name(*p)
                        )));
                    }
                }
                _ => {}
            }
            // Non-aggregate, non-pointer types are unique (SPIR-V 2.8).
            let key = match t {
                Type::Void | Type::Bool | Type::Int { .. } | Type::Float { .. } => {
                    Some(format!("{t:?}"))
                }
                Type::Vector { elem, count } => Some(format!("v{count}:{:?}", self.ty(*elem))),
                _ => None,
            };
            if let Some(k) = key {
                if let Some(first) = scalars.insert(k, id) {
                    return Err(bad(format!("declares the same type as %{first}")));
                }
            }
        }
        Ok(())
    }

    fn constants(&self) -> Result<(), CompileError> {
        for id in Self::sorted(&self.m.constants) {
            let c = &self.m.constants[&id];
            let bad = |why: String| err(format!("constant %{id}: {why}"));
            let Some(t) = self.ty(c.ty) else {
                return Err(bad(format!("type %{} is not a type", c.ty)));
            };
            match &c.value {
                ConstValue::Scalar(v) => match t {
                    Type::Bool if *v > 1 => return Err(bad("boolean value other than 0/1".into())),
                    Type::Bool | Type::Int { .. } | Type::Float { .. } => {}
                    _ => return Err(bad(format!("a number of type {}", self.type_name(c.ty)))),
                },
                ConstValue::Composite(parts) => {
                    let want: Vec<Id> = match t {
                        Type::Vector { elem, count } => vec![*elem; *count as usize],
                        Type::Array { elem, len } if *len == parts.len() as u64 => {
                            vec![*elem; parts.len()]
                        }
                        Type::Array { len, .. } => {
                            return Err(bad(format!(
                                "{} constituents for an array of {len}",
                                parts.len()
                            )))
                        }
                        Type::Struct { members, .. } => members.clone(),
                        _ => {
                            return Err(bad(format!(
                                "a composite of type {}",
                                self.type_name(c.ty)
                            )))
                        }
                    };
                    if want.len() != parts.len() {
                        return Err(bad(format!(
                            "{} constituents for a type of {}",
                            parts.len(),
                            want.len()
                        )));
                    }
                    for (p, w) in parts.iter().zip(&want) {
                        let pt = self.m.constants.get(p).map(|c| c.ty);
                        if !pt.is_some_and(|pt| self.same(pt, *w)) {
                            return Err(bad(format!(
                                "constituent %{p} should be a constant of type {}",
                                self.type_name(*w)
                            )));
                        }
                    }
                }
                ConstValue::Null | ConstValue::Undef => {
                    if !self.is_value_type(c.ty) {
                        return Err(bad(format!(
                            "a null or undefined value of type {}",
                            self.type_name(c.ty)
                        )));
                    }
                }
                ConstValue::Expr(op) => {
                    if !self.is_value_type(c.ty) {
                        return Err(bad(format!(
                            "OpSpecConstantOp of type {}",
                            self.type_name(c.ty)
                        )));
                    }
                    let values = super::Values {
                        m: self.m,
                        local: HashMap::new(),
                    };
                    // clang-22 writes `&a[2]` at program scope as an i8 access
                    // chain: `a`, element 0, the byte offset as the one index, an i8
                    // pointer result (spirv::const_addr reads it so).
                    let byte_gep = matches!(&**op, crate::spirv::Op::AccessChain { indices, .. } if indices.len() == 1)
                        && self.pointer(c.ty).is_some_and(|(_, p)| {
                            matches!(self.ty(p), Some(Type::Int { bits: 8 }))
                        });
                    if !byte_gep {
                        self.op_types(op, Some(c.ty), &values)
                            .map_err(|e| bad(e.message))?;
                    }
                }
            }
        }
        for t in self.m.types.values() {
            if let Type::Array { len, .. } = t {
                if *len > super::MAX_TYPE_BYTES {
                    return Err(err(format!("array of {len} elements")));
                }
            }
        }
        Ok(())
    }

    fn globals(&self) -> Result<(), CompileError> {
        let mut data_bytes = 0u64;
        for id in Self::sorted(&self.m.globals) {
            let g = &self.m.globals[&id];
            let bad = |why: String| err(format!("module-scope variable {}: {why}", g.name));
            let imported = self
                .m
                .decorations
                .get(&id)
                .is_some_and(|d| d.import.is_some());
            if imported && g.init.is_some() {
                return Err(bad(
                    "an imported variable (LinkageAttributes Import) cannot have an initializer"
                        .into(),
                ));
            }
            let Some((storage, pointee)) = self.pointer(g.ty) else {
                return Err(bad(format!(
                    "type {} is not a pointer type",
                    self.type_name(g.ty)
                )));
            };
            if storage != g.storage {
                return Err(bad(format!(
                    "storage class {:?} differs from its pointer type's {storage:?}",
                    g.storage
                )));
            }
            match g.storage {
                Storage::Function | Storage::Generic => {
                    return Err(bad(format!(
                        "storage class {:?} is not allowed at module scope",
                        g.storage
                    )))
                }
                // Built-ins are Input variables; the Khronos LLVM/SPIR-V translator
                // before 2019 declared them UniformConstant (pyopencl's test modules,
                // Intel's runtime runs them): the same rules, and no storage.
                Storage::Input | Storage::UniformConstant
                    if g.storage == Storage::Input || g.builtin.is_some() =>
                {
                    if g.init.is_some() {
                        return Err(bad("a built-in variable cannot have an initializer".into()));
                    }
                    let b = g
                        .builtin
                        .ok_or_else(|| bad("Input but not a built-in".into()))?;
                    let want = builtin_type(b)
                        .ok_or_else(|| bad(format!("unsupported built-in {b:?}")))?;
                    let ok = match (self.ty(pointee), want) {
                        (Some(Type::Vector { elem, count: 3 }), BuiltinType::SizeT3) => {
                            matches!(self.ty(*elem), Some(Type::Int { bits: 64 }))
                        }
                        (Some(Type::Int { bits: 64 }), BuiltinType::SizeT) => true,
                        (Some(Type::Int { bits: 32 }), BuiltinType::Uint) => true,
                        (Some(Type::Vector { elem, count: 4 }), BuiltinType::Uint4) => {
                            matches!(self.ty(*elem), Some(Type::Int { bits: 32 }))
                        }
                        _ => false,
                    };
                    if !ok {
                        return Err(bad(format!(
                            "built-in {b:?} cannot have type {}",
                            self.type_name(pointee)
                        )));
                    }
                }
                // __local contents start undefined: the build's IR path
                // (runtime::build::local_retype) gives such arrays a zero initializer
                // only to keep their type, so OpUndef and OpConstantNull are accepted
                // and never applied; any other value is refused.
                Storage::Workgroup
                    if g.init.is_some_and(|i| {
                        !matches!(
                            self.m.constants.get(&i).map(|c| &c.value),
                            Some(ConstValue::Undef | ConstValue::Null)
                        )
                    }) =>
                {
                    return Err(bad(
                        "a Workgroup variable cannot have an initializer other than OpUndef or OpConstantNull".into(),
                    ))
                }
                _ => {}
            }
            if g.builtin.is_some() {
                if !matches!(g.storage, Storage::Input | Storage::UniformConstant) {
                    return Err(bad("BuiltIn on a variable that is not Input".into()));
                }
                continue;
            }
            let size = self
                .size(pointee, 16)
                .ok_or_else(|| bad(format!("type {} has no size", self.type_name(pointee))))?;
            // A resource limit, not a malformed module: allocated when the program
            // is built, so bounded here before anything tries.
            if matches!(
                g.storage,
                Storage::UniformConstant | Storage::CrossWorkgroup
            ) && size > MAX_PROGRAM_DATA_BYTES
            {
                return Err(CompileError::unsupported(format!(
                    "program-scope variable {} has {size} bytes; at most {MAX_PROGRAM_DATA_BYTES} are supported",
                    g.name
                )));
            }
            if matches!(
                g.storage,
                Storage::UniformConstant | Storage::CrossWorkgroup
            ) {
                data_bytes += size;
                if data_bytes > 4 * MAX_PROGRAM_DATA_BYTES {
                    return Err(CompileError::unsupported(format!(
                        "more than {} bytes of program-scope variables",
                        4 * MAX_PROGRAM_DATA_BYTES
                    )));
                }
            }
            if let Some(init) = g.init {
                let it = self
                    .m
                    .constants
                    .get(&init)
                    .map(|c| c.ty)
                    .or_else(|| self.m.globals.get(&init).map(|g| g.ty));
                // clang-22 zero-initialises a program-scope pointer with a null of
                // the pointer-sized integer (`global atomic_long* p;`): a null of
                // another type of the same size is the same zero bytes.
                let same_size_null = matches!(
                    self.m.constants.get(&init),
                    Some(c) if matches!(c.value, crate::spirv::ConstValue::Null)
                        && self.size(c.ty, 16) == Some(size)
                );
                if !same_size_null && !it.is_some_and(|t| self.same(t, pointee)) {
                    return Err(bad(format!(
                        "initializer %{init} is not a constant of type {}",
                        self.type_name(pointee)
                    )));
                }
            }
        }
        Ok(())
    }

    fn decorations(&self) -> Result<(), CompileError> {
        let params: HashSet<Id> = self
            .m
            .functions
            .values()
            .flat_map(|f| f.params.iter().map(|p| p.0))
            .collect();
        let results: HashSet<Id> = self
            .m
            .functions
            .values()
            .flat_map(|f| f.blocks.iter().flat_map(|b| b.insts.iter()))
            .filter_map(|i| i.result)
            .collect();
        for &(target, deco, via_group) in &self.m.decoration_list {
            if !kernel_decoration(deco) {
                return Err(err(format!(
                    "decoration {deco:?} on %{target} needs a capability OpenCL modules cannot declare"
                )));
            }
            if matches!(deco, Decoration::Uniform | Decoration::UniformId)
                && !self.has(Capability::UniformDecoration)
            {
                return Err(err(format!(
                    "decoration {deco:?} on %{target} needs OpCapability UniformDecoration"
                )));
            }
            let is_value = params.contains(&target)
                || results.contains(&target)
                || self.m.constants.contains_key(&target)
                || self.m.globals.contains_key(&target);
            let known = is_value
                || self.m.types.contains_key(&target)
                || self.m.functions.contains_key(&target);
            let bad = |why: &str| err(format!("decoration {deco:?} on %{target}: {why}"));
            if !known {
                return Err(bad("the target is not defined"));
            }
            match deco {
                Decoration::BuiltIn if !self.m.globals.contains_key(&target) => {
                    return Err(bad("only module-scope variables can be built-ins"))
                }
                Decoration::SpecId if !self.m.constants.contains_key(&target) => {
                    return Err(bad("only specialization constants have a SpecId"))
                }
                Decoration::FuncParamAttr
                    if !params.contains(&target) && !self.m.functions.contains_key(&target) =>
                {
                    return Err(bad(
                        "only function parameters and results take FuncParamAttr",
                    ))
                }
                Decoration::LinkageAttributes
                    if !self.m.functions.contains_key(&target)
                        && !self.m.globals.contains_key(&target) =>
                {
                    return Err(bad("only functions and variables have linkage"))
                }
                // (The CTS decorates kernel parameters Constant through a group;
                // spirv-val and other drivers accept that.)
                Decoration::Constant if !self.m.globals.contains_key(&target) && !via_group => {
                    return Err(bad("only variables can be Constant"))
                }
                Decoration::LinkageAttributes if !self.has(Capability::Linkage) => {
                    return Err(bad("linkage needs OpCapability Linkage"))
                }
                Decoration::CPacked if !matches!(self.ty(target), Some(Type::Struct { .. })) => {
                    return Err(bad("only struct types can be packed"))
                }
                Decoration::FPRoundingMode
                | Decoration::SaturatedConversion
                | Decoration::Alignment
                    if !is_value =>
                {
                    return Err(bad("the target is not a value"))
                }
                _ => {}
            }
        }
        // (No rule on Alignment's value: clang-22 writes 128 as 0xffffff80.)
        Ok(())
    }

    /// Module-scope variables referenced by function `f` and everything it calls
    /// (sorted).
    fn globals_used_from(&self, f: Id) -> Vec<Id> {
        let mut seen = HashSet::new();
        let mut work = vec![f];
        let mut used = HashSet::new();
        while let Some(id) = work.pop() {
            if !seen.insert(id) {
                continue;
            }
            let Some(func) = self.m.functions.get(&id) else {
                continue;
            };
            for inst in func.blocks.iter().flat_map(|b| b.insts.iter()) {
                if let crate::spirv::Op::Call { function, .. } = &inst.op {
                    work.push(*function);
                }
                crate::spirv::for_each_operand(&inst.op, |v| {
                    if self.m.globals.contains_key(&v) {
                        used.insert(v);
                    }
                });
            }
        }
        let mut out: Vec<Id> = used.into_iter().collect();
        out.sort_unstable();
        out
    }

    fn entry_points(&self) -> Result<(), CompileError> {
        let mut names = HashSet::new();
        for ep in &self.m.entry_points {
            let bad = |why: String| err(format!("kernel {}: {why}", ep.name));
            if !names.insert(ep.name.as_str()) {
                return Err(bad("two entry points have this name".into()));
            }
            let f = self
                .m
                .functions
                .get(&ep.function)
                .ok_or_else(|| bad("the entry point names no function".into()))?;
            if f.blocks.is_empty() {
                return Err(bad("the entry point has no body".into()));
            }
            if !matches!(self.ty(f.ret), Some(Type::Void)) {
                return Err(bad("a kernel must return void".into()));
            }
            for (p, ty) in &f.params {
                let by_val = self.m.decos(*p).is_some_and(|d| {
                    d.param_attrs
                        .contains(&rspirv::spirv::FunctionParameterAttribute::ByVal)
                });
                let ok = match self.ty(*ty) {
                    Some(Type::Pointer { storage, pointee }) => match storage {
                        Storage::CrossWorkgroup | Storage::UniformConstant | Storage::Workgroup => {
                            true
                        }
                        // The block literal of a device-side enqueue's invoke kernel.
                        Storage::Generic => true,
                        Storage::Function => by_val && self.size(*pointee, 16).is_some(),
                        _ => false,
                    },
                    Some(Type::Bool) => false,
                    Some(Type::Int { .. } | Type::Float { .. } | Type::Vector { .. }) => {
                        self.shape(*ty).is_some_and(|s| s.kind != Kind::Bool)
                    }
                    Some(Type::Struct { .. } | Type::Array { .. }) => self.size(*ty, 16).is_some(),
                    Some(Type::Unsupported(_) | Type::Pipe { .. } | Type::Queue) => true,
                    _ => false,
                };
                if !ok {
                    return Err(bad(format!(
                        "parameter %{p} of type {} cannot be a kernel argument",
                        self.type_name(*ty)
                    )));
                }
            }
            // From SPIR-V 1.4, an interface names each variable once.
            if self.m.version >= 0x0001_0400 {
                let mut seen = std::collections::HashSet::new();
                if let Some(g) = ep.interface.iter().find(|g| !seen.insert(**g)) {
                    return Err(bad(format!("lists %{g} twice in its interface")));
                }
            }
            // The interface lists the variables the kernel and its callees use
            // (Input ones only, before SPIR-V 1.4).
            for g in self.globals_used_from(ep.function) {
                let needed =
                    self.m.version >= 0x0001_0400 || self.m.globals[&g].storage == Storage::Input;
                if needed && !ep.interface.contains(&g) {
                    return Err(bad(format!(
                        "uses {}, which its OpEntryPoint does not list",
                        self.m.globals[&g].name
                    )));
                }
            }
            let m = &ep.modes;
            for (what, size) in [
                ("LocalSize", m.local_size),
                ("LocalSizeHint", m.local_size_hint),
            ] {
                if let Some(s) = size {
                    if s.contains(&0) {
                        return Err(bad(format!("{what} {s:?} has a zero dimension")));
                    }
                }
            }
            if m.sub_group_size == Some(0) {
                return Err(bad("SubgroupSize 0".into()));
            }
            if m.sub_groups_per_work_group == Some(0) {
                return Err(bad("SubgroupsPerWorkgroup 0".into()));
            }
        }
        Ok(())
    }
}
