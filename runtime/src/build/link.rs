//! The pieces of separate compilation: embedded headers for `clCompileProgram`
//! (written to a private temp directory that clang searches), link options for
//! `clLinkProgram`, and linking SPIR-V modules (the jit's in-process linker,
//! `cranecl_jit::link`). Nothing here compiles OpenCL C.

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cranecl_jit::{CompileOptions, LinkOutput};

use super::options;

/// A directory under the system temp dir that exists for one build and is removed
/// when dropped.
pub struct ScratchDir {
    path: PathBuf,
}

impl ScratchDir {
    /// Creates a fresh, uniquely named directory.
    pub fn new(purpose: &str) -> std::io::Result<ScratchDir> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("cranecl-{purpose}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&path)?;
        Ok(ScratchDir { path })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Writes `headers` (`(include name, source)`, as `clCompileProgram` gets them) under
/// a new scratch directory so that `#include "name"` finds them with `-I<dir>`.
/// Names must be relative paths without `..` (they may contain directories).
pub fn write_headers(headers: &[(&str, &str)]) -> Result<Option<ScratchDir>, String> {
    if headers.is_empty() {
        return Ok(None);
    }
    let dir = ScratchDir::new("headers")
        .map_err(|e| format!("cannot create a directory for embedded headers: {e}"))?;
    for (name, source) in headers {
        let rel = Path::new(name);
        let plain = !name.is_empty() && rel.components().all(|c| matches!(c, Component::Normal(_)));
        if !plain {
            return Err(format!(
                "invalid header include name {name:?}: it must be a relative path without '..'"
            ));
        }
        let path = dir.path().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot write header {name:?}: {e}"))?;
        }
        std::fs::write(&path, source).map_err(|e| format!("cannot write header {name:?}: {e}"))?;
    }
    Ok(Some(dir))
}

/// The options of `clLinkProgram`.
#[derive(Clone, Debug, Default)]
pub struct LinkOptions {
    /// `-create-library`: the result is a library for further linking, not an
    /// executable (unresolved imports allowed).
    pub create_library: bool,
    /// `-enable-link-options` (allows the math options to be given for a library).
    pub enable_link_options: bool,
    /// What the math options change in code generation.
    pub jit: CompileOptions,
}

impl LinkOptions {
    /// Parses the link options (OpenCL 3.0 §5.8.7); anything else is an error naming it
    /// (`CL_INVALID_LINKER_OPTIONS`). `-enable-link-options` is only valid with
    /// `-create-library`, and a library takes the math options only with
    /// `-enable-link-options`.
    pub fn parse(text: &str) -> Result<LinkOptions, String> {
        let mut out = LinkOptions::default();
        let mut math = Vec::new();
        for word in options::tokenize(text)? {
            match word.as_str() {
                "-create-library" => out.create_library = true,
                "-enable-link-options" => out.enable_link_options = true,
                "-cl-denorms-are-zero" => out.jit.denorms_are_zero = true,
                "-cl-no-signed-zeros" | "-cl-finite-math-only" | "-cl-no-subgroup-ifp" => {}
                "-cl-unsafe-math-optimizations" | "-cl-fast-relaxed-math" => {
                    out.jit.fast_relaxed_math = true;
                    out.jit.mad_enable = true;
                }
                "" => continue,
                _ => {
                    return Err(format!(
                        "{word:?} is not a link option (the link options are -create-library, \
                         -enable-link-options and the math options -cl-denorms-are-zero, \
                         -cl-no-signed-zeros, -cl-unsafe-math-optimizations, \
                         -cl-finite-math-only, -cl-fast-relaxed-math, -cl-no-subgroup-ifp)"
                    ))
                }
            }
            if word.starts_with("-cl-") {
                math.push(word);
            }
        }
        if out.enable_link_options && !out.create_library {
            return Err("-enable-link-options is only valid together with -create-library".into());
        }
        if out.create_library && !out.enable_link_options && !math.is_empty() {
            return Err(format!(
                "{} given for a library without -enable-link-options",
                math.join(" ")
            ));
        }
        if let Ok(text) = std::env::var("CRANECL_SUBGROUP_WIDTH") {
            out.jit.default_sub_group_width = options::parse_with_env("", Some(&text))?
                .jit
                .default_sub_group_width;
        }
        Ok(out)
    }
}

/// Links SPIR-V `modules` into one with the jit's linker; `create_library` keeps the
/// exports (`-create-library`). The error is the linker's message for the build log.
pub fn link_spirv(modules: &[&[u32]], create_library: bool) -> Result<Vec<u32>, String> {
    let output = if create_library {
        LinkOutput::Library
    } else {
        LinkOutput::Executable
    };
    cranecl_jit::link(modules, output).map_err(|e| e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_names_are_checked() {
        assert!(write_headers(&[]).unwrap().is_none());
        for bad in ["", "/etc/passwd", "../x.h", "a/../../x.h"] {
            let err = write_headers(&[(bad, "")]).err().unwrap_or_default();
            assert!(err.contains("invalid header include name"), "{bad}: {err}");
        }
        let dir = write_headers(&[("a.h", "#define A 1\n"), ("sub/b.h", "#define B 2\n")])
            .unwrap()
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("sub/b.h")).unwrap(),
            "#define B 2\n"
        );
        let path = dir.path().to_path_buf();
        drop(dir);
        assert!(!path.exists(), "scratch directory removed");
    }

    #[test]
    fn link_options() {
        let o = LinkOptions::parse("-create-library -enable-link-options -cl-fast-relaxed-math")
            .unwrap();
        assert!(o.create_library && o.enable_link_options && o.jit.fast_relaxed_math);
        let o = LinkOptions::parse("-cl-denorms-are-zero -cl-no-signed-zeros -cl-finite-math-only -cl-no-subgroup-ifp -cl-unsafe-math-optimizations").unwrap();
        assert!(!o.create_library && o.jit.denorms_are_zero && o.jit.fast_relaxed_math);
        assert!(LinkOptions::parse("").is_ok());
        assert!(LinkOptions::parse("-create-library").is_ok());
        assert!(LinkOptions::parse("-create-library -enable-link-options").is_ok());
        for bad in ["-DX=1", "-cl-mad-enable", "-cl-std=CL1.2", "-w"] {
            let err = LinkOptions::parse(bad).unwrap_err();
            assert!(err.contains(bad), "{err}");
        }
        let err = LinkOptions::parse("-enable-link-options").unwrap_err();
        assert!(err.contains("-create-library"), "{err}");
        let err = LinkOptions::parse("-create-library -cl-finite-math-only").unwrap_err();
        assert!(err.contains("-enable-link-options"), "{err}");
    }
}
