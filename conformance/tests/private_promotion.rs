//! Private variables whose address goes only to (inlined) helper functions are kept
//! in registers instead of private memory (`jit::analysis::promote`). The kernels
//! here take the shapes that promotion must get right: a counter stored as `uint`s
//! and read as a `uint4` and a key stored as two `uint`s and read as a `ulong` (the
//! Random123 Philox pattern of pyopencl's clrandom), stores under divergent branches
//! and in loops that lanes leave at different trips, a `double` sharing a struct
//! with 32-bit fields, unions read through other types, and variables that must stay
//! in memory (a run-time index). Every result is checked against the host.

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

const SOURCE: &str = r#"
typedef struct { uint v[4]; } ctr_t;
typedef struct { uint v[2]; } key_t;

__attribute__((noinline)) uint4 gen(key_t *key, ctr_t *ctr)
{
    union { ctr_t c; uint4 v; } u;
    u.c = *ctr;
    ulong k = *(ulong *)key;
    if (++ctr->v[0] == 0)
        if (++ctr->v[1] == 0)
            ++ctr->v[2];
    uint4 r = u.v;
    r.x ^= (uint)k;
    r.y ^= (uint)(k >> 32);
    r.z = r.z * 0x9E3779B9u + (uint)(k * 3);
    r.w += r.x;
    return r;
}

kernel void counter(global uint4 *out, uint k1, uint c0, uint c1, uint c2, uint c3,
                    global const int *trips)
{
    size_t gid = get_global_id(0);
    key_t k = {{(uint)gid, k1}};
    ctr_t c = {{c0, c1, c2, c3}};
    uint4 acc = (uint4)(0);
    int n = trips[gid];
    for (int j = 0; j < n; ++j)
        acc += gen(&k, &c) * (uint)(j + 1);
    out[2 * gid] = acc;
    out[2 * gid + 1] = (uint4)(c.v[0], c.v[1], c.v[2], c.v[3]);
}

typedef struct { float f; int i; double d; } mixed_t;

__attribute__((noinline)) void bump(mixed_t *s, int k)
{
    if (k & 1)
        s->f += 1.5f;
    else
        s->i += k;
    s->d = s->d * 0.5 + k;
}

kernel void divergent(global float *of, global int *oi, global double *od,
                      global const int *trips)
{
    int gid = get_global_id(0);
    mixed_t s = {0.25f, gid, 1.0};
    int n = trips[gid];
    for (int j = 0; j < n; ++j) {
        bump(&s, j + gid);
        if (s.i > 400)
            break;
    }
    if (gid % 3 == 0)
        s.f = -s.f;
    of[gid] = s.f;
    oi[gid] = s.i;
    od[gid] = s.d;
}

typedef union { uint4 u; ulong2 l; float4 f; } pun_t;

__attribute__((noinline)) void fill(pun_t *p, uint a)
{
    p->u.x = a;
    p->u.y = a * 7u;
    p->u.z = 0x3f800000u + a;
    p->u.w = ~a;
}

kernel void pun(global ulong2 *ol, global float4 *of, global uint *ou)
{
    uint gid = get_global_id(0);
    pun_t p;
    fill(&p, gid * 2654435761u);
    ol[gid] = p.l;
    of[gid] = p.f;
    p.l.x += 1;
    ou[gid] = p.u.x + p.u.y;
}

kernel void indexed(global int *out, global const int *idx)
{
    int gid = get_global_id(0);
    int a[8];
    for (int j = 0; j < 8; ++j)
        a[j] = gid * 10 + j;
    a[idx[gid] & 7] += 1000;
    out[gid] = a[idx[gid] & 7] + a[(idx[gid] + 3) & 7];
}
"#;

/// `CL_KERNEL_PRIVATE_MEM_SIZE` of kernel `k`: 0 when every private variable was
/// promoted to registers.
fn private_bytes(ctx: &DeviceContext, k: &Kernel) -> u64 {
    k.work_group_info(ctx.device, CL_KERNEL_PRIVATE_MEM_SIZE)
        .expect("CL_KERNEL_PRIVATE_MEM_SIZE")
}

/// The host's `gen`.
fn host_gen(key: [u32; 2], ctr: &mut [u32; 4]) -> [u32; 4] {
    let k = u64::from(key[0]) | u64::from(key[1]) << 32;
    let mut r = *ctr;
    ctr[0] = ctr[0].wrapping_add(1);
    if ctr[0] == 0 {
        ctr[1] = ctr[1].wrapping_add(1);
        if ctr[1] == 0 {
            ctr[2] = ctr[2].wrapping_add(1);
        }
    }
    r[0] ^= k as u32;
    r[1] ^= (k >> 32) as u32;
    r[2] = r[2]
        .wrapping_mul(0x9E37_79B9)
        .wrapping_add(k.wrapping_mul(3) as u32);
    r[3] = r[3].wrapping_add(r[0]);
    r
}

/// Loop trips per work-item: 0 to 6, so that lanes leave the loop at different trips.
fn trips(n: usize) -> Vec<i32> {
    (0..n).map(|i| ((i * 7 + i / 5) % 7) as i32).collect()
}

#[test]
fn counter_and_key_pass_through_helpers_like_philox() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("counter");
    let private = private_bytes(&ctx, &k);
    assert_eq!(private, 0, "the counter and key stay in registers");
    let n = 1003usize;
    let t = trips(n);
    let bt = ctx.buffer_from(&t);
    // Counters whose increments carry into the second and third words.
    for (k1, c) in [
        (5u32, [1u32, 2, 3, 4]),
        (0xdead_beef, [u32::MAX - 2, 7, 9, 11]),
        (1, [u32::MAX - 1, u32::MAX, 41, 0]),
    ] {
        let bout = ctx.buffer_zeroed::<u32>(8 * n);
        k.arg_buffer(0, &bout)
            .arg(1, k1)
            .arg(2, c[0])
            .arg(3, c[1])
            .arg(4, c[2])
            .arg(5, c[3])
            .arg_buffer(6, &bt);
        ctx.run(&k, &[n], None);
        let got: Vec<u32> = ctx.read(&bout, 8 * n);
        for gid in 0..n {
            let key = [gid as u32, k1];
            let mut ctr = c;
            let mut acc = [0u32; 4];
            for j in 0..t[gid] {
                let r = host_gen(key, &mut ctr);
                for l in 0..4 {
                    acc[l] = acc[l].wrapping_add(r[l].wrapping_mul(j as u32 + 1));
                }
            }
            let mut want = acc.to_vec();
            want.extend_from_slice(&ctr);
            assert_eq!(
                &got[8 * gid..8 * gid + 8],
                &want[..],
                "work-item {gid}, k1 {k1:#x}, counter {c:?}"
            );
        }
    }
}

#[test]
fn struct_fields_stored_under_divergent_branches() {
    let ctx = DeviceContext::new();
    if !require(ctx.has_extension("cl_khr_fp64"), "cl_khr_fp64") {
        return;
    }
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("divergent");
    let private = private_bytes(&ctx, &k);
    assert_eq!(private, 0, "the struct stays in registers");
    let n = 517usize;
    let t = trips(n);
    let bt = ctx.buffer_from(&t);
    let (bf, bi, bd) = (
        ctx.buffer_zeroed::<f32>(n),
        ctx.buffer_zeroed::<i32>(n),
        ctx.buffer_zeroed::<f64>(n),
    );
    k.arg_buffer(0, &bf)
        .arg_buffer(1, &bi)
        .arg_buffer(2, &bd)
        .arg_buffer(3, &bt);
    ctx.run(&k, &[n], Some(&[47]));
    let (gf, gi, gd): (Vec<f32>, Vec<i32>, Vec<f64>) =
        (ctx.read(&bf, n), ctx.read(&bi, n), ctx.read(&bd, n));
    for gid in 0..n {
        let (mut f, mut i, mut d) = (0.25f32, gid as i32, 1.0f64);
        for j in 0..t[gid] {
            let k = j + gid as i32;
            if k & 1 != 0 {
                f += 1.5;
            } else {
                i += k;
            }
            d = d * 0.5 + f64::from(k);
            if i > 400 {
                break;
            }
        }
        if gid % 3 == 0 {
            f = -f;
        }
        assert_eq!(
            (gf[gid].to_bits(), gi[gid], gd[gid].to_bits()),
            (f.to_bits(), i, d.to_bits()),
            "work-item {gid} ({} trips): got ({}, {}, {}), host ({f}, {i}, {d})",
            t[gid],
            gf[gid],
            gi[gid],
            gd[gid]
        );
    }
}

#[test]
fn union_written_as_uints_reads_as_ulongs_and_floats() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("pun");
    let private = private_bytes(&ctx, &k);
    assert_eq!(private, 0, "the union stays in registers");
    let n = 333usize;
    let (bl, bf, bu) = (
        ctx.buffer_zeroed::<u64>(2 * n),
        ctx.buffer_zeroed::<u32>(4 * n),
        ctx.buffer_zeroed::<u32>(n),
    );
    k.arg_buffer(0, &bl).arg_buffer(1, &bf).arg_buffer(2, &bu);
    ctx.run(&k, &[n], None);
    let (gl, gf, gu): (Vec<u64>, Vec<u32>, Vec<u32>) =
        (ctx.read(&bl, 2 * n), ctx.read(&bf, 4 * n), ctx.read(&bu, n));
    for gid in 0..n {
        let a = (gid as u32).wrapping_mul(2_654_435_761);
        let u = [a, a.wrapping_mul(7), 0x3f80_0000u32.wrapping_add(a), !a];
        let l = [
            u64::from(u[0]) | u64::from(u[1]) << 32,
            u64::from(u[2]) | u64::from(u[3]) << 32,
        ];
        assert_eq!(
            &gl[2 * gid..2 * gid + 2],
            &l[..],
            "ulong2 of work-item {gid}"
        );
        // Floats compared as bits: the words may be NaN patterns, which must pass
        // through unchanged.
        assert_eq!(
            &gf[4 * gid..4 * gid + 4],
            &u[..],
            "float4 bits of work-item {gid}"
        );
        let x = l[0].wrapping_add(1);
        let want = (x as u32).wrapping_add((x >> 32) as u32);
        assert_eq!(gu[gid], want, "sum of work-item {gid}");
    }
}

#[test]
fn arrays_indexed_at_run_time_stay_in_memory() {
    let ctx = DeviceContext::new();
    let program = ctx.build(SOURCE, "");
    let k = program.kernel("indexed");
    let private = private_bytes(&ctx, &k);
    assert!(
        private >= 32,
        "int a[8] indexed at run time: {private} bytes"
    );
    let n = 200usize;
    let idx: Vec<i32> = (0..n as i32).map(|i| i * 5 + i / 3).collect();
    let (bo, bidx) = (ctx.buffer_zeroed::<i32>(n), ctx.buffer_from(&idx));
    k.arg_buffer(0, &bo).arg_buffer(1, &bidx);
    ctx.run(&k, &[n], None);
    let got: Vec<i32> = ctx.read(&bo, n);
    for gid in 0..n {
        let g = gid as i32;
        let mut a: Vec<i32> = (0..8).map(|j| g * 10 + j).collect();
        let i = (idx[gid] & 7) as usize;
        a[i] += 1000;
        assert_eq!(
            got[gid],
            a[i] + a[(idx[gid] as usize + 3) & 7],
            "work-item {gid}"
        );
    }
}

/// Forty private `uint16` variables (640 words), each passed by address to a helper:
/// more words than a kernel promotes (the rest stay in memory), all of it right.
const MANY: &str = r#"
#define IOTA (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)

__attribute__((noinline)) void step(uint16 *b, uint k)
{
    *b = *b * 3u + (uint16)(k) + IOTA;
}

#define DECL(s) uint16 b##s = (uint16)(seed + g * 7u + (uint)(s * 16)) + IOTA;
#define STEP(s) if ((g + (uint)s) % 3u != 0u) step(&b##s, g);
#define FOLD(s) for (int j = 0; j < 16; ++j) acc = acc * 31u + ((uint *)&b##s)[j];
#define ALL(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7) M(8) M(9) M(10) M(11) M(12) \
    M(13) M(14) M(15) M(16) M(17) M(18) M(19) M(20) M(21) M(22) M(23) M(24) M(25) \
    M(26) M(27) M(28) M(29) M(30) M(31) M(32) M(33) M(34) M(35) M(36) M(37) M(38) M(39)

kernel void many(global uint *out, uint seed)
{
    uint g = get_global_id(0);
    ALL(DECL)
    ALL(STEP)
    uint acc = 0;
    ALL(FOLD)
    out[g] = acc;
}
"#;

#[test]
fn many_private_variables_beyond_the_promotion_cap() {
    let ctx = DeviceContext::new();
    let program = ctx.build(MANY, "");
    let k = program.kernel("many");
    let private = private_bytes(&ctx, &k);
    assert!(
        private > 0 && private < 40 * 64,
        "some of the 40 uint16 variables are promoted, not all: {private} bytes"
    );
    let n = 77usize;
    let seed = 12345u32;
    let bo = ctx.buffer_zeroed::<u32>(n);
    k.arg_buffer(0, &bo).arg(1, seed);
    ctx.run(&k, &[n], None);
    let got: Vec<u32> = ctx.read(&bo, n);
    for g in 0..n as u32 {
        let mut acc = 0u32;
        for s in 0..40u32 {
            for j in 0..16u32 {
                let mut v = seed
                    .wrapping_add(g.wrapping_mul(7))
                    .wrapping_add(s * 16)
                    .wrapping_add(j);
                if !(g + s).is_multiple_of(3) {
                    v = v.wrapping_mul(3).wrapping_add(g).wrapping_add(j);
                }
                acc = acc.wrapping_mul(31).wrapping_add(v);
            }
        }
        assert_eq!(got[g as usize], acc, "work-item {g}");
    }
}
