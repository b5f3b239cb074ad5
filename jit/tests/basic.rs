//! Straight-line kernels: vadd, saxpy, ragged work-groups, widths.

mod common;
use common::*;

const VADD: &str = r#"
kernel void vadd(global const float* a, global const float* b, global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
"#;

#[test]
fn vadd() {
    let p = build(VADD);
    let k = kernel(&p, "vadd");
    assert_eq!(k.info.args.len(), 3);
    // A plain streaming kernel: 16 lanes (see `plain_kernels_get_wide_sub_groups`).
    assert_eq!(k.info.sub_group_width, 16);
    let n = 1024;
    let mut a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let mut b: Vec<f32> = (0..n).map(|i| 1000.0 - i as f32).collect();
    let mut c = vec![0f32; n];
    run(k, &[n], &[64], &[buf(&mut a), buf(&mut b), buf(&mut c)]);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "c[{i}]");
    }
}

#[test]
fn saxpy_ragged_and_widths() {
    let src = r#"
kernel void saxpy(global float* y, global const float* x, float a, uint n) {
  uint i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
"#;
    for w in [4, 8, 16, 32] {
        let p = build_w(src, w);
        let k = kernel(&p, "saxpy");
        assert_eq!(k.info.sub_group_width, w);
        for (n, global, local) in [
            (1000usize, 1000usize, 37usize),
            (1024, 1024, 64),
            (50, 64, 64),
            (7, 7, 3),
        ] {
            let mut x: Vec<f32> = (0..global).map(|i| i as f32).collect();
            let mut y: Vec<f32> = (0..global).map(|i| 2.0 * i as f32 + 1.0).collect();
            let y0 = y.clone();
            run(
                k,
                &[global],
                &[local],
                &[buf(&mut y), buf(&mut x), val(3.0f32), val(n as u32)],
            );
            for i in 0..global {
                let want = if i < n { 3.0 * x[i] + y0[i] } else { y0[i] };
                assert_eq!(y[i], want, "w={w} n={n} local={local} y[{i}]");
            }
        }
    }
}

#[test]
fn mandelbrot_loop() {
    let src = r#"
kernel void mandel(global int* out, int w, float sc, int maxit) {
  int x = get_global_id(0), y = get_global_id(1);
  float cr = x*sc - 2.0f, ci = y*sc - 1.0f;
  float zr=0, zi=0; int it=0;
  while (it < maxit && zr*zr+zi*zi < 4.0f) { float t = zr*zr-zi*zi+cr; zi = 2*zr*zi+ci; zr=t; it++; }
  out[y*w+x] = it;
}
"#;
    let p = build(src);
    let k = kernel(&p, "mandel");
    let (w, h) = (64usize, 48usize);
    let sc = 3.0f32 / w as f32;
    let mut out = vec![0i32; w * h];
    run(
        k,
        &[w, h],
        &[16, 4],
        &[buf(&mut out), val(w as i32), val(sc), val(100i32)],
    );
    let mut diff = 0;
    for y in 0..h {
        for x in 0..w {
            let cr = (x as f32).mul_add(sc, -2.0);
            let ci = (y as f32).mul_add(sc, -1.0);
            let (mut zr, mut zi, mut it) = (0f32, 0f32, 0);
            while it < 100 {
                let zr2 = zr * zr;
                if zr.mul_add(zr, zi * zi) >= 4.0 {
                    break;
                }
                let _ = zr2;
                let t = zr.mul_add(zr, -(zi * zi)) + cr;
                zi = (zr * 2.0).mul_add(zi, ci);
                zr = t;
                it += 1;
            }
            if out[y * w + x] != it {
                diff += 1;
            }
        }
    }
    // Host reference follows clang's contraction; allow a few boundary pixels.
    assert!(diff <= 3, "{diff} pixels differ");
    assert!(out.contains(&100) && out.iter().any(|&v| v < 5));
}

#[test]
fn divergent_if_else_and_loops() {
    let src = r#"
kernel void k(global int* out, global const int* in) {
  int i = get_global_id(0);
  int v = in[i];
  int r = 0;
  if (v % 3 == 0) { r = v * 2; } else if (v % 3 == 1) { r = -v; } else { r = 100; }
  for (int j = 0; j < v % 7; j++) {
    if (j == 4) break;
    if (j % 2) continue;
    r += j * 10;
  }
  while (v > 50) { v -= 13; r++; }
  out[i] = r;
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    let n = 300;
    let mut inp: Vec<i32> = (0..n as i32).map(|i| (i * 37 + 11) % 101).collect();
    let mut out = vec![0i32; n];
    run(k, &[n], &[30], &[buf(&mut out), buf(&mut inp)]);
    for i in 0..n {
        let mut v = inp[i];
        let mut r = if v % 3 == 0 {
            v * 2
        } else if v % 3 == 1 {
            -v
        } else {
            100
        };
        for j in 0..v % 7 {
            if j == 4 {
                break;
            }
            if j % 2 != 0 {
                continue;
            }
            r += j * 10;
        }
        while v > 50 {
            v -= 13;
            r += 1;
        }
        assert_eq!(out[i], r, "out[{i}] (in {})", inp[i]);
    }
}

#[test]
fn values_leaving_divergent_loops() {
    // Lanes leave the loop in different iterations; values defined in the loop and
    // used after it must be each lane's own last value.
    let src = r#"
kernel void k(global int* out, global const int* in) {
  int i = get_global_id(0);
  int x = 0, j, y = 0;
  for (j = 0; j < 100; j++) {
    x = in[i * 7 + j] * 3 + j;
    y = j * 5 + 1;
    if (x > 200) break;
  }
  out[i] = x + j * 1000 + y * 100000;
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    let n = 64;
    let mut inp: Vec<i32> = (0..(n * 7 + 100) as i32).map(|v| (v * 37) % 90).collect();
    let mut out = vec![0i32; n];
    run(k, &[n], &[16], &[buf(&mut out), buf(&mut inp)]);
    for i in 0..n {
        let (mut x, mut j, mut y) = (0, 0, 0);
        while j < 100 {
            x = inp[i * 7 + j as usize] * 3 + j;
            y = j * 5 + 1;
            if x > 200 {
                break;
            }
            j += 1;
        }
        assert_eq!(out[i], x + j * 1000 + y * 100000, "out[{i}]");
    }
}

#[test]
fn grid_stride_loops_with_divergent_exits() {
    // The loop index is affine in the lane (one back edge): contiguous loads while
    // lanes leave at different iterations; the index is also used after the loop.
    let src = r#"
kernel void k(global const float* in, global float* out, global uint* last, uint n) {
  uint gsz = get_global_size(0);
  float s = 0.0f;
  uint i;
  for (i = get_global_id(0); i < n; i += gsz) s += in[i];
  out[get_global_id(0)] = s;
  last[get_global_id(0)] = i;
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    for (n, g, l) in [(1000u32, 64usize, 16usize), (1003, 96, 32), (37, 64, 64)] {
        let mut inp: Vec<f32> = (0..n).map(|x| (x % 13) as f32).collect();
        let mut out = vec![0f32; g];
        let mut last = vec![0u32; g];
        run(
            k,
            &[g],
            &[l],
            &[buf(&mut inp), buf(&mut out), buf(&mut last), val(n)],
        );
        for t in 0..g {
            let mut s = 0f32;
            let mut i = t as u32;
            while i < n {
                s += inp[i as usize];
                i += g as u32;
            }
            assert_eq!(out[t], s, "n={n} g={g} sum[{t}]");
            assert_eq!(last[t], i, "n={n} g={g} last[{t}]");
        }
    }
}

#[test]
fn varying_addresses_contiguous_or_not() {
    // Addresses the lowering cannot prove affine: contiguous ones take the vector path
    // after a run-time check, the others stay per lane; both must be exact, also in
    // partial sub-groups.
    let src = r#"
kernel void k(global const int* in, global int* out, global int* out2) {
  uint i = get_global_id(0);
  uint j = (i * 2u) / 2u;          // == i, not provably affine
  uint p = (i * 37u) % 64u;        // a permutation
  out[j] = in[j] * 3 + in[p];
  out2[p] = (int)j;
}
"#;
    for w in [4, 8, 16] {
        let p = build_w(src, w);
        let k = kernel(&p, "k");
        for (n, l) in [(64usize, 16usize), (64, 20), (64, 7)] {
            let mut inp: Vec<i32> = (0..n as i32).map(|x| x * 11 - 5).collect();
            let mut out = vec![0i32; n];
            let mut out2 = vec![-1i32; n];
            run(
                k,
                &[n],
                &[l],
                &[buf(&mut inp), buf(&mut out), buf(&mut out2)],
            );
            for i in 0..n {
                let p = (i * 37) % 64;
                assert_eq!(out[i], inp[i] * 3 + inp[p], "w={w} l={l} out[{i}]");
                assert_eq!(out2[p], i as i32, "w={w} l={l} out2[{p}]");
            }
        }
    }
}

#[test]
fn plain_kernels_get_wide_sub_groups() {
    let cases: [(&str, &str, u32); 8] = [
        ("plain", "c[i] = a[i] * 2.0f + b[i];", 16),
        ("divergent", "if (a[i] > 0.0f) c[i] = b[i];", 8),
        (
            "float4",
            "float4 v = vload4(i, a); c[i] = v.x + v.y + v.z + v.w;",
            8,
        ),
        ("sub-group size", "c[i] = (float)get_sub_group_size();", 8),
        (
            "barrier",
            "c[i] = a[i]; barrier(CLK_GLOBAL_MEM_FENCE); c[i] += b[i];",
            8,
        ),
        ("atomic", "atomic_add((global int *)c, (int)a[i]);", 8),
        (
            "uniform loop",
            "float s = 0.0f; for (int k = 0; k < 16; k++) s += a[k] * b[i]; c[i] = s;",
            16,
        ),
        (
            "uniform branch",
            "if (a[0] > 0.0f) c[i] = b[i]; else c[i] = a[i];",
            16,
        ),
    ];
    for (what, body, want) in cases {
        let src = format!(
            "kernel void k(global const float* a, global const float* b, global float* c) {{\n  size_t i = get_global_id(0);\n  {body}\n}}\n"
        );
        let p = build(&src);
        assert_eq!(kernel(&p, "k").info.sub_group_width, want, "{what}");
    }
    // A required work-group size whose rows are not whole 16-lane sub-groups keeps 8.
    let p = build(
        "kernel __attribute__((reqd_work_group_size(8, 1, 1))) void k(global float* c) { c[get_global_id(0)] = 1.0f; }",
    );
    assert_eq!(kernel(&p, "k").info.sub_group_width, 8);
}
