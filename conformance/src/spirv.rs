//! OpenCL C -> SPIR-V at test time, with the same clang the driver uses.
//!
//! Tests of `clCreateProgramWithIL` need real modules; producing them here from source
//! keeps them readable and current with the installed clang. The clang binary is
//! `CRANECL_TEST_CLANG` if set, else the first of clang-22..clang-20 on `PATH`.

use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The clang binary used for test-time SPIR-V, if any.
pub fn clang() -> Option<PathBuf> {
    if let Ok(path) = std::env::var("CRANECL_TEST_CLANG") {
        return Some(PathBuf::from(path));
    }
    ["clang-22", "clang-21", "clang-20"]
        .iter()
        .find_map(|name| {
            let found = Command::new(name).arg("--version").output().ok()?;
            found.status.success().then(|| PathBuf::from(name))
        })
}

/// A fresh, unique path in the temporary directory.
pub fn temp_path(stem: &str, ext: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!(
        "cranecl-test-{}-{n}-{stem}.{ext}",
        std::process::id()
    ))
}

/// Compiles OpenCL C `source` to a SPIR-V module (bytes) with `extra` clang options
/// added to the usual `-cc1 -triple spirv64-unknown-unknown -cl-std=CL3.0` line.
/// Returns the clang diagnostics as the error.
pub fn compile(source: &str, extra: &[&str]) -> Result<Vec<u8>, String> {
    let clang = clang().ok_or("no clang-22/21/20 found (set CRANECL_TEST_CLANG)")?;
    let input = temp_path("kernel", "cl");
    let output = temp_path("kernel", "spv");
    std::fs::write(&input, source).map_err(|e| format!("writing {}: {e}", input.display()))?;
    let result = Command::new(&clang)
        .args(["-cc1", "-triple", "spirv64-unknown-unknown", "-cl-std=CL3.0"])
        .args(["-finclude-default-header", "-O2"])
        .arg("-cl-ext=+cl_khr_subgroups,+cl_intel_subgroups,+__opencl_c_subgroups,+cl_khr_fp64,+__opencl_c_fp64,+__opencl_c_int64")
        .args(["-mllvm", "-spirv-ext=+SPV_INTEL_subgroups"])
        .args(extra)
        .arg("-emit-obj")
        .arg("-o")
        .arg(&output)
        .arg(&input)
        .output();
    let _ = std::fs::remove_file(&input);
    let result = result.map_err(|e| format!("running {}: {e}", clang.display()))?;
    if !result.status.success() {
        let _ = std::fs::remove_file(&output);
        return Err(format!(
            "{} failed ({}):\n{}",
            clang.display(),
            result.status,
            String::from_utf8_lossy(&result.stderr)
        ));
    }
    let words = std::fs::read(&output).map_err(|e| format!("reading {}: {e}", output.display()));
    let _ = std::fs::remove_file(&output);
    let words = words?;
    if words.len() < 20 || words[..4] != [0x03, 0x02, 0x23, 0x07] {
        return Err(format!(
            "clang output is not a SPIR-V module ({} bytes)",
            words.len()
        ));
    }
    Ok(words)
}

/// SPIR-V assembly -> module bytes with `spirv-as` (SPIRV-Tools) for the SPIR-V
/// version `env` (e.g. "spv1.0"), for instructions clang never emits
/// (specialization constants, structured merges). The assembler's message is the
/// error.
pub fn assemble(text: &str, env: &str) -> Result<Vec<u8>, String> {
    let input = temp_path("module", "spvasm");
    let output = temp_path("module", "spv");
    std::fs::write(&input, text).map_err(|e| format!("writing {}: {e}", input.display()))?;
    let result = Command::new("spirv-as")
        .args(["--target-env", env, "-o"])
        .arg(&output)
        .arg(&input)
        .output();
    let _ = std::fs::remove_file(&input);
    let result = result.map_err(|e| format!("running spirv-as (apt install spirv-tools): {e}"))?;
    if !result.status.success() {
        let _ = std::fs::remove_file(&output);
        return Err(format!(
            "spirv-as failed:\n{}",
            String::from_utf8_lossy(&result.stderr)
        ));
    }
    let bytes = std::fs::read(&output).map_err(|e| format!("reading {}: {e}", output.display()));
    let _ = std::fs::remove_file(&output);
    bytes
}

/// [`assemble`] for a test: the module, or None when spirv-as is missing on another
/// platform (on cranecl that fails the test, as [`crate::require`] does: its tests
/// never skip a check); an assembler error panics with the text.
pub fn assemble_for_test(text: &str, env: &str) -> Option<Vec<u8>> {
    match assemble(text, env) {
        Ok(b) => Some(b),
        Err(e) if e.contains("running spirv-as") => {
            crate::require(false, "spirv-as (spirv-tools)");
            None
        }
        Err(e) => panic!("{e}\n{text}"),
    }
}
