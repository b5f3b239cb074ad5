//! cranecl's kernel compiler: SPIR-V in, native code for a whole work-group out.
//!
//! Pipeline: [`spirv`] decodes and validates the words into our own typed IR,
//! [`analysis`] computes what lowering needs (CFG, uniformity, barrier regions),
//! [`lower`] translates each kernel to Cranelift IR in the lane model (one call runs a
//! sub-group, one work-item per SIMD lane; a work-group is a loop over sub-groups,
//! split into regions at barriers), [`builtins`] supplies the OpenCL built-ins,
//! [`printf`] parses printf formats into the call sites the runtime formats from.
//! The crate knows nothing of `cl_*` handles; its only contract with the runtime is
//! [`abi`] plus the metadata in [`KernelInfo`] and [`CompiledKernel::printf`].

pub mod abi;
pub mod analysis;
pub mod builtins;
mod codegen;
mod lower;
mod meta;
pub mod printf;
mod program_data;
pub mod spirv;
mod support;

use std::fmt;
use std::sync::Arc;

pub use abi::{KernelEntryFn, NdRangeInfo, PrintfBuffer, WorkGroupState};
pub use program_data::MAX_GLOBAL_VARIABLE_SIZE;
pub use spirv::link::LinkOutput;

/// Sub-group widths the code generator supports; reported as
/// `CL_DEVICE_SUB_GROUP_SIZES_INTEL`.
pub const SUPPORTED_SUB_GROUP_WIDTHS: [u32; 4] = [4, 8, 16, 32];

/// Width used when neither the kernel (`SubgroupSize` / `intel_reqd_sub_group_size`) nor
/// the build options ask for one.
pub const DEFAULT_SUB_GROUP_WIDTH: u32 = 8;

/// Options that change generated code, parsed by the runtime from the build options.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// `-cl-fast-relaxed-math` / `-cl-unsafe-math-optimizations`: allow fused and
    /// approximate math.
    pub fast_relaxed_math: bool,
    /// `-cl-mad-enable`: `mad` may be fused.
    pub mad_enable: bool,
    /// `-cl-denorms-are-zero`.
    pub denorms_are_zero: bool,
    /// `-cl-opt-disable`: trade code quality for compile time.
    pub opt_disable: bool,
    /// Overrides [`DEFAULT_SUB_GROUP_WIDTH`] for kernels without a required size
    /// (`CRANECL_SUBGROUP_WIDTH`, tests).
    pub default_sub_group_width: Option<u32>,
}

/// A build failure: the message goes verbatim into the program's build log, so it
/// names the kernel, the instruction and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError {
    pub kind: CompileErrorKind,
    pub message: String,
}

/// What went wrong, so the runtime can pick the OpenCL error code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompileErrorKind {
    /// The words are not a well-formed SPIR-V module (`CL_INVALID_VALUE` for
    /// clCreateProgramWithIL, `CL_BUILD_PROGRAM_FAILURE` at build).
    Malformed,
    /// A capability, extension, instruction or built-in we do not implement.
    Unsupported,
    /// Cranelift rejected the generated code (a bug of ours, reported not crashed).
    Codegen,
    /// Linking failed: a symbol defined twice, or declared and defined with different
    /// types (`CL_LINK_PROGRAM_FAILURE`).
    Link,
}

impl CompileError {
    /// A `Malformed` error.
    pub fn malformed(message: impl Into<String>) -> Self {
        CompileError {
            kind: CompileErrorKind::Malformed,
            message: message.into(),
        }
    }

    /// An `Unsupported` error.
    pub fn unsupported(message: impl Into<String>) -> Self {
        CompileError {
            kind: CompileErrorKind::Unsupported,
            message: message.into(),
        }
    }

    /// A `Codegen` error (a bug of ours).
    pub fn codegen(message: impl Into<String>) -> Self {
        CompileError {
            kind: CompileErrorKind::Codegen,
            message: message.into(),
        }
    }
}

impl fmt::Display for CompileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CompileError {}

/// How an argument is passed, which decides what `clSetKernelArg` accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// `__global T*`: a buffer (or NULL); 8 bytes in the argument block.
    GlobalPtr,
    /// `__constant T*`: a buffer (or NULL); 8 bytes in the argument block.
    ConstantPtr,
    /// `__local T*`: `clSetKernelArg(size, NULL)`; the runtime places it in local memory
    /// and writes the pointer (8 bytes) into the argument block.
    LocalPtr,
    /// A scalar, vector or struct passed by value; `size` bytes copied verbatim.
    Value,
    /// `sampler_t` (not yet supported by the code generator).
    Sampler,
    /// An image (not yet supported by the code generator).
    Image,
}

/// `CL_KERNEL_ARG_ADDRESS_QUALIFIER` values (OpenCL numbering).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddressQualifier {
    Global,
    Local,
    Constant,
    Private,
}

/// One kernel parameter.
#[derive(Clone, Debug)]
pub struct KernelArg {
    /// Parameter name from `OpName` (empty when the module has none).
    pub name: String,
    pub kind: ArgKind,
    pub address_qualifier: AddressQualifier,
    /// Bytes `clSetKernelArg` must be given: 8 for pointers, the value size otherwise.
    /// For `LocalPtr` this is 8 too; the local allocation size comes from the app.
    pub size: usize,
    /// Offset of this argument in the argument block.
    pub offset: usize,
}

/// Everything the runtime needs to know about one kernel.
#[derive(Clone, Debug)]
pub struct KernelInfo {
    pub name: String,
    pub args: Vec<KernelArg>,
    /// Size of the argument block (all arguments, each at its `offset`).
    pub arg_block_size: usize,
    /// Sub-group width W this kernel was compiled for.
    pub sub_group_width: u32,
    /// `reqd_work_group_size`.
    pub reqd_work_group_size: Option<[u32; 3]>,
    /// `work_group_size_hint`.
    pub work_group_size_hint: Option<[u32; 3]>,
    /// `CL_KERNEL_ATTRIBUTES` text, e.g. `reqd_work_group_size(16,16,1)`.
    pub attributes: String,
    /// Bytes of kernel-scope `__local` variables (`CL_KERNEL_LOCAL_MEM_SIZE` adds the
    /// `__local` argument sizes).
    pub static_local_bytes: usize,
    /// Scratch bytes needed per sub-group (see [`abi::WorkGroupState::scratch`]).
    pub scratch_bytes_per_sub_group: usize,
    /// Private memory per work-item (`CL_KERNEL_PRIVATE_MEM_SIZE`).
    pub private_bytes_per_item: usize,
    /// Whether the kernel has barriers or work-group collectives (region-split code).
    pub has_barriers: bool,
}

impl KernelInfo {
    /// Number of sub-groups of a work-group of size `local` (`get_num_sub_groups`):
    /// sub-group `s` holds the work-items with linear local ids `s*W .. s*W+W-1`
    /// (x fastest), so this is `ceil(lx*ly*lz / W)`.
    pub fn num_sub_groups(&self, local: [usize; 3]) -> usize {
        let w = self.sub_group_width as usize;
        (local[0] * local[1] * local[2]).div_ceil(w)
    }

    /// Scratch bytes for a work-group of `local_size` work-items.
    pub fn scratch_bytes(&self, local_size: usize) -> usize {
        let w = self.sub_group_width as usize;
        local_size.div_ceil(w) * self.scratch_bytes_per_sub_group
    }
}

/// One compiled kernel: its metadata and its native entry.
pub struct CompiledKernel {
    pub info: KernelInfo,
    /// The kernel's printf call sites (empty when it calls no printf).
    printf: printf::PrintfInfo,
    entry: KernelEntryFn,
    /// Keeps the executable memory alive as long as any kernel of the program lives.
    _code: Arc<dyn Send + Sync>,
}

impl CompiledKernel {
    /// Wraps a native entry; `code` owns the memory `entry` points into.
    pub fn new(info: KernelInfo, entry: KernelEntryFn, code: Arc<dyn Send + Sync>) -> Self {
        CompiledKernel {
            info,
            printf: printf::PrintfInfo::default(),
            entry,
            _code: code,
        }
    }

    /// Attaches the printf call sites the generated code refers to.
    pub fn with_printf(mut self, printf: printf::PrintfInfo) -> Self {
        self.printf = printf;
        self
    }

    /// How to turn this kernel's printf records into text; a launch needs a
    /// [`PrintfBuffer`] unless this is empty.
    pub fn printf(&self) -> &printf::PrintfInfo {
        &self.printf
    }

    /// Runs one work-group.
    ///
    /// # Safety
    /// `args` must be a block of `info.arg_block_size` bytes laid out as `info.args`
    /// says, every buffer pointer in it valid for what the kernel accesses, and
    /// `wg` filled as [`abi::WorkGroupState`] documents.
    pub unsafe fn run_work_group(&self, args: *const u8, wg: &WorkGroupState) {
        // SAFETY: the caller upholds the ABI contract documented above.
        unsafe { (self.entry)(args, wg) }
    }
}

/// A compiled SPIR-V module: all of its kernels.
pub struct CompiledProgram {
    pub kernels: Vec<Arc<CompiledKernel>>,
    /// Bytes of program-scope `global` variables, shared by the kernels and kept
    /// between launches (`CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE`).
    pub global_variable_bytes: usize,
}

impl CompiledProgram {
    /// The kernel named `name`, if the module has one.
    pub fn kernel(&self, name: &str) -> Option<&Arc<CompiledKernel>> {
        self.kernels.iter().find(|k| k.info.name == name)
    }
}

/// Checks that `words` are a SPIR-V module we can decode (clCreateProgramWithIL);
/// cheap, no code generation.
pub fn validate(words: &[u32]) -> Result<(), CompileError> {
    guarded(|| {
        let m = spirv::decode(words)?;
        for ep in &m.entry_points {
            let f = m.functions.get(&ep.function).ok_or_else(|| {
                CompileError::malformed(format!("kernel {} has no function", ep.name))
            })?;
            let flat = analysis::flatten::flatten(&m, f)?;
            analysis::cfg::Cfg::new(&flat.blocks)?;
        }
        Ok(())
    })
}

/// Decodes, validates and compiles every kernel of `words` to native code.
pub fn compile(words: &[u32], options: &CompileOptions) -> Result<CompiledProgram, CompileError> {
    guarded(|| compile_module(words, options))
}

/// `CRANECL_JIT_TIMES=1`: the time of each compilation phase of a kernel and the
/// sizes of its flat SPIR-V and of its Cranelift IR, on stderr (for finding what
/// makes a big kernel slow to build).
struct PhaseTimes {
    kernel: Option<String>,
    last: std::time::Instant,
    laps: Vec<(&'static str, f64)>,
}

impl PhaseTimes {
    fn new(kernel: &str) -> PhaseTimes {
        static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let on = *ON.get_or_init(|| {
            std::env::var_os("CRANECL_JIT_TIMES").is_some_and(|v| !v.is_empty() && v != "0")
        });
        PhaseTimes {
            kernel: on.then(|| kernel.to_string()),
            last: std::time::Instant::now(),
            laps: Vec::new(),
        }
    }

    fn lap(&mut self, phase: &'static str) {
        if self.kernel.is_some() {
            let now = std::time::Instant::now();
            self.laps.push((phase, (now - self.last).as_secs_f64()));
            self.last = now;
        }
    }

    fn report(&self, flat: &analysis::flatten::FlatFunction, clif: (usize, usize, usize)) {
        let Some(kernel) = &self.kernel else { return };
        let insts: usize = flat.blocks.iter().map(|b| b.insts.len()).sum();
        let laps: Vec<String> = self
            .laps
            .iter()
            .map(|(p, t)| format!("{p} {:.3}s", t))
            .collect();
        eprintln!(
            "cranecl: jit {kernel}: {} blocks, {insts} instructions -> clif {} blocks, {} insts, {} values; {}",
            flat.blocks.len(),
            clif.0,
            clif.1,
            clif.2,
            laps.join(", ")
        );
    }
}

/// Links SPIR-V modules into one (clLinkProgram): imports resolved to exports across
/// the inputs, a library keeping its exports (see [`spirv::link`]).
pub fn link(modules: &[&[u32]], output: LinkOutput) -> Result<Vec<u32>, CompileError> {
    guarded(|| spirv::link::link(modules, output))
}

/// Runs `f`, turning a panic (a bug of ours) into a `Codegen` error.
fn guarded<T>(f: impl FnOnce() -> Result<T, CompileError>) -> Result<T, CompileError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            Err(CompileError::codegen(format!(
                "internal compiler error: {msg}"
            )))
        }
    }
}

/// The sub-group width for a kernel.
fn sub_group_width(ep: &spirv::EntryPoint, options: &CompileOptions) -> Result<u32, CompileError> {
    let w = ep
        .modes
        .sub_group_size
        .or(options.default_sub_group_width)
        .unwrap_or(DEFAULT_SUB_GROUP_WIDTH);
    if !SUPPORTED_SUB_GROUP_WIDTHS.contains(&w) {
        return Err(CompileError::unsupported(format!(
            "kernel {}: sub-group size {w} is not supported (supported: {:?})",
            ep.name, SUPPORTED_SUB_GROUP_WIDTHS
        )));
    }
    Ok(w)
}

fn compile_module(
    words: &[u32],
    options: &CompileOptions,
) -> Result<CompiledProgram, CompileError> {
    let m = spirv::decode(words)?;
    let mut jit = codegen::Jit::new(options.opt_disable)?;
    // Constant and program-scope data, owned by the compiled program.
    let data = program_data::lay_out(&m)?;
    let data_addrs = data.addrs.clone();
    let global_variable_bytes = data.global_variable_bytes;
    let mut infos = Vec::new();
    let mut printfs = Vec::new();
    let mut ids = Vec::new();
    for ep in &m.entry_points {
        let f = m.functions.get(&ep.function).ok_or_else(|| {
            CompileError::malformed(format!("kernel {} has no function", ep.name))
        })?;
        let mut times = PhaseTimes::new(&ep.name);
        let flat = analysis::flatten::flatten(&m, f)?;
        times.lap("flatten");
        let cfg = analysis::cfg::Cfg::new(&flat.blocks).map_err(|mut e| {
            e.message = format!("{} in kernel {}", e.message, ep.name);
            e
        })?;
        times.lap("cfg");
        let uni = analysis::uniformity::analyze(&m, &flat, &cfg);
        times.lap("uniformity");
        let w = sub_group_width(ep, options)?;
        let (args, arg_block_size) = meta::kernel_args(&m, ep)?;
        let arg_offsets: Vec<u64> = args.iter().map(|a| a.offset as u64).collect();
        let (locals, local_bytes) = meta::local_layout(&m, &flat)?;
        let lower_with = |jit: &mut codegen::Jit, allow_dup: bool| {
            lower::lower_kernel(
                &m,
                &flat,
                &cfg,
                &uni,
                w,
                ep.modes.contraction_off,
                options,
                &mut jit.module,
                &mut jit.fctx,
                &locals,
                local_bytes,
                &data_addrs,
                &arg_offsets,
                allow_dup,
                ep.modes.local_size,
            )
        };
        let lowered = match lower_with(&mut jit, !options.opt_disable) {
            Err(e) if e.message == lower::DUP_CONFLICT => lower_with(&mut jit, false)?,
            r => r?,
        };
        times.lap("lower");
        let collectives = lowered.collective_slots as u64;
        let clif_size = (
            lowered.func.layout.blocks().count(),
            lowered.func.dfg.num_insts(),
            lowered.func.dfg.num_values(),
        );
        let id = jit.define(&ep.name, lowered.func)?;
        times.lap("cranelift");
        times.report(&flat, clif_size);
        ids.push(id);
        printfs.push(lowered.printf);
        infos.push(KernelInfo {
            name: ep.name.clone(),
            args,
            arg_block_size,
            sub_group_width: w,
            reqd_work_group_size: ep.modes.local_size,
            work_group_size_hint: ep.modes.local_size_hint,
            attributes: meta::attributes(ep),
            static_local_bytes: (local_bytes + 16 * collectives) as usize,
            scratch_bytes_per_sub_group: lowered.scratch_per_sg as usize,
            private_bytes_per_item: lowered.private_bytes as usize,
            has_barriers: lowered.has_barriers,
        });
    }
    let (code, ptrs) = jit.finish(&ids, data)?;
    let kernels = infos
        .into_iter()
        .zip(ptrs)
        .zip(printfs)
        .map(|((info, p), printf)| {
            // SAFETY: `p` is the finalised entry of a function generated with the
            // KernelEntryFn signature (two pointer arguments, no result, host calling
            // convention); `code` keeps its memory alive as long as the kernel lives.
            let entry = unsafe { std::mem::transmute::<*const u8, KernelEntryFn>(p) };
            Arc::new(
                CompiledKernel::new(info, entry, code.clone() as Arc<dyn Send + Sync>)
                    .with_printf(printf),
            )
        })
        .collect();
    Ok(CompiledProgram {
        kernels,
        global_variable_bytes,
    })
}
