//! Compiles a SPIR-V file with the jit alone and prints the time taken: for
//! profiling the compiler (`perf record`, heaptrack) without clang or the runtime.
//!
//! Run: `cargo run --release -p cranecl-jit --example compile_spv -- kernel.spv [repeat]`
//! (`CRANECL_OPT_DISABLE=1` compiles as `-cl-opt-disable` does, `CRANECL_SUBGROUP_WIDTH=W`
//! sets the default sub-group width as the driver's variable does).

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().expect("usage: compile_spv FILE.spv [repeat]");
    let repeat: usize = args.get(1).and_then(|v| v.parse().ok()).unwrap_or(1);
    let bytes = std::fs::read(path).expect("reading the SPIR-V file");
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let options = cranecl_jit::CompileOptions {
        opt_disable: std::env::var_os("CRANECL_OPT_DISABLE").is_some_and(|v| v != "0"),
        default_sub_group_width: std::env::var("CRANECL_SUBGROUP_WIDTH")
            .ok()
            .and_then(|v| v.parse().ok()),
        ..Default::default()
    };
    for _ in 0..repeat {
        let t = Instant::now();
        let result = cranecl_jit::compile(&words, &options);
        let dt = t.elapsed();
        match result {
            Ok(p) => println!(
                "ok: {} kernels in {:.3} s",
                p.kernels.len(),
                dt.as_secs_f64()
            ),
            Err(e) => println!(
                "{:?} after {:.3} s: {}",
                e.kind,
                dt.as_secs_f64(),
                e.message
            ),
        }
    }
}
