//! Decoding SPIR-V words (through `rspirv`) into [`Module`], validating as we go:
//! every capability, extension, ext-inst set, built-in and instruction we do not
//! implement becomes a [`CompileError`] naming it. Garbage words are `Malformed`.

use rspirv::dr::{self, Operand};
use rspirv::spirv::{self, Capability, Op as SOp};

use super::*;
use crate::{CompileError, CompileErrorKind};

/// Capabilities whose instructions we can compile (or that change nothing for us).
const CAPABILITIES: &[Capability] = &[
    Capability::Addresses,
    Capability::Linkage,
    Capability::Kernel,
    Capability::Vector16,
    Capability::Float16Buffer,
    Capability::Float64,
    Capability::Int64,
    Capability::Int64Atomics,
    Capability::Int8,
    Capability::Int16,
    Capability::GenericPointer,
    Capability::Groups,
    Capability::SubgroupDispatch,
    Capability::SubgroupShuffleINTEL,
    Capability::SubgroupBufferBlockIOINTEL,
    Capability::GroupNonUniform,
    Capability::GroupNonUniformVote,
    Capability::GroupNonUniformBallot,
    Capability::GroupNonUniformArithmetic,
    Capability::GroupNonUniformShuffle,
    Capability::GroupNonUniformShuffleRelative,
    Capability::ExpectAssumeKHR,
    Capability::Shader,
    Capability::AtomicFloat32AddEXT,
    Capability::AtomicFloat64AddEXT,
    Capability::AtomicFloat32MinMaxEXT,
    Capability::AtomicFloat64MinMaxEXT,
    // Image capabilities are accepted so that the image *instructions* are refused
    // with a message naming them. Pipes and DeviceEnqueue are not: the device claims
    // neither, so a module declaring them is refused at once.
    Capability::ImageBasic,
    Capability::LiteralSampler,
    Capability::Sampled1D,
    Capability::SampledBuffer,
    Capability::Image1D,
    Capability::ImageBuffer,
    Capability::ImageReadWrite,
    Capability::ImageMipmap,
    Capability::Float16,
];

/// Extensions whose instructions we accept.
const EXTENSIONS: &[&str] = &[
    "SPV_INTEL_subgroups",
    "SPV_KHR_expect_assume",
    "SPV_EXT_shader_atomic_float_add",
    "SPV_EXT_shader_atomic_float_min_max",
    "SPV_KHR_no_integer_wrap_decoration",
    "SPV_KHR_uniform_group_instructions",
    "SPV_KHR_non_semantic_info",
];

fn malformed(msg: impl Into<String>) -> CompileError {
    CompileError {
        kind: CompileErrorKind::Malformed,
        message: msg.into(),
    }
}

fn unsupported(msg: impl Into<String>) -> CompileError {
    CompileError {
        kind: CompileErrorKind::Unsupported,
        message: msg.into(),
    }
}

/// Checks that every instruction's word count is non-zero and stays inside the
/// module, before `rspirv` sees the words: its decoder slices past the end (a panic)
/// when an instruction claims more words than remain.
fn check_instruction_stream(words: &[u32]) -> Result<(), CompileError> {
    let mut at = 5;
    while at < words.len() {
        let count = (words[at] >> 16) as usize;
        let opcode = words[at] & 0xffff;
        if count == 0 {
            return Err(malformed(format!(
                "malformed SPIR-V module: instruction at word {at} (opcode {opcode}) has a word count of 0"
            )));
        }
        if at + count > words.len() {
            return Err(malformed(format!(
                "malformed SPIR-V module: instruction at word {at} (opcode {opcode}) claims {count} words but only {} remain",
                words.len() - at
            )));
        }
        at += count;
    }
    Ok(())
}

/// Decodes and validates `words`.
pub fn decode(words: &[u32]) -> Result<Module, CompileError> {
    if words.len() < 5 {
        return Err(malformed(format!(
            "not a SPIR-V module: {} words, a header alone needs 5",
            words.len()
        )));
    }
    if words[0] != spirv::MAGIC_NUMBER {
        return Err(malformed(format!(
            "not a SPIR-V module: magic number {:#010x}, expected {:#010x}",
            words[0],
            spirv::MAGIC_NUMBER
        )));
    }
    check_instruction_stream(words)?;
    let fixed = tolerate_known_clang_defects(words);
    let dm = rspirv::dr::load_words(fixed.as_ref())
        .map_err(|e| malformed(format!("malformed SPIR-V module: {e}")))?;
    let mut d = Decoder {
        m: Module {
            bound: dm.header.as_ref().map_or(0, |h| h.bound),
            ..Default::default()
        },
        ext_sets: HashMap::new(),
    };
    d.module(&dm)?;
    Ok(d.m)
}

/// Repairs defects of clang-22's SPIR-V backend that would otherwise make valid
/// OpenCL C unbuildable: an `OpConstantNull` with a stray extra operand (emitted for
/// a null `event_t` passed to `async_work_group_strided_copy`) loses the extra words.
fn tolerate_known_clang_defects(words: &[u32]) -> std::borrow::Cow<'_, [u32]> {
    const OP_CONSTANT_NULL: u32 = 46;
    let mut i = 5;
    let mut bad = false;
    while i < words.len() {
        let len = (words[i] >> 16) as usize;
        if len == 0 {
            return std::borrow::Cow::Borrowed(words);
        }
        if words[i] & 0xffff == OP_CONSTANT_NULL && len > 3 {
            bad = true;
            break;
        }
        i += len;
    }
    if !bad {
        return std::borrow::Cow::Borrowed(words);
    }
    let mut out = Vec::with_capacity(words.len());
    out.extend_from_slice(&words[..5]);
    let mut i = 5;
    while i < words.len() {
        let len = ((words[i] >> 16) as usize).max(1);
        let end = (i + len).min(words.len());
        if words[i] & 0xffff == OP_CONSTANT_NULL && len > 3 {
            out.push((3 << 16) | OP_CONSTANT_NULL);
            out.extend_from_slice(&words[i + 1..(i + 3).min(end)]);
        } else {
            out.extend_from_slice(&words[i..end]);
        }
        i += len;
    }
    std::borrow::Cow::Owned(out)
}

struct Decoder {
    m: Module,
    /// OpExtInstImport ids -> set name.
    ext_sets: HashMap<Id, String>,
}

fn id_at(inst: &dr::Instruction, i: usize) -> Result<Id, CompileError> {
    match inst.operands.get(i) {
        Some(Operand::IdRef(id))
        | Some(Operand::IdScope(id))
        | Some(Operand::IdMemorySemantics(id)) => Ok(*id),
        other => Err(malformed(format!(
            "Op{:?}: operand {i} should be an id, found {other:?}",
            inst.class.opcode
        ))),
    }
}

fn lit_at(inst: &dr::Instruction, i: usize) -> Result<u32, CompileError> {
    match inst.operands.get(i) {
        Some(Operand::LiteralBit32(v)) | Some(Operand::LiteralExtInstInteger(v)) => Ok(*v),
        other => Err(malformed(format!(
            "Op{:?}: operand {i} should be a literal, found {other:?}",
            inst.class.opcode
        ))),
    }
}

fn ids_from(inst: &dr::Instruction, start: usize) -> Result<Vec<Id>, CompileError> {
    (start..inst.operands.len())
        .map(|i| id_at(inst, i))
        .collect()
}

fn lits_from(inst: &dr::Instruction, start: usize) -> Result<Vec<u32>, CompileError> {
    (start..inst.operands.len())
        .map(|i| lit_at(inst, i))
        .collect()
}

fn result(inst: &dr::Instruction) -> Result<Id, CompileError> {
    inst.result_id
        .ok_or_else(|| malformed(format!("Op{:?} without a result id", inst.class.opcode)))
}

fn result_ty(inst: &dr::Instruction) -> Result<Id, CompileError> {
    inst.result_type
        .ok_or_else(|| malformed(format!("Op{:?} without a result type", inst.class.opcode)))
}

fn storage_of(sc: spirv::StorageClass) -> Result<Storage, CompileError> {
    use spirv::StorageClass as S;
    Ok(match sc {
        S::Function | S::Private => Storage::Function,
        S::CrossWorkgroup => Storage::CrossWorkgroup,
        S::UniformConstant => Storage::UniformConstant,
        S::Workgroup => Storage::Workgroup,
        S::Input => Storage::Input,
        S::Generic => Storage::Generic,
        other => return Err(unsupported(format!("unsupported storage class {other:?}"))),
    })
}

/// Built-ins the code generator provides.
fn builtin_supported(b: BuiltIn) -> bool {
    use BuiltIn as B;
    matches!(
        b,
        B::GlobalInvocationId
            | B::LocalInvocationId
            | B::WorkgroupId
            | B::NumWorkgroups
            | B::GlobalSize
            | B::WorkgroupSize
            | B::EnqueuedWorkgroupSize
            | B::GlobalOffset
            | B::GlobalLinearId
            | B::LocalInvocationIndex
            | B::WorkDim
            | B::SubgroupSize
            | B::SubgroupMaxSize
            | B::NumSubgroups
            | B::NumEnqueuedSubgroups
            | B::SubgroupId
            | B::SubgroupLocalInvocationId
    )
}

impl Decoder {
    fn module(&mut self, dm: &dr::Module) -> Result<(), CompileError> {
        for c in &dm.capabilities {
            match c.operands.first() {
                Some(Operand::Capability(cap)) => {
                    if !CAPABILITIES.contains(cap) {
                        return Err(unsupported(format!(
                            "unsupported SPIR-V capability {cap:?}"
                        )));
                    }
                }
                other => return Err(malformed(format!("OpCapability with operand {other:?}"))),
            }
        }
        for e in &dm.extensions {
            if let Some(Operand::LiteralString(name)) = e.operands.first() {
                if !EXTENSIONS.contains(&name.as_str()) {
                    return Err(unsupported(format!("unsupported SPIR-V extension {name}")));
                }
            }
        }
        for e in &dm.ext_inst_imports {
            let id = result(e)?;
            let Some(Operand::LiteralString(name)) = e.operands.first() else {
                return Err(malformed("OpExtInstImport without a name"));
            };
            if name != "OpenCL.std" && !name.starts_with("NonSemantic.") {
                return Err(unsupported(format!(
                    "unsupported extended instruction set {name}"
                )));
            }
            self.ext_sets.insert(id, name.clone());
        }
        if let Some(mm) = &dm.memory_model {
            if let Some(Operand::AddressingModel(am)) = mm.operands.first() {
                if *am != spirv::AddressingModel::Physical64 {
                    return Err(unsupported(format!(
                        "unsupported addressing model {am:?} (a 64-bit device needs Physical64)"
                    )));
                }
            }
        }
        for s in &dm.debug_string_source {
            if s.class.opcode == SOp::String {
                if let Some(Operand::LiteralString(t)) = s.operands.first() {
                    self.m.strings.push(t.clone());
                }
            }
        }
        for n in &dm.debug_names {
            if n.class.opcode == SOp::Name {
                if let (Some(Operand::IdRef(id)), Some(Operand::LiteralString(t))) =
                    (n.operands.first(), n.operands.get(1))
                {
                    self.m.names.insert(*id, t.clone());
                }
            }
        }
        for a in &dm.annotations {
            self.annotation(a)?;
        }
        for t in &dm.types_global_values {
            self.type_or_global(t)?;
        }
        for f in &dm.functions {
            self.function(f)?;
        }
        for e in &dm.entry_points {
            let (
                Some(Operand::ExecutionModel(model)),
                Some(Operand::IdRef(f)),
                Some(Operand::LiteralString(name)),
            ) = (e.operands.first(), e.operands.get(1), e.operands.get(2))
            else {
                return Err(malformed("OpEntryPoint with unexpected operands"));
            };
            if *model != spirv::ExecutionModel::Kernel {
                return Err(unsupported(format!(
                    "entry point {name} has execution model {model:?}; only Kernel is supported"
                )));
            }
            if !self.m.functions.contains_key(f) {
                return Err(malformed(format!("entry point {name} names no function")));
            }
            self.m.entry_points.push(EntryPoint {
                function: *f,
                name: name.clone(),
                modes: ExecModes::default(),
            });
        }
        for em in &dm.execution_modes {
            self.execution_mode(em)?;
        }
        Ok(())
    }

    fn execution_mode(&mut self, em: &dr::Instruction) -> Result<(), CompileError> {
        let f = id_at(em, 0)?;
        let Some(Operand::ExecutionMode(mode)) = em.operands.get(1) else {
            return Err(malformed("OpExecutionMode without a mode"));
        };
        let lits: Vec<u32> = em.operands[2..]
            .iter()
            .filter_map(|o| match o {
                Operand::LiteralBit32(v) => Some(*v),
                _ => None,
            })
            .collect();
        let three = |l: &[u32]| -> Result<[u32; 3], CompileError> {
            if l.len() < 3 {
                return Err(malformed(format!("execution mode {mode:?} needs 3 sizes")));
            }
            Ok([l[0], l[1], l[2]])
        };
        for ep in self.m.entry_points.iter_mut().filter(|e| e.function == f) {
            use spirv::ExecutionMode as E;
            match mode {
                E::LocalSize => ep.modes.local_size = Some(three(&lits)?),
                E::LocalSizeHint => ep.modes.local_size_hint = Some(three(&lits)?),
                E::SubgroupSize => ep.modes.sub_group_size = lits.first().copied(),
                E::VecTypeHint => ep.modes.vec_type_hint = lits.first().copied(),
                E::ContractionOff => ep.modes.contraction_off = true,
                _ => {}
            }
        }
        Ok(())
    }

    fn annotation(&mut self, a: &dr::Instruction) -> Result<(), CompileError> {
        use spirv::Decoration as D;
        let targets: Vec<Id>;
        let deco_at: usize;
        match a.class.opcode {
            SOp::Decorate => {
                targets = vec![id_at(a, 0)?];
                deco_at = 1;
            }
            SOp::MemberDecorate
            | SOp::DecorationGroup
            | SOp::GroupDecorate
            | SOp::GroupMemberDecorate => return Ok(()),
            _ => return Ok(()),
        }
        let Some(Operand::Decoration(deco)) = a.operands.get(deco_at) else {
            return Ok(());
        };
        for t in targets {
            let d = self.m.decorations.entry(t).or_default();
            match deco {
                D::Alignment => {
                    if let Some(Operand::LiteralBit32(v)) = a.operands.get(deco_at + 1) {
                        d.alignment = Some(*v);
                    }
                }
                D::FPRoundingMode => {
                    if let Some(Operand::FPRoundingMode(r)) = a.operands.get(deco_at + 1) {
                        d.rounding = Some(match r {
                            spirv::FPRoundingMode::RTE => Rounding::Rte,
                            spirv::FPRoundingMode::RTZ => Rounding::Rtz,
                            spirv::FPRoundingMode::RTP => Rounding::Rtp,
                            spirv::FPRoundingMode::RTN => Rounding::Rtn,
                        });
                    }
                }
                D::SaturatedConversion => d.saturated = true,
                D::CPacked => d.packed = true,
                D::Volatile => d.volatile = true,
                D::BuiltIn => {
                    if let Some(Operand::BuiltIn(b)) = a.operands.get(deco_at + 1) {
                        if !builtin_supported(*b) {
                            return Err(unsupported(format!(
                                "unsupported built-in variable {b:?}"
                            )));
                        }
                        d.builtin = Some(*b);
                    }
                }
                D::FuncParamAttr => {
                    if let Some(Operand::FunctionParameterAttribute(p)) =
                        a.operands.get(deco_at + 1)
                    {
                        d.param_attrs.push(*p);
                    }
                }
                D::LinkageAttributes => {
                    if let (
                        Some(Operand::LiteralString(name)),
                        Some(Operand::LinkageType(spirv::LinkageType::Import)),
                    ) = (a.operands.get(deco_at + 1), a.operands.get(deco_at + 2))
                    {
                        d.import = Some(name.clone());
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn type_or_global(&mut self, t: &dr::Instruction) -> Result<(), CompileError> {
        let op = t.class.opcode;
        let ty = match op {
            SOp::TypeVoid => Some(Type::Void),
            SOp::TypeBool => Some(Type::Bool),
            SOp::TypeInt => {
                let bits = lit_at(t, 0)?;
                if ![8, 16, 32, 64].contains(&bits) {
                    return Err(unsupported(format!("unsupported integer width {bits}")));
                }
                Some(Type::Int { bits })
            }
            SOp::TypeFloat => {
                let bits = lit_at(t, 0)?;
                if ![16, 32, 64].contains(&bits) {
                    return Err(unsupported(format!("unsupported float width {bits}")));
                }
                Some(Type::Float { bits })
            }
            SOp::TypeVector => Some(Type::Vector {
                elem: id_at(t, 0)?,
                count: lit_at(t, 1)?,
            }),
            SOp::TypeArray => {
                let len_id = id_at(t, 1)?;
                let len = match self.m.constants.get(&len_id) {
                    Some(Constant {
                        value: ConstValue::Scalar(v),
                        ..
                    }) => *v,
                    _ => {
                        return Err(unsupported(
                            "array type whose length is not a plain constant (specialization constants are not supported)",
                        ))
                    }
                };
                Some(Type::Array {
                    elem: id_at(t, 0)?,
                    len,
                })
            }
            SOp::TypeRuntimeArray => Some(Type::RuntimeArray { elem: id_at(t, 0)? }),
            SOp::TypeStruct => {
                let id = result(t)?;
                let packed = self.m.decorations.get(&id).is_some_and(|d| d.packed);
                Some(Type::Struct {
                    members: ids_from(t, 0)?,
                    packed,
                })
            }
            SOp::TypePointer => {
                let Some(Operand::StorageClass(sc)) = t.operands.first() else {
                    return Err(malformed("OpTypePointer without a storage class"));
                };
                Some(Type::Pointer {
                    storage: storage_of(*sc)?,
                    pointee: id_at(t, 1)?,
                })
            }
            SOp::TypeFunction => Some(Type::Function {
                ret: id_at(t, 0)?,
                params: ids_from(t, 1)?,
            }),
            SOp::TypeEvent | SOp::TypeDeviceEvent | SOp::TypeReserveId | SOp::TypeQueue => {
                Some(Type::Event)
            }
            SOp::TypeOpaque => Some(Type::Unsupported("opaque")),
            SOp::TypeImage => Some(Type::Unsupported("image")),
            SOp::TypeSampler => Some(Type::Unsupported("sampler")),
            SOp::TypeSampledImage => Some(Type::Unsupported("sampled image")),
            SOp::TypePipe => Some(Type::Unsupported("pipe")),
            SOp::TypeForwardPointer => return Ok(()),
            _ => None,
        };
        if let Some(ty) = ty {
            // Composite types may only use types declared before them (no cycles: the
            // layout and lowering recurse through them).
            let parts: Vec<Id> = match &ty {
                Type::Vector { elem, .. }
                | Type::Array { elem, .. }
                | Type::RuntimeArray { elem } => vec![*elem],
                Type::Struct { members, .. } => members.clone(),
                Type::Function { ret, params } => std::iter::once(*ret)
                    .chain(params.iter().copied())
                    .collect(),
                _ => Vec::new(),
            };
            if let Some(bad) = parts.iter().find(|p| !self.m.types.contains_key(p)) {
                return Err(malformed(format!(
                    "type %{} uses %{bad}, which is not a type declared before it",
                    result(t)?
                )));
            }
            self.m.types.insert(result(t)?, ty);
            return Ok(());
        }
        let value = match op {
            SOp::Constant | SOp::SpecConstant => {
                let v = match t.operands.first() {
                    Some(Operand::LiteralBit32(v)) => u64::from(*v),
                    Some(Operand::LiteralBit64(v)) => *v,
                    other => return Err(malformed(format!("OpConstant with operand {other:?}"))),
                };
                ConstValue::Scalar(v)
            }
            SOp::ConstantTrue | SOp::SpecConstantTrue => ConstValue::Scalar(1),
            SOp::ConstantFalse | SOp::SpecConstantFalse => ConstValue::Scalar(0),
            SOp::ConstantNull => ConstValue::Null,
            SOp::Undef => ConstValue::Undef,
            SOp::ConstantComposite | SOp::SpecConstantComposite => {
                ConstValue::Composite(ids_from(t, 0)?)
            }
            SOp::Variable => {
                let id = result(t)?;
                let ty = result_ty(t)?;
                let Some(Operand::StorageClass(sc)) = t.operands.first() else {
                    return Err(malformed("OpVariable without a storage class"));
                };
                let storage = storage_of(*sc)?;
                let init = match t.operands.get(1) {
                    Some(Operand::IdRef(i)) => Some(*i),
                    _ => None,
                };
                let builtin = self.m.decorations.get(&id).and_then(|d| d.builtin);
                if storage == Storage::Input && builtin.is_none() {
                    return Err(unsupported(format!(
                        "input variable {} is not a built-in",
                        self.m.name_of(id)
                    )));
                }
                let name = self.m.name_of(id);
                self.m.globals.insert(
                    id,
                    GlobalVar {
                        ty,
                        storage,
                        builtin,
                        init,
                        name,
                    },
                );
                self.m.global_order.push(id);
                return Ok(());
            }
            SOp::ConstantSampler => {
                return Err(unsupported(
                    "samplers (OpConstantSampler) are not supported yet",
                ))
            }
            SOp::SpecConstantOp => {
                return Err(unsupported("OpSpecConstantOp is not supported"));
            }
            SOp::Line | SOp::NoLine | SOp::ExtInst => return Ok(()),
            other => {
                return Err(unsupported(format!(
                    "unsupported SPIR-V instruction Op{other:?} at module scope"
                )))
            }
        };
        if let ConstValue::Composite(parts) = &value {
            if let Some(bad) = parts.iter().find(|p| !self.m.constants.contains_key(p)) {
                return Err(malformed(format!(
                    "constant %{} uses %{bad}, which is not a constant declared before it",
                    result(t)?
                )));
            }
        }
        let ty = result_ty(t)?;
        if !self.m.types.contains_key(&ty) {
            return Err(malformed(format!(
                "constant %{} has type %{ty}, which is not a type",
                result(t)?
            )));
        }
        self.m.constants.insert(result(t)?, Constant { ty, value });
        Ok(())
    }

    fn function(&mut self, f: &dr::Function) -> Result<(), CompileError> {
        let def = f
            .def
            .as_ref()
            .ok_or_else(|| malformed("OpFunction missing"))?;
        let id = result(def)?;
        let ret = result_ty(def)?;
        let name = self.m.name_of(id);
        let mut params = Vec::new();
        for p in &f.parameters {
            params.push((result(p)?, result_ty(p)?));
        }
        let import = self.m.decorations.get(&id).and_then(|d| d.import.clone());
        let mut blocks = Vec::new();
        for b in &f.blocks {
            let label =
                b.label.as_ref().and_then(|l| l.result_id).ok_or_else(|| {
                    malformed(format!("block without a label in function {name}"))
                })?;
            let mut insts = Vec::new();
            let mut term = None;
            for inst in &b.instructions {
                if term.is_some() {
                    return Err(malformed(format!(
                        "instruction after the terminator of block %{label} in function {name}"
                    )));
                }
                match self.terminator(inst)? {
                    Some(t) => term = Some(t),
                    None => {
                        let op = self.inst(inst).map_err(|mut e| {
                            e.message = format!("{} in function {name}", e.message);
                            e
                        })?;
                        insts.push(Inst {
                            result: inst.result_id,
                            ty: inst.result_type,
                            op,
                        });
                    }
                }
            }
            let term = term.ok_or_else(|| {
                malformed(format!(
                    "block %{label} of function {name} has no terminator"
                ))
            })?;
            blocks.push(Block { label, insts, term });
        }
        self.m.functions.insert(
            id,
            Function {
                id,
                name,
                ret,
                params,
                blocks,
                import,
            },
        );
        Ok(())
    }

    fn terminator(&self, inst: &dr::Instruction) -> Result<Option<Terminator>, CompileError> {
        Ok(Some(match inst.class.opcode {
            SOp::Branch => Terminator::Branch(id_at(inst, 0)?),
            SOp::BranchConditional => Terminator::BranchCond {
                cond: id_at(inst, 0)?,
                t: id_at(inst, 1)?,
                f: id_at(inst, 2)?,
            },
            SOp::Switch => {
                let selector = id_at(inst, 0)?;
                let default = id_at(inst, 1)?;
                let mut targets = Vec::new();
                let mut i = 2;
                while i + 1 < inst.operands.len() + 1 && i < inst.operands.len() {
                    let v = match &inst.operands[i] {
                        Operand::LiteralBit32(v) => u64::from(*v),
                        Operand::LiteralBit64(v) => *v,
                        other => return Err(malformed(format!("OpSwitch literal {other:?}"))),
                    };
                    let target = id_at(inst, i + 1)?;
                    targets.push((v, target));
                    i += 2;
                }
                Terminator::Switch {
                    selector,
                    default,
                    targets,
                }
            }
            SOp::Return => Terminator::Return,
            SOp::ReturnValue => Terminator::ReturnValue(id_at(inst, 0)?),
            SOp::Unreachable | SOp::Kill => Terminator::Unreachable,
            _ => return Ok(None),
        }))
    }

    fn inst(&self, inst: &dr::Instruction) -> Result<Op, CompileError> {
        use SOp as S;
        let o = inst.class.opcode;
        let bin = |b: BinOp| -> Result<Op, CompileError> {
            Ok(Op::Binary(b, id_at(inst, 0)?, id_at(inst, 1)?))
        };
        let un = |u: UnOp| -> Result<Op, CompileError> { Ok(Op::Unary(u, id_at(inst, 0)?)) };
        let decos = inst.result_id.and_then(|r| self.m.decorations.get(&r));
        let conv = |c: ConvOp| -> Result<Op, CompileError> {
            Ok(Op::Convert {
                op: c,
                value: id_at(inst, 0)?,
                saturate: decos.is_some_and(|d| d.saturated)
                    || matches!(c, ConvOp::SatSToU | ConvOp::SatUToS),
                rounding: decos.and_then(|d| d.rounding),
            })
        };
        let align_of = |i: usize| -> u32 {
            // Memory operands: mask then (for Aligned) the alignment literal.
            match (inst.operands.get(i), inst.operands.get(i + 1)) {
                (Some(Operand::MemoryAccess(m)), Some(Operand::LiteralBit32(a)))
                    if m.contains(spirv::MemoryAccess::ALIGNED) =>
                {
                    *a
                }
                _ => 0,
            }
        };
        let group = |g: GroupOp, with_mode: bool| -> Result<Op, CompileError> {
            let scope = id_at(inst, 0)?;
            if with_mode {
                let mode = match inst.operands.get(1) {
                    Some(Operand::GroupOperation(spirv::GroupOperation::Reduce)) => {
                        GroupMode::Reduce
                    }
                    Some(Operand::GroupOperation(spirv::GroupOperation::InclusiveScan)) => {
                        GroupMode::InclusiveScan
                    }
                    Some(Operand::GroupOperation(spirv::GroupOperation::ExclusiveScan)) => {
                        GroupMode::ExclusiveScan
                    }
                    other => {
                        return Err(unsupported(format!(
                            "unsupported group operation {other:?}"
                        )))
                    }
                };
                Ok(Op::Group {
                    op: g,
                    scope,
                    mode: Some(mode),
                    args: ids_from(inst, 2)?,
                })
            } else {
                Ok(Op::Group {
                    op: g,
                    scope,
                    mode: None,
                    args: ids_from(inst, 1)?,
                })
            }
        };
        let intel = |g: GroupOp| -> Result<Op, CompileError> {
            Ok(Op::Group {
                op: g,
                scope: 0,
                mode: None,
                args: ids_from(inst, 0)?,
            })
        };
        let atomic = |a: AtomicOp, nargs_skip: usize| -> Result<Op, CompileError> {
            Ok(Op::Atomic {
                op: a,
                ptr: id_at(inst, 0)?,
                scope: id_at(inst, 1)?,
                args: ids_from(inst, nargs_skip)?,
            })
        };
        Ok(match o {
            S::Nop
            | S::Line
            | S::NoLine
            | S::LifetimeStart
            | S::LifetimeStop
            | S::AssumeTrueKHR
            | S::Name => Op::Nop,
            S::IAdd => bin(BinOp::IAdd)?,
            S::ISub => bin(BinOp::ISub)?,
            S::IMul => bin(BinOp::IMul)?,
            S::UDiv => bin(BinOp::UDiv)?,
            S::SDiv => bin(BinOp::SDiv)?,
            S::UMod => bin(BinOp::UMod)?,
            S::SRem => bin(BinOp::SRem)?,
            S::SMod => bin(BinOp::SMod)?,
            S::FAdd => bin(BinOp::FAdd)?,
            S::FSub => bin(BinOp::FSub)?,
            S::FMul => bin(BinOp::FMul)?,
            S::FDiv => bin(BinOp::FDiv)?,
            S::FRem => bin(BinOp::FRem)?,
            S::FMod => bin(BinOp::FMod)?,
            S::ShiftLeftLogical => bin(BinOp::Shl)?,
            S::ShiftRightLogical => bin(BinOp::LShr)?,
            S::ShiftRightArithmetic => bin(BinOp::AShr)?,
            S::BitwiseAnd => bin(BinOp::And)?,
            S::BitwiseOr => bin(BinOp::Or)?,
            S::BitwiseXor => bin(BinOp::Xor)?,
            S::LogicalAnd => bin(BinOp::LogicalAnd)?,
            S::LogicalOr => bin(BinOp::LogicalOr)?,
            S::LogicalEqual => bin(BinOp::LogicalEqual)?,
            S::LogicalNotEqual => bin(BinOp::LogicalNotEqual)?,
            S::IEqual => bin(BinOp::IEqual)?,
            // Pointers are 64-bit addresses in every storage class we support.
            S::PtrEqual => bin(BinOp::IEqual)?,
            S::PtrNotEqual => bin(BinOp::INotEqual)?,
            S::INotEqual => bin(BinOp::INotEqual)?,
            S::UGreaterThan => bin(BinOp::UGreaterThan)?,
            S::SGreaterThan => bin(BinOp::SGreaterThan)?,
            S::UGreaterThanEqual => bin(BinOp::UGreaterThanEqual)?,
            S::SGreaterThanEqual => bin(BinOp::SGreaterThanEqual)?,
            S::ULessThan => bin(BinOp::ULessThan)?,
            S::SLessThan => bin(BinOp::SLessThan)?,
            S::ULessThanEqual => bin(BinOp::ULessThanEqual)?,
            S::SLessThanEqual => bin(BinOp::SLessThanEqual)?,
            S::FOrdEqual => bin(BinOp::FOrdEqual)?,
            S::FUnordEqual => bin(BinOp::FUnordEqual)?,
            S::FOrdNotEqual => bin(BinOp::FOrdNotEqual)?,
            S::FUnordNotEqual => bin(BinOp::FUnordNotEqual)?,
            S::FOrdLessThan => bin(BinOp::FOrdLessThan)?,
            S::FUnordLessThan => bin(BinOp::FUnordLessThan)?,
            S::FOrdGreaterThan => bin(BinOp::FOrdGreaterThan)?,
            S::FUnordGreaterThan => bin(BinOp::FUnordGreaterThan)?,
            S::FOrdLessThanEqual => bin(BinOp::FOrdLessThanEqual)?,
            S::FUnordLessThanEqual => bin(BinOp::FUnordLessThanEqual)?,
            S::FOrdGreaterThanEqual => bin(BinOp::FOrdGreaterThanEqual)?,
            S::FUnordGreaterThanEqual => bin(BinOp::FUnordGreaterThanEqual)?,
            S::Ordered => bin(BinOp::Ordered)?,
            S::Unordered => bin(BinOp::Unordered)?,
            S::LessOrGreater => bin(BinOp::LessOrGreater)?,
            S::SNegate => un(UnOp::SNegate)?,
            S::FNegate => un(UnOp::FNegate)?,
            S::Not => un(UnOp::Not)?,
            S::LogicalNot => un(UnOp::LogicalNot)?,
            S::IsNan => un(UnOp::IsNan)?,
            S::IsInf => un(UnOp::IsInf)?,
            S::IsFinite => un(UnOp::IsFinite)?,
            S::IsNormal => un(UnOp::IsNormal)?,
            S::SignBitSet => un(UnOp::SignBitSet)?,
            S::BitCount => un(UnOp::BitCount)?,
            S::BitReverse => un(UnOp::BitReverse)?,
            S::Any => un(UnOp::Any)?,
            S::All => un(UnOp::All)?,
            S::ConvertFToU => conv(ConvOp::FToU)?,
            S::ConvertFToS => conv(ConvOp::FToS)?,
            S::ConvertSToF => conv(ConvOp::SToF)?,
            S::ConvertUToF => conv(ConvOp::UToF)?,
            S::UConvert => conv(ConvOp::UConvert)?,
            S::SConvert => conv(ConvOp::SConvert)?,
            S::FConvert => conv(ConvOp::FConvert)?,
            S::SatConvertSToU => conv(ConvOp::SatSToU)?,
            S::SatConvertUToS => conv(ConvOp::SatUToS)?,
            S::Bitcast => Op::Bitcast(id_at(inst, 0)?),
            S::ConvertPtrToU => Op::ConvertPtrToU(id_at(inst, 0)?),
            S::ConvertUToPtr => Op::ConvertUToPtr(id_at(inst, 0)?),
            S::PtrCastToGeneric | S::GenericCastToPtr | S::GenericCastToPtrExplicit => {
                Op::PtrCast(id_at(inst, 0)?)
            }
            S::Select => Op::Select {
                cond: id_at(inst, 0)?,
                a: id_at(inst, 1)?,
                b: id_at(inst, 2)?,
            },
            S::Phi => {
                let ids = ids_from(inst, 0)?;
                if ids.len() % 2 != 0 {
                    return Err(malformed("OpPhi with an odd number of operands"));
                }
                Op::Phi(ids.chunks(2).map(|c| (c[0], c[1])).collect())
            }
            S::Load => Op::Load {
                ptr: id_at(inst, 0)?,
                align: align_of(1),
            },
            S::Store => Op::Store {
                ptr: id_at(inst, 0)?,
                value: id_at(inst, 1)?,
                align: align_of(2),
            },
            S::CopyMemory => Op::CopyMemory {
                dst: id_at(inst, 0)?,
                src: id_at(inst, 1)?,
                size: None,
            },
            S::CopyMemorySized => Op::CopyMemory {
                dst: id_at(inst, 0)?,
                src: id_at(inst, 1)?,
                size: Some(id_at(inst, 2)?),
            },
            S::AccessChain | S::InBoundsAccessChain => Op::AccessChain {
                base: id_at(inst, 0)?,
                element: None,
                indices: ids_from(inst, 1)?,
            },
            S::PtrAccessChain | S::InBoundsPtrAccessChain => Op::AccessChain {
                base: id_at(inst, 0)?,
                element: Some(id_at(inst, 1)?),
                indices: ids_from(inst, 2)?,
            },
            S::CompositeExtract => Op::CompositeExtract {
                composite: id_at(inst, 0)?,
                indices: lits_from(inst, 1)?,
            },
            S::CompositeInsert => Op::CompositeInsert {
                object: id_at(inst, 0)?,
                composite: id_at(inst, 1)?,
                indices: lits_from(inst, 2)?,
            },
            S::CompositeConstruct => Op::CompositeConstruct(ids_from(inst, 0)?),
            S::VectorExtractDynamic => Op::VectorExtractDynamic {
                vector: id_at(inst, 0)?,
                index: id_at(inst, 1)?,
            },
            S::VectorInsertDynamic => Op::VectorInsertDynamic {
                vector: id_at(inst, 0)?,
                component: id_at(inst, 1)?,
                index: id_at(inst, 2)?,
            },
            S::VectorShuffle => Op::VectorShuffle {
                a: id_at(inst, 0)?,
                b: id_at(inst, 1)?,
                components: lits_from(inst, 2)?,
            },
            S::CopyObject => Op::CopyObject(id_at(inst, 0)?),
            S::Dot => Op::Dot(id_at(inst, 0)?, id_at(inst, 1)?),
            S::Variable => Op::Variable {
                init: match inst.operands.get(1) {
                    Some(Operand::IdRef(i)) => Some(*i),
                    _ => None,
                },
            },
            S::ExtInst => {
                let set = id_at(inst, 0)?;
                let opcode = lit_at(inst, 1)?;
                match self.ext_sets.get(&set).map(String::as_str) {
                    Some("OpenCL.std") => {
                        if rspirv::spirv::OpenclStd100Op::from_u32(opcode).is_none() {
                            return Err(unsupported(format!(
                                "unknown OpenCL.std extended instruction {opcode}"
                            )));
                        }
                        // vloadn (171) ends with the literal n; vstore_half_r (176),
                        // vstore_halfn_r (178), vstorea_halfn_r (181) with a rounding mode.
                        let n_lits = usize::from(matches!(opcode, 171 | 176 | 178 | 181));
                        let total = inst.operands.len();
                        let split = total.saturating_sub(n_lits).max(2);
                        let lits = inst.operands[split..]
                            .iter()
                            .map(|o| match o {
                                Operand::IdRef(v)
                                | Operand::LiteralBit32(v)
                                | Operand::LiteralExtInstInteger(v) => Ok(*v),
                                other => {
                                    Err(malformed(format!("OpenCL.std literal operand {other:?}")))
                                }
                            })
                            .collect::<Result<Vec<u32>, _>>()?;
                        Op::ExtInst {
                            opcode,
                            args: (2..split)
                                .map(|i| id_at(inst, i))
                                .collect::<Result<_, _>>()?,
                            lits,
                        }
                    }
                    Some(s) if s.starts_with("NonSemantic.") => Op::Nop,
                    _ => return Err(malformed(format!("OpExtInst of unknown set %{set}"))),
                }
            }
            S::FunctionCall => Op::Call {
                function: id_at(inst, 0)?,
                args: ids_from(inst, 1)?,
            },
            S::AtomicLoad => atomic(AtomicOp::Load, 3)?,
            S::AtomicStore => atomic(AtomicOp::Store, 3)?,
            S::AtomicExchange => atomic(AtomicOp::Exchange, 3)?,
            // pointer, scope, equal semantics, unequal semantics, value, comparator
            S::AtomicCompareExchange | S::AtomicCompareExchangeWeak => {
                atomic(AtomicOp::CompareExchange, 4)?
            }
            S::AtomicIIncrement => atomic(AtomicOp::IIncrement, 3)?,
            S::AtomicIDecrement => atomic(AtomicOp::IDecrement, 3)?,
            S::AtomicIAdd => atomic(AtomicOp::IAdd, 3)?,
            S::AtomicISub => atomic(AtomicOp::ISub, 3)?,
            S::AtomicSMin => atomic(AtomicOp::SMin, 3)?,
            S::AtomicUMin => atomic(AtomicOp::UMin, 3)?,
            S::AtomicSMax => atomic(AtomicOp::SMax, 3)?,
            S::AtomicUMax => atomic(AtomicOp::UMax, 3)?,
            S::AtomicAnd => atomic(AtomicOp::And, 3)?,
            S::AtomicOr => atomic(AtomicOp::Or, 3)?,
            S::AtomicXor => atomic(AtomicOp::Xor, 3)?,
            S::AtomicFAddEXT => atomic(AtomicOp::FAdd, 3)?,
            S::AtomicFMinEXT => atomic(AtomicOp::FMin, 3)?,
            S::AtomicFMaxEXT => atomic(AtomicOp::FMax, 3)?,
            S::ControlBarrier => Op::ControlBarrier {
                exec_scope: id_at(inst, 0)?,
                mem_scope: id_at(inst, 1)?,
            },
            S::MemoryBarrier => Op::MemoryBarrier,
            // scope, dst, src, num elements, stride, event
            S::GroupAsyncCopy => Op::AsyncCopy {
                dst: id_at(inst, 1)?,
                src: id_at(inst, 2)?,
                num: id_at(inst, 3)?,
                stride: id_at(inst, 4)?,
            },
            // The copy is complete when OpGroupAsyncCopy returns.
            S::GroupWaitEvents => Op::MemoryBarrier,
            S::GroupAll => group(GroupOp::All, false)?,
            S::GroupAny => group(GroupOp::Any, false)?,
            S::GroupBroadcast => group(GroupOp::Broadcast, false)?,
            S::GroupIAdd => group(GroupOp::IAdd, true)?,
            S::GroupFAdd => group(GroupOp::FAdd, true)?,
            S::GroupFMin => group(GroupOp::FMin, true)?,
            S::GroupUMin => group(GroupOp::UMin, true)?,
            S::GroupSMin => group(GroupOp::SMin, true)?,
            S::GroupFMax => group(GroupOp::FMax, true)?,
            S::GroupUMax => group(GroupOp::UMax, true)?,
            S::GroupSMax => group(GroupOp::SMax, true)?,
            S::GroupIMulKHR => group(GroupOp::IMul, true)?,
            S::GroupFMulKHR => group(GroupOp::FMul, true)?,
            S::GroupBitwiseAndKHR => group(GroupOp::And, true)?,
            S::GroupBitwiseOrKHR => group(GroupOp::Or, true)?,
            S::GroupBitwiseXorKHR => group(GroupOp::Xor, true)?,
            S::GroupLogicalAndKHR => group(GroupOp::LogicalAnd, true)?,
            S::GroupLogicalOrKHR => group(GroupOp::LogicalOr, true)?,
            S::GroupLogicalXorKHR => group(GroupOp::LogicalXor, true)?,
            S::GroupNonUniformElect => group(GroupOp::Elect, false)?,
            S::GroupNonUniformAll => group(GroupOp::All, false)?,
            S::GroupNonUniformAny => group(GroupOp::Any, false)?,
            S::GroupNonUniformBroadcast => group(GroupOp::Broadcast, false)?,
            S::GroupNonUniformShuffle => group(GroupOp::Shuffle, false)?,
            S::GroupNonUniformShuffleXor => group(GroupOp::ShuffleXor, false)?,
            S::GroupNonUniformIAdd => group(GroupOp::IAdd, true)?,
            S::GroupNonUniformFAdd => group(GroupOp::FAdd, true)?,
            S::GroupNonUniformIMul => group(GroupOp::IMul, true)?,
            S::GroupNonUniformFMul => group(GroupOp::FMul, true)?,
            S::GroupNonUniformSMin => group(GroupOp::SMin, true)?,
            S::GroupNonUniformUMin => group(GroupOp::UMin, true)?,
            S::GroupNonUniformFMin => group(GroupOp::FMin, true)?,
            S::GroupNonUniformSMax => group(GroupOp::SMax, true)?,
            S::GroupNonUniformUMax => group(GroupOp::UMax, true)?,
            S::GroupNonUniformFMax => group(GroupOp::FMax, true)?,
            S::GroupNonUniformBitwiseAnd => group(GroupOp::And, true)?,
            S::GroupNonUniformBitwiseOr => group(GroupOp::Or, true)?,
            S::GroupNonUniformBitwiseXor => group(GroupOp::Xor, true)?,
            S::GroupNonUniformLogicalAnd => group(GroupOp::LogicalAnd, true)?,
            S::GroupNonUniformLogicalOr => group(GroupOp::LogicalOr, true)?,
            S::GroupNonUniformLogicalXor => group(GroupOp::LogicalXor, true)?,
            S::SubgroupShuffleINTEL => intel(GroupOp::Shuffle)?,
            S::SubgroupShuffleDownINTEL => intel(GroupOp::ShuffleDown)?,
            S::SubgroupShuffleUpINTEL => intel(GroupOp::ShuffleUp)?,
            S::SubgroupShuffleXorINTEL => intel(GroupOp::ShuffleXor)?,
            S::SubgroupBlockReadINTEL => intel(GroupOp::BlockRead)?,
            S::SubgroupBlockWriteINTEL => intel(GroupOp::BlockWrite)?,
            other => {
                return Err(unsupported(format!(
                    "unsupported SPIR-V instruction Op{other:?}"
                )))
            }
        })
    }
}
