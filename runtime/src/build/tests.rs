//! Tests of the clang front end with the real clang-22 (installed on dev machines and
//! CI): compiles, diagnostics, option handling, the PCH cache and concurrency.
//! Each test uses its own cache directory; environment variables are only set in
//! child processes.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use super::*;

const SPIRV_MAGIC: u32 = 0x0723_0203;

const ADD: &str = "kernel void add(global float* a, global const float* b) {\n  size_t i = get_global_id(0);\n  a[i] += b[i];\n}\n";

fn clang() -> PathBuf {
    match clang::locate(
        std::env::var_os("CRANECL_CLANG").as_deref(),
        std::env::var_os("PATH").as_deref(),
    ) {
        Ok(p) => p,
        Err(e) => panic!("these tests need clang-22: {e}"),
    }
}

/// A fresh cache directory for one test.
fn cache_dir(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("cranecl-build-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn frontend_with_cache(name: &str) -> (Frontend, PathBuf) {
    let dir = cache_dir(name);
    let cache = PchCache::new(dir.clone(), PchBuild::Blocking).expect("cache dir");
    (Frontend::new(clang(), Some(cache)), dir)
}

fn opts(s: &str) -> BuildOptions {
    options::parse_with_env(s, None).expect("valid options")
}

fn pch_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("pch"))
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "pch"));
    files.sort();
    files
}

#[test]
fn compiles_a_kernel_without_pch() {
    let out = Frontend::new(clang(), None)
        .compile(ADD, &opts(""))
        .expect("compiles");
    assert_eq!(out.spirv[0], SPIRV_MAGIC);
    assert!(out.spirv.len() > 20);
    assert!(!out.log.contains("error"), "{}", out.log);
}

#[test]
fn syntax_error_is_a_failed_build_with_clangs_message() {
    let src = "kernel void k(global int* a) { a[0] = 1 }\n";
    match Frontend::new(clang(), None).compile(src, &opts("")) {
        Err(SourceBuildError::Failed(log)) => {
            assert!(log.contains("error"), "{log}");
            assert!(log.contains("expected ';'"), "{log}");
            assert!(log.contains("1:"), "the log points at the line: {log}");
        }
        other => panic!("expected Failed, got {other:?}"),
    }
}

#[test]
fn warnings_reach_the_log_and_werror_fails() {
    let src = "#warning look here\nkernel void k(global int* a) { a[0] = 1; }\n";
    let out = Frontend::new(clang(), None)
        .compile(src, &opts(""))
        .expect("a warning is no error");
    assert!(out.log.contains("look here"), "{}", out.log);
    assert!(Frontend::new(clang(), None)
        .compile(src, &opts("-w"))
        .expect("compiles")
        .log
        .is_empty());
    assert!(matches!(
        Frontend::new(clang(), None).compile(src, &opts("-Werror")),
        Err(SourceBuildError::Failed(_))
    ));
}

#[test]
fn defines_and_include_dirs_reach_clang() {
    let dir = cache_dir("include");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("val.h"), "#define VAL 7\n").unwrap();
    let src = "#include \"val.h\"\n#if !defined(FOO) || FOO != 3 || VAL != 7\n#error wrong macros\n#endif\nkernel void k(global int* a) { a[0] = S; }\n";
    let (fe, cache) = frontend_with_cache("defines");
    let good = format!("-DFOO=3 -D S=5 -I {}", dir.display());
    fe.compile(src, &opts(&good))
        .expect("macros and include dir seen");
    match fe.compile(src, &opts(&format!("-DFOO=4 -DS=1 -I{}", dir.display()))) {
        Err(SourceBuildError::Failed(log)) => assert!(log.contains("wrong macros"), "{log}"),
        other => panic!("expected #error, got {other:?}"),
    }
    let _ = std::fs::remove_dir_all(dir);
    let _ = std::fs::remove_dir_all(cache);
}

#[test]
fn language_version_and_math_options() {
    let src = "kernel void k(global int* a) { a[0] = __OPENCL_C_VERSION__;\n#ifdef __FAST_RELAXED_MATH__\n a[1] = 1;\n#endif\n}\n";
    let fe = Frontend::new(clang(), None);
    for o in [
        "-cl-std=CL1.2",
        "-cl-std=CL2.0",
        "-cl-std=CL3.0 -cl-fast-relaxed-math",
        "-cl-mad-enable -cl-no-signed-zeros",
        "-cl-opt-disable -cl-kernel-arg-info",
    ] {
        fe.compile(src, &opts(o))
            .unwrap_or_else(|e| panic!("{o}: {e}"));
    }
    // Without -cl-std: OpenCL C 1.2, the spec's default.
    let v = "#if __OPENCL_C_VERSION__ != 120\n#error wrong default version\n#endif\nkernel void k(global int* a) { a[0] = 1; }\n";
    fe.compile(v, &opts("")).expect("compiled as OpenCL C 1.2");
    let generic = "void f(int* p) { *p = 1; }\nkernel void k(global int* a) { f(a); }\n";
    // The generic address space: core in OpenCL C 2.0, a feature in 3.0 that clang
    // offers exactly when the device claims it, never in 1.2.
    assert!(fe.compile(generic, &opts("-cl-std=CL2.0")).is_ok());
    assert_eq!(
        fe.compile(generic, &opts("-cl-std=CL3.0")).is_ok(),
        crate::features::generic_address_space()
    );
    assert!(fe.compile(generic, &opts("-cl-std=CL1.2")).is_err());
}

#[test]
fn intel_sub_group_builtins_compile() {
    let src = "kernel void k(global float* a, global uint* b) {\n  float x = a[get_global_id(0)];\n  x = intel_sub_group_shuffle(x, 0u) + sub_group_reduce_add(x);\n  uint v = intel_sub_group_block_read((const global uint*)b);\n  a[get_global_id(0)] = x + v;\n}\n";
    let (fe, dir) = frontend_with_cache("intel");
    let out = fe.compile(src, &opts("")).expect("compiles");
    assert_eq!(out.spirv[0], SPIRV_MAGIC);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn pch_is_built_once_reused_and_gives_the_same_module() {
    let (fe, dir) = frontend_with_cache("reuse");
    let o = opts("-DX=1");
    assert!(pch_files(&dir).is_empty());
    let first = fe.compile(ADD, &o).expect("compiles");
    let files = pch_files(&dir);
    assert_eq!(files.len(), 1, "one PCH after the first compile");
    let mtime = std::fs::metadata(&files[0]).unwrap().modified().unwrap();
    assert!(fe.pch_ready(&o));
    // Same language options (only -D differs): same PCH, not rebuilt.
    let second = fe
        .compile(ADD, &opts("-DX=2 -w -cl-kernel-arg-info -cl-opt-disable"))
        .expect("compiles");
    assert_eq!(pch_files(&dir), files);
    assert_eq!(
        std::fs::metadata(&files[0]).unwrap().modified().unwrap(),
        mtime
    );
    // A new process (a new cache object on the same directory) picks it up too.
    let fe2 = Frontend::new(clang(), PchCache::new(dir.clone(), PchBuild::Background));
    assert!(fe2.pch_ready(&o));
    // The module equals the one compiled without a PCH.
    let plain = Frontend::new(clang(), None)
        .compile(ADD, &o)
        .expect("compiles");
    assert_eq!(first.spirv, plain.spirv);
    assert_eq!(second.spirv, plain.spirv);
    // Different language options: a second PCH.
    fe.compile(ADD, &opts("-cl-fast-relaxed-math"))
        .expect("compiles");
    fe.compile(ADD, &opts("-cl-std=CL3.0")).expect("compiles");
    assert_eq!(pch_files(&dir).len(), 3);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_broken_pch_falls_back_and_is_deleted() {
    let (fe, dir) = frontend_with_cache("broken");
    let o = opts("");
    fe.compile(ADD, &o).expect("compiles");
    let files = pch_files(&dir);
    assert_eq!(files.len(), 1);
    std::fs::write(&files[0], b"not a precompiled header").unwrap();
    let out = fe.compile(ADD, &o).expect("falls back to the plain header");
    assert_eq!(out.spirv[0], SPIRV_MAGIC);
    assert!(!files[0].exists(), "the refused PCH is deleted");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn concurrent_compiles_do_not_collide() {
    let dir = cache_dir("concurrent");
    let cache = PchCache::new(dir.clone(), PchBuild::Blocking).expect("cache dir");
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let cache = Arc::clone(&cache);
            std::thread::spawn(move || {
                let fe = Frontend::new(clang(), Some(cache));
                for i in 0..3 {
                    let src =
                        format!("kernel void k{t}_{i}(global int* a) {{ a[0] = {t}*100+{i}; }}\n");
                    let out = fe.compile(&src, &opts("")).expect("compiles");
                    // The kernel's name is in the module: each thread got its own output.
                    let bytes: Vec<u8> = out.spirv.iter().flat_map(|w| w.to_le_bytes()).collect();
                    let name = format!("k{t}_{i}");
                    assert!(
                        bytes.windows(name.len()).any(|w| w == name.as_bytes()),
                        "{name} missing"
                    );
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("compiling thread");
    }
    assert_eq!(pch_files(&dir).len(), 1);
    let leftovers: Vec<_> = std::fs::read_dir(dir.join("pch"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_crashing_clang_is_a_failed_build() {
    let dir = cache_dir("crash");
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("clang-crash");
    std::fs::write(
        &script,
        "#!/bin/sh\necho 'PLEASE submit a bug report' >&2\nkill -SEGV $$\n",
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    match Frontend::new(script, None).compile(ADD, &opts("")) {
        Err(SourceBuildError::Failed(log)) => {
            assert!(log.contains("PLEASE submit"), "{log}");
            assert!(log.contains("signal 11"), "{log}");
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Runs one test of this binary in a child process with extra environment variables.
fn run_child(test: &str, env: &[(&str, &str)]) {
    let exe = std::env::current_exe().expect("test binary");
    let mut cmd = Command::new(exe);
    cmd.args([
        "--exact",
        test,
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ]);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("child test runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "child {test} failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn cranecl_clang_nonexistent_is_clang_not_found() {
    run_child(
        "build::tests::child_clang_not_found",
        &[("CRANECL_CLANG", "/nonexistent/clang-99")],
    );
}

#[test]
#[ignore = "run by cranecl_clang_nonexistent_is_clang_not_found in a child process"]
fn child_clang_not_found() {
    match compile_source(ADD, &opts("")) {
        Err(SourceBuildError::ClangNotFound(msg)) => {
            assert!(msg.contains("/nonexistent/clang-99"), "{msg}")
        }
        other => panic!("expected ClangNotFound, got {other:?}"),
    }
}

#[test]
fn compile_source_with_environment() {
    let dir = cache_dir("env");
    run_child(
        "build::tests::child_compile_source",
        &[
            ("CRANECL_CACHE_DIR", dir.to_str().expect("utf-8 temp dir")),
            ("CRANECL_SUBGROUP_WIDTH", "16"),
        ],
    );
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
#[ignore = "run by compile_source_with_environment in a child process"]
fn child_compile_source() {
    let o = BuildOptions::parse("-cl-mad-enable").expect("valid");
    assert_eq!(o.jit.default_sub_group_width, Some(16));
    // The background PCH build starts with the first compile; both compiles succeed
    // whether or not it is ready yet.
    let a = compile_source(ADD, &o).expect("compiles");
    let b = compile_source(ADD, &o).expect("compiles");
    assert_eq!(a.spirv, b.spirv);
    let dir = PathBuf::from(std::env::var_os("CRANECL_CACHE_DIR").expect("set by parent"));
    assert!(dir.join("include").is_dir());
}

#[test]
fn embedded_headers_are_found() {
    let src = "#include \"defs.h\"\n#include \"sub/more.h\"\nkernel void k(global int* a) { a[0] = A + B; }\n";
    let fe = Frontend::new(clang(), None);
    let headers = [("defs.h", "#define A 1\n"), ("sub/more.h", "#define B 2\n")];
    fe.compile_with_headers(src, &opts(""), &headers)
        .expect("headers found");
    match fe.compile_with_headers(src, &opts(""), &headers[..1]) {
        Err(SourceBuildError::Failed(log)) => assert!(log.contains("sub/more.h"), "{log}"),
        other => panic!("expected a missing-header error, got {other:?}"),
    }
    assert!(matches!(
        fe.compile_with_headers(src, &opts(""), &[("../x.h", "")]),
        Err(SourceBuildError::Failed(msg)) if msg.contains("invalid header include name")
    ));
}

/// Whether SPIR-V `words` contain the string `name` (an OpName / OpEntryPoint).
fn has_name(words: &[u32], name: &str) -> bool {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    bytes.windows(name.len()).any(|w| w == name.as_bytes())
}

#[test]
fn separately_compiled_modules_link() {
    let fe = Frontend::new(clang(), None);
    let main = fe
        .compile("float helper(float x);\nkernel void k(global float* a) { a[get_global_id(0)] = helper(a[0]); }\n", &opts(""))
        .expect("compiles");
    let lib = fe
        .compile(
            "float helper(float x) { return x * 2.0f + 1.0f; }\n",
            &opts(""),
        )
        .expect("compiles");
    let linked = link_spirv(&[&main.spirv, &lib.spirv], false).expect("links");
    assert_eq!(linked[0], SPIRV_MAGIC);
    assert!(has_name(&linked, "helper") && has_name(&linked, "k"));
    compile_spirv(&linked, &CompileOptions::default()).expect("the executable compiles");
    // Without the helper the import stays and the executable does not compile.
    let alone = link_spirv(&[&main.spirv], false).expect("links");
    let err = compile_spirv(&alone, &CompileOptions::default())
        .err()
        .expect("helper missing");
    assert!(err.message.contains("helper"), "{}", err.message);
    let partial = link_spirv(&[&main.spirv], true).expect("a library may import");
    let full = link_spirv(&[&partial, &lib.spirv], false).expect("library + definition link");
    assert!(has_name(&full, "helper"));
    compile_spirv(&full, &CompileOptions::default()).expect("compiles");
    assert!(link_spirv(&[], false).is_err());
}

#[test]
fn memo_skips_clang_for_an_identical_rebuild() {
    let dir = cache_dir("memo");
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("runs");
    let script = dir.join("clang-counting");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho run >> {}\nexec {} \"$@\"\n",
            log.display(),
            clang().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let runs = || std::fs::read_to_string(&log).map_or(0, |s| s.lines().count());
    let fe = Frontend::new(script, None).with_memo(true);
    // A source unique to this test run, so no other test fills the memo for it.
    let src = format!(
        "kernel void memo_{}(global int* a) {{ a[0] = 1; }}\n",
        std::process::id()
    );
    let a = fe.compile(&src, &opts("-DX=1")).expect("compiles");
    let b = fe.compile(&src, &opts("-DX=1")).expect("compiles");
    assert_eq!(a.spirv, b.spirv);
    assert_eq!(runs(), 1, "the second compile came from the memo");
    fe.compile(&src, &opts("-DX=2")).expect("compiles");
    assert_eq!(runs(), 2, "other options: clang runs again");
    // A source that includes files is never memoised (the files may change).
    let with_include = format!("#include \"{}\"\n{src}", dir.join("h.h").display());
    std::fs::write(dir.join("h.h"), "").unwrap();
    fe.compile(&with_include, &opts("")).expect("compiles");
    fe.compile(&with_include, &opts("")).expect("compiles");
    assert_eq!(runs(), 4);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_short_lived_process_still_leaves_a_pch() {
    let dir = cache_dir("short-lived");
    run_child(
        "build::tests::child_compile_and_exit",
        &[("CRANECL_CACHE_DIR", dir.to_str().expect("utf-8 temp dir"))],
    );
    // The child exited right after its compile; the background PCH build finishes on
    // its own and moves the file into place.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while pch_files(&dir).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        pch_files(&dir).len(),
        1,
        "PCH left behind by the exited process"
    );
    // Lock and temp files are gone once the build is over.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let leftovers = || {
        std::fs::read_dir(dir.join("pch"))
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .filter(|e| !e.file_name().to_string_lossy().ends_with(".pch"))
                    .count()
            })
            .unwrap_or(0)
    };
    while leftovers() > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(leftovers(), 0);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
#[ignore = "run by a_short_lived_process_still_leaves_a_pch in a child process"]
fn child_compile_and_exit() {
    compile_source(ADD, &opts("-DSHORT_LIVED")).expect("compiles");
}

#[test]
fn a_fresh_lock_defers_to_the_other_builder() {
    let (fe, dir) = frontend_with_cache("lock");
    // Simulate another process building every PCH: hold a lock for any key by
    // compiling once to learn the key's file name, then locking that name.
    fe.compile(ADD, &opts("")).expect("compiles");
    let pch = pch_files(&dir).pop().expect("a PCH");
    std::fs::remove_file(&pch).unwrap();
    let lock = pch.with_extension("lock");
    std::fs::write(&lock, b"").unwrap();
    let fe2 = Frontend::new(clang(), PchCache::new(dir.clone(), PchBuild::Blocking));
    assert!(
        !fe2.pch_ready(&opts("")),
        "no second build while the lock is fresh"
    );
    assert!(pch_files(&dir).is_empty());
    fe2.compile(ADD, &opts(""))
        .expect("compiles without a PCH meanwhile");
    std::fs::remove_file(&lock).unwrap();
    assert!(fe2.pch_ready(&opts("")), "builds once the lock is gone");
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn an_identical_jit_compile_reuses_the_kernels() {
    let spirv = Frontend::new(clang(), None)
        .compile(ADD, &opts(""))
        .expect("compiles")
        .spirv;
    let o = opts("");
    let first = compile_spirv(&spirv, &o.jit).expect("the jit compiles the test kernel");
    let second = compile_spirv(&spirv, &o.jit).expect("compiles again");
    assert!(
        Arc::ptr_eq(&first.kernels[0], &second.kernels[0]),
        "served from the memo"
    );
    // Other options: compiled anew.
    let third = compile_spirv(&spirv, &opts("-cl-fast-relaxed-math").jit).expect("compiles");
    assert!(!Arc::ptr_eq(&first.kernels[0], &third.kernels[0]));
}

#[test]
fn kernels_compiled_in_parallel_keep_their_order_and_work() {
    let src = "kernel void a(global int* o) { o[get_global_id(0)] = 1; }\n\
               kernel void b(global int* o, int k) { o[get_global_id(0)] = (int)get_global_id(0) * k; }\n\
               constant int table[4] = {5, 6, 7, 8};\n\
               kernel void c(global int* o) { o[get_global_id(0)] = table[get_global_id(0) % 4]; }\n";
    let spirv = Frontend::new(clang(), None)
        .compile(src, &opts(""))
        .expect("compiles")
        .spirv;
    let program = compile_kernels_in_parallel(&spirv, &opts("").jit)
        .expect("the jit compiles the test kernels");
    let names: Vec<&str> = program
        .kernels
        .iter()
        .map(|k| k.info.name.as_str())
        .collect();
    assert_eq!(names, ["a", "b", "c"]);
    for (name, extra, want) in [
        ("b", Some(3i32), [0, 3, 6, 9, 12, 15, 18, 21]),
        ("c", None, [5, 6, 7, 8, 5, 6, 7, 8]),
    ] {
        let k = program.kernel(name).expect("kernel");
        let mut out = [0i32; 8];
        let mut args = vec![0u8; k.info.arg_block_size];
        let o = &k.info.args[0];
        args[o.offset..o.offset + 8]
            .copy_from_slice(&(out.as_mut_ptr() as usize as u64).to_ne_bytes());
        if let Some(v) = extra {
            let a = &k.info.args[1];
            args[a.offset..a.offset + 4].copy_from_slice(&v.to_ne_bytes());
        }
        let launch = crate::exec::Launch {
            kernel: Arc::clone(k),
            args,
            local_args: Vec::new(),
            ndrange: crate::exec::NdRange {
                work_dim: 1,
                global_offset: [0; 3],
                global_size: [8, 1, 1],
                local_size: [4, 1, 1],
            },
            threads: crate::exec::num_workers(),
        };
        crate::exec::try_run_ndrange(&launch).expect("runs");
        assert_eq!(out, want, "kernel {name}");
    }
}

#[test]
fn local_arrays_only_passed_to_builtins_keep_their_size() {
    // clang-22's backend would declare `data` as one ushort (see local_retype).
    let src = "kernel void k(global const float* p, global ushort* f) {\n\
               __local ushort data[2048];\n\
               size_t lid = get_local_id(0);\n\
               vstore_half(p[get_global_id(0)], lid, (__local half*)data);\n\
               barrier(CLK_LOCAL_MEM_FENCE);\n\
               event_t e = async_work_group_copy(f, data, get_local_size(0), 0);\n\
               wait_group_events(1, &e);\n}\n";
    for std in ["", "-cl-std=CL3.0"] {
        let out = Frontend::new(clang(), None)
            .compile(src, &opts(std))
            .expect("compiles");
        assert!(!local_retype::has_retyped_local(&out.spirv), "{std}");
        let m = cranecl_jit::spirv::decode(&out.spirv).expect("decodes");
        let sizes: Vec<u64> = m
            .globals
            .values()
            .filter(|g| g.storage == cranecl_jit::spirv::Storage::Workgroup)
            .map(|g| m.layout(m.pointee(g.ty).unwrap().1).unwrap().size)
            .collect();
        assert_eq!(sizes, vec![4096], "{std}");
    }
}
