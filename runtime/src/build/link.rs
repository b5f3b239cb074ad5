//! The pieces of separate compilation: embedded headers for `clCompileProgram`
//! (written to a private temp directory that clang searches), link options for
//! `clLinkProgram`, and linking SPIR-V modules with `spirv-link` (SPIRV-Tools) as a
//! subprocess. Nothing here compiles OpenCL C.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cranecl_jit::CompileOptions;

use super::{clang, options};

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
    /// (`CL_INVALID_LINKER_OPTIONS`).
    pub fn parse(text: &str) -> Result<LinkOptions, String> {
        let mut out = LinkOptions::default();
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
                "-cl-mad-enable" => out.jit.mad_enable = true,
                "" => {}
                _ => return Err(format!("unknown link option {word:?}")),
            }
        }
        if let Ok(text) = std::env::var("CRANECL_SUBGROUP_WIDTH") {
            out.jit.default_sub_group_width = options::parse_with_env("", Some(&text))?
                .jit
                .default_sub_group_width;
        }
        Ok(out)
    }
}

/// Finds `spirv-link`: `CRANECL_SPIRV_LINK`, else on `PATH`.
fn locate_spirv_link() -> Result<PathBuf, String> {
    if let Some(value) = std::env::var_os("CRANECL_SPIRV_LINK").filter(|v| !v.is_empty()) {
        let path = PathBuf::from(&value);
        return if clang::is_executable(&path) {
            Ok(path)
        } else {
            Err(format!(
                "CRANECL_SPIRV_LINK={} is not an executable file",
                path.display()
            ))
        };
    }
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("spirv-link"))
                .find(|c| clang::is_executable(c))
        })
        .ok_or_else(|| {
            "spirv-link (SPIRV-Tools) is not installed; it is needed to link programs".to_string()
        })
}

/// Links SPIR-V `modules` into one with `spirv-link`; `create_library` keeps
/// unresolved imports (`-create-library`). The error is the linker's message.
pub fn link_spirv(modules: &[&[u32]], create_library: bool) -> Result<Vec<u32>, String> {
    if modules.is_empty() {
        return Err("nothing to link: no input programs".into());
    }
    let linker = locate_spirv_link()?;
    let dir = ScratchDir::new("link")
        .map_err(|e| format!("cannot create a directory for linking: {e}"))?;
    let mut args: Vec<OsString> = Vec::new();
    if create_library {
        args.push("--create-library".into());
        args.push("--allow-partial-linkage".into());
    }
    for (i, words) in modules.iter().enumerate() {
        let path = dir.path().join(format!("in{i}.spv"));
        let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        std::fs::write(&path, bytes)
            .map_err(|e| format!("cannot write a module for linking: {e}"))?;
        args.push(path.into_os_string());
    }
    let out = dir.path().join("out.spv");
    args.push("-o".into());
    args.push(out.clone().into_os_string());
    let run = clang::run(&linker, &args, &[])
        .map_err(|e| format!("cannot run {}: {e}", linker.display()))?;
    if !run.success {
        return Err(format!("{}link failed ({})", run.stderr, run.status));
    }
    let bytes = std::fs::read(&out).map_err(|e| format!("spirv-link wrote no output: {e}"))?;
    clang::spirv_words(&bytes)
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
        assert!(LinkOptions::parse("").is_ok());
        assert!(LinkOptions::parse("-DX=1").unwrap_err().contains("-DX=1"));
    }
}
