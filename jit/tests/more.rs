//! Intel shuffles down/up, block reads/writes, constant tables, program-scope
//! globals, kernel argument metadata.

mod common;
use common::*;

#[test]
fn intel_shuffle_down_stencil() {
    // clbench's stencil5_shuffle.
    let src = r#"
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
kernel void stencil(global const float* in, global float* out, constant float* w) {
  const uint i = get_global_id(0);
  const uint sgs = get_sub_group_size();
  const float cur = in[i];
  const float nxt = in[i + sgs];
  float w0, w1, w2, w3, w4;
  if (sgs >= 5) {
    const float wl = w[min(get_sub_group_local_id(), 4u)];
    w0 = intel_sub_group_shuffle(wl, 0u); w1 = intel_sub_group_shuffle(wl, 1u);
    w2 = intel_sub_group_shuffle(wl, 2u); w3 = intel_sub_group_shuffle(wl, 3u);
    w4 = intel_sub_group_shuffle(wl, 4u);
  } else { w0 = w[0]; w1 = w[1]; w2 = w[2]; w3 = w[3]; w4 = w[4]; }
  float acc = w0 * cur;
  acc += w1 * intel_sub_group_shuffle_down(cur, nxt, 1u);
  acc += w2 * intel_sub_group_shuffle_down(cur, nxt, 2u);
  acc += w3 * intel_sub_group_shuffle_down(cur, nxt, 3u);
  acc += w4 * intel_sub_group_shuffle_down(cur, nxt, 4u);
  out[i] = acc;
}
kernel void up(global const int* in, global int* out) {
  uint i = get_global_id(0);
  out[i] = intel_sub_group_shuffle_up(in[i] + 1000, in[i], 3u);
}
"#;
    for w in [4u32, 8, 16, 32] {
        let p = build_w(src, w);
        let k = kernel(&p, "stencil");
        let n = 256;
        let mut inp: Vec<f32> = (0..n + 64).map(|i| ((i * 13) % 17) as f32).collect();
        let mut out = vec![0f32; n];
        let mut wt = vec![0.5f32, -1.0, 2.0, 0.25, 1.5];
        run(
            k,
            &[n],
            &[64],
            &[buf(&mut inp), buf(&mut out), buf(&mut wt)],
        );
        for i in 0..n {
            let mut acc = wt[0] * inp[i];
            for d in 1..5 {
                acc += wt[d] * inp[i + d];
            }
            assert_eq!(out[i], acc, "w={w} out[{i}]");
        }
        let k = kernel(&p, "up");
        let mut a: Vec<i32> = (0..n as i32).collect();
        let mut o = vec![0i32; n];
        run(k, &[n], &[64], &[buf(&mut a), buf(&mut o)]);
        let w = w as usize;
        for i in 0..n {
            let l = i % w;
            let want = if l >= 3 {
                a[i - 3]
            } else {
                a[i - l + w - 3 + l] + 1000
            };
            assert_eq!(o[i], want, "w={w} up[{i}]");
        }
    }
}

#[test]
fn intel_block_read_write() {
    let src = r#"
#pragma OPENCL EXTENSION cl_intel_subgroups : enable
__attribute__((intel_reqd_sub_group_size(8)))
kernel void k(global uint* in, global uint* out) {
  uint base = get_group_id(0) * get_local_size(0) * 2 + get_sub_group_id() * 16;
  uint2 v = intel_sub_group_block_read2(in + base);
  intel_sub_group_block_write2(out + base, v * 3u + (uint2)(0, 1));
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    let n = 128;
    let mut a: Vec<u32> = (0..2 * n as u32).map(|x| x * 7 + 1).collect();
    let mut o = vec![0u32; 2 * n];
    run(k, &[n], &[32], &[buf(&mut a), buf(&mut o)]);
    // Block of 16: lane l's component c is element c*8 + l.
    for b in 0..(2 * n) / 16 {
        for c in 0..2 {
            for l in 0..8 {
                let idx = b * 16 + c * 8 + l;
                assert_eq!(o[idx], a[idx] * 3 + c as u32, "block {b} comp {c} lane {l}");
            }
        }
    }
}

#[test]
fn constant_tables_and_globals() {
    let src = r#"
constant float tbl[5] = {1.5f, -2.0f, 3.25f, 0.0f, 10.0f};
constant int2 pairs[3] = {(int2)(1, 2), (int2)(3, 4), (int2)(5, 6)};
kernel void k(global float* out, global int* o2) {
  int i = get_global_id(0);
  out[i] = tbl[i % 5] * (float)i;
  int2 p = pairs[i % 3];
  o2[i] = p.x * 10 + p.y;
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    let n = 40;
    let mut out = vec![0f32; n];
    let mut o2 = vec![0i32; n];
    run(k, &[n], &[8], &[buf(&mut out), buf(&mut o2)]);
    let tbl = [1.5f32, -2.0, 3.25, 0.0, 10.0];
    for i in 0..n {
        assert_eq!(out[i], tbl[i % 5] * i as f32);
        assert_eq!(o2[i], [12, 34, 56][i % 3]);
    }
}

#[test]
fn argument_metadata() {
    let src = r#"
typedef struct { int a; float b; } S;
kernel void k(global const float* restrict in, local int* scratch, constant uint4* c,
              float alpha, S s, uchar small, long big) { }
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    let a = &k.info.args;
    let names: Vec<&str> = a.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["in", "scratch", "c", "alpha", "s", "small", "big"]);
    use cranecl_jit::{AddressQualifier as Q, ArgKind as K};
    let kinds: Vec<K> = a.iter().map(|x| x.kind).collect();
    assert_eq!(
        kinds,
        [
            K::GlobalPtr,
            K::LocalPtr,
            K::ConstantPtr,
            K::Value,
            K::Value,
            K::Value,
            K::Value
        ]
    );
    assert_eq!(a[0].address_qualifier, Q::Global);
    assert_eq!(a[1].address_qualifier, Q::Local);
    assert_eq!(a[2].address_qualifier, Q::Constant);
    let sizes: Vec<usize> = a.iter().map(|x| x.size).collect();
    assert_eq!(sizes, [8, 8, 8, 4, 8, 1, 8]);
    // Offsets: naturally aligned, increasing.
    for w in a.windows(2) {
        assert!(w[1].offset >= w[0].offset + w[0].size);
    }
    for x in &a[..3] {
        assert_eq!(x.offset % 8, 0, "pointer {} is 8-aligned", x.name);
    }
    assert_eq!(a[6].offset % 8, 0);
    assert!(k.info.arg_block_size >= a[6].offset + 8);
}

#[test]
fn reqd_work_group_size_attributes() {
    let src = r#"
__attribute__((reqd_work_group_size(16, 4, 1)))
kernel void a(global int* p) { p[get_global_id(0)] = 1; }
__attribute__((work_group_size_hint(8, 1, 1)))
kernel void b(global int* p) { p[get_global_id(0)] = 2; }
"#;
    let p = build(src);
    let a = kernel(&p, "a");
    assert_eq!(a.info.reqd_work_group_size, Some([16, 4, 1]));
    assert!(a.info.attributes.contains("reqd_work_group_size(16,4,1)"));
    let b = kernel(&p, "b");
    assert_eq!(b.info.work_group_size_hint, Some([8, 1, 1]));
}
