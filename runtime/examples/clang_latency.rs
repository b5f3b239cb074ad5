//! Measures the OpenCL C front end: `compile` of a small kernel and of a 9-kernel
//! program with and without the precompiled header, the one-time cost of building
//! the PCH, and (for comparison) the jit's time on the same programs.
//!
//! Run: `cargo run --release -p cranecl-runtime --example clang_latency [file.cl]`

use std::time::{Duration, Instant};

use cranecl_runtime::build::{BuildOptions, Frontend, PchBuild, PchCache};

const SMALL: &str = "kernel void add(global float* a, global const float* b) { size_t i = get_global_id(0); a[i] += b[i]; }\n";

/// Nine kernels of the kinds a real program has: element-wise, reductions with local
/// memory and barriers, sub-group operations, math built-ins, 2D indexing.
const NINE: &str = r#"
kernel void axpy(float a, global const float* x, global float* y) { size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }
kernel void scale(global float* v, float s) { v[get_global_id(0)] *= s; }
kernel void reduce(global const float* in, global float* out, local float* tmp) {
  size_t l = get_local_id(0); tmp[l] = in[get_global_id(0)]; barrier(CLK_LOCAL_MEM_FENCE);
  for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) { if (l < s) tmp[l] += tmp[l + s]; barrier(CLK_LOCAL_MEM_FENCE); }
  if (l == 0) out[get_group_id(0)] = tmp[0];
}
kernel void sg_sum(global const float* in, global float* out) { out[get_global_id(0)] = sub_group_reduce_add(in[get_global_id(0)]); }
kernel void shuffle(global float* v) { v[get_global_id(0)] = intel_sub_group_shuffle(v[get_global_id(0)], 0u); }
kernel void math(global float* v) { float x = v[get_global_id(0)]; v[get_global_id(0)] = sin(x) * exp(x) + sqrt(fabs(x)) + pow(x, 2.5f); }
kernel void transpose(global const float* in, global float* out, int w, int h) {
  int x = get_global_id(0), y = get_global_id(1); if (x < w && y < h) out[x * h + y] = in[y * w + x];
}
kernel void histogram(global const uint* in, volatile global uint* bins) { atomic_inc(&bins[in[get_global_id(0)] & 255]); }
kernel void mandel(global int* out, int w, float x0, float y0, float d) {
  int px = get_global_id(0), py = get_global_id(1); float cr = x0 + px * d, ci = y0 + py * d, zr = 0, zi = 0; int n = 0;
  while (n < 256 && zr * zr + zi * zi < 4.0f) { float t = zr * zr - zi * zi + cr; zi = 2 * zr * zi + ci; zr = t; n++; }
  out[py * w + px] = n;
}
"#;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn time(frontend: &Frontend, source: &str, options: &BuildOptions, runs: usize) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                if let Err(e) = frontend.compile(source, options) {
                    panic!("compile failed: {e}");
                }
                t.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let options = BuildOptions::parse("").expect("empty options");
    let plain = Frontend::from_env().expect("clang");
    let clang = plain.clang().to_path_buf();
    println!("clang: {}", clang.display());
    let plain = Frontend::new(clang.clone(), None);

    let dir = std::env::temp_dir().join(format!("cranecl-latency-{}", std::process::id()));
    let cache = PchCache::new(dir.clone(), PchBuild::Blocking).expect("cache dir");
    let with_pch = Frontend::new(clang, Some(cache));
    let t = Instant::now();
    assert!(with_pch.pch_ready(&options));
    println!(
        "building the PCH (once per clang + language options): {:>7.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );

    // An OpenCL C file given on the command line is measured too.
    let extra = std::env::args()
        .nth(1)
        .map(|path| match std::fs::read_to_string(&path) {
            Ok(text) => (path, text),
            Err(e) => panic!("cannot read {path}: {e}"),
        });
    let mut programs: Vec<(String, &str)> = vec![
        ("small kernel".into(), SMALL),
        ("9-kernel program".into(), NINE),
    ];
    if let Some((path, text)) = &extra {
        programs.push((path.clone(), text.as_str()));
    }
    for (name, source) in programs.iter().map(|(n, s)| (n.as_str(), *s)) {
        let a = time(&plain, source, &options, 7);
        let b = time(&with_pch, source, &options, 7);
        println!(
            "{name:<17} without PCH {:>7.1} ms   with PCH {:>7.1} ms",
            a.as_secs_f64() * 1e3,
            b.as_secs_f64() * 1e3
        );
    }
    // The other half of a build: the jit on clang's output.
    for (name, source) in programs.iter().map(|(n, s)| (n.as_str(), *s)) {
        let spirv = with_pch.compile(source, &options).expect("compiles").spirv;
        let jit = median(
            (0..5)
                .map(|_| {
                    let t = Instant::now();
                    let compiled = cranecl_jit::compile(&spirv, &options.jit);
                    let elapsed = t.elapsed();
                    if let Err(e) = compiled {
                        println!("{name}: the jit refused it: {e}");
                    }
                    elapsed
                })
                .collect(),
        );
        let parallel = median(
            (0..5)
                .map(|_| {
                    let t = Instant::now();
                    let compiled =
                        cranecl_runtime::build::compile_kernels_in_parallel(&spirv, &options.jit);
                    let elapsed = t.elapsed();
                    if let Err(e) = compiled {
                        println!("{name}: the jit refused it: {e}");
                    }
                    elapsed
                })
                .collect(),
        );
        println!(
            "{name:<17} jit {:>7.1} ms   kernels in parallel {:>7.1} ms",
            jit.as_secs_f64() * 1e3,
            parallel.as_secs_f64() * 1e3
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}
