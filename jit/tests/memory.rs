//! Private arrays, structs, vectors, function calls, __local memory, barriers.

mod common;
use common::*;

#[test]
fn private_array_and_calls() {
    let src = r#"
int sq(int x) { return x * x; }
int sum_to(int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(i); return s; }
kernel void k(global int* out, global const int* in) {
  int i = get_global_id(0);
  int arr[16];
  for (int j = 0; j < 16; j++) arr[j] = in[i] + j;
  int acc = 0;
  for (int j = 0; j < 16; j++) acc += arr[(j * 5 + i) & 15];
  out[i] = acc + sum_to(in[i] % 10);
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    let n = 100;
    let mut inp: Vec<i32> = (0..n as i32).map(|i| i * 3 - 40).collect();
    let mut out = vec![0i32; n];
    run(k, &[n], &[20], &[buf(&mut out), buf(&mut inp)]);
    for i in 0..n {
        let acc: i32 = (0..16).map(|j| inp[i] + j).sum();
        let m = inp[i] % 10;
        let s: i32 = (0..m.max(0)).map(|x| x * x).sum();
        assert_eq!(out[i], acc + s, "out[{i}]");
    }
}

#[test]
fn structs_and_vectors() {
    let src = r#"
typedef struct { float4 pos; int id; float w; } P;
kernel void k(global P* ps, global float4* out, global int2* o2, P extra) {
  int i = get_global_id(0);
  P p = ps[i];
  float4 v = p.pos * p.w + extra.pos;
  v.w = (float)(p.id + extra.id);
  out[i] = v.zyxw;
  int2 q = (int2)(p.id, -p.id) * 3;
  o2[i] = q + (int2)(1, 2);
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct P {
        pos: [f32; 4],
        id: i32,
        w: f32,
        _pad: [f32; 2],
    }
    let n = 40;
    let mut ps: Vec<P> = (0..n)
        .map(|i| P {
            pos: [i as f32, 1.0, -(i as f32), 2.0],
            id: i as i32,
            w: 0.5,
            _pad: [0.0; 2],
        })
        .collect();
    let extra = P {
        pos: [10.0, 20.0, 30.0, 40.0],
        id: 1000,
        w: 0.0,
        _pad: [0.0; 2],
    };
    let mut out = vec![[0f32; 4]; n];
    let mut o2 = vec![[0i32; 2]; n];
    run(
        k,
        &[n],
        &[8],
        &[buf(&mut ps), buf(&mut out), buf(&mut o2), val(extra)],
    );
    for i in 0..n {
        let p = ps[i];
        let v: Vec<f32> = (0..4).map(|c| p.pos[c] * p.w + extra.pos[c]).collect();
        assert_eq!(out[i], [v[2], v[1], v[0], (p.id + 1000) as f32], "out[{i}]");
        assert_eq!(o2[i], [p.id * 3 + 1, -p.id * 3 + 2]);
    }
}

#[test]
fn local_memory_and_barriers() {
    let src = r#"
kernel void rev(global int* data, local int* tmp) {
  int l = get_local_id(0), n = get_local_size(0), g = get_group_id(0);
  tmp[l] = data[g * n + l];
  barrier(CLK_LOCAL_MEM_FENCE);
  data[g * n + l] = tmp[n - 1 - l];
}
kernel void reduce(global const float* in, global float* out) {
  local float s[64];
  int l = get_local_id(0);
  s[l] = in[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int off = get_local_size(0) / 2; off > 0; off /= 2) {
    if (l < off) s[l] += s[l + off];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) out[get_group_id(0)] = s[0];
}
"#;
    let p = build(src);
    let k = kernel(&p, "rev");
    for local in [64usize, 20, 7] {
        let n = local * 5;
        let mut d: Vec<i32> = (0..n as i32).collect();
        run(k, &[n], &[local], &[buf(&mut d), Arg::Local(local * 4)]);
        for g in 0..5 {
            for l in 0..local {
                assert_eq!(
                    d[g * local + l],
                    (g * local + local - 1 - l) as i32,
                    "local={local} g={g} l={l}"
                );
            }
        }
    }
    let k = kernel(&p, "reduce");
    assert!(k.info.has_barriers);
    assert!(k.info.static_local_bytes >= 256);
    let n = 64 * 8;
    let mut inp: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
    let mut out = vec![0f32; 8];
    run(k, &[n], &[64], &[buf(&mut inp), buf(&mut out)]);
    for g in 0..8 {
        let s: f32 = inp[g * 64..(g + 1) * 64].iter().sum();
        assert_eq!(out[g], s, "group {g}");
    }
}

#[test]
fn sgemm_tiled() {
    let src = r#"
#define TS 16
kernel void sgemm(int M, int N, int K, global const float* A, global const float* B, global float* C) {
  int row = get_local_id(0), col = get_local_id(1);
  int gr = TS * get_group_id(0) + row, gc = TS * get_group_id(1) + col;
  local float As[TS][TS], Bs[TS][TS];
  float acc = 0.0f;
  for (int t = 0; t < K / TS; t++) {
    As[col][row] = A[(TS * t + col) * M + gr];
    Bs[col][row] = B[gc * K + TS * t + row];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TS; k++) acc += As[k][row] * Bs[col][k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[gc * M + gr] = acc;
}
"#;
    let p = build(src);
    let k = kernel(&p, "sgemm");
    let (m, n, kk) = (64usize, 48usize, 32usize);
    let mut a: Vec<f32> = (0..m * kk).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let mut b: Vec<f32> = (0..kk * n).map(|i| ((i * 5) % 11) as f32 - 5.0).collect();
    let mut c = vec![0f32; m * n];
    run(
        k,
        &[m, n],
        &[16, 16],
        &[
            val(m as i32),
            val(n as i32),
            val(kk as i32),
            buf(&mut a),
            buf(&mut b),
            buf(&mut c),
        ],
    );
    for gc in 0..n {
        for gr in 0..m {
            let mut acc = 0f32;
            for x in 0..kk {
                acc += a[x * m + gr] * b[gc * kk + x];
            }
            assert_eq!(c[gc * m + gr], acc, "C[{gc}][{gr}]");
        }
    }
}

#[test]
fn barriers_with_private_arrays_and_group_uniform_branches() {
    let src = r#"
kernel void k(global int* data, local int* tmp, int rounds) {
  int l = get_local_id(0), n = get_local_size(0);
  int priv[8];
  for (int j = 0; j < 8; j++) priv[j] = data[get_global_id(0)] * (j + 1);
  int v = data[get_global_id(0)];
  for (int r = 0; r < rounds; r++) {
    tmp[l] = v + priv[r & 7];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l % 3 == 0) v += tmp[(l + 1) % n];      // divergent
    else v -= tmp[(n - 1 - l)];
    if (get_group_id(0) % 2 == 0) {              // uniform per work-group
      barrier(CLK_LOCAL_MEM_FENCE);
      tmp[l] = v;
      barrier(CLK_LOCAL_MEM_FENCE);
      v = tmp[(l + 2) % n] + 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  data[get_global_id(0)] = v + priv[l & 7];
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    for (n, local) in [(96usize, 24usize), (60, 20), (35, 7)] {
        let mut d: Vec<i32> = (0..n as i32).map(|i| i * 5 - 17).collect();
        let init = d.clone();
        run(
            k,
            &[n],
            &[local],
            &[buf(&mut d), Arg::Local(local * 4), val(3i32)],
        );
        for g in 0..n / local {
            let base = g * local;
            let mut v: Vec<i32> = init[base..base + local].to_vec();
            let priv_of = |l: usize, j: usize| init[base + l] * (j as i32 + 1);
            for r in 0..3 {
                let tmp: Vec<i32> = (0..local).map(|l| v[l] + priv_of(l, r & 7)).collect();
                for l in 0..local {
                    if l % 3 == 0 {
                        v[l] += tmp[(l + 1) % local];
                    } else {
                        v[l] -= tmp[local - 1 - l];
                    }
                }
                if g % 2 == 0 {
                    let tmp2 = v.clone();
                    for l in 0..local {
                        v[l] = tmp2[(l + 2) % local] + 1;
                    }
                }
            }
            for l in 0..local {
                assert_eq!(
                    d[base + l],
                    v[l] + priv_of(l, l & 7),
                    "n={n} local={local} g={g} l={l}"
                );
            }
        }
    }
}

#[test]
fn async_work_group_copies() {
    let src = r#"
kernel void k(global const float* in, global float* out, local float* tmp, global float* back) {
  size_t g = get_group_id(0), n = get_local_size(0);
  event_t e = async_work_group_copy(tmp, in + g * n, n, 0);
  wait_group_events(1, &e);
  out[get_global_id(0)] = tmp[n - 1 - get_local_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  tmp[get_local_id(0)] *= 2.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  e = async_work_group_strided_copy(back + g, tmp, n, get_num_groups(0), 0);
  wait_group_events(1, &e);
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    let (groups, local) = (4usize, 24usize);
    let n = groups * local;
    let mut inp: Vec<f32> = (0..n).map(|x| x as f32).collect();
    let mut out = vec![0f32; n];
    let mut back = vec![0f32; n];
    run(
        k,
        &[n],
        &[local],
        &[
            buf(&mut inp),
            buf(&mut out),
            Arg::Local(local * 4),
            buf(&mut back),
        ],
    );
    for g in 0..groups {
        for l in 0..local {
            assert_eq!(out[g * local + l], inp[g * local + local - 1 - l]);
            assert_eq!(
                back[g + l * groups],
                inp[g * local + l] * 2.0,
                "strided copy g={g} l={l}"
            );
        }
    }
}

#[test]
fn arrays_of_vectors() {
    let src = r#"
kernel void k(global const float4* p4, global const float2* p2, global const int3* p3, global float* out) {
  size_t i = get_global_id(0);
  float4 a = p4[i];
  float2 b = p2[i];
  int3 c = p3[i];
  out[i] = a.x + 2.0f * a.y + 3.0f * a.z + 4.0f * a.w + 5.0f * b.x + 6.0f * b.y + (float)(c.x - c.y * c.z);
}
"#;
    for w in [4, 8, 16] {
        let p = build_w(src, w);
        let k = kernel(&p, "k");
        for (n, l) in [(64usize, 16usize), (60, 20)] {
            let mut p4: Vec<[f32; 4]> = (0..n)
                .map(|i| [i as f32, 1.0 + i as f32, 2.0 * i as f32, -(i as f32)])
                .collect();
            let mut p2: Vec<[f32; 2]> = (0..n).map(|i| [0.5 * i as f32, 7.0]).collect();
            let mut p3: Vec<[i32; 4]> = (0..n as i32).map(|i| [i, i + 1, 3 - i, 0]).collect();
            let mut out = vec![0f32; n];
            run(
                k,
                &[n],
                &[l],
                &[buf(&mut p4), buf(&mut p2), buf(&mut p3), buf(&mut out)],
            );
            for i in 0..n {
                let (a, b, c) = (p4[i], p2[i], p3[i]);
                let want = a[0]
                    + 2.0 * a[1]
                    + 3.0 * a[2]
                    + 4.0 * a[3]
                    + 5.0 * b[0]
                    + 6.0 * b[1]
                    + (c[0] - c[1] * c[2]) as f32;
                assert_eq!(out[i], want, "w={w} l={l} out[{i}]");
            }
        }
    }
}

#[test]
fn stores_of_vector_arrays() {
    let src = r#"
kernel void k(global float4* o4, global int2* o2, global const float* in) {
  size_t i = get_global_id(0);
  float x = in[i];
  o4[i] = (float4)(x, x + 1.0f, x * 2.0f, -x);
  o2[i] = (int2)((int)x, (int)i * 3);
}
"#;
    for w in [4, 8, 16] {
        let p = build_w(src, w);
        let k = kernel(&p, "k");
        for (n, l) in [(64usize, 16usize), (60, 20), (33, 11)] {
            let mut o4 = vec![[0f32; 4]; n + 1];
            let mut o2 = vec![[7i32; 2]; n + 1];
            let mut inp: Vec<f32> = (0..n).map(|i| i as f32 * 1.5).collect();
            run(k, &[n], &[l], &[buf(&mut o4), buf(&mut o2), buf(&mut inp)]);
            for i in 0..n {
                let x = inp[i];
                assert_eq!(o4[i], [x, x + 1.0, x * 2.0, -x], "w={w} l={l} o4[{i}]");
                assert_eq!(o2[i], [x as i32, i as i32 * 3], "w={w} l={l} o2[{i}]");
            }
            assert_eq!(o4[n], [0.0; 4], "no write past the end");
            assert_eq!(o2[n], [7, 7], "no write past the end");
        }
    }
}

#[test]
fn opt_disable_builds_the_same_results() {
    use cranecl_jit::CompileOptions;
    let src = r#"
kernel void k(global const float* in, global float* out, local float* tmp) {
  int l = get_local_id(0);
  float s = 0.0f;
  for (int i = get_global_id(0); i < 200; i += get_global_size(0)) s += in[i];
  tmp[l] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) { float t = 0.0f; for (int j = 0; j < get_local_size(0); j++) t += tmp[j]; out[get_group_id(0)] = t; }
}
"#;
    let p = build_with(
        src,
        &CompileOptions {
            opt_disable: true,
            ..Default::default()
        },
    );
    let k = kernel(&p, "k");
    let mut inp: Vec<f32> = (0..200).map(|x| x as f32).collect();
    let mut out = vec![0f32; 2];
    run(
        k,
        &[32],
        &[16],
        &[buf(&mut inp), buf(&mut out), Arg::Local(64)],
    );
    let total: f32 = inp.iter().sum();
    assert_eq!(out[0] + out[1], total);
}

#[test]
fn private_variables_are_aligned_to_their_type() {
    // A short16 member (32-byte alignment) and a double16 (128) in private memory.
    let src = r#"
typedef struct { short pre[12]; short16 v; short3 post; } S;
kernel void k(global ulong* o, global const short16* in) {
  size_t g = get_global_id(0);
  S s;
  double16 d = (double16)(g);
  s.v = in[g];
  o[3*g] = (ulong)&s.v;
  o[3*g+1] = (ulong)&d;
  o[3*g+2] = s.v.s3 + (ulong)d.s5;
}
kernel void with_barrier(global ulong* o, global const short16* in) {
  size_t g = get_global_id(0);
  S s;
  double16 d = (double16)(g);
  s.v = in[g];
  barrier(CLK_GLOBAL_MEM_FENCE);
  o[3*g] = (ulong)&s.v;
  o[3*g+1] = (ulong)&d;
  o[3*g+2] = s.v.s3 + (ulong)d.s5;
}
"#;
    let n = 32;
    let mut input: Vec<i16> = (0..16 * n as i16).collect();
    for (w, name) in [(4, "k"), (8, "k"), (4, "with_barrier"), (8, "with_barrier")] {
        let p = build_w(src, w);
        let mut o = vec![0u64; 3 * n];
        run(
            kernel(&p, name),
            &[n],
            &[8],
            &[buf(&mut o), buf(&mut input)],
        );
        for g in 0..n {
            assert_eq!(o[3 * g] % 32, 0, "W={w} short16 at {:#x}", o[3 * g]);
            assert_eq!(
                o[3 * g + 1] % 128,
                0,
                "W={w} double16 at {:#x}",
                o[3 * g + 1]
            );
            assert_eq!(o[3 * g + 2], (16 * g + 3 + g) as u64);
        }
    }
}

#[test]
fn async_copy_arguments_come_from_lane_zero() {
    // `gid - lid` is the same in every work-item though both vary; clang passes the
    // __local array as a pointer to the whole array.
    let src = r#"
kernel void k(global const ushort* in, global ushort* out) {
  __local ushort data[256];
  size_t i = get_global_id(0), lid = get_local_id(0);
  data[lid] = in[i] + 1;
  barrier(CLK_LOCAL_MEM_FENCE);
  event_t e = async_work_group_copy(out + (i - lid), data, get_local_size(0), 0);
  wait_group_events(1, &e);
}
"#;
    let n = 512;
    let mut input: Vec<u16> = (0..n as u16).map(|x| x * 3).collect();
    for (w, l) in [(4, 64), (8, 128), (16, 256)] {
        let p = build_w(src, w);
        let mut out = vec![0u16; n];
        run(
            kernel(&p, "k"),
            &[n],
            &[l],
            &[buf(&mut input), buf(&mut out)],
        );
        for g in 0..n {
            assert_eq!(out[g], input[g] + 1, "W={w} element {g}");
        }
    }
}
