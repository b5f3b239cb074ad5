//! Values that live across several vector-math calls (`sin`, `exp`, `cos`, `log` of
//! a whole sub-group per call): the operands and earlier results a kernel uses after
//! later calls, in the same block, in the next block, inside divergent branches and
//! as vector components, are reread from the calls' stack slots after those calls
//! (`lower::slot_remat`) instead of being spilled. Each is written out and compared
//! with the host: an operand bit for bit, results within the OpenCL limits, sums
//! within a few ulp, over a partial last sub-group.

use cranecl_conformance::*;

/// Results per work-item.
const NR: usize = 8;

const SRC: &str = r"
kernel void k(global const float* x, global float* out) {
    size_t i = get_global_id(0);
    float v = x[i];
    float s = sin(v);
    float e = exp(-v * v);
    float c = cos(e);
    float2 t = exp((float2)(v, s));
    float r;
    if (v > 1.0f) {
        r = log(v) + s;
    } else {
        r = exp(v) - e;
    }
    out[i * 8 + 0] = v;
    out[i * 8 + 1] = s;
    out[i * 8 + 2] = e;
    out[i * 8 + 3] = c;
    out[i * 8 + 4] = t.x;
    out[i * 8 + 5] = t.y;
    out[i * 8 + 6] = r;
    out[i * 8 + 7] = sqrt(v) + c;
}
";

/// `have` within `ulps` of the `f64` value `want` rounded to `f32`.
fn close(have: f32, want: f64, ulps: u64, what: &str, x: f32) {
    let w = want as f32;
    let d = ulp_distance_f32(have, w);
    assert!(
        d <= ulps || (have.is_nan() && w.is_nan()),
        "{what} of x = {x:e}: {have:e}, host {w:e} ({d} ulp)"
    );
}

#[test]
fn vector_math_operands_and_results_survive_later_calls() {
    let ctx = DeviceContext::new();
    let mut rng = TestRng::new(0x5107_0a11);
    let mut xs: Vec<f32> = vec![0.0, -0.0, 1.0, -1.0, 1e-40, 0.5, 3.0, -7.5, 100.0];
    while xs.len() < 1003 {
        xs.push(rng.f32_in(-4.0, 4.0));
    }
    let n = xs.len(); // not a multiple of the sub-group width
    let kernel = ctx.kernel(SRC, "", "k");
    let inbuf = ctx.buffer_from(&xs);
    let out = ctx.buffer_zeroed::<f32>(n * NR);
    kernel.arg_buffer(0, &inbuf).arg_buffer(1, &out);
    ctx.run(&kernel, &[n], None);
    let got = ctx.read::<f32>(&out, n * NR);
    for (i, &x) in xs.iter().enumerate() {
        let g = &got[i * NR..(i + 1) * NR];
        let xd = f64::from(x);
        assert_eq!(
            g[0].to_bits(),
            x.to_bits(),
            "the operand x = {x:e}: {:e}",
            g[0]
        );
        close(g[1], xd.sin(), 4, "sin", x);
        close(g[2], f64::from(-(x * x)).exp(), 3, "exp(-x*x)", x);
        close(g[3], f64::from(g[2]).cos(), 4, "cos(exp(-x*x))", x);
        close(g[4], xd.exp(), 3, "exp(x) (vector)", x);
        close(g[5], f64::from(g[1]).exp(), 3, "exp(sin x) (vector)", x);
        let r = if x > 1.0 {
            f64::from((xd.ln() as f32) + g[1])
        } else {
            f64::from((xd.exp() as f32) - g[2])
        };
        // Each call within its limit, then one rounding: a few ulp of the larger term.
        let scale = if x > 1.0 {
            xd.ln().abs().max(f64::from(g[1]).abs())
        } else {
            xd.exp().abs().max(f64::from(g[2]).abs())
        };
        assert!(
            (f64::from(g[6]) - r).abs() <= scale * 1e-6 + 1e-30,
            "branch result of x = {x:e}: {:e}, host {r:e}",
            g[6]
        );
        let q = f64::from((xd.sqrt() as f32) + g[3]);
        assert!(
            (f64::from(g[7]) - q).abs() <= q.abs() * 1e-6 || (q.is_nan() && g[7].is_nan()),
            "sqrt(x) + c of x = {x:e}: {:e}, host {q:e}",
            g[7]
        );
    }
}
