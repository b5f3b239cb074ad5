//! The build pipeline's front half: OpenCL C source -> SPIR-V through clang as a
//! subprocess, and build-option parsing.
//!
//! Interface used by programs (`crate::program`):
//! - [`BuildOptions::parse`] splits the application's option string into what clang
//!   gets and what the jit gets ([`cranecl_jit::CompileOptions`]).
//! - [`compile_source`] runs clang and returns SPIR-V words plus clang's diagnostics;
//!   [`compile_source_with_headers`] (clCompileProgram), [`link_spirv`] and
//!   [`LinkOptions`] (clLinkProgram), [`compile_spirv`] (the jit with a memo).
//!
//! Configuration (environment):
//! - `CRANECL_CLANG`: the clang to run (else clang-22, -21, -20 on `PATH`, then
//!   `/usr/lib/llvm-N/bin/clang`).
//! - `CRANECL_OPT`: LLVM's `opt` for loop-heavy programs (else the one beside clang;
//!   empty: never). `CRANECL_LIGHT_OPT_LOOPS`: the loop count from which it is used.
//! - `CRANECL_CACHE_DIR`: where precompiled headers live (else
//!   `$XDG_CACHE_HOME/cranecl`, `~/.cache/cranecl`, a temp dir); `CRANECL_NO_PCH=1`
//!   turns them off.
//! - `CRANECL_SUBGROUP_WIDTH`: default sub-group width (4, 8, 16, 32) for kernels
//!   that do not require one.
//! - `CRANECL_VERBOSE=1`: print each clang command line and its time on stderr.
//!
//! Parts: `options` (tokenising and checking options), `clang` (finding and running
//! clang), `pch` (the precompiled-header cache that makes a compile ~4x cheaper),
//! `link` (embedded headers and SPIR-V linking for clCompileProgram/clLinkProgram),
//! `memo` (recent results, so an identical rebuild skips clang), `jit_memo` (the
//! same for the jit: [`compile_spirv`], which also compiles a program's kernels in
//! parallel), `split` (one SPIR-V module per kernel), `local_retype` (a second
//! compile through LLVM IR when clang-22's backend shrank a `__local` array),
//! `whole_program` (big clBuildProgram sources: front end and optimiser in two clang
//! runs, so each kernel body is optimised once), `loop_heavy` (such sources with
//! hundreds of loops in one function: LLVM's `opt` with a pipeline whose cost does
//! not grow with the square of the loop count), `shared_slots` (before that pipeline,
//! locals of disjoint scopes share a slot, which keeps SROA linear).
//! The command line is assembled here, in [`Frontend`].

mod clang;
mod device_enqueue;
mod jit_memo;
pub mod kernel_info;
mod link;
mod local_retype;
mod loop_heavy;
mod memo;
mod options;
mod pch;
mod pragmas;
mod shared_slots;
mod split;
mod whole_program;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use cranecl_jit::CompileOptions;

pub use jit_memo::{compile_kernels_in_parallel, compile_spirv};
pub use link::{link_spirv, LinkOptions};
pub use options::ClStd;
pub(crate) use pch::Fnv;
pub use pch::{PchBuild, PchCache, DRIVER_HEADER};

/// SPIR-V extensions clang's backend may use (`-mllvm -spirv-ext=`): without
/// `SPV_INTEL_subgroups` clang refuses the `intel_sub_group_*` built-ins; with
/// `SPV_KHR_no_integer_wrap_decoration` it marks arithmetic NoSignedWrap where OpenCL
/// C's overflow is undefined, which lets the jit keep `(long)(x + i)` affine across a
/// sub-group (`jit::analysis::exact`).
pub const SPIRV_EXTENSIONS: &[&str] = &[
    "SPV_INTEL_subgroups",
    "SPV_INTEL_2d_block_io",
    // float atomic add (cl_ext_float_atomics); without it clang aborts on such code.
    "SPV_EXT_shader_atomic_float_add",
    "SPV_EXT_shader_atomic_float_min_max",
    "SPV_KHR_no_integer_wrap_decoration",
    // cl_khr_extended_bit_ops and cl_khr_integer_dot_product built-ins.
    "SPV_KHR_bit_instructions",
    "SPV_KHR_integer_dot_product",
    // sub_group_rotate / sub_group_clustered_rotate (cl_khr_subgroup_rotate).
    "SPV_KHR_subgroup_rotate",
];

/// The application's build options, split by who consumes them.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// Arguments passed to clang as they are (-D, -I, -w, -Werror, -cl-* math
    /// options, ...); the language version is in [`BuildOptions::cl_std`].
    pub clang_args: Vec<String>,
    /// What changes code generation.
    pub jit: CompileOptions,
    /// `-cl-kernel-arg-info` was given.
    pub kernel_arg_info: bool,
    /// `-cl-std=` as given (None: clang compiles [`ClStd::DEFAULT`]).
    pub cl_std: Option<ClStd>,
    /// `-cl-uniform-work-group-size` was given.
    pub uniform_work_group_size: bool,
}

impl BuildOptions {
    /// Parses an option string; an option we do not know is an error naming it
    /// (`CL_INVALID_BUILD_OPTIONS`). `CRANECL_SUBGROUP_WIDTH` (4, 8, 16 or 32) sets the
    /// jit's default sub-group width.
    pub fn parse(options: &str) -> Result<BuildOptions, String> {
        let env = std::env::var("CRANECL_SUBGROUP_WIDTH").ok();
        options::parse_with_env(options, env.as_deref())
    }

    /// The OpenCL C version clang compiles.
    pub fn effective_cl_std(&self) -> ClStd {
        self.cl_std.unwrap_or(ClStd::DEFAULT)
    }

    /// Whether kernels of this program may run with non-uniform (ragged) work-groups:
    /// OpenCL C 2.0 or newer and no `-cl-uniform-work-group-size`. For OpenCL C 1.x the
    /// global size must be a multiple of the local size.
    pub fn non_uniform_work_groups(&self) -> bool {
        self.effective_cl_std() >= (ClStd { major: 2, minor: 0 }) && !self.uniform_work_group_size
    }
}

/// clang's successful output.
#[derive(Clone, Debug)]
pub struct ClangOutput {
    pub spirv: Vec<u32>,
    /// clang's diagnostics (warnings), verbatim.
    pub log: String,
}

/// Why a source build failed; the text becomes the build log.
#[derive(Clone, Debug)]
pub enum SourceBuildError {
    /// No usable clang: not installed, `CRANECL_CLANG` wrong, or not executable.
    ClangNotFound(String),
    /// clang ran and rejected the source (or crashed); its diagnostics.
    Failed(String),
}

impl std::fmt::Display for SourceBuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SourceBuildError::ClangNotFound(msg) | SourceBuildError::Failed(msg) => {
                f.write_str(msg)
            }
        }
    }
}

impl std::error::Error for SourceBuildError {}

/// Compiles OpenCL C `source` to SPIR-V with clang-22's SPIR-V backend.
///
/// clang comes from `CRANECL_CLANG` or the search in [`Frontend::from_env`]; a
/// precompiled header from the cache directory is used when one is ready
/// (`CRANECL_NO_PCH=1` turns that off).
pub fn compile_source(
    source: &str,
    options: &BuildOptions,
) -> Result<ClangOutput, SourceBuildError> {
    Frontend::from_env()?.compile(source, options)
}

/// [`compile_source`] with embedded headers (`clCompileProgram`'s `input_headers`):
/// `(include name, source)` pairs that `#include "name"` in `source` finds.
pub fn compile_source_with_headers(
    source: &str,
    options: &BuildOptions,
    headers: &[(&str, &str)],
) -> Result<ClangOutput, SourceBuildError> {
    Frontend::from_env()?.compile_with_headers(source, options, headers)
}

/// clUnloadPlatformCompiler: releases what the compiler keeps between builds (the
/// memos of recent clang and jit results). The next build works as the first did;
/// precompiled headers stay on disk, as they are shared with other processes.
pub fn unload_compiler() {
    memo::clear();
    jit_memo::clear();
}

/// What `source`, built with `options`, declares about its kernels beyond SPIR-V
/// (see [`kernel_info`]).
pub fn kernel_source_info(
    source: &str,
    options: &BuildOptions,
    headers: &[(&str, &str)],
) -> Result<kernel_info::SourceInfoTable, SourceBuildError> {
    Frontend::from_env()?.kernel_source_info(source, options, headers)
}

/// Starts building the precompiled header for `options` in the background (e.g. when
/// a program is created, before it is built), so the first build finds it ready.
/// Errors are ignored: the build itself reports them.
pub fn prewarm(options: &BuildOptions) {
    if let Ok(frontend) = Frontend::from_env() {
        if let Some(cache) = &frontend.pch {
            let (lang, _) = frontend.split_args(options);
            let _ = cache.get(&frontend.clang, &lang);
        }
    }
}

/// A clang to run and the PCH cache it uses.
pub struct Frontend {
    clang: PathBuf,
    pch: Option<Arc<PchCache>>,
    /// Use the process-wide memo of recent results.
    memo: bool,
    /// Whole-program sources at least this long are built in two clang runs (see
    /// `whole_program`).
    two_step_min_bytes: usize,
}

/// The process-wide PCH cache, once looked for.
static CACHE: OnceLock<Option<Arc<PchCache>>> = OnceLock::new();

/// Before `fork()`: finishes setting up the process-wide PCH cache (see
/// `crate::fork`).
pub(crate) fn init_for_fork() {
    let _ = default_cache();
}

/// Before `fork()`: holds the build's process-wide locks, in a fixed order (see
/// `crate::fork`).
pub(crate) fn hold_for_fork(held: &mut Vec<Box<dyn std::any::Any>>) {
    memo::hold_for_fork(held);
    jit_memo::hold_for_fork(held);
    if let Some(Some(cache)) = CACHE.get() {
        cache.hold_for_fork(held);
    }
}

/// The process-wide PCH cache (None when disabled or no directory is writable).
fn default_cache() -> Option<Arc<PchCache>> {
    CACHE
        .get_or_init(|| {
            let disabled = std::env::var("CRANECL_NO_PCH").is_ok_and(|v| !v.is_empty() && v != "0");
            if disabled {
                return None;
            }
            PchCache::new(pch::default_cache_dir(), PchBuild::Background).or_else(|| {
                PchCache::new(
                    std::env::temp_dir().join("cranecl-cache"),
                    PchBuild::Background,
                )
            })
        })
        .clone()
}

/// Whether clang's diagnostics say it refused the precompiled header (rather than
/// the source).
fn is_pch_error(log: &str) -> bool {
    ["precompiled file", "precompiled header", "PCH file"]
        .iter()
        .any(|needle| log.contains(needle))
}

impl Frontend {
    /// The clang named by `CRANECL_CLANG` (an error naming it when it is not an
    /// executable) or the newest of clang-22/21/20 on `PATH` or in
    /// `/usr/lib/llvm-N/bin`, with the process-wide PCH cache.
    pub fn from_env() -> Result<Frontend, SourceBuildError> {
        let clang_env = std::env::var_os("CRANECL_CLANG");
        let path_env = std::env::var_os("PATH");
        let clang = clang::locate(clang_env.as_deref(), path_env.as_deref())
            .map_err(SourceBuildError::ClangNotFound)?;
        Ok(Frontend {
            clang,
            pch: default_cache(),
            memo: true,
            two_step_min_bytes: whole_program::min_bytes_from_env(),
        })
    }

    /// A frontend with an explicit clang and cache (tests, tools).
    /// Does not use the memo of recent results (see [`Frontend::with_memo`]).
    pub fn new(clang: PathBuf, pch: Option<Arc<PchCache>>) -> Frontend {
        Frontend {
            clang,
            pch,
            memo: false,
            two_step_min_bytes: whole_program::TWO_STEP_MIN_BYTES,
        }
    }

    /// Sets the source length from which [`Frontend::compile`] runs clang twice
    /// (front end, then optimiser and backend; 0 = always).
    pub fn with_two_step_min_bytes(mut self, bytes: usize) -> Frontend {
        self.two_step_min_bytes = bytes;
        self
    }

    /// Turns the process-wide memo of recent results on or off: with it, compiling a
    /// source again with the same options returns the earlier output without clang.
    pub fn with_memo(mut self, memo: bool) -> Frontend {
        self.memo = memo;
        self
    }

    /// The clang this frontend runs.
    pub fn clang(&self) -> &Path {
        &self.clang
    }

    /// Splits the clang arguments into those that change language options (must
    /// match the PCH: target, optimisation level, language version, extensions, math
    /// flags) and the rest (-D, -I, -w, -Werror, -cl-kernel-arg-info, -cl-opt-disable).
    fn split_args(&self, options: &BuildOptions) -> (Vec<String>, Vec<String>) {
        let mut lang = vec![
            "-triple".to_string(),
            "spirv64-unknown-unknown".to_string(),
            "-O2".to_string(),
        ];
        lang.extend(options.effective_cl_std().clang_args());
        lang.extend(crate::features::clang_feature_args());
        let mut other = crate::features::host_macro_args();
        for arg in &options.clang_args {
            // Preprocessor, diagnostics and pure code-generation options do not change
            // how the headers parse, and clang accepts a PCH built without them.
            let per_compile = arg.starts_with("-D")
                || arg.starts_with("-I")
                || matches!(
                    arg.as_str(),
                    "-w" | "-Werror" | "-cl-kernel-arg-info" | "-cl-opt-disable"
                );
            if per_compile {
                other.push(arg.clone());
            } else {
                lang.push(arg.clone());
            }
        }
        (lang, other)
    }

    /// Compiles `source` as a whole program (clBuildProgram: nothing outside it
    /// calls its functions); uses a ready PCH and falls back to parsing opencl-c.h
    /// when there is none or clang refuses it.
    pub fn compile(
        &self,
        source: &str,
        options: &BuildOptions,
    ) -> Result<ClangOutput, SourceBuildError> {
        self.compile_inner(source, options, &[], true)
    }

    /// Compiles `source` with embedded headers (see [`compile_source_with_headers`])
    /// into an object whose kernels other objects may call (clCompileProgram).
    pub fn compile_with_headers(
        &self,
        source: &str,
        options: &BuildOptions,
        headers: &[(&str, &str)],
    ) -> Result<ClangOutput, SourceBuildError> {
        self.compile_inner(source, options, headers, false)
    }

    fn compile_inner(
        &self,
        source: &str,
        options: &BuildOptions,
        headers: &[(&str, &str)],
        whole_program: bool,
    ) -> Result<ClangOutput, SourceBuildError> {
        let (lang, mut other) = self.split_args(options);
        let via_ir = device_enqueue::uses_device_enqueue(source)
            || headers
                .iter()
                .any(|(_, text)| device_enqueue::uses_device_enqueue(text));
        let two_step = whole_program && !via_ir && source.len() >= self.two_step_min_bytes;
        let memo_key = (self.memo && memo::cacheable(source)).then(|| {
            let mut args: Vec<String> = lang.iter().chain(&other).cloned().collect();
            // Its output lacks the kernel bodies an object exports.
            if two_step {
                args.push("(whole program)".into());
            }
            memo::key(&pch::clang_identity(&self.clang), &args, source, headers)
        });
        if let Some(output) = memo_key.and_then(memo::get) {
            return Ok(output);
        }
        let header_dir = link::write_headers(headers).map_err(SourceBuildError::Failed)?;
        if let Some(dir) = &header_dir {
            // Before the application's -I directories: embedded headers win.
            other.insert(0, format!("-I{}", dir.path().display()));
        }
        let result = if via_ir {
            self.run_with_pch(source, &lang, &other, Emit::LlvmText)
                .and_then(|out| {
                    let ir = device_enqueue::rewrite_ir(&String::from_utf8_lossy(&out.stdout));
                    let ir = local_retype::zero_initialise_locals(&ir);
                    Ok(ClangOutput {
                        spirv: self.ir_to_spirv(&ir, &out.log)?,
                        log: out.log,
                    })
                })
        } else if two_step {
            other.push("-disable-llvm-passes".into());
            self.run_with_pch(source, &lang, &other, Emit::LlvmText)
                .and_then(|out| {
                    let ir = whole_program::internalise_kernel_bodies(&String::from_utf8_lossy(
                        &out.stdout,
                    ));
                    let spirv = match self.light_optimise_ir_to_spirv(&ir, &out.log) {
                        Some(spirv) => spirv?,
                        None => self.optimise_ir_to_spirv(&ir, &out.log)?,
                    };
                    Ok(ClangOutput {
                        spirv: self.via_ir_if_needed(spirv, source, &out.args)?,
                        log: out.log,
                    })
                })
        } else {
            self.run_with_pch(source, &lang, &other, Emit::Spirv)
                .and_then(|out| {
                    let spirv = clang::spirv_words(&out.stdout).map_err(|msg| {
                        SourceBuildError::Failed(format!("{}error: {msg}\n", out.log))
                    })?;
                    Ok(ClangOutput {
                        spirv: self.via_ir_if_needed(spirv, source, &out.args)?,
                        log: out.log,
                    })
                })
        };
        if let (Some(key), Ok(output)) = (memo_key, &result) {
            memo::put(key, output);
        }
        result
    }

    /// What `source` declares about its kernels beyond SPIR-V: clang once more, to
    /// LLVM IR, whose kernel metadata says it (see [`kernel_info`]).
    pub fn kernel_source_info(
        &self,
        source: &str,
        options: &BuildOptions,
        headers: &[(&str, &str)],
    ) -> Result<kernel_info::SourceInfoTable, SourceBuildError> {
        let (lang, mut other) = self.split_args(options);
        let header_dir = link::write_headers(headers).map_err(SourceBuildError::Failed)?;
        if let Some(dir) = &header_dir {
            other.insert(0, format!("-I{}", dir.path().display()));
        }
        let out = self.run_with_pch(source, &lang, &other, Emit::LlvmText)?;
        Ok(kernel_info::parse_llvm_ir(&String::from_utf8_lossy(
            &out.stdout,
        )))
    }

    /// [`Frontend::run`] with the cached PCH, retried without it if clang refuses it.
    fn run_with_pch(
        &self,
        source: &str,
        lang: &[String],
        other: &[String],
        emit: Emit,
    ) -> Result<RunOutput, SourceBuildError> {
        let pch = self
            .pch
            .as_ref()
            .and_then(|cache| cache.get(&self.clang, lang));
        match self.run(source, lang, other, pch.as_deref(), emit) {
            Err(SourceBuildError::Failed(log)) if pch.is_some() && is_pch_error(&log) => {
                if let (Some(cache), Some(pch)) = (&self.pch, &pch) {
                    cache.reject(pch);
                }
                self.run(source, lang, other, None, emit)
            }
            result => result,
        }
    }

    /// Whether a PCH for `options` is ready in the cache (tests, measurements).
    pub fn pch_ready(&self, options: &BuildOptions) -> bool {
        let (lang, _) = self.split_args(options);
        self.pch
            .as_ref()
            .and_then(|cache| cache.get(&self.clang, &lang))
            .is_some()
    }

    /// Runs clang on `source`.
    fn run(
        &self,
        source: &str,
        lang: &[String],
        other: &[String],
        pch: Option<&Path>,
        emit: Emit,
    ) -> Result<RunOutput, SourceBuildError> {
        let mut args: Vec<OsString> = vec!["-cc1".into()];
        args.extend(lang.iter().map(OsString::from));
        // What clang's driver adds for speed: the process exits right after, so
        // freeing the AST is wasted time, and release builds of clang skip the IR
        // verifier. (Not -discard-value-names: parameter names become the OpNames
        // that clGetKernelArgInfo reports.)
        args.push("-disable-free".into());
        args.push("-disable-llvm-verifier".into());
        // Like clang's driver: stop after 19 errors, so a broken source gives a log
        // people can read.
        args.push("-ferror-limit".into());
        args.push("19".into());
        args.push("-finclude-default-header".into());
        match pch {
            Some(pch) => {
                args.push("-include-pch".into());
                args.push(pch.as_os_str().to_owned());
            }
            None => {
                if let Some(header) = self
                    .pch
                    .as_ref()
                    .and_then(|cache| cache.header())
                    .or_else(fallback_header)
                {
                    args.push("-include".into());
                    args.push(header.into_os_string());
                }
            }
        }
        args.extend(other.iter().map(OsString::from));
        // A C99 `__inline` definition that is not inlined keeps a local copy instead of
        // becoming a call of an undefined function (see `inline` in cranecl.h).
        args.push("-mllvm".into());
        args.push("-avail-extern-to-local".into());
        args.push("-mllvm".into());
        args.push(spirv_ext_arg().into());
        args.push(
            match emit {
                Emit::Spirv => "-emit-obj",
                Emit::LlvmText => "-emit-llvm",
            }
            .into(),
        );
        args.extend(["-x", "cl", "-o", "-", "-"].map(OsString::from));

        let started = std::time::Instant::now();
        let source = pragmas::quiet_extension_pragmas(source);
        let run = clang::run(&self.clang, &args, source.as_bytes()).map_err(|err| {
            SourceBuildError::ClangNotFound(format!("cannot run {}: {err}", self.clang.display()))
        })?;
        if verbose() {
            let line: Vec<String> = std::iter::once(self.clang.display().to_string())
                .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
                .collect();
            eprintln!(
                "cranecl: clang {} in {:.1} ms ({}): {}",
                run.status,
                started.elapsed().as_secs_f64() * 1e3,
                if pch.is_some() { "with PCH" } else { "no PCH" },
                line.join(" ")
            );
        }
        if !run.success {
            let mut log = run.stderr;
            if !run.status.starts_with("exit code") || log.trim().is_empty() {
                if !log.is_empty() && !log.ends_with('\n') {
                    log.push('\n');
                }
                log.push_str(&format!(
                    "error: {} ended with {}\n",
                    self.clang.display(),
                    run.status
                ));
            }
            return Err(SourceBuildError::Failed(log));
        }
        Ok(RunOutput {
            stdout: run.stdout,
            log: run.stderr,
            args,
        })
    }

    /// `spirv` as clang emitted it, or, when it holds what the jit cannot take
    /// (a retyped `__local` or a pointer to a function), the source compiled again
    /// through the LLVM IR rewrite ([`Self::compile_via_ir`]).
    fn via_ir_if_needed(
        &self,
        spirv: Vec<u32>,
        source: &str,
        args: &[OsString],
    ) -> Result<Vec<u32>, SourceBuildError> {
        if local_retype::has_retyped_local(&spirv) || device_enqueue::has_function_pointer(&spirv) {
            self.compile_via_ir(source, args)
        } else {
            Ok(spirv)
        }
    }

    /// Compiles again, as LLVM IR whose `__local` globals get a zero initializer and
    /// whose function addresses are rewritten (see `local_retype`, `device_enqueue`),
    /// then the IR to SPIR-V. `args` is the first compile's command (either form:
    /// to SPIR-V, or to unoptimised IR).
    fn compile_via_ir(
        &self,
        source: &str,
        args: &[OsString],
    ) -> Result<Vec<u32>, SourceBuildError> {
        let failed = |what: &str, log: String| {
            SourceBuildError::Failed(format!(
                "{log}error: recompiling through LLVM IR ({what}) failed\n"
            ))
        };
        let to_ir: Vec<OsString> = args
            .iter()
            .filter(|a| *a != "-disable-llvm-passes")
            .map(|a| {
                if a == "-emit-obj" {
                    OsString::from("-emit-llvm")
                } else {
                    a.clone()
                }
            })
            .collect();
        let source = pragmas::quiet_extension_pragmas(source);
        let run = clang::run(&self.clang, &to_ir, source.as_bytes())
            .map_err(|err| failed("source to IR", err.to_string()))?;
        if !run.success {
            return Err(failed("source to IR", run.stderr));
        }
        let ir = local_retype::zero_initialise_locals(&String::from_utf8_lossy(&run.stdout));
        self.ir_to_spirv(&device_enqueue::rewrite_ir(&ir), "")
    }

    /// Compiles optimised LLVM IR text to SPIR-V; `log` (the first run's diagnostics)
    /// heads the build log of a failure.
    fn ir_to_spirv(&self, ir: &str, log: &str) -> Result<Vec<u32>, SourceBuildError> {
        self.ir_to_spirv_with(ir.as_bytes(), log, false)
            .map_err(|err| {
                SourceBuildError::Failed(format!(
                    "{err}error: recompiling through LLVM IR (IR to SPIR-V) failed\n"
                ))
            })
    }

    /// Optimises unoptimised LLVM IR text (`-O2`, the pipeline a one-run build
    /// applies) and compiles it to SPIR-V; `log` (the front end's diagnostics) heads
    /// the build log of a failure.
    fn optimise_ir_to_spirv(&self, ir: &str, log: &str) -> Result<Vec<u32>, SourceBuildError> {
        self.ir_to_spirv_with(ir.as_bytes(), log, true)
            .map_err(|err| {
                SourceBuildError::Failed(format!(
                    "{err}error: clang failed to optimise the program's LLVM IR\n"
                ))
            })
    }

    /// For unoptimised IR whose biggest function has [`loop_heavy::loop_limit_from_env`]
    /// loops or [`loop_heavy::BRANCH_LIMIT`] conditional branches or more, and an `opt`
    /// beside clang: locals of disjoint scopes made to share
    /// slots (`shared_slots`: SROA's cost is then linear), `opt` with
    /// [`loop_heavy::PIPELINE`] (or [`loop_heavy::MINIMAL_PIPELINE`] for
    /// [`loop_heavy::MINIMAL_BRANCH_LIMIT`] branches), then clang's backend to SPIR-V. None (use `-O2`) for other IR, without `opt`,
    /// or when `opt` fails (a bug of LLVM's: `-O2` may still work).
    fn light_optimise_ir_to_spirv(
        &self,
        ir: &str,
        log: &str,
    ) -> Option<Result<Vec<u32>, SourceBuildError>> {
        let shape = loop_heavy::shape(ir);
        let pipeline = shape.light_pipeline(loop_heavy::loop_limit_from_env())?;
        let opt = loop_heavy::locate_opt(&self.clang)?;
        let (ir, shared) = shared_slots::share_scoped_slots(ir);
        let args: Vec<OsString> = [&format!("-passes={pipeline}"), "-o", "-", "-"]
            .map(OsString::from)
            .to_vec();
        let started = std::time::Instant::now();
        let run = clang::run(&opt, &args, ir.as_bytes()).ok()?;
        if verbose() {
            eprintln!(
                "cranecl: opt (IR, {} KB, {} loops, {} branches, {shared} allocas sharing slots) {} in \
                 {:.1} ms: {} {}\n{}",
                ir.len() >> 10,
                shape.loops,
                shape.branches,
                run.status,
                started.elapsed().as_secs_f64() * 1e3,
                opt.display(),
                args[0].to_string_lossy(),
                run.stderr
            );
        }
        if !run.success {
            return None;
        }
        Some(
            self.ir_to_spirv_with(&run.stdout, log, false)
                .map_err(|err| {
                    SourceBuildError::Failed(format!(
                        "{err}error: clang failed to compile the optimised LLVM IR\n"
                    ))
                }),
        )
    }

    /// clang from LLVM IR (text or bitcode) to SPIR-V, with or without its
    /// optimisation pipeline; the error is `log` followed by what clang said.
    fn ir_to_spirv_with(&self, ir: &[u8], log: &str, optimise: bool) -> Result<Vec<u32>, String> {
        let mut args: Vec<OsString> = ["-cc1", "-triple", "spirv64-unknown-unknown", "-O2"]
            .map(OsString::from)
            .to_vec();
        if !optimise {
            args.push("-disable-llvm-passes".into());
        }
        args.push("-disable-free".into());
        args.push("-disable-llvm-verifier".into());
        // The cl::opts of the optimiser and the backend, as a one-run build has them.
        args.extend(["-mllvm", "-avail-extern-to-local"].map(OsString::from));
        // Loop strength reduction (a pass of the backend's own IR pipeline, which runs
        // with -disable-llvm-passes too) rewrites induction variables for a target's
        // addressing modes, which SPIR-V does not have: 15% of clang's time on a
        // kernel of 1000 loops (90% when the loops were not rotated), and its pointer
        // induction variables make 18% more Cranelift code there.
        args.extend(["-mllvm", "-disable-lsr"].map(OsString::from));
        args.push("-mllvm".into());
        args.push(spirv_ext_arg().into());
        args.extend(["-x", "ir", "-emit-obj", "-o", "-", "-"].map(OsString::from));
        let started = std::time::Instant::now();
        let run = clang::run(&self.clang, &args, ir)
            .map_err(|err| format!("{log}error: cannot run {}: {err}\n", self.clang.display()))?;
        if verbose() {
            let line: Vec<String> = std::iter::once(self.clang.display().to_string())
                .chain(args.iter().map(|a| a.to_string_lossy().into_owned()))
                .collect();
            eprintln!(
                "cranecl: clang (IR, {} KB) {} in {:.1} ms: {}",
                ir.len() >> 10,
                run.status,
                started.elapsed().as_secs_f64() * 1e3,
                line.join(" ")
            );
        }
        if !run.success {
            let mut err = format!("{log}{}", run.stderr);
            if !err.is_empty() && !err.ends_with('\n') {
                err.push('\n');
            }
            err.push_str(&format!(
                "error: {} ended with {}\n",
                self.clang.display(),
                run.status
            ));
            return Err(err);
        }
        clang::spirv_words(&run.stdout).map_err(|msg| format!("{log}error: {msg}\n"))
    }
}

/// `-spirv-ext=+...` for clang's SPIR-V backend (after `-mllvm`).
fn spirv_ext_arg() -> String {
    format!(
        "-spirv-ext={}",
        SPIRV_EXTENSIONS
            .iter()
            .map(|e| format!("+{e}"))
            .collect::<Vec<_>>()
            .join(",")
    )
}

/// One clang run: its output, its diagnostics and its command line.
struct RunOutput {
    stdout: Vec<u8>,
    log: String,
    args: Vec<OsString>,
}

/// What clang produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Emit {
    /// SPIR-V (the build).
    Spirv,
    /// Textual LLVM IR (kernel argument metadata, rewrites, two-run builds).
    LlvmText,
}

/// Whether `CRANECL_VERBOSE` asks for each clang command line and its time on
/// stderr.
fn verbose() -> bool {
    static VERBOSE: OnceLock<bool> = OnceLock::new();
    *VERBOSE.get_or_init(|| {
        std::env::var_os("CRANECL_VERBOSE").is_some_and(|v| !v.is_empty() && v != "0")
    })
}

/// The driver header in the temp directory, for when no cache directory is usable.
fn fallback_header() -> Option<PathBuf> {
    static HEADER: OnceLock<Option<PathBuf>> = OnceLock::new();
    HEADER
        .get_or_init(|| {
            let dir = std::env::temp_dir().join(format!("cranecl-header-{}", std::process::id()));
            std::fs::create_dir_all(&dir).ok()?;
            let path = dir.join("cranecl.h");
            std::fs::write(&path, DRIVER_HEADER).ok()?;
            Some(path)
        })
        .clone()
}

#[cfg(test)]
mod exec_e2e;
#[cfg(test)]
mod tests;
