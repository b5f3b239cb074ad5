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
