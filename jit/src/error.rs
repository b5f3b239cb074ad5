//! Build failures: the message for the build log and the kind that picks the
//! OpenCL error code.

use std::fmt;

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
    /// The kernel needs more than a work-item thread has (a stack frame too large):
    /// `CL_OUT_OF_RESOURCES`.
    OutOfResources,
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

    /// An `OutOfResources` error.
    pub fn out_of_resources(message: impl Into<String>) -> Self {
        CompileError {
            kind: CompileErrorKind::OutOfResources,
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
