//! The scalar loads and stores of one array element's fields become one vector access
//! (`jit::analysis::combine`): a `{double re, im}` element read and written field by
//! field (pyopencl's `cdouble_t` product), a four-float struct written field by field
//! (including a constant field), a struct in `__local` memory, and accesses that must
//! not be combined (fields of different types, a float pointer read at `p[0]` and
//! `p[1]`, whose lanes overlap). Full and partial sub-groups; every value is checked
//! against the host.

use cranecl_conformance::*;

const SOURCE: &str = r#"
typedef struct { double re, im; } cd_t;
typedef struct { float x, y, z, w; } p4_t;
typedef struct { float f; int i; } mix_t;
typedef struct { float re, im; } cf_t;

/* pyopencl's elementwise abs of a complex64 array: clang strength-reduces the loop
   to a pointer at the imaginary part, read at [-1] and [0]. */
kernel void cabs_loop(global char *z_base, long z_off, global char *x_base, long x_off,
                      long n)
{
    int lid = get_local_id(0);
    int gsize = get_global_size(0);
    int start = get_local_size(0) * get_group_id(0);
    global float *z = (global float *)(z_base + z_off);
    global cf_t *x = (global cf_t *)(x_base + x_off);
    for (long i = start + lid; i < n; i += gsize)
        z[i] = hypot(x[i].re, x[i].im);
}

kernel void zmul(global cd_t *z, global const cd_t *x, global const cd_t *y, long n)
{
    long i = get_global_id(0);
    if (i < n) {
        double a = x[i].re, b = x[i].im, c = y[i].re, d = y[i].im;
        cd_t r;
        r.re = a * c - b * d;
        r.im = a * d + b * c;
        z[i] = r;
    }
}

kernel void part(global p4_t *o, global const float *a)
{
    size_t i = get_global_id(0);
    p4_t p;
    p.x = a[i];
    p.y = a[i] * 2.0f;
    p.z = a[i] + 1.0f;
    p.w = 0.5f;
    o[i] = p;
}

kernel void local_pairs(global cd_t *o, global const cd_t *in)
{
    local cd_t t[64];
    size_t l = get_local_id(0), g = get_global_id(0);
    t[l] = in[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t m = get_local_size(0) - 1 - l;
    o[g].re = t[m].im;
    o[g].im = t[m].re + 1.0;
}

kernel void mixed(global mix_t *o, global const float *a, global float *adj)
{
    size_t i = get_global_id(0);
    o[i].f = a[i] * 3.0f;
    o[i].i = (int)i - 5;
    global float *p = &adj[i];
    float s = p[0] + 10.0f * p[1];
    barrier(CLK_GLOBAL_MEM_FENCE);
    p[0] = s;
}
"#;

#[test]
fn complex_double_product_reads_and_writes_whole_elements() {
    let ctx = DeviceContext::new();
    if !require(ctx.has_extension("cl_khr_fp64"), "cl_khr_fp64") {
        return;
    }
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("zmul");
    for (n, global, local) in [(1000usize, 1024usize, None), (333, 352, Some(32))] {
        let x: Vec<f64> = (0..2 * n).map(|j| (j as f64 * 0.37).sin() * 3.0).collect();
        let y: Vec<f64> = (0..2 * n).map(|j| (j as f64 * 0.11).cos() - 0.5).collect();
        let (bx, by) = (ctx.buffer_from(&x), ctx.buffer_from(&y));
        // One element past n stays untouched.
        let bz = ctx.buffer_from(&vec![-7.0f64; 2 * global]);
        k.arg_buffer(0, &bz)
            .arg_buffer(1, &bx)
            .arg_buffer(2, &by)
            .arg(3, n as i64);
        let local_slice = local.map(|l| [l]);
        ctx.run(&k, &[global], local_slice.as_ref().map(|l| &l[..]));
        let z: Vec<f64> = ctx.read(&bz, 2 * global);
        for i in 0..global {
            let want = if i < n {
                let (a, b, c, d) = (x[2 * i], x[2 * i + 1], y[2 * i], y[2 * i + 1]);
                [a * c - b * d, a * d + b * c]
            } else {
                [-7.0, -7.0]
            };
            for (got, want) in z[2 * i..2 * i + 2].iter().zip(want) {
                // The device may contract a * c - b * d into an fma.
                assert!(
                    (got - want).abs() <= 4.0 * f64::EPSILON * want.abs().max(1.0),
                    "n {n}: z[{i}] = {:?}, host {want:?}",
                    &z[2 * i..2 * i + 2]
                );
            }
        }
    }
}

#[test]
fn complex_float_abs_in_a_grid_stride_loop() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("cabs_loop");
    let n = 5000usize;
    let x: Vec<f32> = (0..2 * n).map(|j| (j as f32 * 0.731).sin() * 4.0).collect();
    let bx = ctx.buffer_from(&x);
    let bz = ctx.buffer_from(&vec![-1.0f32; n + 8]);
    // Byte offsets as pyopencl passes them (views into bigger buffers).
    k.arg_buffer(0, &bz)
        .arg(1, 8i64)
        .arg_buffer(2, &bx)
        .arg(3, 0i64)
        .arg(4, n as i64);
    ctx.run(&k, &[1024], Some(&[64]));
    let z: Vec<f32> = ctx.read(&bz, n + 8);
    assert_eq!(&z[..2], &[-1.0, -1.0], "before the view");
    for i in 0..n {
        let want = f64::from(x[2 * i]).hypot(f64::from(x[2 * i + 1]));
        let got = f64::from(z[i + 2]);
        assert!(
            (got - want).abs() <= 4.0 * f64::from(f32::EPSILON) * want,
            "|x[{i}]| = {got}, host {want}"
        );
    }
    assert_eq!(&z[n + 2..], &[-1.0; 6], "after the view");
}

#[test]
fn four_float_struct_written_field_by_field() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("part");
    let n = 517usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.25 - 30.0).collect();
    let (ba, bo) = (ctx.buffer_from(&a), ctx.buffer_zeroed::<f32>(4 * n));
    k.arg_buffer(0, &bo).arg_buffer(1, &ba);
    ctx.run(&k, &[n], None);
    let o: Vec<f32> = ctx.read(&bo, 4 * n);
    for i in 0..n {
        assert_eq!(
            &o[4 * i..4 * i + 4],
            &[a[i], a[i] * 2.0, a[i] + 1.0, 0.5],
            "element {i}"
        );
    }
}

#[test]
fn local_struct_pairs_and_field_stores() {
    let ctx = DeviceContext::new();
    if !require(ctx.has_extension("cl_khr_fp64"), "cl_khr_fp64") {
        return;
    }
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("local_pairs");
    for l in [64usize, 40, 24] {
        let n = 4 * l;
        let input: Vec<f64> = (0..2 * n).map(|j| j as f64 * 1.5 - 11.0).collect();
        let (bi, bo) = (ctx.buffer_from(&input), ctx.buffer_zeroed::<f64>(2 * n));
        k.arg_buffer(0, &bo).arg_buffer(1, &bi);
        ctx.run(&k, &[n], Some(&[l]));
        let o: Vec<f64> = ctx.read(&bo, 2 * n);
        for g in 0..n {
            let m = (g / l) * l + (l - 1 - g % l);
            assert_eq!(
                &o[2 * g..2 * g + 2],
                &[input[2 * m + 1], input[2 * m] + 1.0],
                "group size {l}, work-item {g}"
            );
        }
    }
}

#[test]
fn fields_of_other_types_and_overlapping_pointers_stay_scalar() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("mixed");
    let n = 300usize;
    let a: Vec<f32> = (0..n).map(|i| i as f32 - 100.0).collect();
    let adj: Vec<f32> = (0..n + 1).map(|i| (i * i % 17) as f32).collect();
    let ba = ctx.buffer_from(&a);
    let bo = ctx.buffer_zeroed::<u32>(2 * n);
    let badj = ctx.buffer_from(&adj);
    k.arg_buffer(0, &bo).arg_buffer(1, &ba).arg_buffer(2, &badj);
    // One work-group: the barrier orders every read of adj before the writes.
    ctx.run(&k, &[n], Some(&[n]));
    let o: Vec<u32> = ctx.read(&bo, 2 * n);
    let got_adj: Vec<f32> = ctx.read(&badj, n + 1);
    for i in 0..n {
        assert_eq!(f32::from_bits(o[2 * i]), a[i] * 3.0, "f of {i}");
        assert_eq!(o[2 * i + 1] as i32, i as i32 - 5, "i of {i}");
        assert_eq!(got_adj[i], adj[i] + 10.0 * adj[i + 1], "adj[{i}]");
    }
    assert_eq!(got_adj[n], adj[n], "adj[n] untouched");
}
