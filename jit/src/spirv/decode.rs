//! Decoding SPIR-V words (through `rspirv`) into [`Module`], validating as we go:
//! every capability, extension, ext-inst set, built-in and instruction we do not
//! implement becomes a [`CompileError`] naming it. Garbage words are `Malformed`.
//!
//! This file walks the module's sections; `operands` reads operands, `annotations`
//! decorations, `types` types/constants/globals, `body` blocks and terminators,
//! `inst` the instructions of a body.

use rspirv::dr::{self, Operand};
use rspirv::spirv::{self, Capability, Op as SOp};

use std::borrow::Cow;
use std::collections::HashSet;

mod annotations;
mod body;
mod inst;
mod layout;
mod operands;
mod spec_op;
mod types;

use operands::*;

use super::*;
use crate::{CompileError, CompileErrorKind};

/// Capabilities whose instructions we can compile (or that change nothing for us):
/// what the device may report as `CL_DEVICE_SPIRV_CAPABILITIES_KHR` (the runtime
/// filters it by the features the device claims, e.g. `Float64` by fp64).
pub const IMPLEMENTED_CAPABILITIES: &[Capability] = &[
    Capability::Addresses,
    Capability::Linkage,
    Capability::Kernel,
    Capability::Vector16,
    Capability::Float16Buffer,
    Capability::Float16,
    Capability::Float64,
    Capability::Int64,
    Capability::Int64Atomics,
    Capability::Int8,
    Capability::Int16,
    Capability::GenericPointer,
    Capability::Groups,
    // The SubgroupSize and SubgroupsPerWorkgroup execution modes (both honoured).
    Capability::SubgroupDispatch,
    Capability::SubgroupShuffleINTEL,
    Capability::SubgroupBufferBlockIOINTEL,
    Capability::Subgroup2DBlockIOINTEL,
    Capability::Subgroup2DBlockTransformINTEL,
    Capability::Subgroup2DBlockTransposeINTEL,
    Capability::GroupNonUniform,
    Capability::GroupNonUniformVote,
    Capability::GroupNonUniformBallot,
    Capability::GroupNonUniformArithmetic,
    Capability::GroupNonUniformShuffle,
    Capability::GroupNonUniformShuffleRelative,
    Capability::GroupNonUniformClustered,
    Capability::GroupNonUniformRotateKHR,
    Capability::ExpectAssumeKHR,
    Capability::BitInstructions,
    Capability::DotProduct,
    Capability::DotProductInput4x8Bit,
    Capability::DotProductInput4x8BitPacked,
    Capability::AtomicFloat32AddEXT,
    Capability::AtomicFloat64AddEXT,
    Capability::AtomicFloat32MinMaxEXT,
    Capability::AtomicFloat64MinMaxEXT,
    // SPIR-V 1.6: `Uniform` / `UniformId` decorations are hints we do not need.
    Capability::UniformDecoration,
    // The pipe instructions (`lower::pipe`, storage and helpers in `crate::pipe`).
    Capability::Pipes,
    // The device-side enqueue instructions (`lower::enqueue_spirv`).
    Capability::DeviceEnqueue,
];

/// Capabilities a module may declare although we implement none of their
/// instructions: images, so that the image *instructions* are refused with a message
/// naming them, and `Shader` (declared by some producers next to `Kernel`; its
/// instructions are refused one by one).
const TOLERATED_CAPABILITIES: &[Capability] = &[
    Capability::Shader,
    Capability::ImageBasic,
    Capability::LiteralSampler,
    Capability::Sampled1D,
    Capability::SampledBuffer,
    Capability::Image1D,
    Capability::ImageBuffer,
    Capability::ImageReadWrite,
    Capability::ImageMipmap,
];

/// Extensions whose instructions and decorations we implement
/// (`CL_DEVICE_SPIRV_EXTENSIONS_KHR`).
pub const IMPLEMENTED_EXTENSIONS: &[&str] = &[
    "SPV_INTEL_subgroups",
    "SPV_INTEL_2d_block_io",
    "SPV_KHR_expect_assume",
    "SPV_EXT_shader_atomic_float_add",
    "SPV_EXT_shader_atomic_float_min_max",
    "SPV_KHR_no_integer_wrap_decoration",
    "SPV_KHR_non_semantic_info",
    "SPV_KHR_linkonce_odr",
    "SPV_KHR_bit_instructions",
    "SPV_KHR_integer_dot_product",
    "SPV_KHR_subgroup_rotate",
];

/// Extensions a module may declare without us implementing them: the instructions
/// they add are refused one by one with a message naming them.
const TOLERATED_EXTENSIONS: &[&str] = &["SPV_KHR_uniform_group_instructions"];

/// Extended instruction sets we implement (`CL_DEVICE_SPIRV_EXTENDED_INSTRUCTION_SETS_KHR`);
/// other `NonSemantic.*` sets are accepted too and ignored, as the SPIR-V spec allows.
/// `NonSemantic.Codeplay.GroupAsyncCopies` has semantics despite its prefix (the
/// cl_khr_extended_async_copies copies), so it is decoded as a real set.
pub const IMPLEMENTED_EXTENDED_INSTRUCTION_SETS: &[&str] = &["OpenCL.std", GROUP_ASYNC_COPIES_SET];

/// The extended instruction set of cl_khr_extended_async_copies.
pub const GROUP_ASYNC_COPIES_SET: &str = "NonSemantic.Codeplay.GroupAsyncCopies";

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

/// The extension that must be declared for capability `cap` (of those we accept).
fn extension_of(cap: Capability) -> Option<&'static str> {
    use Capability as C;
    Some(match cap {
        C::SubgroupShuffleINTEL | C::SubgroupBufferBlockIOINTEL => "SPV_INTEL_subgroups",
        C::ExpectAssumeKHR => "SPV_KHR_expect_assume",
        C::BitInstructions => "SPV_KHR_bit_instructions",
        C::AtomicFloat32AddEXT | C::AtomicFloat64AddEXT => "SPV_EXT_shader_atomic_float_add",
        C::AtomicFloat32MinMaxEXT | C::AtomicFloat64MinMaxEXT => {
            "SPV_EXT_shader_atomic_float_min_max"
        }
        _ => return None,
    })
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
    let (dm, lifted) = load_with_lifted(words, true)?;
    let header = dm
        .header
        .as_ref()
        .ok_or_else(|| malformed("SPIR-V module without a header"))?;
    let mut d = Decoder {
        m: Module {
            bound: header.bound,
            version: words[1],
            ..Default::default()
        },
        ext_sets: HashMap::new(),
        lifted_spec_ops: lifted,
        header_bound: header.bound,
        defined: HashSet::new(),
        group_decorations: HashMap::new(),
        forward_pointers: HashSet::new(),
        in_group: false,
    };
    d.module(&dm)?;
    super::validate::module(&d.m)?;
    Ok(d.m)
}

/// `rspirv`'s loader refuses `OpExecutionModeId` (SPIR-V 1.2) outside a function; it
/// has `OpExecutionMode`'s layout, and the `*Id` modes' operands decode as ids
/// either way, so the opcode is rewritten.
fn execution_mode_id_as_execution_mode(words: Cow<'_, [u32]>) -> Cow<'_, [u32]> {
    const OP_EXECUTION_MODE: u32 = 16;
    const OP_EXECUTION_MODE_ID: u32 = 331;
    let mut out: Option<Vec<u32>> = None;
    let mut i = 5;
    while i < words.len() {
        let count = ((words[i] >> 16) as usize).max(1);
        if words[i] & 0xffff == OP_EXECUTION_MODE_ID {
            let o = out.get_or_insert_with(|| words.to_vec());
            o[i] = (o[i] & 0xffff_0000) | OP_EXECUTION_MODE;
        }
        i += count;
    }
    out.map_or(words, Cow::Owned)
}

/// Repairs defects of clang-22's SPIR-V backend that would otherwise make valid
/// OpenCL C unbuildable: an `OpConstantNull` of an event type with one stray extra
/// operand (emitted for a null `event_t` passed to `async_work_group_strided_copy`)
/// loses the extra word. Nothing else is repaired.
fn tolerate_known_clang_defects(words: &[u32]) -> Cow<'_, [u32]> {
    const OP_TYPE_EVENT: u32 = 34;
    // A zero-initialised `__local reserve_id_t` gets the same stray operand.
    const OP_TYPE_RESERVE_ID: u32 = 36;
    const OP_CONSTANT_NULL: u32 = 46;
    let mut events = HashSet::new();
    let mut at = Vec::new();
    let mut i = 5;
    while i < words.len() {
        let len = (words[i] >> 16) as usize;
        if len == 0 || i + len > words.len() {
            return Cow::Borrowed(words);
        }
        match words[i] & 0xffff {
            OP_TYPE_EVENT | OP_TYPE_RESERVE_ID if len == 2 => {
                events.insert(words[i + 1]);
            }
            OP_CONSTANT_NULL if len == 4 && events.contains(&words[i + 1]) => at.push(i),
            _ => {}
        }
        i += len;
    }
    if at.is_empty() {
        return Cow::Borrowed(words);
    }
    let mut out = Vec::with_capacity(words.len());
    let mut from = 0;
    for i in at {
        out.extend_from_slice(&words[from..i]);
        out.extend_from_slice(&[(3 << 16) | OP_CONSTANT_NULL, words[i + 1], words[i + 2]]);
        from = i + 4;
    }
    out.extend_from_slice(&words[from..]);
    Cow::Owned(out)
}

/// Checks the header and every instruction's word count, repairs what clang and
/// rspirv get wrong, then loads `words` with rspirv: the one way raw words are read,
/// so garbage never reaches rspirv's panics. Returns the variadic
/// `OpSpecConstantOp`s separately (see `spec_op::lift_variadic_spec_ops`).
fn load_with_lifted(
    words: &[u32],
    function_order: bool,
) -> Result<(dr::Module, HashMap<Id, dr::Instruction>), CompileError> {
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
    layout::check(words, function_order)?;
    let fixed = tolerate_known_clang_defects(words);
    let fixed = execution_mode_id_as_execution_mode(fixed);
    let (fixed, lifted) = spec_op::lift_variadic_spec_ops(fixed);
    let dm = rspirv::dr::load_words(fixed.as_ref())
        .map_err(|e| malformed(format!("malformed SPIR-V module: {e}")))?;
    Ok((dm, lifted))
}

/// [`load_with_lifted`] for the linker (`spirv::link`): the variadic
/// `OpSpecConstantOp`s are put back in place of their placeholders, so the module
/// re-assembles with every operand.
pub(crate) fn load(words: &[u32]) -> Result<dr::Module, CompileError> {
    // Linker inputs may declare imports after definitions; the linked module is
    // checked in full when it is decoded.
    let (mut dm, lifted) = load_with_lifted(words, false)?;
    if !lifted.is_empty() {
        for inst in &mut dm.types_global_values {
            let original = inst.result_id.and_then(|id| lifted.get(&id));
            if let (SOp::Undef, Some(original)) = (inst.class.opcode, original) {
                *inst = original.clone();
            }
        }
    }
    Ok(dm)
}

struct Decoder {
    m: Module,
    /// `OpSpecConstantOp`s with variable operand lists, decoded by us (rspirv reads
    /// only one operand per list there), by result id.
    lifted_spec_ops: HashMap<Id, dr::Instruction>,
    /// OpExtInstImport ids -> set name.
    ext_sets: HashMap<Id, String>,
    /// The header's id bound: every result id must be below it.
    header_bound: u32,
    /// Result ids seen so far (each may be defined once).
    defined: HashSet<Id>,
    /// `OpDecorate`s whose target is an `OpDecorationGroup`, by group, applied to the
    /// targets of `OpGroupDecorate`.
    group_decorations: HashMap<Id, Vec<dr::Instruction>>,
    /// Pointer types declared ahead by `OpTypeForwardPointer`.
    forward_pointers: HashSet<Id>,
    /// While applying a decoration group's decorations.
    in_group: bool,
}

impl Decoder {
    /// Every id an instruction refers to (names, decorations, entry-point
    /// interfaces, merge targets, operands) is defined somewhere in the module.
    /// `OpExtInst` arguments are left to the validator (some are literals).
    fn all_references_defined(&self, dm: &dr::Module) -> Result<(), CompileError> {
        for inst in dm.all_inst_iter() {
            let operands: &[Operand] = if inst.class.opcode == SOp::ExtInst {
                &inst.operands[..inst.operands.len().min(1)]
            } else {
                &inst.operands
            };
            let ids = inst
                .result_type
                .into_iter()
                .chain(operands.iter().filter_map(|o| match o {
                    Operand::IdRef(id) | Operand::IdScope(id) | Operand::IdMemorySemantics(id) => {
                        Some(*id)
                    }
                    _ => None,
                }));
            for id in ids {
                if !self.defined.contains(&id) {
                    return Err(malformed(format!(
                        "Op{:?} refers to %{id}, which is not defined",
                        inst.class.opcode
                    )));
                }
            }
        }
        Ok(())
    }

    /// Records the definition of result id `id`: below the bound and not defined
    /// before (the module's maps are keyed by id, so a second definition would
    /// silently replace the first).
    fn def(&mut self, id: Id) -> Result<(), CompileError> {
        if id == 0 || id >= self.header_bound {
            return Err(malformed(format!(
                "result id %{id} is outside the module's id bound {}",
                self.header_bound
            )));
        }
        if !self.defined.insert(id) {
            return Err(malformed(format!("result id %{id} is defined twice")));
        }
        Ok(())
    }
}

impl Decoder {
    fn module(&mut self, dm: &dr::Module) -> Result<(), CompileError> {
        for c in &dm.capabilities {
            match c.operands.first() {
                Some(Operand::Capability(cap)) => {
                    if !IMPLEMENTED_CAPABILITIES.contains(cap)
                        && !TOLERATED_CAPABILITIES.contains(cap)
                    {
                        return Err(unsupported(format!(
                            "unsupported SPIR-V capability {cap:?}"
                        )));
                    }
                    self.m.capabilities.push(*cap);
                }
                other => return Err(malformed(format!("OpCapability with operand {other:?}"))),
            }
        }
        let mut extensions = Vec::new();
        for e in &dm.extensions {
            if let Some(Operand::LiteralString(name)) = e.operands.first() {
                if !IMPLEMENTED_EXTENSIONS.contains(&name.as_str())
                    && !TOLERATED_EXTENSIONS.contains(&name.as_str())
                {
                    return Err(unsupported(format!("unsupported SPIR-V extension {name}")));
                }
                extensions.push(name.as_str());
            }
        }
        for cap in &self.m.capabilities {
            if let Some(ext) = extension_of(*cap) {
                if !extensions.contains(&ext) {
                    return Err(malformed(format!(
                        "OpCapability {cap:?} needs OpExtension \"{ext}\""
                    )));
                }
            }
        }
        for e in &dm.ext_inst_imports {
            let id = result(e)?;
            self.def(id)?;
            let Some(Operand::LiteralString(name)) = e.operands.first() else {
                return Err(malformed("OpExtInstImport without a name"));
            };
            if !IMPLEMENTED_EXTENDED_INSTRUCTION_SETS.contains(&name.as_str())
                && !name.starts_with("NonSemantic.")
            {
                return Err(unsupported(format!(
                    "unsupported extended instruction set {name}"
                )));
            }
            self.ext_sets.insert(id, name.clone());
        }
        let Some(mm) = &dm.memory_model else {
            return Err(malformed("the module has no OpMemoryModel"));
        };
        match (mm.operands.first(), mm.operands.get(1)) {
            (
                Some(Operand::AddressingModel(spirv::AddressingModel::Physical64)),
                Some(Operand::MemoryModel(spirv::MemoryModel::OpenCL)),
            ) => {}
            (Some(Operand::AddressingModel(am)), Some(Operand::MemoryModel(mm))) => {
                return Err(unsupported(format!(
                    "unsupported memory model {am:?} {mm:?} (a 64-bit OpenCL device needs Physical64 OpenCL)"
                )))
            }
            _ => return Err(malformed("OpMemoryModel with unexpected operands")),
        }
        for s in &dm.debug_string_source {
            if s.class.opcode == SOp::String {
                self.def(result(s)?)?;
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
        // Decorations of a group come before the group's OpDecorationGroup.
        for a in &dm.annotations {
            if a.class.opcode == SOp::DecorationGroup {
                let id = result(a)?;
                self.def(id)?;
                self.group_decorations.insert(id, Vec::new());
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
            let mut interface = Vec::new();
            for i in 3..e.operands.len() {
                let v = id_at(e, i)?;
                if !self.m.globals.contains_key(&v) {
                    return Err(malformed(format!(
                        "entry point {name}: interface %{v} is not a module-scope variable"
                    )));
                }
                interface.push(v);
            }
            self.m.entry_points.push(EntryPoint {
                function: *f,
                name: name.clone(),
                interface,
                modes: ExecModes::default(),
            });
        }
        for em in &dm.execution_modes {
            self.execution_mode(em)?;
        }
        self.all_references_defined(dm)?;
        if let Some(id) = self.lifted_spec_ops.keys().min() {
            return Err(malformed(format!(
                "OpSpecConstantOp %{id} is not at module scope"
            )));
        }
        Ok(())
    }

    fn execution_mode(&mut self, em: &dr::Instruction) -> Result<(), CompileError> {
        let f = id_at(em, 0)?;
        let Some(Operand::ExecutionMode(mode)) = em.operands.get(1) else {
            return Err(malformed("OpExecutionMode without a mode"));
        };
        // Literal sizes, or (OpExecutionModeId: LocalSizeId ...) ids of integer
        // constants, specialization constants included.
        let mut lits: Vec<u32> = Vec::new();
        for o in &em.operands[2..] {
            lits.push(match o {
                Operand::LiteralBit32(v) => *v,
                Operand::IdRef(id) => match self.m.constants.get(id).map(|c| &c.value) {
                    Some(ConstValue::Scalar(v)) => u32::try_from(*v).map_err(|_| {
                        malformed(format!("execution mode {mode:?}: size %{id} is too large"))
                    })?,
                    _ => {
                        return Err(malformed(format!(
                            "execution mode {mode:?}: %{id} is not an integer constant"
                        )))
                    }
                },
                _ => continue,
            });
        }
        let three = |l: &[u32]| -> Result<[u32; 3], CompileError> {
            if l.len() < 3 {
                return Err(malformed(format!("execution mode {mode:?} needs 3 sizes")));
            }
            Ok([l[0], l[1], l[2]])
        };
        if !self.m.entry_points.iter().any(|e| e.function == f) {
            return Err(malformed(format!(
                "OpExecutionMode {mode:?} names %{f}, which is not an entry point"
            )));
        }
        for ep in self.m.entry_points.iter_mut().filter(|e| e.function == f) {
            use spirv::ExecutionMode as E;
            match mode {
                E::LocalSize | E::LocalSizeId => ep.modes.local_size = Some(three(&lits)?),
                E::LocalSizeHint | E::LocalSizeHintId => {
                    ep.modes.local_size_hint = Some(three(&lits)?)
                }
                E::SubgroupSize => ep.modes.sub_group_size = lits.first().copied(),
                E::VecTypeHint => ep.modes.vec_type_hint = lits.first().copied(),
                E::ContractionOff => ep.modes.contraction_off = true,
                E::SubgroupsPerWorkgroup | E::SubgroupsPerWorkgroupId => {
                    ep.modes.sub_groups_per_work_group = Some(*lits.first().ok_or_else(|| {
                        malformed(format!("execution mode {mode:?} needs a count"))
                    })?)
                }
                // Kernel modes that change nothing for us.
                E::Initializer | E::Finalizer => {}
                other => {
                    return Err(malformed(format!(
                        "execution mode {other:?} is not one of the OpenCL environment's"
                    )))
                }
            }
        }
        Ok(())
    }
}
