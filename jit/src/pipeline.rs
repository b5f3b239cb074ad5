//! The compile pipeline: decode and validate, analyse, lower each kernel and
//! generate its code; cheap validation for clCreateProgramWithIL; linking.

use std::sync::Arc;

use crate::{analysis, codegen, lower, meta, program_data, spirv, variants};
use crate::{
    CompileError, CompileOptions, CompiledKernel, CompiledProgram, KernelEntryFn, KernelInfo,
    LinkOutput,
};

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

    fn report(
        &self,
        flat: &analysis::flatten::FlatFunction,
        clif: (usize, usize, usize),
        est: String,
    ) {
        let Some(kernel) = &self.kernel else { return };
        let insts: usize = flat.blocks.iter().map(|b| b.insts.len()).sum();
        let laps: Vec<String> = self
            .laps
            .iter()
            .map(|(p, t)| format!("{p} {:.3}s", t))
            .collect();
        eprintln!(
            "cranecl: jit {kernel}: {} blocks, {insts} instructions -> clif {} blocks, {} insts, {} values; {}; {est}",
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

fn compile_module(
    words: &[u32],
    options: &CompileOptions,
) -> Result<CompiledProgram, CompileError> {
    let mut m = spirv::decode(words)?;
    let mut jit = codegen::Jit::new(options.opt_disable)?;
    // Constant and program-scope data, owned by the compiled program.
    let mut data = program_data::lay_out(&m)?;
    let entries = entries_with_invokes(&m, &mut data)?;
    let data_addrs = data.addrs.clone();
    let global_variable_bytes = data.global_variable_bytes;
    let mut infos = Vec::new();
    let mut printfs = Vec::new();
    let mut ids = Vec::new();
    for ep in &entries {
        let f = m.functions.get(&ep.function).ok_or_else(|| {
            CompileError::malformed(format!("kernel {} has no function", ep.name))
        })?;
        let mut times = PhaseTimes::new(&ep.name);
        let mut flat = analysis::flatten::flatten(&m, f)?;
        times.lap("flatten");
        let cfg_of = |flat: &analysis::flatten::FlatFunction| {
            analysis::cfg::Cfg::new(&flat.blocks).map_err(|mut e| {
                e.message = format!("{} in kernel {}", e.message, ep.name);
                e
            })
        };
        let mut cfg = cfg_of(&flat)?;
        times.lap("cfg");
        // Private variables used only at constant offsets become SSA values (the CFG
        // stays: only instructions change).
        if !options.opt_disable {
            analysis::promote::promote(&mut m, &mut flat, &cfg);
            analysis::simplify::simplify(&m, &mut flat);
        }
        let mut uni = analysis::uniformity::analyze(&m, &flat, &cfg);
        if analysis::ifconvert::if_convert(&mut flat, |c| uni.is_varying(c)) > 0 {
            cfg = cfg_of(&flat)?;
            uni = analysis::uniformity::analyze(&m, &flat, &cfg);
        }
        times.lap("uniformity");
        let feats = crate::tiers::features(&m, &flat, &uni);
        let plan = crate::tiers::plan(
            &feats,
            crate::width::sub_group_width(&m, ep, &flat, options, &cfg, &uni, &feats)?,
            if ep.modes.sub_group_size.is_some() {
                crate::tiers::WidthChoice::Required
            } else if options.default_sub_group_width.is_some() {
                crate::tiers::WidthChoice::Default
            } else {
                crate::tiers::WidthChoice::Free
            },
            |w| lower::layouts_possible(ep.modes.local_size, w).0,
        )
        .map_err(|mut e| {
            e.message = format!("{} (kernel {})", e.message, ep.name);
            e
        })?;
        let w = plan.width;
        // The scalar loads and stores of one struct element become one vector access
        // where the lanes' elements are adjacent (which needs the width).
        if !options.opt_disable && plan.shape != crate::tiers::Shape::Huge {
            let cx = analysis::combine::Context {
                cfg: &cfg,
                uni: &uni,
                reqd_local: ep.modes.local_size,
                w,
            };
            if analysis::combine::combine(&mut m, &mut flat, &cx) > 0 {
                uni = analysis::uniformity::analyze(&m, &flat, &cfg);
            }
        }
        let (args, arg_block_size) = meta::kernel_args(&m, ep)?;
        let arg_offsets: Vec<u64> = args.iter().map(|a| a.offset as u64).collect();
        let (locals, local_bytes) = meta::local_layout(&m, &flat)?;
        let input = variants::BodyInput {
            flat: &flat,
            cfg: &cfg,
            w,
            contraction_off: ep.modes.contraction_off,
            options,
            locals: &locals,
            local_bytes,
            data_addrs: &data_addrs,
            arg_offsets: &arg_offsets,
            reqd_local: ep.modes.local_size,
            shape: plan.shape,
        };
        // Integer parameters that multiply a lane-affine value get a second body
        // compiled for the value 1 (`analysis::unit_params`).
        let unit_params = if options.opt_disable || plan.shape == crate::tiers::Shape::Huge {
            Vec::new()
        } else {
            analysis::unit_params::find(&m, &flat, &cfg, &uni, ep.modes.local_size, w)
        };
        let variants::Body {
            id,
            frame: frame_bytes,
            lowered,
            clif_size,
        } = variants::compile_kernel(&mut jit, &input, &m, &uni, &ep.name, &unit_params)?;
        times.lap("lower+cranelift");
        let collectives = lowered.collective_slots as u64;
        times.report(
            &flat,
            clif_size,
            format!(
                "{:?} at width {w} (estimated {} per layout; {feats:?}); frame {} kB",
                plan.shape,
                crate::tiers::estimate(&feats, w),
                frame_bytes >> 10
            ),
        );
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
            static_local_bytes: (local_bytes + crate::lower::COLLECTIVE_SLOT_BYTES * collectives)
                as usize,
            scratch_bytes_per_sub_group: lowered.scratch_per_sg as usize,
            private_bytes_per_item: lowered.private_bytes as usize,
            has_barriers: lowered.has_barriers,
            frame_bytes,
            required_num_sub_groups: ep.modes.sub_groups_per_work_group,
            device_enqueue: flat_uses_device_enqueue(&m, &flat),
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

/// The kernels to compile: the entry points, then a hidden kernel (named
/// [`crate::device_enqueue::HIDDEN_KERNEL_PREFIX`] and its id) for each
/// `OpEnqueueKernel`/`OpGetKernel*` invoke function that is not an entry point. Each
/// invoke function's kernel name goes into `data` (its address under the function's
/// id), for the runtime to find the kernel by.
fn entries_with_invokes(
    m: &spirv::Module,
    data: &mut program_data::ProgramData,
) -> Result<Vec<spirv::EntryPoint>, CompileError> {
    let mut entries = m.entry_points.clone();
    let mut invokes = std::collections::BTreeSet::new();
    for f in m.functions.values() {
        for inst in f.blocks.iter().flat_map(|b| &b.insts) {
            if let spirv::Op::DeviceEnqueue {
                invoke: Some(i), ..
            } = &inst.op
            {
                invokes.insert(*i);
            }
        }
    }
    // SPIRV-LLVM-Translator's invoke kernels are entry points whose function only
    // calls the invoke function `OpEnqueueKernel` names, with the same parameters.
    let wraps = |ep: &spirv::EntryPoint, f: spirv::Id| {
        let Some(g) = m.functions.get(&ep.function) else {
            return false;
        };
        let params: Vec<spirv::Id> = g.params.iter().map(|(id, _)| *id).collect();
        match g.blocks.as_slice() {
            [b] => {
                matches!(b.term, spirv::Terminator::Return)
                    && matches!(
                        b.insts.iter().filter(|i| !matches!(i.op, spirv::Op::Nop)).collect::<Vec<_>>().as_slice(),
                        [i] if matches!(&i.op, spirv::Op::Call { function, args } if *function == f && *args == params)
                    )
            }
            _ => false,
        }
    };
    for f in invokes {
        let named = entries
            .iter()
            .find(|ep| ep.function == f)
            .or_else(|| entries.iter().find(|ep| wraps(ep, f)));
        let name = match named {
            Some(ep) => ep.name.clone(),
            None => {
                let name = format!("{}{f}", crate::device_enqueue::HIDDEN_KERNEL_PREFIX);
                entries.push(spirv::EntryPoint {
                    function: f,
                    name: name.clone(),
                    interface: Vec::new(),
                    modes: Default::default(),
                });
                name
            }
        };
        data.add_name(f, &name)?;
    }
    Ok(entries)
}

/// Whether a kernel calls a device-side enqueue built-in (its launches need the
/// runtime's [`crate::abi::DeviceEnqueue`] hook).
fn flat_uses_device_enqueue(m: &spirv::Module, flat: &analysis::flatten::FlatFunction) -> bool {
    flat.blocks
        .iter()
        .flat_map(|b| &b.insts)
        .any(|inst| match &inst.op {
            spirv::Op::DeviceEnqueue { .. } => true,
            spirv::Op::Call { function, .. } => m.functions.get(function).is_some_and(|f| {
                let name = f.import.as_deref().unwrap_or(&f.name);
                crate::device_enqueue::import(name).is_some()
            }),
            _ => false,
        })
}
