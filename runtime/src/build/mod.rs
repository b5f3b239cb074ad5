//! The build pipeline's front half: OpenCL C source -> SPIR-V through clang as a
//! subprocess, and build-option parsing.
//!
//! Interface used by programs (`crate::program`):
//! - [`BuildOptions::parse`] splits the application's option string into what clang
//!   gets and what the jit gets ([`cranecl_jit::CompileOptions`]).
//! - [`compile_source`] runs clang and returns SPIR-V words plus clang's diagnostics.

use cranecl_jit::CompileOptions;

/// The application's build options, split by who consumes them.
#[derive(Clone, Debug, Default)]
pub struct BuildOptions {
    /// Arguments passed to clang as they are (-D, -I, -cl-std, -w, -Werror, ...).
    pub clang_args: Vec<String>,
    /// What changes code generation.
    pub jit: CompileOptions,
    /// `-cl-kernel-arg-info` was given.
    pub kernel_arg_info: bool,
}

impl BuildOptions {
    /// Parses an option string; an option we do not know is an error naming it
    /// (`CL_INVALID_BUILD_OPTIONS`).
    pub fn parse(options: &str) -> Result<BuildOptions, String> {
        let _ = options;
        unimplemented!("build::BuildOptions::parse")
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

/// Compiles OpenCL C `source` to SPIR-V with clang-22's SPIR-V backend.
pub fn compile_source(source: &str, options: &BuildOptions) -> Result<ClangOutput, SourceBuildError> {
    let _ = (source, options);
    unimplemented!("build::compile_source")
}
