//! The native back end: a Cranelift ISA for the host (all of its SIMD/FMA features,
//! optimising for speed) and a JIT module whose every external symbol is registered
//! explicitly. With `crate::lower` the only place that touches Cranelift.

use std::sync::Arc;

use cranelift_codegen::ir;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, FuncId, Linkage, Module};

use crate::CompileError;

/// A JIT module being filled with the kernels of one program.
pub struct Jit {
    pub module: JITModule,
    /// The ISA for functions above [`BACKTRACKING_MAX_INSTS`] or crowded (see
    /// [`CROWDED_MIN_INSTS`]).
    big_isa: cranelift_codegen::isa::OwnedTargetIsa,
    /// The ISA for functions above [`OPTIMISE_MAX_INSTS`].
    huge_isa: cranelift_codegen::isa::OwnedTargetIsa,
    /// Flags for the mid-end (`None` when optimisation is disabled): it runs here,
    /// before compilation with the ISAs above (all `opt_level` none), because
    /// `Context::optimize` removes the block parameters of single-predecessor blocks
    /// before the e-graph pass, which would undo the checkpoints of
    /// `lower::schedule`.
    opt_isa: Option<cranelift_codegen::isa::OwnedTargetIsa>,
    pub ctx: cranelift_codegen::Context,
    pub fctx: cranelift_frontend::FunctionBuilderContext,
    dump: bool,
    /// `Some` when `CRANECL_PERF_MAP` asks for perf maps: (kernel, name, code size).
    perf_map: Option<Vec<(FuncId, String, usize)>>,
}

/// Owns the executable memory (and the program's constant data) of compiled kernels.
pub struct ProgramCode {
    module: Option<JITModule>,
    _data: crate::program_data::ProgramData,
}

// SAFETY: after finalisation the JIT module is never used again except to free its
// memory on drop; the generated code is immutable and callable from any thread (the
// program data is only ever touched by kernels, see `ProgramData`).
unsafe impl Send for ProgramCode {}
// SAFETY: as above; no method of ProgramCode touches the module through `&self`.
unsafe impl Sync for ProgramCode {}

impl Drop for ProgramCode {
    fn drop(&mut self) {
        if let Some(m) = self.module.take() {
            // SAFETY: the last reference to the program's code is going away (every
            // CompiledKernel holds an Arc to this), so no kernel can run any more.
            unsafe { m.free_memory() };
        }
    }
}

fn codegen_err(what: &str, e: impl std::fmt::Display) -> CompileError {
    CompileError::codegen(format!("{what}: {e}"))
}

/// Functions with more Cranelift instructions than this get the single-pass register
/// allocator: the backtracking one (better code) takes time that grows faster than
/// linearly with a function's size and its long-lived values (0.25 s of CPU for
/// pyopencl's 16-element bitonic sorting network, 23 000 instructions with 32 values
/// live throughout, against 0.03 s single-pass with the same sort time; minutes at
/// ten times the size). pyopencl's scan kernels (`scan_lev1`/`scan_lev2`, about 32 000
/// instructions: region-split, masked, two layouts) run 1.55x faster with it for
/// 0.14 s more CPU at build time.
pub const BACKTRACKING_MAX_INSTS: usize = 40_000;

/// Functions with more Cranelift instructions than this and more than
/// [`CROWDED_MAX_LIVE`] values live at once (`pressure::max_live`) get the single-pass
/// register allocator too: pyopencl's 16-element bitonic sorting networks (31 000 to
/// 33 000 instructions, 482 to 514 live) took 3.1 s of CPU each in the backtracking
/// one. What keeps it: pyopencl's scans (16 000 to 40 000 instructions, at most 205
/// live), clbench's sgemm_subgroup (10 000, 271 live).
pub const CROWDED_MIN_INSTS: usize = 20_000;

/// See [`CROWDED_MIN_INSTS`].
pub const CROWDED_MAX_LIVE: usize = 384;

/// A kernel whose function would have more Cranelift instructions than this with
/// both layout bodies (lane-contiguous and general) is compiled as one function per
/// body plus a dispatching entry (`lower::Variants`): the contiguous body then fits
/// the backtracking allocator (pyopencl's radix-sort scan, 47 000 instructions: 1.5x
/// faster) and the rarely run general body is compiled single-pass.
pub const SPLIT_LAYOUTS_MIN_INSTS: usize = BACKTRACKING_MAX_INSTS;

/// Functions with more Cranelift instructions than this skip Cranelift's mid-end
/// optimiser (`opt_level` none: no e-graph, GVN or LICM), which takes about a third
/// of the code-generation time of a huge kernel (1 million instructions for 1000
/// divergent loops: 2.8 s of CPU with it, 1.2 s without), for code a little larger.
pub const OPTIMISE_MAX_INSTS: usize = 250_000;

/// How hard [`Jit::define_with`] works on a function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Effort {
    /// By the function's size: the backtracking register allocator up to
    /// [`BACKTRACKING_MAX_INSTS`] (unless crowded, see [`CROWDED_MIN_INSTS`]), the
    /// mid-end up to [`OPTIMISE_MAX_INSTS`].
    BySize,
    /// Code that rarely runs: the single-pass register allocator whatever the size.
    Cold,
    /// A huge kernel (`tiers`): single-pass, no mid-end.
    Least,
}

/// The largest stack frame a kernel's code may have: the runtime's pool workers
/// have 16 MB of stack (a thread with less hands the kernel to them), and a huge
/// kernel (10 000 inlined calls: 22 MB of spill slots) must fail to build
/// (`CL_OUT_OF_RESOURCES`) rather than overflow it.
pub const MAX_FRAME_BYTES: usize = 15 << 20;

/// The host ISA with our flags; `single_pass` picks the linear-time register allocator.
fn host_isa(
    opt_disable: bool,
    single_pass: bool,
) -> Result<cranelift_codegen::isa::OwnedTargetIsa, CompileError> {
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| {
        f.set(k, v)
            .map_err(|e| codegen_err(&format!("setting {k}"), e))
    };
    set(
        &mut flags,
        "opt_level",
        if opt_disable { "none" } else { "speed" },
    )?;
    set(&mut flags, "is_pic", "false")?;
    if single_pass {
        set(&mut flags, "regalloc_algorithm", "single_pass")?;
    }
    set(&mut flags, "enable_probestack", "true")?;
    set(&mut flags, "probestack_strategy", "inline")?;
    set(
        &mut flags,
        "enable_verifier",
        if cfg!(debug_assertions) {
            "true"
        } else {
            "false"
        },
    )?;
    let mut isa_builder = cranelift_native::builder().map_err(|e| codegen_err("host ISA", e))?;
    // Without AVX-512DQ: its only use in Cranelift's x86 back end is `vpmullq` for
    // every `i64x2` product, which shadows the one-`pmuludq` lowering of products of
    // zero-extended 32-bit lanes (`lower::mul64`; Philox: 2.5x less latency per round).
    // `CRANECL_KEEP_DQ` keeps it (to compare).
    if std::env::var_os("CRANECL_KEEP_DQ").is_none() {
        isa_builder
            .set("has_avx512dq", "false")
            .map_err(|e| codegen_err("setting has_avx512dq", e))?;
    }
    isa_builder
        .finish(settings::Flags::new(flags))
        .map_err(|e| codegen_err("host ISA", e))
}

impl Jit {
    /// A JIT for the host with all built-in symbols registered.
    pub fn new(opt_disable: bool) -> Result<Jit, CompileError> {
        let isa = host_isa(true, false)?;
        let big_isa = host_isa(true, true)?;
        let huge_isa = host_isa(true, true)?;
        let opt_isa = if opt_disable {
            None
        } else {
            Some(host_isa(false, false)?)
        };
        let mut jb = JITBuilder::with_isa(isa, default_libcall_names());
        jb.symbols(crate::builtins::all_symbols());
        jb.symbols(crate::support::symbols());
        jb.symbol_lookup_fn(Box::new(crate::support::lookup));
        let module = JITModule::new(jb);
        let ctx = module.make_context();
        Ok(Jit {
            module,
            big_isa,
            huge_isa,
            opt_isa,
            ctx,
            fctx: cranelift_frontend::FunctionBuilderContext::new(),
            dump: std::env::var_os("CRANECL_DUMP_CLIF").is_some_and(|v| v != "0"),
            perf_map: crate::perf_map::enabled().then(Vec::new),
        })
    }

    /// Compiles `func` as the exported function `name`; returns its id and the size
    /// of its stack frame.
    pub fn define(
        &mut self,
        name: &str,
        func: ir::Function,
    ) -> Result<(FuncId, usize), CompileError> {
        self.define_with(name, func, Linkage::Export, Effort::BySize)
    }

    /// [`Self::define`] with the given linkage and effort.
    pub fn define_with(
        &mut self,
        name: &str,
        func: ir::Function,
        linkage: Linkage,
        effort: Effort,
    ) -> Result<(FuncId, usize), CompileError> {
        let sig = func.signature.clone();
        let id = self
            .module
            .declare_function(name, linkage, &sig)
            .map_err(|e| codegen_err(&format!("declaring kernel {name}"), e))?;
        self.ctx.clear();
        self.ctx.func = func;
        self.ctx.func.name = ir::UserFuncName::user(0, id.as_u32());
        if self.dump {
            eprintln!("; CLIF of kernel {name}\n{}", self.ctx.func.display());
            self.ctx.set_disasm(true);
        }
        let failed = |e: cranelift_module::ModuleError| {
            let detail = match &e {
                cranelift_module::ModuleError::Compilation(ce) => format!("{ce:?}"),
                other => other.to_string(),
            };
            CompileError::codegen(format!(
                "code generation failed for kernel {name}: {detail}"
            ))
        };
        let insts = self.ctx.func.dfg.num_insts();
        let optimise = insts <= OPTIMISE_MAX_INSTS && effort != Effort::Least;
        if optimise {
            if let Some(opt) = &self.opt_isa {
                let vmath_refs = self.vmath_func_refs();
                // What `Context::optimize` does at opt_level speed, less the removal
                // of constant block parameters (it runs afterwards, in `compile`).
                let mut ctrl = cranelift_codegen::control::ControlPlane::default();
                let ctx = &mut self.ctx;
                // Masks made of constants decide their tests (see `lower::vconst_fold`).
                crate::lower::fold_vector_constants(&mut ctx.func);
                crate::lower::thread::thread_mask_tests(&mut ctx.func);
                #[cfg(debug_assertions)]
                if let Err(e) = cranelift_codegen::verify_function(&ctx.func, &**opt) {
                    panic!("jump threading broke kernel {name}: {e}");
                }
                ctx.compute_cfg();
                ctx.compute_domtree();
                let isa: &dyn cranelift_codegen::isa::TargetIsa = &**opt;
                ctx.eliminate_unreachable_code(isa)
                    .and_then(|()| {
                        ctx.func.dfg.resolve_all_aliases();
                        ctx.egraph_pass(isa, &mut ctrl)
                    })
                    .map_err(|e| failed(cranelift_module::ModuleError::Compilation(e)))?;
                // Undo the e-graph's hoisting of constants (see `lower::remat`).
                crate::lower::remat_constants(&mut ctx.func);
                // Reload values held in vector-math slots after calls instead of
                // spilling them (see `lower::slot_remat`); constant block parameters
                // (a body's values passed on to its next block) go first, so that
                // the uses there name the values in the slots.
                if !vmath_refs.is_empty() {
                    ctx.remove_constant_phis(isa)
                        .map_err(|e| failed(cranelift_module::ModuleError::Compilation(e)))?;
                    crate::lower::remat_from_slots(&mut ctx.func, &|r| vmath_refs.contains(&r));
                }
                // Shorter live ranges in innermost loops (see `lower::loop_pressure`
                // and `lower::loop_spill`).
                crate::lower::relieve_loops(&mut ctx.func);
                crate::lower::spill_loop_invariants(&mut ctx.func);
                #[cfg(debug_assertions)]
                if let Err(e) = cranelift_codegen::verify_function(&ctx.func, &**opt) {
                    panic!("the loop passes broke kernel {name}: {e}");
                }
            }
        }
        let backtracking = effort == Effort::BySize
            && (insts <= CROWDED_MIN_INSTS
                || (insts <= BACKTRACKING_MAX_INSTS
                    && crate::pressure::max_live(&self.ctx.func) <= CROWDED_MAX_LIVE));
        if backtracking {
            self.module
                .define_function(id, &mut self.ctx)
                .map_err(failed)?;
        } else {
            // Compiled with the other ISA, then handed over as bytes and relocations
            // (what define_function does with the module's own ISA).
            let mut ctrl = cranelift_codegen::control::ControlPlane::default();
            let isa = if optimise {
                &*self.big_isa
            } else {
                &*self.huge_isa
            };
            let align = self
                .ctx
                .compile(isa, &mut ctrl)
                .map_err(|e| failed(cranelift_module::ModuleError::Compilation(e.inner)))?
                .buffer
                .alignment as u64;
            let align = align
                .max(isa.function_alignment().minimum as u64)
                .max(isa.symbol_alignment());
            let compiled = self
                .ctx
                .compiled_code()
                .ok_or_else(|| CompileError::codegen("compiled code missing"))?;
            let relocs: Vec<cranelift_module::ModuleReloc> = compiled
                .buffer
                .relocs()
                .iter()
                .map(|r| cranelift_module::ModuleReloc::from_mach_reloc(r, &self.ctx.func, id))
                .collect();
            let bytes = compiled.code_buffer().to_vec();
            self.module
                .define_function_bytes(id, align, &bytes, &relocs)
                .map_err(failed)?;
        }
        let frame_bytes = self
            .ctx
            .compiled_code()
            .and_then(|cc| cc.buffer.frame_layout())
            .map_or(0, |l| l.frame_to_fp_offset as usize);
        if frame_bytes > MAX_FRAME_BYTES {
            return Err(CompileError::out_of_resources(format!(
                "kernel {name} is too large: its code needs a stack frame of {} MB, more than the {} MB a work-item thread has",
                frame_bytes >> 20,
                MAX_FRAME_BYTES >> 20
            )));
        }
        if let (Some(map), Some(cc)) = (&mut self.perf_map, self.ctx.compiled_code()) {
            map.push((id, name.to_string(), cc.code_buffer().len()));
        }
        if self.dump {
            if std::env::var_os("CRANECL_DUMP_OPT").is_some() {
                eprintln!(
                    "; optimised CLIF of kernel {name}\n{}",
                    self.ctx.func.display()
                );
            }
            if let Some(cc) = self.ctx.compiled_code() {
                if let Some(v) = &cc.vcode {
                    eprintln!("; machine code of kernel {name}\n{v}");
                }
                eprintln!(
                    "; kernel {name}: {} bytes of machine code",
                    cc.code_buffer().len()
                );
                // Raw bytes for `objdump -D -b binary -mi386:x86-64` (perf offsets).
                if let Some(dir) = std::env::var_os("CRANECL_DUMP_CODE") {
                    let path = std::path::Path::new(&dir).join(format!("{name}.bin"));
                    if let Err(e) = std::fs::write(&path, cc.code_buffer()) {
                        eprintln!("; cannot write {}: {e}", path.display());
                    }
                }
            }
        }
        Ok((id, frame_bytes))
    }

    /// The function references of the current function that name vector-math
    /// routines (`builtins::vmath`): calls that write only their result region.
    fn vmath_func_refs(&self) -> std::collections::HashSet<ir::FuncRef> {
        let func = &self.ctx.func;
        func.dfg
            .ext_funcs
            .iter()
            .filter(|(_, data)| {
                let ir::ExternalName::User(r) = data.name else {
                    return false;
                };
                let id = FuncId::from_u32(func.params.user_named_funcs()[r].index);
                self.module
                    .declarations()
                    .get_function_decl(id)
                    .name
                    .as_deref()
                    .is_some_and(|n| crate::builtins::vmath::routine(n).is_some())
            })
            .map(|(r, _)| r)
            .collect()
    }

    /// Finalises all definitions; returns the code owner and a lookup for entries.
    pub fn finish(
        mut self,
        ids: &[FuncId],
        data: crate::program_data::ProgramData,
    ) -> Result<(Arc<ProgramCode>, Vec<*const u8>), CompileError> {
        self.module
            .finalize_definitions()
            .map_err(|e| codegen_err("finalising code", e))?;
        let ptrs = ids
            .iter()
            .map(|id| self.module.get_finalized_function(*id))
            .collect();
        if let Some(map) = &self.perf_map {
            let entries: Vec<(*const u8, usize, &str)> = map
                .iter()
                .map(|(id, name, size)| {
                    (
                        self.module.get_finalized_function(*id),
                        *size,
                        name.as_str(),
                    )
                })
                .collect();
            crate::perf_map::append(&entries);
        }
        Ok((
            Arc::new(ProgramCode {
                module: Some(self.module),
                _data: data,
            }),
            ptrs,
        ))
    }
}
