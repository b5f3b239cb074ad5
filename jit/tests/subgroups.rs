//! Sub-group built-ins and operations at W = 4, 8, 16, atomics, work-group collectives.

mod common;
use common::*;

fn sg_src(w: u32) -> String {
    format!(
        r#"
__attribute__((intel_reqd_sub_group_size({w})))
kernel void sg(global const float* a, global float* red, global float* shuf, global float* x1,
               global float* bc, global int* scan, global int* info) {{
  size_t i = get_global_id(0);
  float x = a[i];
  red[i] = sub_group_reduce_add(x);
  shuf[i] = intel_sub_group_shuffle(x, (get_sub_group_local_id() + 1) % get_max_sub_group_size());
  x1[i] = intel_sub_group_shuffle_xor(x, 1);
  bc[i] = sub_group_broadcast(x, 2);
  scan[i] = sub_group_scan_inclusive_add((int)x) * 1000 + sub_group_scan_exclusive_max((int)x);
  info[4*i+0] = get_sub_group_local_id();
  info[4*i+1] = get_sub_group_size();
  info[4*i+2] = get_sub_group_id();
  info[4*i+3] = get_num_sub_groups() * 100 + get_max_sub_group_size() + sub_group_any(x > 40.0f) * 1000 + sub_group_all(x >= 0.0f) * 10000;
}}
"#
    )
}

#[test]
fn sub_group_ops() {
    for w in [4usize, 8, 16, 32] {
        let p = build(&sg_src(w as u32));
        let k = kernel(&p, "sg");
        assert_eq!(k.info.sub_group_width as usize, w);
        // A ragged group: 2 full groups of 24 and a last one of 12 (not a multiple of W for W=8, 16).
        let n = 60;
        let local = 24;
        let mut a: Vec<f32> = (0..n).map(|i| ((i * 7) % 23) as f32).collect();
        let mut red = vec![0f32; n];
        let mut shuf = vec![0f32; n];
        let mut x1 = vec![0f32; n];
        let mut bc = vec![0f32; n];
        let mut scan = vec![0i32; n];
        let mut info = vec![0i32; 4 * n];
        run(
            k,
            &[n],
            &[local],
            &[
                buf(&mut a),
                buf(&mut red),
                buf(&mut shuf),
                buf(&mut x1),
                buf(&mut bc),
                buf(&mut scan),
                buf(&mut info),
            ],
        );
        for g in 0..n.div_ceil(local) {
            let lsz = local.min(n - g * local);
            let nsg = lsz.div_ceil(w);
            for s in 0..nsg {
                let first = g * local + s * w;
                let size = w.min(lsz - s * w);
                let lanes: Vec<f32> = (0..size).map(|l| a[first + l]).collect();
                let sum: f32 = lanes.iter().sum();
                for l in 0..size {
                    let i = first + l;
                    let ctx = format!("w={w} g={g} sg={s} lane={l}");
                    assert_eq!(red[i], sum, "reduce {ctx}");
                    if size == w {
                        assert_eq!(shuf[i], lanes[(l + 1) % w], "shuffle {ctx}");
                        assert_eq!(x1[i], lanes[l ^ 1], "xor {ctx}");
                    }
                    if size > 2 {
                        assert_eq!(bc[i], lanes[2], "broadcast {ctx}");
                    }
                    let inc: i32 = lanes[..=l].iter().map(|v| *v as i32).sum();
                    let exm: i32 = lanes[..l]
                        .iter()
                        .map(|v| *v as i32)
                        .max()
                        .unwrap_or(i32::MIN);
                    assert_eq!(
                        scan[i],
                        inc.wrapping_mul(1000).wrapping_add(exm),
                        "scan {ctx}"
                    );
                    assert_eq!(info[4 * i], l as i32, "local id {ctx}");
                    assert_eq!(info[4 * i + 1], size as i32, "size {ctx}");
                    assert_eq!(info[4 * i + 2], s as i32, "sg id {ctx}");
                    let any = lanes.iter().any(|v| *v > 40.0) as i32;
                    assert_eq!(
                        info[4 * i + 3],
                        nsg as i32 * 100 + w as i32 + any * 1000 + 10000,
                        "misc {ctx}"
                    );
                }
            }
        }
    }
}

#[test]
fn atomics() {
    let src = r#"
kernel void k(global int* c, global const int* in, local int* l) {
  int i = get_global_id(0);
  if (get_local_id(0) == 0) l[0] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_add(&c[0], in[i]);
  atomic_inc(&c[1]);
  atomic_max(&c[2], in[i]);
  atomic_min(&c[3], in[i]);
  atom_xor(&c[4], in[i]);
  atomic_add(&l[0], 1);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) atomic_add(&c[5], l[0]);
  if (in[i] % 5 == 0) atomic_cmpxchg(&c[6], 0, i + 1);
  atomic_fetch_add_explicit((volatile global atomic_int*)&c[7], 2, memory_order_relaxed);
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    let n = 200;
    let mut inp: Vec<i32> = (0..n as i32).map(|i| (i * 31) % 97 - 20).collect();
    let mut c = vec![0i32; 8];
    c[3] = i32::MAX;
    run(k, &[n], &[25], &[buf(&mut c), buf(&mut inp), Arg::Local(4)]);
    assert_eq!(c[0], inp.iter().sum::<i32>());
    assert_eq!(c[1], n as i32);
    assert_eq!(c[2], *inp.iter().max().unwrap());
    assert_eq!(c[3], *inp.iter().min().unwrap());
    assert_eq!(c[4], inp.iter().fold(0, |a, b| a ^ b));
    assert_eq!(c[5], n as i32);
    assert!(c[6] > 0 && inp[(c[6] - 1) as usize] % 5 == 0);
    assert_eq!(c[7], 2 * n as i32);
}

#[test]
fn work_group_collectives() {
    let src = r#"
kernel void k(global const int* in, global int* out) {
  int x = in[get_global_id(0)];
  int s = work_group_reduce_add(x);
  int m = work_group_reduce_max(x);
  int b = work_group_broadcast(x, 3);
  int p = work_group_scan_inclusive_add(x);
  int any = work_group_any(x > 90);
  out[get_global_id(0)] = s * 7 + m * 3 + b + p * 11 + any;
}
"#;
    let p = build(src);
    let k = kernel(&p, "k");
    let n = 150;
    let local = 50;
    let mut inp: Vec<i32> = (0..n as i32).map(|i| (i * 13) % 101).collect();
    let mut out = vec![0i32; n];
    run(k, &[n], &[local], &[buf(&mut inp), buf(&mut out)]);
    for g in 0..n / local {
        let v = &inp[g * local..(g + 1) * local];
        let s: i32 = v.iter().sum();
        let m = *v.iter().max().unwrap();
        let any = v.iter().any(|x| *x > 90) as i32;
        for l in 0..local {
            let p: i32 = v[..=l].iter().sum();
            assert_eq!(
                out[g * local + l],
                s * 7 + m * 3 + v[3] + p * 11 + any,
                "g={g} l={l}"
            );
        }
    }
}
