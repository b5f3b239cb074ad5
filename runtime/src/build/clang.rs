//! Finding and running clang: the `CRANECL_CLANG` override or a search for
//! clang-22..20, one subprocess per compile (a clang crash is a failed build, never a
//! dead application), and turning its stdout into SPIR-V words. Knows nothing of
//! OpenCL options beyond the argument list it is given.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// clang versions whose SPIR-V backend we know, newest first.
pub const CLANG_VERSIONS: &[u32] = &[22, 21, 20];

/// The SPIR-V magic number in the first word of a module.
const SPIRV_MAGIC: u32 = 0x0723_0203;

/// Whether `path` is a regular file (after symlinks) with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Finds clang: `clang_env` (the value of `CRANECL_CLANG`) when set and non-empty,
/// else `clang-22`, `clang-21`, `clang-20` on `path_env` (`PATH`), else
/// `/usr/lib/llvm-N/bin/clang`. The error says what was tried.
pub fn locate(clang_env: Option<&OsStr>, path_env: Option<&OsStr>) -> Result<PathBuf, String> {
    if let Some(value) = clang_env.filter(|v| !v.is_empty()) {
        let path = PathBuf::from(value);
        // A bare name is looked up on PATH like a shell would.
        let resolved = if path.components().count() == 1 && !path.is_absolute() {
            path_env.and_then(|p| {
                std::env::split_paths(p)
                    .map(|d| d.join(&path))
                    .find(|c| is_executable(c))
            })
        } else {
            Some(path.clone()).filter(|p| is_executable(p))
        };
        return resolved.ok_or_else(|| {
            format!(
                "CRANECL_CLANG={} is not an executable file (it must name clang 20 or newer)",
                path.display()
            )
        });
    }
    let dirs: Vec<PathBuf> = path_env
        .map(|p| std::env::split_paths(p).collect())
        .unwrap_or_default();
    let mut tried = Vec::new();
    for version in CLANG_VERSIONS {
        let name = format!("clang-{version}");
        for dir in &dirs {
            let candidate = dir.join(&name);
            if is_executable(&candidate) {
                return Ok(candidate);
            }
        }
        tried.push(name);
    }
    for version in CLANG_VERSIONS {
        let candidate = PathBuf::from(format!("/usr/lib/llvm-{version}/bin/clang"));
        if is_executable(&candidate) {
            return Ok(candidate);
        }
        tried.push(candidate.display().to_string());
    }
    Err(format!(
        "no clang with a SPIR-V backend found (tried {} on PATH and /usr/lib/llvm-N/bin); install clang-22 or set CRANECL_CLANG",
        tried[..CLANG_VERSIONS.len()].join(", ")
    ))
}

/// What one clang run produced.
pub struct ClangRun {
    /// Exit code 0.
    pub success: bool,
    pub stdout: Vec<u8>,
    /// clang's diagnostics, verbatim (lossy UTF-8).
    pub stderr: String,
    /// How clang ended when it failed ("exit code 1", "signal 11 (crashed)").
    pub status: String,
}

/// Runs `clang` with `args`, feeding `stdin` to it.
pub fn run(clang: &Path, args: &[OsString], stdin: &[u8]) -> std::io::Result<ClangRun> {
    let mut child = Command::new(clang)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Keep diagnostics plain and in English whatever the user's terminal says.
        .env("LC_ALL", "C")
        .spawn()?;
    let mut input = child.stdin.take();
    // Write the source from another thread: a child that prints a lot before it has
    // read all of its input must not deadlock us.
    let output = std::thread::scope(|scope| {
        let writer = scope.spawn(move || {
            if let Some(pipe) = input.as_mut() {
                // A broken pipe only means clang stopped reading (it failed early);
                // its stderr says why.
                let _ = pipe.write_all(stdin);
            }
            drop(input);
        });
        let output = child.wait_with_output();
        let _ = writer.join();
        output
    })?;
    let status = match (output.status.code(), output.status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("signal {signal} (clang crashed)"),
        (None, None) => "unknown status".to_string(),
    };
    Ok(ClangRun {
        success: output.status.success(),
        stdout: output.stdout,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        status,
    })
}

/// The SPIR-V words in `bytes` (either byte order), checking the magic number.
pub fn spirv_words(bytes: &[u8]) -> Result<Vec<u32>, String> {
    if bytes.len() < 20 || !bytes.len().is_multiple_of(4) {
        return Err(format!(
            "clang's output ({} bytes) is not a SPIR-V module",
            bytes.len()
        ));
    }
    let le: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    if le[0] == SPIRV_MAGIC {
        Ok(le)
    } else if le[0].swap_bytes() == SPIRV_MAGIC {
        Ok(le.into_iter().map(u32::swap_bytes).collect())
    } else {
        Err(format!(
            "clang's output does not start with the SPIR-V magic number (found {:#010x})",
            le[0]
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_honours_override() {
        let err = locate(Some(OsStr::new("/nonexistent/clang")), None).unwrap_err();
        assert!(err.contains("CRANECL_CLANG=/nonexistent/clang"), "{err}");
        // A directory or a non-executable file is refused too.
        let err = locate(Some(OsStr::new("/tmp")), None).unwrap_err();
        assert!(err.contains("/tmp"), "{err}");
        let plain = std::env::temp_dir().join(format!("cranecl-not-exec-{}", std::process::id()));
        std::fs::write(&plain, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = locate(Some(plain.as_os_str()), None).unwrap_err();
        assert!(err.contains("not an executable"), "{err}");
        let _ = std::fs::remove_file(plain);
        // A bare name is searched on PATH.
        let found = locate(
            Some(OsStr::new("sh")),
            Some(OsStr::new("/nonexistent:/bin:/usr/bin")),
        );
        assert!(found.is_ok_and(|p| p.ends_with("sh")));
    }

    #[test]
    fn locate_searches_versions() {
        // Only meaningful where clang-22 is installed (CI and dev machines are).
        if is_executable(Path::new("/usr/bin/clang-22")) {
            assert_eq!(
                locate(None, Some(OsStr::new("/usr/bin"))).unwrap(),
                PathBuf::from("/usr/bin/clang-22")
            );
        }
        // Nothing on PATH: falls back to /usr/lib/llvm-N/bin or reports the names.
        match locate(None, Some(OsStr::new("/nonexistent"))) {
            Ok(p) => assert!(
                p.to_string_lossy().starts_with("/usr/lib/llvm-"),
                "{}",
                p.display()
            ),
            Err(e) => assert!(e.contains("clang-22"), "{e}"),
        }
    }

    #[test]
    fn spirv_words_check_magic() {
        let mut bytes = Vec::new();
        for w in [SPIRV_MAGIC, 0x0001_0000, 0, 10, 0] {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        assert_eq!(spirv_words(&bytes).unwrap()[3], 10);
        let be: Vec<u8> = bytes
            .chunks(4)
            .flat_map(|c| c.iter().rev().copied().collect::<Vec<_>>())
            .collect();
        assert_eq!(spirv_words(&be).unwrap()[3], 10);
        assert!(spirv_words(&bytes[..19]).is_err());
        bytes[0] = 0;
        assert!(spirv_words(&bytes).unwrap_err().contains("magic"));
    }
}
