//! `__local` memory and barriers: local-pointer arguments, kernel-scope local
//! variables, barriers in straight code and inside loops (tree reduction, scan),
//! several local buffers at once, isolation between work-groups.

use cranecl_conformance::sys::CL_PLATFORM_VERSION;
use cranecl_conformance::*;

#[test]
fn reverse_within_work_group_through_local_argument() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const int* in, global int* out, local int* tmp) {
    size_t l = get_local_id(0), n = get_local_size(0);
    tmp[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = tmp[n - 1 - l];
}
"#;
    for local in [1usize, 7, 16, 64, 128] {
        let n = local * 12;
        let input: Vec<i32> = (0..n as i32).map(|v| v * 5 - 3).collect();
        let a = ctx.buffer_from(&input);
        let o = ctx.buffer_zeroed::<i32>(n);
        let kernel = ctx.kernel(src, "", "k");
        kernel
            .arg_buffer(0, &a)
            .arg_buffer(1, &o)
            .arg_local(2, local * 4);
        ctx.run(&kernel, &[n], Some(&[local]));
        let got: Vec<i32> = ctx.read(&o, n);
        for g in 0..n / local {
            for l in 0..local {
                assert_eq!(
                    got[g * local + l],
                    input[g * local + local - 1 - l],
                    "local {local}, group {g}, item {l}"
                );
            }
        }
    }
}

const REDUCE_SRC: &str = r#"
kernel void reduce(global const float* in, global float* out, local float* scratch) {
    size_t l = get_local_id(0);
    scratch[l] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (size_t s = get_local_size(0) / 2; s > 0; s >>= 1) {
        if (l < s) scratch[l] += scratch[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) out[get_group_id(0)] = scratch[0];
}
"#;

#[test]
fn tree_reduction_with_barriers_in_a_loop() {
    let ctx = DeviceContext::new();
    for local in [2usize, 8, 32, 64, 256] {
        let groups = 40;
        let n = local * groups;
        let input: Vec<f32> = (0..n).map(|i| ((i * 37) % 101) as f32).collect();
        let a = ctx.buffer_from(&input);
        let o = ctx.buffer_zeroed::<f32>(groups);
        let kernel = ctx.kernel(REDUCE_SRC, "", "reduce");
        kernel
            .arg_buffer(0, &a)
            .arg_buffer(1, &o)
            .arg_local(2, local * 4);
        ctx.run(&kernel, &[n], Some(&[local]));
        let got: Vec<f32> = ctx.read(&o, groups);
        for g in 0..groups {
            // Small integers: every partial sum is exact, so the order does not matter.
            let want: f32 = input[g * local..(g + 1) * local].iter().sum();
            assert_eq!(got[g], want, "local {local}, group {g}");
        }
    }
}

#[test]
fn kernel_scope_local_variables_and_scan() {
    let ctx = DeviceContext::new();
    let src = r#"
#define N 64
kernel void scan(global const int* in, global int* out, global int* totals) {
    local int buf[2][N];
    local int total;
    size_t l = get_local_id(0);
    int pin = 0;
    buf[0][l] = in[get_global_id(0)];
    if (l == 0) total = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    // Hillis-Steele inclusive scan, ping-ponging between two rows.
    for (int off = 1; off < N; off <<= 1) {
        int v = buf[pin][l];
        if (l >= off) v += buf[pin][l - off];
        buf[1 - pin][l] = v;
        pin = 1 - pin;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[get_global_id(0)] = buf[pin][l];
    atomic_add(&total, buf[0][l] & 1);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) totals[get_group_id(0)] = total;
}
"#;
    let groups = 20;
    let n = 64 * groups;
    let mut rng = TestRng::new(8);
    let input: Vec<i32> = rng.vec(n, |r| (r.next_u32() % 100) as i32);
    let a = ctx.buffer_from(&input);
    let o = ctx.buffer_zeroed::<i32>(n);
    let t = ctx.buffer_zeroed::<i32>(groups);
    run_with_buffers(&ctx, src, "", "scan", &[&a, &o, &t], &[n], Some(&[64]));
    let got: Vec<i32> = ctx.read(&o, n);
    let totals: Vec<i32> = ctx.read(&t, groups);
    for g in 0..groups {
        let mut acc = 0;
        for l in 0..64 {
            acc += input[g * 64 + l];
            assert_eq!(got[g * 64 + l], acc, "group {g}, item {l}");
        }
        // After 6 ping-pong steps the final row is 0, so buf[0] holds the scan.
        let mut acc = 0;
        let odd = (0..64)
            .filter(|&l| {
                acc += input[g * 64 + l];
                acc & 1 == 1
            })
            .count();
        assert_eq!(totals[g], odd as i32, "group {g} local atomic count");
    }
}

#[test]
fn several_local_buffers_and_groups_are_isolated() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global int* out, local int* a, local short* b, local double* unused, local int* c) {
    size_t l = get_local_id(0), g = get_group_id(0), n = get_local_size(0);
    a[l] = (int)(g * 1000 + l);
    b[l] = (short)(g + 1);
    c[l] = -(int)g;
    barrier(CLK_LOCAL_MEM_FENCE);
    int s = 0;
    for (size_t j = 0; j < n; j++) s += a[j] + b[j] + c[j];
    out[get_global_id(0)] = s;
}
"#;
    let kernel = ctx.kernel(src, "", "k");
    let local = 16usize;
    let groups = 64usize;
    let out = ctx.buffer_zeroed::<i32>(local * groups);
    kernel
        .arg_buffer(0, &out)
        .arg_local(1, local * 4)
        .arg_local(2, local * 2)
        .arg_local(3, 8)
        .arg_local(4, local * 4);
    ctx.run(&kernel, &[local * groups], Some(&[local]));
    let got: Vec<i32> = ctx.read(&out, local * groups);
    for g in 0..groups as i32 {
        let want: i32 = (0..local as i32).map(|l| g * 1000 + l + (g + 1) - g).sum();
        for l in 0..local {
            assert_eq!(got[g as usize * local + l], want, "group {g}");
        }
    }
}

#[test]
fn barrier_in_divergent_loop_bounds_uniform_per_group() {
    // The trip count differs between work-groups but is uniform inside each one.
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const int* iters, global int* out, local int* acc) {
    size_t l = get_local_id(0), n = get_local_size(0);
    int count = iters[get_group_id(0)];
    acc[l] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int it = 0; it < count; it++) {
        int left = acc[(l + n - 1) % n];
        barrier(CLK_LOCAL_MEM_FENCE);
        acc[l] = left + 1;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (it == 100) break;
    }
    out[get_global_id(0)] = acc[l] * 1000 + acc[(l + 1) % n];
}
"#;
    let groups = 12;
    let local = 32;
    let iters: Vec<i32> = (0..groups as i32).map(|g| (g * 13) % 150).collect();
    let a = ctx.buffer_from(&iters);
    let o = ctx.buffer_zeroed::<i32>(groups * local);
    let kernel = ctx.kernel(src, "", "k");
    kernel
        .arg_buffer(0, &a)
        .arg_buffer(1, &o)
        .arg_local(2, local * 4);
    ctx.run(&kernel, &[groups * local], Some(&[local]));
    let got: Vec<i32> = ctx.read(&o, groups * local);
    for g in 0..groups {
        let steps = iters[g].min(101);
        for l in 0..local {
            assert_eq!(
                got[g * local + l],
                steps * 1000 + steps,
                "group {g} item {l}"
            );
        }
    }
}

#[test]
fn local_memory_in_two_dimensions() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void transpose(global const float* in, global float* out, int width, int height) {
    local float tile[8][9];
    int x = get_global_id(0), y = get_global_id(1);
    int lx = get_local_id(0), ly = get_local_id(1);
    tile[ly][lx] = in[y * width + x];
    barrier(CLK_LOCAL_MEM_FENCE);
    int ox = get_group_id(1) * 8 + lx;
    int oy = get_group_id(0) * 8 + ly;
    out[oy * height + ox] = tile[lx][ly];
}
"#;
    let (w, h) = (64usize, 40usize);
    let input: Vec<f32> = (0..w * h).map(|i| i as f32).collect();
    let a = ctx.buffer_from(&input);
    let o = ctx.buffer_zeroed::<f32>(w * h);
    let kernel = ctx.kernel(src, "", "transpose");
    kernel
        .arg_buffer(0, &a)
        .arg_buffer(1, &o)
        .arg(2, w as i32)
        .arg(3, h as i32);
    ctx.run(&kernel, &[w, h], Some(&[8, 8]));
    let got: Vec<f32> = ctx.read(&o, w * h);
    for y in 0..h {
        for x in 0..w {
            assert_eq!(got[x * h + y], input[y * w + x], "({x}, {y})");
        }
    }
}

#[test]
fn global_and_local_atomics() {
    // cl_khr_{global,local}_int32_{base,extended}_atomics are claimed: a histogram and
    // min/max over many work-groups running on several threads must be exact.
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const uint* in, global uint* hist, global int* stats, local uint* lhist) {
    size_t l = get_local_id(0);
    if (l < 16) lhist[l] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint v = in[get_global_id(0)];
    atomic_inc(&lhist[v & 15]);
    atomic_add(&hist[16 + (v & 15)], v);
    atomic_max(&stats[0], (int)v);
    atomic_min(&stats[1], (int)v);
    atomic_or(&stats[2], 1 << (v & 31));
    atomic_xor(&stats[3], (int)v);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l < 16) atomic_add(&hist[l], lhist[l]);
    if (l == 0) {
        int old = atomic_cmpxchg(&stats[4], 0, (int)get_group_id(0) + 1);
        if (old != 0) atomic_inc(&stats[5]);
    }
}
"#;
    let groups = 64;
    let local = 64;
    let n = groups * local;
    let mut rng = TestRng::new(21);
    let input: Vec<u32> = rng.vec(n, |r| r.next_u32() % 100_000);
    let a = ctx.buffer_from(&input);
    let hist = ctx.buffer_zeroed::<u32>(32);
    let stats = ctx.buffer_from(&[i32::MIN, i32::MAX, 0, 0, 0, 0]);
    let kernel = ctx.kernel(src, "", "k");
    kernel
        .arg_buffer(0, &a)
        .arg_buffer(1, &hist)
        .arg_buffer(2, &stats)
        .arg_local(3, 16 * 4);
    ctx.run(&kernel, &[n], Some(&[local]));
    let got: Vec<u32> = ctx.read(&hist, 32);
    let st: Vec<i32> = ctx.read(&stats, 6);
    let mut want = vec![0u32; 32];
    for &v in &input {
        want[(v & 15) as usize] += 1;
        want[16 + (v & 15) as usize] = want[16 + (v & 15) as usize].wrapping_add(v);
    }
    assert_eq!(got, want, "histogram counts and sums");
    assert_eq!(st[0], *input.iter().max().unwrap() as i32, "atomic_max");
    assert_eq!(st[1], *input.iter().min().unwrap() as i32, "atomic_min");
    assert_eq!(
        st[2],
        input.iter().fold(0i32, |acc, v| acc | (1 << (v & 31))),
        "atomic_or"
    );
    assert_eq!(
        st[3],
        input.iter().fold(0i32, |acc, &v| acc ^ v as i32),
        "atomic_xor"
    );
    assert!(
        st[4] >= 1 && st[4] <= groups as i32,
        "atomic_cmpxchg winner {}",
        st[4]
    );
    assert_eq!(st[5], groups as i32 - 1, "exactly one cmpxchg succeeds");
}

/// OpenCL 3.1: `clSetKernelArg` accepts a size of zero for a `__local` argument (no
/// memory for it); before 3.1 it is `CL_INVALID_ARG_SIZE`. The kernel runs with the
/// zero-size argument between two real ones, which must keep their own memory.
#[test]
fn zero_size_local_argument_follows_the_platform_version() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global int* out, local int* a, local int* unused, local int* b) {
    size_t l = get_local_id(0), n = get_local_size(0);
    a[l] = (int)get_global_id(0);
    b[l] = 1000 * (int)get_group_id(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    out[get_global_id(0)] = a[n - 1 - l] + b[(l + 1) % n] + (unused == 0 ? 0 : 0);
}
"#;
    let version = platform_info_string(ctx.platform, CL_PLATFORM_VERSION).unwrap();
    let number = version.split_whitespace().nth(1).unwrap_or("");
    let (major, minor) = number.split_once('.').unwrap();
    let at_least_3_1 = (major.parse::<u32>().unwrap(), minor.parse::<u32>().unwrap()) >= (3, 1);
    if testing_cranecl() {
        assert!(at_least_3_1, "cranecl reports OpenCL 3.1: {version:?}");
    }
    let kernel = ctx.kernel(src, "-cl-std=CL3.0", "k");
    let result = kernel.try_set_arg_bytes(2, None, 0);
    if !at_least_3_1 {
        assert_eq!(result.map_err(|e| e.code), Err(-51), "CL_INVALID_ARG_SIZE");
        return;
    }
    result.expect("a zero-size __local argument on an OpenCL 3.1 platform");
    let (local, groups) = (32usize, 8usize);
    let out = ctx.buffer_zeroed::<i32>(local * groups);
    kernel
        .arg_buffer(0, &out)
        .arg_local(1, local * 4)
        .arg_local(3, local * 4);
    ctx.run(&kernel, &[local * groups], Some(&[local]));
    let got: Vec<i32> = ctx.read(&out, local * groups);
    let want: Vec<i32> = (0..local * groups)
        .map(|g| {
            let (group, l) = (g / local, g % local);
            (group * local + local - 1 - l) as i32 + 1000 * group as i32
        })
        .collect();
    assert_eq!(got, want);
}
