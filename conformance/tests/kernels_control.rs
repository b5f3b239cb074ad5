//! Control flow and program structure in kernels, compared with host references:
//! divergent if/else, loops with break/continue and data-dependent trip counts,
//! switch, early return, private arrays with dynamic indices, structs (in buffers and
//! by value), and real (non-inlined) function calls.

use cranecl_conformance::*;

/// Runs `k(global const int* in, global int* out)` over `input` and returns `out`.
fn map_int(ctx: &DeviceContext, src: &str, input: &[i32], out_per_item: usize) -> Vec<i32> {
    let a = ctx.buffer_from(input);
    let o = ctx.buffer_zeroed::<i32>(input.len() * out_per_item);
    run_with_buffers(ctx, src, "", "k", &[&a, &o], &[input.len()], None);
    ctx.read(&o, input.len() * out_per_item)
}

fn inputs(n: usize, seed: u64, modulo: u32) -> Vec<i32> {
    let mut rng = TestRng::new(seed);
    rng.vec(n, |r| (r.next_u32() % modulo) as i32)
}

#[test]
fn divergent_if_else() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const int* in, global int* out) {
    size_t i = get_global_id(0);
    int x = in[i];
    int r;
    if (x & 1) {
        if (x % 3 == 0) r = x * 3;
        else r = x + 100;
    } else if (x > 500) {
        r = -x;
    } else {
        r = x / 2;
        if (r & 4) r += 1000;
    }
    out[i] = r;
}
"#;
    let input = inputs(1000, 1, 1000);
    let got = map_int(&ctx, src, &input, 1);
    for (k, &x) in input.iter().enumerate() {
        let want = if x & 1 != 0 {
            if x % 3 == 0 {
                x * 3
            } else {
                x + 100
            }
        } else if x > 500 {
            -x
        } else {
            let r = x / 2;
            if r & 4 != 0 {
                r + 1000
            } else {
                r
            }
        };
        assert_eq!(got[k], want, "x = {x}");
    }
}

#[test]
fn loops_with_data_dependent_trip_counts() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const int* in, global int* out) {
    size_t i = get_global_id(0);
    int x = in[i] + 1;
    // Collatz steps: a while loop whose trip count differs per work-item.
    long c = x;
    int steps = 0;
    while (c != 1) {
        c = (c & 1) ? 3 * c + 1 : c / 2;
        steps++;
    }
    // break / continue in a for loop.
    int sum = 0;
    for (int j = 0; j < x; j++) {
        if (j % 3 == 0) continue;
        sum += j;
        if (sum > 5000) break;
    }
    // do-while and a nested loop with an inner break.
    int d = 0;
    do { d += 7; } while (d < x);
    int pairs = 0;
    for (int a = 0; a < (x & 15); a++) {
        for (int b = 0; b < 16; b++) {
            if (a + b > 20) break;
            pairs++;
        }
    }
    out[4 * i] = steps;
    out[4 * i + 1] = sum;
    out[4 * i + 2] = d;
    out[4 * i + 3] = pairs;
}
"#;
    let input = inputs(777, 2, 3000);
    let got = map_int(&ctx, src, &input, 4);
    for (k, &v) in input.iter().enumerate() {
        let x = v + 1;
        let mut c = x as i64;
        let mut steps = 0;
        while c != 1 {
            c = if c & 1 != 0 { 3 * c + 1 } else { c / 2 };
            steps += 1;
        }
        let mut sum = 0;
        for j in 0..x {
            if j % 3 == 0 {
                continue;
            }
            sum += j;
            if sum > 5000 {
                break;
            }
        }
        let mut d = 0;
        loop {
            d += 7;
            if d >= x {
                break;
            }
        }
        let mut pairs = 0;
        for a in 0..(x & 15) {
            for b in 0..16 {
                if a + b > 20 {
                    break;
                }
                pairs += 1;
            }
        }
        assert_eq!(&got[4 * k..4 * k + 4], &[steps, sum, d, pairs], "x = {x}");
    }
}

#[test]
fn switch_and_early_return() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const int* in, global int* out) {
    size_t i = get_global_id(0);
    int x = in[i];
    out[i] = -1;
    if (x % 7 == 0) return;
    switch (x % 5) {
        case 0: out[i] = 10; break;
        case 1: out[i] = x * 2; break;
        case 2:
        case 3: out[i] = x - 3; break;
        default: out[i] = 99;
    }
}
"#;
    let input = inputs(500, 3, 10000);
    let got = map_int(&ctx, src, &input, 1);
    for (k, &x) in input.iter().enumerate() {
        let want = if x % 7 == 0 {
            -1
        } else {
            match x % 5 {
                0 => 10,
                1 => x * 2,
                2 | 3 => x - 3,
                _ => 99,
            }
        };
        assert_eq!(got[k], want, "x = {x}");
    }
}

#[test]
fn private_arrays_with_dynamic_indices() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const int* in, global int* out) {
    size_t i = get_global_id(0);
    int x = in[i];
    int a[16];
    float f[4][5];
    for (int j = 0; j < 16; j++) a[j] = x * j + (j ^ 5);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 5; c++) f[r][c] = (float)(r * 5 + c) * 0.5f;
    int idx = x & 15;
    a[(x >> 4) & 15] += 1000;
    int s = 0;
    for (int j = 0; j <= idx; j++) s += a[j];
    out[2 * i] = a[idx] + s;
    out[2 * i + 1] = (int)(f[x & 3][x % 5] * 2.0f);
}
"#;
    let input = inputs(300, 4, 100000);
    let got = map_int(&ctx, src, &input, 2);
    for (k, &x) in input.iter().enumerate() {
        let mut a: Vec<i32> = (0..16).map(|j| x.wrapping_mul(j) + (j ^ 5)).collect();
        let idx = (x & 15) as usize;
        a[((x >> 4) & 15) as usize] += 1000;
        let s: i32 = a[..=idx].iter().sum();
        let f = ((x & 3) * 5 + x % 5) as f32 * 0.5;
        assert_eq!(got[2 * k], a[idx] + s, "x = {x}");
        assert_eq!(got[2 * k + 1], (f * 2.0) as i32, "x = {x}");
    }
}

/// The OpenCL C struct `S` below, laid out the same way (no padding).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct S {
    f: f32,
    i: i32,
    l: i64,
    s: i16,
    c: i8,
    u: u8,
    k: u32,
}

// SAFETY: repr(C) with fields laid out without padding (4+4+8+2+1+1+4 = 24 bytes).
unsafe impl Pod for S {}

const STRUCT_SRC: &str = r#"
typedef struct { float f; int i; long l; short s; char c; uchar u; uint k; } S;
typedef struct { int a[3]; float2 v; } Inner;

S transform(S in, int n) {
    S out;
    out.f = in.f * 2.0f + (float)n;
    out.i = in.i - n;
    out.l = in.l * 3 + in.i;
    out.s = (short)(in.s + 1);
    out.c = (char)(in.c - 1);
    out.u = (uchar)(in.u + 2);
    out.k = in.k ^ 0xffu;
    return out;
}

kernel void k(global const S* in, global S* out, S by_value) {
    size_t i = get_global_id(0);
    Inner tmp;
    for (int j = 0; j < 3; j++) tmp.a[j] = (int)i * j;
    tmp.v = (float2)(by_value.f, 1.0f);
    S s = transform(in[i], tmp.a[2] + by_value.i);
    s.f += tmp.v.x;
    out[i] = s;
}
"#;

#[test]
fn structs_in_buffers_and_by_value() {
    let ctx = DeviceContext::new();
    let input: Vec<S> = (0..64)
        .map(|n| S {
            f: n as f32 * 0.25,
            i: n * 7,
            l: 1 << 40 | n as i64,
            s: n as i16 * 100,
            c: n as i8,
            u: 250,
            k: n as u32,
        })
        .collect();
    let by_value = S {
        f: 1.5,
        i: 3,
        ..S::default()
    };
    let a = ctx.buffer_from(&input);
    let o = ctx.buffer_zeroed::<S>(64);
    let kernel = ctx.kernel(STRUCT_SRC, "", "k");
    kernel.arg_buffer(0, &a).arg_buffer(1, &o).arg(2, by_value);
    ctx.run(&kernel, &[64], None);
    let got: Vec<S> = ctx.read(&o, 64);
    for (n, x) in input.iter().enumerate() {
        let m = n as i32 * 2 + by_value.i;
        let want = S {
            f: x.f * 2.0 + m as f32 + by_value.f,
            i: x.i - m,
            l: x.l * 3 + x.i as i64,
            s: x.s.wrapping_add(1),
            c: x.c.wrapping_sub(1),
            u: x.u.wrapping_add(2),
            k: x.k ^ 0xff,
        };
        assert_eq!(got[n], want, "struct {n}");
    }
}

fn gcd(mut a: i32, mut b: i32) -> i32 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

const GCD_FN: &str = r#"
__attribute__((noinline)) int gcd(int a, int b) {
    while (b != 0) { int t = a % b; a = b; b = t; }
    return a;
}
"#;

#[test]
fn call_to_function_with_a_loop() {
    let ctx = DeviceContext::new();
    let src = format!("{GCD_FN}\nkernel void k(global const int* in, global int* out) {{ size_t i = get_global_id(0); out[i] = gcd(in[i], 48); }}");
    let input = inputs(256, 9, 5000);
    let got = map_int(&ctx, &src, &input, 1);
    for (k, &x) in input.iter().enumerate() {
        assert_eq!(got[k], gcd(x, 48), "gcd({x}, 48)");
    }
}

#[test]
fn call_storing_through_a_global_pointer() {
    let ctx = DeviceContext::new();
    let src = r#"
__attribute__((noinline)) void store_pair(global int* p, int a, int b) { p[0] = a; p[1] = b; }
kernel void k(global const int* in, global int* out) {
    size_t i = get_global_id(0);
    store_pair(out + 2 * i, in[i], in[i] * 2);
}
"#;
    let input = inputs(256, 10, 5000);
    let got = map_int(&ctx, src, &input, 2);
    for (k, &x) in input.iter().enumerate() {
        assert_eq!(&got[2 * k..2 * k + 2], &[x, 2 * x], "x = {x}");
    }
}

#[test]
fn call_with_a_private_array_argument() {
    let ctx = DeviceContext::new();
    let src = r#"
__attribute__((noinline)) float poly(float x, const float* coef, int n) {
    float r = 0.0f;
    for (int j = n - 1; j >= 0; j--) r = r * x + coef[j];
    return r;
}
kernel void k(global const int* in, global int* out) {
    size_t i = get_global_id(0);
    float coef[3] = {1.0f, 2.0f, (float)(in[i] & 3)};
    out[i] = (int)poly((float)(in[i] & 7), coef, 3);
}
"#;
    let input = inputs(256, 11, 5000);
    let got = map_int(&ctx, src, &input, 1);
    for (k, &x) in input.iter().enumerate() {
        let t = (x & 7) as f32;
        let p = ((x & 3) as f32 * t + 2.0) * t + 1.0;
        assert_eq!(got[k], p as i32, "x = {x}");
    }
}

#[test]
fn calls_in_divergent_code() {
    let ctx = DeviceContext::new();
    let src = format!(
        r#"{GCD_FN}
__attribute__((noinline)) int classify(int x) {{
    if (x < 100) return 0;
    if (x < 1000) return gcd(x, 36);
    return -gcd(x, 1000);
}}
kernel void k(global const int* in, global int* out) {{
    size_t i = get_global_id(0);
    int x = in[i];
    out[i] = (x & 1) ? classify(x) : gcd(x + 1, 12);
}}
"#
    );
    let input = inputs(400, 6, 5000);
    let got = map_int(&ctx, &src, &input, 1);
    for (k, &x) in input.iter().enumerate() {
        let classify = if x < 100 {
            0
        } else if x < 1000 {
            gcd(x, 36)
        } else {
            -gcd(x, 1000)
        };
        let want = if x & 1 != 0 { classify } else { gcd(x + 1, 12) };
        assert_eq!(got[k], want, "x = {x}");
    }
}

#[test]
fn constant_memory_and_program_scope_constants() {
    let ctx = DeviceContext::new();
    let src = r#"
constant int table[8] = {1, 1, 2, 3, 5, 8, 13, 21};
kernel void k(global const int* in, global int* out, constant int* extra) {
    size_t i = get_global_id(0);
    out[i] = table[in[i] & 7] * extra[in[i] & 3];
}
"#;
    let input = inputs(100, 7, 1000);
    let extra = [10i32, 20, 30, 40];
    let a = ctx.buffer_from(&input);
    let e = ctx.buffer_from(&extra);
    let o = ctx.buffer_zeroed::<i32>(100);
    run_with_buffers(&ctx, src, "", "k", &[&a, &o, &e], &[100], None);
    let got: Vec<i32> = ctx.read(&o, 100);
    let table = [1, 1, 2, 3, 5, 8, 13, 21];
    for (k, &x) in input.iter().enumerate() {
        assert_eq!(got[k], table[(x & 7) as usize] * extra[(x & 3) as usize]);
    }
}

/// `struct { char c; float4 v; short s; int3 t; }` with OpenCL alignment: vectors are
/// aligned to their size (3-component vectors to 4 components).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Aligned {
    c: i8,
    _pad0: [u8; 15],
    v: [f32; 4],
    s: i16,
    _pad1: [u8; 14],
    t: [i32; 4],
}

// SAFETY: repr(C), every gap is an explicit field: 1+15+16+2+14+16 = 64 bytes.
unsafe impl Pod for Aligned {}

#[test]
fn struct_layout_follows_opencl_alignment() {
    let ctx = DeviceContext::new();
    let src = r#"
typedef struct { char c; float4 v; short s; int3 t; } Aligned;
kernel void k(global Aligned* a, Aligned by_value, global uint* sizes) {
    size_t i = get_global_id(0);
    Aligned x = a[i];
    x.c += by_value.c;
    x.v = x.v * by_value.v;
    x.s = (short)(x.s - by_value.s);
    x.t = x.t + by_value.t + (int3)((int)i);
    a[i] = x;
    if (i == 0) {
        sizes[0] = sizeof(Aligned);
        sizes[1] = (uint)((global char*)&a[0].v - (global char*)&a[0]);
        sizes[2] = (uint)((global char*)&a[0].s - (global char*)&a[0]);
        sizes[3] = (uint)((global char*)&a[0].t - (global char*)&a[0]);
    }
}
"#;
    let input: Vec<Aligned> = (0..32)
        .map(|i| Aligned {
            c: i as i8,
            v: [i as f32, 1.0, 2.0, 3.0],
            s: 100 * i as i16,
            t: [i, 2 * i, 3 * i, 0],
            ..Aligned::default()
        })
        .collect();
    let by_value = Aligned {
        c: 5,
        v: [2.0, 3.0, 4.0, 5.0],
        s: 7,
        t: [1, 2, 3, 0],
        ..Aligned::default()
    };
    let buf = ctx.buffer_from(&input);
    let sizes = ctx.buffer_zeroed::<u32>(4);
    let kernel = ctx.kernel(src, "", "k");
    kernel
        .arg_buffer(0, &buf)
        .arg(1, by_value)
        .arg_buffer(2, &sizes);
    ctx.run(&kernel, &[32], None);
    assert_eq!(
        ctx.read::<u32>(&sizes, 4),
        vec![64, 16, 32, 48],
        "sizeof and member offsets"
    );
    let got: Vec<Aligned> = ctx.read(&buf, 32);
    for (i, x) in input.iter().enumerate() {
        let ii = i as i32;
        let want_v: Vec<f32> = x.v.iter().zip(by_value.v).map(|(a, b)| a * b).collect();
        assert_eq!(got[i].c, x.c + 5, "c of {i}");
        assert_eq!(got[i].v.to_vec(), want_v, "v of {i}");
        assert_eq!(got[i].s, x.s - 7, "s of {i}");
        assert_eq!(
            &got[i].t[..3],
            &[x.t[0] + 1 + ii, x.t[1] + 2 + ii, x.t[2] + 3 + ii],
            "t of {i}"
        );
    }
}

#[test]
fn three_component_vectors_in_memory() {
    // float3 in an array has the size of float4; vload3/vstore3 use packed triples.
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global float3* padded, global float* packed, global uint* size) {
    size_t i = get_global_id(0);
    float3 p = padded[i];
    float3 q = vload3(i, packed);
    padded[i] = p + q.zyx;
    vstore3(p * 2.0f, i, packed);
    if (i == 0) size[0] = sizeof(float3);
}
"#;
    let n = 40;
    let padded: Vec<[f32; 4]> = (0..n)
        .map(|i| [i as f32, 10.0 + i as f32, 20.0 + i as f32, -1.0])
        .collect();
    let packed: Vec<f32> = (0..3 * n).map(|i| i as f32 * 0.5).collect();
    let pb = ctx.buffer_from(&padded);
    let kb = ctx.buffer_from(&packed);
    let sb = ctx.buffer_zeroed::<u32>(1);
    run_with_buffers(&ctx, src, "", "k", &[&pb, &kb, &sb], &[n], None);
    assert_eq!(ctx.read::<u32>(&sb, 1), vec![16]);
    let got_p: Vec<[f32; 4]> = ctx.read(&pb, n);
    let got_k: Vec<f32> = ctx.read(&kb, 3 * n);
    for i in 0..n {
        let q = [packed[3 * i], packed[3 * i + 1], packed[3 * i + 2]];
        let p = padded[i];
        assert_eq!(
            &got_p[i][..3],
            &[p[0] + q[2], p[1] + q[1], p[2] + q[0]],
            "padded float3 {i}"
        );
        assert_eq!(
            &got_k[3 * i..3 * i + 3],
            &[p[0] * 2.0, p[1] * 2.0, p[2] * 2.0],
            "vstore3 {i}"
        );
    }
}

#[test]
fn private_arrays_of_vectors_and_structs() {
    let ctx = DeviceContext::new();
    let src = r#"
typedef struct { int id; float2 pos; } Item;
kernel void k(global const int* in, global float* out) {
    size_t i = get_global_id(0);
    int x = in[i];
    float4 vs[8];
    Item items[5];
    for (int j = 0; j < 8; j++) vs[j] = (float4)((float)j, (float)(x & 7), (float)(j * j), 1.0f);
    for (int j = 0; j < 5; j++) { items[j].id = j * x; items[j].pos = (float2)((float)j, 0.5f); }
    int a = x & 7, b = (x >> 3) % 5;
    vs[a].w += 10.0f;
    items[b].pos.y += (float)a;
    out[2 * i] = vs[a].x + vs[a].y + vs[a].z + vs[a].w + vs[(a + 1) & 7].w;
    out[2 * i + 1] = (float)items[b].id + items[b].pos.x + items[b].pos.y;
}
"#;
    let input = inputs(200, 12, 100000);
    let a = ctx.buffer_from(&input);
    let o = ctx.buffer_zeroed::<f32>(400);
    run_with_buffers(&ctx, src, "", "k", &[&a, &o], &[200], None);
    let got: Vec<f32> = ctx.read(&o, 400);
    for (k, &x) in input.iter().enumerate() {
        let a = (x & 7) as f32;
        let b = ((x >> 3) % 5) as f32;
        let want0 = a + a + a * a + 11.0 + 1.0;
        let want1 = (b as i32 * x) as f32 + b + (0.5 + a);
        assert_eq!(got[2 * k], want0, "vector array, x = {x}");
        assert_eq!(got[2 * k + 1], want1, "struct array, x = {x}");
    }
}

#[test]
fn many_mixed_arguments() {
    // Argument block layout: every size and alignment in one signature.
    let ctx = DeviceContext::new();
    if !require(ctx.has_extension("cl_khr_fp64"), "cl_khr_fp64") {
        return;
    }
    let src = r#"
kernel void k(char a, global double* out, short b, long c, uchar d, float e, double f,
              int2 g, local int* scratch, char3 h, ulong i, float4 j, ushort k2, global const int* in) {
    scratch[get_local_id(0)] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_global_id(0) == 0) {
        out[0] = a; out[1] = b; out[2] = (double)c; out[3] = d; out[4] = e; out[5] = f;
        out[6] = g.x; out[7] = g.y; out[8] = h.x; out[9] = h.y; out[10] = h.z;
        out[11] = (double)i; out[12] = j.x; out[13] = j.w; out[14] = k2;
        out[15] = scratch[get_local_size(0) - 1];
    }
}
"#;
    let kernel = ctx.kernel(src, "", "k");
    let out = ctx.buffer_zeroed::<f64>(16);
    let input: Vec<i32> = (0..8).map(|v| v * 3).collect();
    let inb = ctx.buffer_from(&input);
    kernel
        .arg(0, -5i8)
        .arg_buffer(1, &out)
        .arg(2, -300i16)
        .arg(3, -(1i64 << 40))
        .arg(4, 200u8)
        .arg(5, 1.25f32)
        .arg(6, -2.5e100f64)
        .arg(7, [7i32, -8])
        .arg_local(8, 8 * 4)
        .arg(9, [1i8, -2, 3, 0])
        .arg(10, 1u64 << 60)
        .arg(11, [0.5f32, 0.0, 0.0, 4.5])
        .arg(12, 65535u16)
        .arg_buffer(13, &inb);
    ctx.run(&kernel, &[8], Some(&[8]));
    let want = [
        -5.0,
        -300.0,
        -(2f64.powi(40)),
        200.0,
        1.25,
        -2.5e100,
        7.0,
        -8.0,
        1.0,
        -2.0,
        3.0,
        2f64.powi(60),
        0.5,
        4.5,
        65535.0,
        21.0,
    ];
    assert_eq!(ctx.read::<f64>(&out, 16), want.to_vec());
}

#[test]
fn null_buffer_argument_reaches_the_kernel_as_null() {
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global int* maybe, global int* out) {
    out[get_global_id(0)] = (maybe == 0) ? 7 : maybe[0];
}
"#;
    let kernel = ctx.kernel(src, "", "k");
    let out = ctx.buffer_zeroed::<i32>(16);
    let null = 0usize;
    kernel
        .try_set_arg_bytes(0, Some(as_bytes(std::slice::from_ref(&null))), 8)
        .unwrap();
    kernel.arg_buffer(1, &out);
    ctx.run(&kernel, &[16], None);
    assert_eq!(ctx.read::<i32>(&out, 16), vec![7; 16]);
    let some = ctx.buffer_from(&[3i32]);
    kernel.arg_buffer(0, &some);
    ctx.run(&kernel, &[16], None);
    assert_eq!(ctx.read::<i32>(&out, 16), vec![3; 16]);
}

#[test]
fn large_private_arrays() {
    // 4 KiB of private memory per work-item, indexed by data.
    let ctx = DeviceContext::new();
    let src = r#"
kernel void k(global const int* in, global int* out) {
    size_t i = get_global_id(0);
    int x = in[i];
    int big[1024];
    for (int j = 0; j < 1024; j++) big[j] = j * (x & 15) + (j >> 3);
    int idx = x & 1023;
    for (int r = 0; r < 16; r++) {
        big[idx] += r;
        idx = (big[idx] + x) & 1023;
    }
    out[i] = big[idx] + idx;
}
"#;
    let input = inputs(300, 13, 1 << 20);
    let got = map_int(&ctx, src, &input, 1);
    for (k, &x) in input.iter().enumerate() {
        let mut big: Vec<i32> = (0..1024).map(|j| j * (x & 15) + (j >> 3)).collect();
        let mut idx = (x & 1023) as usize;
        for r in 0..16 {
            big[idx] += r;
            idx = ((big[idx] + x) & 1023) as usize;
        }
        assert_eq!(got[k], big[idx] + idx as i32, "x = {x}");
    }
}
