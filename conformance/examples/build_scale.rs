//! Build time and peak memory of one kernel against its size, per shape: how a
//! driver's compiler scales (issue: a 1000-statement kernel must build in under 2 s
//! and 500 MB; a 10 000-statement kernel must build or fail with
//! `CL_OUT_OF_RESOURCES`, never abort the process).
//!
//! Each shape is an OpenCL C kernel generated with N "statements" of one kind (many
//! values live at once, divergent branches, loads and stores, loops, barriers with
//! many live values, sub-group operations, one big switch, deep nesting, straight-line
//! arithmetic, private arrays, calls inlined many times). Every measurement runs in a
//! child process (a fresh driver, its own peak RSS): the child creates a context,
//! builds a tiny warm-up kernel (so one-time costs such as a precompiled header are
//! not counted), then times `clBuildProgram` + `clCreateKernel` of the generated
//! kernel and runs it once. The parent kills a child that exceeds the time or memory
//! limit and reports it.
//!
//! Run (the platform is chosen like the conformance tests: `CRANECL_TEST_PLATFORM`,
//! default cranecl):
//!
//! ```sh
//! make icd
//! OCL_ICD_VENDORS=$PWD/build/icd cargo run --release -p cranecl-conformance --example build_scale
//! CRANECL_TEST_PLATFORM=Portable cargo run --release -p cranecl-conformance --example build_scale
//! cargo run --release -p cranecl-conformance --example build_scale -- --sizes 100,1000 --shapes live,switch
//! cargo run --release -p cranecl-conformance --example build_scale -- --emit switch 100   # print the source
//! ```
//!
//! Options: `--sizes a,b,..` (default 100,1000,10000), `--shapes a,b,..` (default all),
//! `--timeout SECONDS` (default 120), `--mem-limit MB` (default 6000),
//! `--emit SHAPE N`.

use std::fmt::Write as _;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cranecl_conformance::{error_name, DeviceContext};

/// Work-items of the one launch (one work-group: the barrier shape uses `__local`
/// memory of this many floats).
const ITEMS: usize = 64;

/// The shapes, in table order: name and what it stresses.
const SHAPES: &[(&str, &str)] = &[
    ("live", "N values live at once"),
    ("branches", "N divergent ifs"),
    ("memory", "N loads and stores"),
    ("loops", "N loops with per-item trip counts"),
    ("barriers", "a barrier every 8 statements, all values live"),
    ("subgroup", "N sub-group reduce/scan/broadcast"),
    ("switch", "one divergent switch with N cases"),
    ("nesting", "ifs nested 100 deep, N in all"),
    ("straight", "N statements of straight-line arithmetic"),
    ("arrays", "N private arrays indexed per item"),
    ("calls", "a noinline function called N times"),
];

/// The OpenCL C source of shape `shape` with `n` statements; the kernel is `k`.
fn source(shape: &str, n: usize) -> Option<String> {
    let mut s = String::new();
    let head = "kernel void k(global const float *in, global float *out, global const int *ix, \
                local float *tmp, int m)\n{\n  size_t gid = get_global_id(0);\n  \
                int x = ix[gid];\n  float acc = in[gid];\n";
    let c = |i: usize| 1.0 + (i % 7) as f64 * 0.125;
    match shape {
        "live" => {
            s.push_str(head);
            for i in 0..n {
                let _ = writeln!(s, "  float v{i} = in[gid + {i}] * {:.3}f;", c(i));
            }
            for i in (0..n).rev() {
                let _ = writeln!(s, "  acc = acc * 0.5f + v{i};");
            }
        }
        "branches" => {
            s.push_str(head);
            for i in 0..n {
                let _ = writeln!(
                    s,
                    "  if ((x >> {}) & 1) acc = acc * {:.3}f + in[gid + {i}];",
                    i % 16,
                    c(i)
                );
            }
        }
        "memory" => {
            s.push_str(head);
            for i in 0..n {
                if i % 2 == 0 {
                    let _ = writeln!(s, "  out[gid + {i} * m] = in[gid + {i}] * {:.3}f;", c(i));
                } else {
                    let _ = writeln!(s, "  out[gid + {i} * m] = in[(x & 63) + {i}] + acc;");
                }
            }
        }
        "loops" => {
            s.push_str(head);
            for i in 0..n {
                let _ = writeln!(
                    s,
                    "  for (int j = 0; j < ((x + {i}) & 3); j++) acc = acc * {:.3}f + in[gid + j + {i}];",
                    c(i)
                );
            }
        }
        "barriers" => {
            s.push_str(head);
            s.push_str("  size_t lid = get_local_id(0);\n  tmp[lid] = acc;\n  barrier(CLK_LOCAL_MEM_FENCE);\n");
            for i in 0..n {
                let _ = writeln!(s, "  float v{i} = tmp[(lid + {i}) & 63] * {:.3}f;", c(i));
                if i % 8 == 7 {
                    let _ = writeln!(
                        s,
                        "  barrier(CLK_LOCAL_MEM_FENCE);\n  tmp[lid] = v{i} + in[gid + {i}];\n  barrier(CLK_LOCAL_MEM_FENCE);"
                    );
                }
            }
            for i in (0..n).rev() {
                let _ = writeln!(s, "  acc = acc * 0.5f + v{i};");
            }
        }
        "subgroup" => {
            s.push_str(head);
            for i in 0..n {
                let op = match i % 4 {
                    0 => format!("sub_group_reduce_add(in[gid + {i}])"),
                    1 => format!("sub_group_scan_inclusive_add(acc * {:.3}f)", c(i)),
                    2 => format!("sub_group_broadcast(acc, {}u)", i % 4),
                    _ => format!("sub_group_reduce_max(in[gid + {i}] - acc)"),
                };
                let _ = writeln!(s, "  acc = acc * 0.5f + {op};");
            }
        }
        "switch" => {
            s.push_str(head);
            let _ = writeln!(s, "  switch ((x * 7 + 3) % {n}) {{");
            for i in 0..n {
                let body = match i % 3 {
                    0 => format!("acc = acc * {:.3}f + in[gid + {i}];", c(i)),
                    1 => format!("acc = acc + {i}.0f; out[gid] = acc;"),
                    _ => format!("acc = sqrt(acc + {i}.0f);"),
                };
                let _ = writeln!(s, "  case {i}: {body} break;");
            }
            s.push_str("  }\n");
        }
        "nesting" => {
            s.push_str(head);
            let mut left = n;
            let mut nest = 0;
            while left > 0 {
                let depth = left.min(100);
                for d in 0..depth {
                    let _ = writeln!(
                        s,
                        "{:w$}if (x > {}) {{ acc = acc * {:.3}f + in[gid + {d}];",
                        "",
                        d * 3 + nest,
                        c(d),
                        w = d + 2
                    );
                }
                s.push_str(&"}".repeat(depth));
                s.push('\n');
                left -= depth;
                nest += 1;
            }
        }
        "straight" => {
            s.push_str(head);
            s.push_str("  float b = in[gid + 1];\n  int k = x;\n");
            for i in 0..n {
                let line = match i % 4 {
                    0 => format!("acc = acc * b + {:.3}f;", c(i)),
                    1 => format!("b = b - acc * {:.3}f;", c(i) * 0.01),
                    2 => format!("k = (k * {} + {}) ^ (k >> 3);", 1 + 2 * (i % 5), i),
                    _ => "acc = acc + (float)(k & 15);".to_string(),
                };
                let _ = writeln!(s, "  {line}");
            }
            s.push_str("  acc += b;\n");
        }
        "arrays" => {
            s.push_str(head);
            for i in 0..n {
                let _ = writeln!(
                    s,
                    "  {{ float p[4]; for (int j = 0; j < 4; j++) p[j] = in[gid + j + {i}]; \
                     p[(x + {i}) & 3] += acc; acc = acc * 0.5f + p[(x + {}) & 3]; }}",
                    i + 1
                );
            }
        }
        "calls" => {
            s.push_str(
                "__attribute__((noinline)) float f(float a, int x, global const float *in)\n{\n  \
                 if (x & 1) a = a * 1.5f + in[x & 63];\n  \
                 for (int j = 0; j < (x & 3); j++) a = a * 0.5f + (float)j;\n  return a;\n}\n",
            );
            s.push_str(head);
            for i in 0..n {
                let _ = writeln!(s, "  acc = f(acc, x + {i}, in);");
            }
        }
        _ => return None,
    }
    s.push_str("  out[gid] = acc;\n}\n");
    Some(s)
}

/// Elements of the input and output buffers for `n` statements.
fn buffer_len(n: usize) -> usize {
    (n + 8) * ITEMS + 2 * n + 256
}

/// One measurement (in the child): prints `ok|<error name> build_s run_s peak_kb
/// base_kb`.
fn measure(shape: &str, n: usize) {
    let src = source(shape, n).unwrap_or_else(|| panic!("unknown shape {shape}"));
    let dev = DeviceContext::new();
    // Warm-up: one-time costs (precompiled header, compiler start-up) are not counted.
    let warm = dev.build(
        "kernel void w(global float *a) { a[get_global_id(0)] += 1.0f; }",
        "",
    );
    drop(warm);
    let base_kb = status_kb("VmRSS:");
    let cpu0 = cpu_seconds();
    let started = Instant::now();
    let built = dev.try_build(&src, "").and_then(|p| {
        p.try_kernel("k")
            .map_err(|e| cranecl_conformance::BuildFailure {
                code: e.code,
                log: String::new(),
            })
    });
    let build_s = started.elapsed().as_secs_f64();
    let cpu_s = cpu_seconds() - cpu0;
    let (status, run_s) = match built {
        Ok(kernel) => {
            let len = buffer_len(n);
            let input: Vec<f32> = (0..len).map(|i| (i % 97) as f32 * 0.01).collect();
            let ix: Vec<i32> = (0..len).map(|i| ((i * 37) % 1000) as i32).collect();
            let a = dev.buffer_from(&input);
            let o = dev.buffer_zeroed::<f32>(len);
            let xb = dev.buffer_from(&ix);
            kernel
                .arg_buffer(0, &a)
                .arg_buffer(1, &o)
                .arg_buffer(2, &xb)
                .arg_local(3, ITEMS * 4)
                .arg(4, ITEMS as i32);
            let t = Instant::now();
            // A launch the device refuses (e.g. CL_OUT_OF_RESOURCES) is a status of
            // its own, not a crash of the measurement.
            match dev.try_enqueue(&kernel, None, &[ITEMS], Some(&[ITEMS])) {
                Ok(_) => {
                    dev.finish();
                    ("ok".to_string(), t.elapsed().as_secs_f64())
                }
                Err(e) => (format!("launch:{}", error_name(e.code)), 0.0),
            }
        }
        Err(f) => {
            let first = f.log.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            eprintln!("{}: {first}", error_name(f.code));
            (error_name(f.code).to_string(), 0.0)
        }
    };
    println!(
        "RESULT {status} {build_s:.3} {cpu_s:.3} {run_s:.3} {} {base_kb} {}",
        status_kb("VmHWM:"),
        children_peak_kb()
    );
}

/// CPU time (user + system) of this process and its waited-for children (the
/// compiler processes a driver runs) so far, from /proc/self/stat (clock ticks of
/// 1/100 s, the Linux default `USER_HZ`).
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            // Fields after the command name (which may hold spaces) in parentheses.
            let rest = s.rsplit_once(')')?.1;
            let f: Vec<&str> = rest.split_whitespace().collect();
            let utime: f64 = f.get(11)?.parse().ok()?;
            let stime: f64 = f.get(12)?.parse().ok()?;
            let cutime: f64 = f.get(13)?.parse().ok()?;
            let cstime: f64 = f.get(14)?.parse().ok()?;
            Some((utime + stime + cutime + cstime) / 100.0)
        })
        .unwrap_or(0.0)
}

/// Peak RSS (kB) of the largest waited-for child process (e.g. the driver's clang).
fn children_peak_kb() -> i64 {
    // SAFETY: getrusage fills the zero-initialised struct it is given.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        if libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) == 0 {
            ru.ru_maxrss
        } else {
            0
        }
    }
}

/// A `kB` field of /proc/self/status.
fn status_kb(field: &str) -> u64 {
    proc_status_kb("self", field)
}

fn proc_status_kb(pid: &str, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Runs one measurement in a child process, enforcing the limits.
fn run_child(shape: &str, n: usize, timeout: Duration, mem_limit_kb: u64) -> String {
    let exe = std::env::current_exe().expect("current exe");
    let mut child = Command::new(exe)
        .args(["--one", shape, &n.to_string()])
        // PoCL caches compiled kernels on disk: measure its compiler, not its cache.
        .env("POCL_KERNEL_CACHE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawning the measuring child");
    let pid = child.id().to_string();
    let started = Instant::now();
    let mut max_rss = 0;
    let killed = loop {
        if let Some(status) = child.try_wait().expect("waiting for the child") {
            let mut out = String::new();
            let mut err = String::new();
            let _ = child.stdout.take().map(|mut o| o.read_to_string(&mut out));
            let _ = child.stderr.take().map(|mut e| e.read_to_string(&mut err));
            if let Some(line) = out.lines().find(|l| l.starts_with("RESULT ")) {
                if !err.trim().is_empty() {
                    eprintln!("  {shape} {n}: {}", err.trim());
                }
                return line.to_string();
            }
            eprintln!("  {shape} {n}: child ended with {status}: {}", err.trim());
            return format!(
                "RESULT crashed({status}) {:.3} - 0 {max_rss} 0 0",
                started.elapsed().as_secs_f64()
            );
        }
        let rss = proc_status_kb(&pid, "VmRSS:");
        max_rss = max_rss.max(rss);
        if rss > mem_limit_kb {
            break "memory";
        }
        if started.elapsed() > timeout {
            break "timeout";
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let _ = child.kill();
    let _ = child.wait();
    format!(
        "RESULT killed({killed}) {:.3} - 0 {max_rss} 0 0",
        started.elapsed().as_secs_f64()
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .map(|i| args.get(i + 1).cloned().unwrap_or_default())
    };
    if let Some(i) = args.iter().position(|a| a == "--one") {
        let n = args[i + 2].parse().expect("size");
        measure(&args[i + 1], n);
        return;
    }
    if let Some(i) = args.iter().position(|a| a == "--emit") {
        let n = args.get(i + 2).and_then(|v| v.parse().ok()).unwrap_or(100);
        match source(&args[i + 1], n) {
            Some(s) => print!("{s}"),
            None => eprintln!(
                "unknown shape; shapes: {:?}",
                SHAPES.iter().map(|s| s.0).collect::<Vec<_>>()
            ),
        }
        return;
    }
    let sizes: Vec<usize> = arg("--sizes")
        .unwrap_or_else(|| "100,1000,10000".into())
        .split(',')
        .map(|v| v.trim().parse().expect("--sizes: numbers"))
        .collect();
    let shapes: Vec<&str> = match arg("--shapes") {
        Some(list) => SHAPES
            .iter()
            .map(|s| s.0)
            .filter(|s| list.split(',').any(|w| w == *s))
            .collect(),
        None => SHAPES.iter().map(|s| s.0).collect(),
    };
    let timeout =
        Duration::from_secs(arg("--timeout").map_or(120, |v| v.parse().expect("--timeout")));
    let mem_limit_kb =
        arg("--mem-limit").map_or(6000, |v| v.parse::<u64>().expect("--mem-limit")) * 1024;

    println!(
        "platform {:?}; build = wall time of clBuildProgram + clCreateKernel (cpu: its CPU \
         time, with child processes); peak = peak RSS of the process, +build = its growth \
         during the build, child = peak RSS of the largest child process (clang); run = \
         first launch (PoCL compiles the kernel there)",
        cranecl_conformance::wanted_platform_name()
    );
    println!();
    println!("| shape | N | status | build s | cpu s | peak MB | +build MB | child MB | run s |");
    println!("|---|---:|---|---:|---:|---:|---:|---:|---:|");
    for shape in shapes {
        for &n in &sizes {
            let line = run_child(shape, n, timeout, mem_limit_kb);
            let f: Vec<&str> = line.split_whitespace().collect();
            let (status, build, cpu, run, peak, base) = (f[1], f[2], f[3], f[4], f[5], f[6]);
            let child_peak: u64 = f[7].parse().unwrap_or(0);
            let peak: u64 = peak.parse().unwrap_or(0);
            let base: u64 = base.parse().unwrap_or(0);
            println!(
                "| {shape} | {n} | {status} | {build} | {cpu} | {} | {} | {} | {run} |",
                peak / 1024,
                if base > 0 {
                    format!("{}", peak.saturating_sub(base) / 1024)
                } else {
                    "-".into()
                },
                child_peak / 1024
            );
        }
    }
}
