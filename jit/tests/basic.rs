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
    assert_eq!(k.info.sub_group_width, 8);
    let n = 1024;
    let mut a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let mut b: Vec<f32> = (0..n).map(|i| 1000.0 - i as f32).collect();
    let mut c = vec![0f32; n];
    run(k, &[n], &[64], &[buf(&mut a), buf(&mut b), buf(&mut c)]);
    for i in 0..n {
        assert_eq!(c[i], a[i] + b[i], "c[{i}]");
    }
}
