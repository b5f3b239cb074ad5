//! The `cl_khr_subgroup_*` extensions (extended types, non-uniform vote and
//! arithmetic, ballot, shuffle, shuffle relative, clustered reduce, rotate) and the
//! short/char/long forms of `cl_intel_subgroups`, compared with a host reference per
//! type and per sub-group width (4, 8, 16, 32 through `intel_reqd_sub_group_size`),
//! in full sub-groups and (reductions, scans, non-uniform broadcasts and votes) in
//! work-groups whose last sub-group is partial.
//!
//! Non-uniform functions run inside `if (act[i])` with a random activity pattern, so
//! inactive lanes must not contribute. One program per width and type holds every
//! function: each work-item writes one result per case into its row of the output.
//! Results whose value the specification leaves undefined (a shuffle from outside the
//! sub-group) are not compared.

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

const OPTS: &str = "-cl-std=CL3.0";

/// A host value: integers wrapped to the type's width, floats as f64 (inputs are
/// small integers, so every sum and product here is exact).
#[derive(Clone, Copy, Debug, PartialEq)]
enum V {
    I(i128),
    F(f64),
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Signed,
    Unsigned,
    Float,
}

/// An OpenCL C scalar type.
#[derive(Clone, Copy, Debug)]
struct Ty {
    name: &'static str,
    bytes: usize,
    kind: Kind,
}

const TYPES: &[Ty] = &[
    Ty {
        name: "char",
        bytes: 1,
        kind: Kind::Signed,
    },
    Ty {
        name: "uchar",
        bytes: 1,
        kind: Kind::Unsigned,
    },
    Ty {
        name: "short",
        bytes: 2,
        kind: Kind::Signed,
    },
    Ty {
        name: "ushort",
        bytes: 2,
        kind: Kind::Unsigned,
    },
    Ty {
        name: "int",
        bytes: 4,
        kind: Kind::Signed,
    },
    Ty {
        name: "uint",
        bytes: 4,
        kind: Kind::Unsigned,
    },
    Ty {
        name: "long",
        bytes: 8,
        kind: Kind::Signed,
    },
    Ty {
        name: "ulong",
        bytes: 8,
        kind: Kind::Unsigned,
    },
    Ty {
        name: "half",
        bytes: 2,
        kind: Kind::Float,
    },
    Ty {
        name: "float",
        bytes: 4,
        kind: Kind::Float,
    },
    Ty {
        name: "double",
        bytes: 8,
        kind: Kind::Float,
    },
];

impl Ty {
    fn is_int(&self) -> bool {
        self.kind != Kind::Float
    }

    fn wrap(&self, v: i128) -> i128 {
        let bits = 8 * self.bytes as u32;
        let m = v & ((1i128 << bits) - 1);
        if self.kind == Kind::Signed && m >= 1i128 << (bits - 1) {
            m - (1i128 << bits)
        } else {
            m
        }
    }

    fn norm(&self, v: V) -> V {
        match v {
            V::I(x) if self.is_int() => V::I(self.wrap(x)),
            V::I(x) => V::F(x as f64),
            V::F(f) => V::F(f),
        }
    }

    fn encode(&self, v: V) -> Vec<u8> {
        match (self.kind, v) {
            (Kind::Float, _) => {
                let f = match v {
                    V::F(f) => f,
                    V::I(x) => x as f64,
                };
                match self.bytes {
                    2 => half_bits(f).to_le_bytes().to_vec(),
                    4 => (f as f32).to_le_bytes().to_vec(),
                    _ => f.to_le_bytes().to_vec(),
                }
            }
            (_, V::I(x)) => x.to_le_bytes()[..self.bytes].to_vec(),
            (_, V::F(f)) => (f as i128).to_le_bytes()[..self.bytes].to_vec(),
        }
    }

    fn decode(&self, b: &[u8]) -> V {
        match self.kind {
            Kind::Float => V::F(match self.bytes {
                2 => half_value(u16::from_le_bytes([b[0], b[1]])),
                4 => f32::from_le_bytes(b[..4].try_into().unwrap()) as f64,
                _ => f64::from_le_bytes(b[..8].try_into().unwrap()),
            }),
            _ => {
                let mut x = [0u8; 16];
                x[..self.bytes].copy_from_slice(&b[..self.bytes]);
                V::I(self.wrap(i128::from_le_bytes(x)))
            }
        }
    }

    fn min(&self, a: V, b: V) -> V {
        match (a, b) {
            (V::I(x), V::I(y)) => V::I(x.min(y)),
            (V::F(x), V::F(y)) => V::F(x.min(y)),
            _ => unreachable!(),
        }
    }

    fn max(&self, a: V, b: V) -> V {
        match (a, b) {
            (V::I(x), V::I(y)) => V::I(x.max(y)),
            (V::F(x), V::F(y)) => V::F(x.max(y)),
            _ => unreachable!(),
        }
    }
}

/// binary16 bits of a small integer-valued f64 (exact).
fn half_bits(f: f64) -> u16 {
    if f == 0.0 {
        return if f.is_sign_negative() { 0x8000 } else { 0 };
    }
    let s = if f < 0.0 { 0x8000u16 } else { 0 };
    let a = f.abs();
    let e = a.log2().floor() as i32;
    let m = ((a / 2f64.powi(e) - 1.0) * 1024.0).round() as u16;
    s | (((e + 15) as u16) << 10) | m
}

fn half_value(h: u16) -> f64 {
    let s = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 31) as i32;
    let m = (h & 1023) as f64;
    if e == 0 {
        s * m * 2f64.powi(-24)
    } else if e == 31 {
        if m == 0.0 {
            s * f64::INFINITY
        } else {
            f64::NAN
        }
    } else {
        s * (1.0 + m / 1024.0) * 2f64.powi(e - 15)
    }
}

/// Reduction operations.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Add,
    Min,
    Max,
    Mul,
    And,
    Or,
    Xor,
}

impl Op {
    fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Min => "min",
            Op::Max => "max",
            Op::Mul => "mul",
            Op::And => "and",
            Op::Or => "or",
            Op::Xor => "xor",
        }
    }

    fn apply(self, t: &Ty, a: V, b: V) -> V {
        let r = match (self, a, b) {
            (Op::Add, V::I(x), V::I(y)) => V::I(x + y),
            (Op::Add, V::F(x), V::F(y)) => V::F(x + y),
            (Op::Mul, V::I(x), V::I(y)) => V::I(t.wrap(x).wrapping_mul(t.wrap(y))),
            (Op::Mul, V::F(x), V::F(y)) => V::F(x * y),
            (Op::Min, ..) => t.min(a, b),
            (Op::Max, ..) => t.max(a, b),
            (Op::And, V::I(x), V::I(y)) => V::I(x & y),
            (Op::Or, V::I(x), V::I(y)) => V::I(x | y),
            (Op::Xor, V::I(x), V::I(y)) => V::I(x ^ y),
            _ => unreachable!("{self:?} on {a:?}"),
        };
        t.norm(r)
    }

    fn identity(self, t: &Ty) -> V {
        let bits = 8 * t.bytes as u32;
        match (self, t.kind) {
            (Op::Add | Op::Or | Op::Xor, Kind::Float) => V::F(0.0),
            (Op::Add | Op::Or | Op::Xor, _) => V::I(0),
            (Op::Mul, Kind::Float) => V::F(1.0),
            (Op::Mul, _) => V::I(1),
            (Op::And, _) => V::I(t.wrap(-1)),
            (Op::Min, Kind::Float) => V::F(f64::INFINITY),
            (Op::Max, Kind::Float) => V::F(f64::NEG_INFINITY),
            (Op::Min, Kind::Signed) => V::I((1i128 << (bits - 1)) - 1),
            (Op::Min, Kind::Unsigned) => V::I((1i128 << bits) - 1),
            (Op::Max, Kind::Signed) => V::I(-(1i128 << (bits - 1))),
            (Op::Max, Kind::Unsigned) => V::I(0),
        }
    }

    fn fold(self, t: &Ty, vals: impl Iterator<Item = V>) -> V {
        vals.fold(self.identity(t), |a, b| self.apply(t, a, b))
    }
}

/// What the host knows about one sub-group of one launch.
struct Sg<'a> {
    w: usize,
    /// Input values (`in`, `mulin`) of the sub-group's lanes.
    x: &'a [V],
    m: &'a [V],
    act: &'a [bool],
    /// Kernel scalars: a shuffle index per lane, a uniform delta, a uniform lane.
    idx: &'a [usize],
    delta: usize,
    lane: usize,
}

/// The host value of a case for one lane.
type HostFn = dyn Fn(&Ty, &Sg<'_>, usize) -> Option<V>;

/// One function call: the OpenCL C expression (of `x`, `m`, `l` = sub-group local
/// id, `ix` = per-lane index, `d` = uniform delta, `bl` = uniform lane) and its host
/// value for lane `l` (None: undefined, not compared).
struct Case {
    code: String,
    divergent: bool,
    host: Box<HostFn>,
}

fn case(
    code: impl Into<String>,
    divergent: bool,
    host: impl Fn(&Ty, &Sg<'_>, usize) -> Option<V> + 'static,
) -> Case {
    Case {
        code: code.into(),
        divergent,
        host: Box::new(host),
    }
}

/// `intel_sub_group_shuffle_up(m, x, delta)` for lane `l`: `x` of lane `l - delta`,
/// or `m` of lane `W + l - delta` (the previous sub-group's worth of values).
fn intel_shuffle_up(s: &Sg<'_>, l: usize) -> V {
    if l >= s.delta {
        s.x[l - s.delta]
    } else {
        s.m[s.w + l - s.delta]
    }
}

/// Every case for type `t` at width `w`.
fn cases(t: &Ty, w: usize) -> Vec<Case> {
    let mut c = Vec::new();
    let mut ops = vec![Op::Add, Op::Min, Op::Max, Op::Mul];
    if t.is_int() {
        ops.extend([Op::And, Op::Or, Op::Xor]);
    }
    // cl_khr_subgroup_extended_types / cl_intel_subgroups_{short,char}: reduce and
    // scans in uniform control flow (add, min, max).
    for op in [Op::Add, Op::Min, Op::Max] {
        let n = op.name();
        c.push(case(
            format!("sub_group_reduce_{n}(x)"),
            false,
            move |t, s, _| Some(op.fold(t, s.x.iter().copied())),
        ));
        c.push(case(
            format!("sub_group_scan_inclusive_{n}(x)"),
            false,
            move |t, s, l| Some(op.fold(t, s.x[..=l].iter().copied())),
        ));
        c.push(case(
            format!("sub_group_scan_exclusive_{n}(x)"),
            false,
            move |t, s, l| Some(op.fold(t, s.x[..l].iter().copied())),
        ));
    }
    c.push(case("sub_group_broadcast(x, bl)", false, |_, s, _| {
        Some(s.x[s.lane])
    }));
    // cl_khr_subgroup_non_uniform_arithmetic: only the active lanes take part.
    for op in ops.iter().copied() {
        let n = op.name();
        let (src, mul) = if op == Op::Mul {
            ("m", true)
        } else {
            ("x", false)
        };
        let pick = move |s: &Sg<'_>, i: usize| if mul { s.m[i] } else { s.x[i] };
        c.push(case(
            format!("sub_group_non_uniform_reduce_{n}({src})"),
            true,
            move |t, s, _| Some(op.fold(t, (0..s.w).filter(|&i| s.act[i]).map(|i| pick(s, i)))),
        ));
        c.push(case(
            format!("sub_group_non_uniform_scan_inclusive_{n}({src})"),
            true,
            move |t, s, l| Some(op.fold(t, (0..=l).filter(|&i| s.act[i]).map(|i| pick(s, i)))),
        ));
        c.push(case(
            format!("sub_group_non_uniform_scan_exclusive_{n}({src})"),
            true,
            move |t, s, l| Some(op.fold(t, (0..l).filter(|&i| s.act[i]).map(|i| pick(s, i)))),
        ));
        // cl_khr_subgroup_clustered_reduce: every cluster size up to W.
        let mut cs = 1;
        while cs <= w {
            c.push(case(
                format!("sub_group_clustered_reduce_{n}({src}, {cs})"),
                true,
                move |t, s, l| {
                    let base = l / cs * cs;
                    Some(op.fold(
                        t,
                        (base..base + cs).filter(|&i| s.act[i]).map(|i| pick(s, i)),
                    ))
                },
            ));
            cs *= 2;
        }
    }
    // Non-uniform broadcasts and the all-equal vote, among the active lanes.
    let first = |s: &Sg<'_>| (0..s.w).find(|&i| s.act[i]).unwrap_or(0);
    c.push(case(
        "sub_group_broadcast_first(x)",
        true,
        move |_, s, _| Some(s.x[first(s)]),
    ));
    c.push(case(
        "sub_group_non_uniform_broadcast(x, fl)",
        true,
        move |_, s, _| Some(s.x[first(s)]),
    ));
    if !matches!(t.bytes, 1 | 2) || t.kind == Kind::Float {
        let yes = |t: &Ty| t.norm(V::I(1));
        let no = |t: &Ty| t.norm(V::I(0));
        c.push(case(
            "sub_group_non_uniform_all_equal(x)",
            true,
            move |t, s, _| {
                let f = s.x[first(s)];
                let eq = (0..s.w).filter(|&i| s.act[i]).all(|i| s.x[i] == f);
                Some(if eq { yes(t) } else { no(t) })
            },
        ));
        // Equal on the active lanes, different on the inactive ones.
        c.push(case(
            "sub_group_non_uniform_all_equal(act[i] ? (T)3 : x)",
            true,
            move |t, _, _| Some(yes(t)),
        ));
    }
    // cl_khr_subgroup_shuffle.
    c.push(case("sub_group_shuffle(x, ix)", false, |_, s, l| {
        Some(s.x[s.idx[l]])
    }));
    c.push(case("sub_group_shuffle_xor(x, d)", false, |_, s, l| {
        Some(s.x[l ^ s.delta])
    }));
    c.push(case("sub_group_shuffle_xor(x, 1)", false, |_, s, l| {
        Some(s.x[l ^ 1])
    }));
    // cl_khr_subgroup_shuffle_relative: lanes past the sub-group are undefined.
    c.push(case("sub_group_shuffle_up(x, d)", false, |_, s, l| {
        l.checked_sub(s.delta).map(|i| s.x[i])
    }));
    c.push(case("sub_group_shuffle_down(x, d)", false, |_, s, l| {
        (l + s.delta < s.w).then(|| s.x[l + s.delta])
    }));
    c.push(case("sub_group_shuffle_up(x, 1)", false, |_, s, l| {
        l.checked_sub(1).map(|i| s.x[i])
    }));
    c.push(case("sub_group_shuffle_down(x, 3)", false, |_, s, l| {
        (l + 3 < s.w).then(|| s.x[l + 3])
    }));
    // Indices past the sub-group: undefined values, but no crash or stray access.
    for code in [
        "sub_group_shuffle(x, ix + 1000u)",
        "sub_group_shuffle(x, 0xffffffffu - ix)",
        "sub_group_shuffle_up(x, d + 64u)",
        "sub_group_shuffle_down(x, 0x80000000u + d)",
        "intel_sub_group_shuffle(x, ix * 977u + 40u)",
        "intel_sub_group_shuffle_down(x, m, 1000u + ix)",
    ] {
        c.push(case(code, false, |_, _, _| None));
    }
    // cl_khr_subgroup_rotate (the delta is taken modulo the cluster size).
    c.push(case(
        format!("sub_group_rotate(x, d + {})", 3 * w),
        false,
        |_, s, l| Some(s.x[(l + s.delta) % s.w]),
    ));
    c.push(case("sub_group_rotate(x, d)", false, |_, s, l| {
        Some(s.x[(l + s.delta) % s.w])
    }));
    c.push(case("sub_group_rotate(x, 3)", false, |_, s, l| {
        Some(s.x[(l + 3) % s.w])
    }));
    let mut cs = 1;
    while cs <= w {
        for (dc, dh) in [("d", None), ("1", Some(1)), ("5", Some(5))] {
            c.push(case(
                format!("sub_group_clustered_rotate(x, {dc}, {cs})"),
                false,
                move |_, s, l| {
                    let d = dh.unwrap_or(s.delta);
                    Some(s.x[((l + d) & (cs - 1)) + (l & !(cs - 1))])
                },
            ));
        }
        cs *= 2;
    }
    // cl_intel_subgroups (+ _short, _char, _long): shuffles of every type.
    c.push(case("intel_sub_group_shuffle(x, ix)", false, |_, s, l| {
        Some(s.x[s.idx[l]])
    }));
    c.push(case(
        "intel_sub_group_shuffle_xor(x, d)",
        false,
        |_, s, l| Some(s.x[l ^ s.delta]),
    ));
    c.push(case(
        "intel_sub_group_shuffle_down(x, m, d)",
        false,
        |_, s, l| {
            let j = l + s.delta;
            Some(if j < s.w { s.x[j] } else { s.m[j - s.w] })
        },
    ));
    c.push(case(
        "intel_sub_group_shuffle_up(m, x, d)",
        false,
        |_, s, l| Some(intel_shuffle_up(s, l)),
    ));
    // Vectors: broadcasts (cl_khr_subgroup_extended_types), Intel shuffles.
    c.push(case(
        "sub_group_broadcast((T2)(x, m), bl).y",
        false,
        |_, s, _| Some(s.m[s.lane]),
    ));
    c.push(case(
        "sub_group_broadcast((T3)(m, x, m), bl).y",
        false,
        |_, s, _| Some(s.x[s.lane]),
    ));
    c.push(case(
        "sub_group_broadcast((T8)(x, m, x, m, x, x, x, m), bl).s7",
        false,
        |_, s, _| Some(s.m[s.lane]),
    ));
    c.push(case(
        "sub_group_broadcast((T4)(m, m, x, m), bl).z",
        false,
        |_, s, _| Some(s.x[s.lane]),
    ));
    // cl_khr_subgroup_ballot: non-uniform broadcasts of vectors, among the active lanes.
    c.push(case(
        "sub_group_non_uniform_broadcast((T2)(m, x), fl).y",
        true,
        move |_, s, _| Some(s.x[first(s)]),
    ));
    c.push(case(
        "sub_group_non_uniform_broadcast((T4)(x, m, m, x), fl).z",
        true,
        move |_, s, _| Some(s.m[first(s)]),
    ));
    c.push(case(
        "sub_group_non_uniform_broadcast((T16)(m) + (T16)(x), fl).sd",
        true,
        move |t, s, _| Some(Op::Add.apply(t, s.x[first(s)], s.m[first(s)])),
    ));
    c.push(case(
        "sub_group_broadcast((T16)(x) + (T16)(m), bl).sf",
        false,
        |t, s, _| Some(Op::Add.apply(t, s.x[s.lane], s.m[s.lane])),
    ));
    // (opencl-c.h has no half vector or long vector Intel shuffles.)
    if t.bytes != 8 && t.name != "half" {
        c.push(case(
            "intel_sub_group_shuffle((T4)(x, m, x, m), ix).w",
            false,
            |_, s, l| Some(s.m[s.idx[l]]),
        ));
        c.push(case(
            "intel_sub_group_shuffle_xor((T2)(x, m), d).x",
            false,
            |_, s, l| Some(s.x[l ^ s.delta]),
        ));
        c.push(case(
            "intel_sub_group_shuffle((T3)(m, m, x), ix).z",
            false,
            |_, s, l| Some(s.x[s.idx[l]]),
        ));
        c.push(case(
            "intel_sub_group_shuffle((T16)(m) + (T16)(x), ix).sb",
            false,
            |t, s, l| Some(Op::Add.apply(t, s.x[s.idx[l]], s.m[s.idx[l]])),
        ));
        c.push(case(
            "intel_sub_group_shuffle_up((T2)(m), (T2)(x), d).y",
            false,
            |_, s, l| Some(intel_shuffle_up(s, l)),
        ));
        c.push(case(
            "intel_sub_group_shuffle_down((T8)(x), (T8)(m), d).s5",
            false,
            |_, s, l| {
                let j = l + s.delta;
                Some(if j < s.w { s.x[j] } else { s.m[j - s.w] })
            },
        ));
    }
    if t.is_int() && t.bytes <= 2 {
        // cl_intel_subgroups_short / _char: intel_ prefixed broadcast and reductions.
        c.push(case(
            "intel_sub_group_broadcast(x, bl)",
            false,
            |_, s, _| Some(s.x[s.lane]),
        ));
        c.push(case(
            "intel_sub_group_broadcast((T3)(x, m, x), bl).y",
            false,
            |_, s, _| Some(s.m[s.lane]),
        ));
        c.push(case(
            "intel_sub_group_broadcast((T8)(m, m, x, m, x, x, x, m), bl).s2",
            false,
            |_, s, _| Some(s.x[s.lane]),
        ));
        for op in [Op::Add, Op::Min, Op::Max] {
            let n = op.name();
            c.push(case(
                format!("intel_sub_group_reduce_{n}(x)"),
                false,
                move |t, s, _| Some(op.fold(t, s.x.iter().copied())),
            ));
            c.push(case(
                format!("intel_sub_group_scan_exclusive_{n}(x)"),
                false,
                move |t, s, l| Some(op.fold(t, s.x[..l].iter().copied())),
            ));
            c.push(case(
                format!("intel_sub_group_scan_inclusive_{n}(x)"),
                false,
                move |t, s, l| Some(op.fold(t, s.x[..=l].iter().copied())),
            ));
        }
    }
    c
}

fn kernel_source(t: &Ty, w: usize, cases: &[Case]) -> String {
    let k = cases.len();
    let mut body = String::new();
    for (slot, c) in cases.iter().enumerate().filter(|(_, c)| !c.divergent) {
        body += &format!("    o[{slot}] = (T)({});\n", c.code);
    }
    body += "    if (act[i]) {\n";
    for (slot, c) in cases.iter().enumerate().filter(|(_, c)| c.divergent) {
        body += &format!("        o[{slot}] = (T)({});\n", c.code);
    }
    body += "    }\n";
    let ext = if t.name == "half" {
        "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
    } else {
        ""
    };
    format!(
        r#"{ext}typedef {ty} T;
typedef {ty}2 T2;
typedef {ty}3 T3;
typedef {ty}4 T4;
typedef {ty}8 T8;
typedef {ty}16 T16;
__attribute__((intel_reqd_sub_group_size({w})))
kernel void k(global const T* xin, global const T* mi, global const int* act,
              global const uint* idx, uint d, uint bl, global T* out) {{
    size_t i = get_global_id(0);
    global T* o = out + i * {k};
    T x = xin[i];
    T m = mi[i];
    uint l = get_sub_group_local_id();
    uint ix = idx[i];
    uint fl = sub_group_broadcast(idx[i] >> 16, 0);
{body}}}
"#,
        ty = t.name
    )
}

fn widths(ctx: &DeviceContext) -> Vec<usize> {
    [4, 8, 16, 32]
        .into_iter()
        .filter(|w| ctx.sub_group_sizes().contains(w))
        .collect()
}

fn available(ctx: &DeviceContext, exts: &[&str]) -> bool {
    exts.iter().all(|e| require(ctx.has_extension(e), e))
        && require(
            ctx.has_extension("cl_intel_required_subgroup_size"),
            "cl_intel_required_subgroup_size",
        )
}

const ALL_EXTS: &[&str] = &[
    "cl_khr_subgroup_extended_types",
    "cl_khr_subgroup_non_uniform_vote",
    "cl_khr_subgroup_non_uniform_arithmetic",
    "cl_khr_subgroup_shuffle",
    "cl_khr_subgroup_shuffle_relative",
    "cl_khr_subgroup_clustered_reduce",
    "cl_khr_subgroup_rotate",
    "cl_intel_subgroups",
    "cl_intel_subgroups_short",
    "cl_intel_subgroups_char",
    "cl_intel_subgroups_long",
];

/// Whether a case is defined in a partial sub-group with this test's inputs (the
/// shuffle indices, deltas and broadcast lane are drawn for a full sub-group).
fn defined_in_partial(code: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "sub_group_reduce_",
        "sub_group_scan_",
        "sub_group_non_uniform_reduce_",
        "sub_group_non_uniform_scan_",
        "sub_group_broadcast_first",
        "sub_group_non_uniform_broadcast(",
        "sub_group_non_uniform_all_equal",
        "intel_sub_group_reduce_",
        "intel_sub_group_scan_",
    ];
    PREFIXES.iter().any(|p| code.starts_with(p))
}

/// One launch of the type's program over two work-groups of `local` items at width
/// `w`; returns the mismatches. With `partial`, the last sub-group of each group has
/// `local % w` lanes and only the cases defined there are compared.
fn run_launch(
    ctx: &DeviceContext,
    kernel: &Kernel,
    t: &Ty,
    w: usize,
    cs: &[Case],
    local: usize,
    partial: bool,
) -> Vec<String> {
    let k = cs.len();
    let n = 2 * local;
    // (first item, lanes) of every sub-group.
    let sgs: Vec<(usize, usize)> = (0..n / local)
        .flat_map(|g| {
            (0..local.div_ceil(w)).map(move |j| (g * local + j * w, w.min(local - j * w)))
        })
        .collect();
    let mut rng =
        TestRng::new(w as u64 * 1000 + t.bytes as u64 * 7 + t.kind as u64 + 500 * partial as u64);
    // Small values: exact sums in every type; products of +-1 and a few 2s.
    let x: Vec<V> = (0..n)
        .map(|_| {
            let v = (rng.next_u32() % 41) as i128 - 20;
            t.norm(V::I(if t.kind == Kind::Unsigned { v.abs() } else { v }))
        })
        .collect();
    let m: Vec<V> = (0..n)
        .map(|i| {
            let r = rng.next_u32();
            let v = if i % 8 == 3 {
                2
            } else if r.is_multiple_of(3) {
                -1
            } else {
                1
            };
            t.norm(V::I(v))
        })
        .collect();
    // Activity: random, one sub-group fully active, one with a single lane.
    let mut act = vec![false; n];
    for (j, &(start, size)) in sgs.iter().enumerate() {
        for l in 0..size {
            act[start + l] = match j {
                0 => true,
                1 => l == size - 1,
                _ => !rng.next_u32().is_multiple_of(3),
            };
        }
    }
    let delta = 1 + (rng.next_u32() as usize % (w - 1).max(1));
    let lane = rng.next_u32() as usize % w;
    // Per-lane index in the low bits; the first active lane of the sub-group in the
    // high 16 bits of lane 0 (a uniform lane id for the non-uniform broadcast).
    let mut idx: Vec<u32> = (0..n).map(|_| rng.next_u32() % w as u32).collect();
    for &(start, size) in &sgs {
        let f = (0..size).find(|&i| act[start + i]).unwrap_or(0);
        idx[start] |= (f as u32) << 16;
    }
    let enc = |vals: &[V]| -> Vec<u8> { vals.iter().flat_map(|v| t.encode(*v)).collect() };
    let bx = ctx.buffer_from(&enc(&x));
    let bm = ctx.buffer_from(&enc(&m));
    let ba = ctx.buffer_from(&act.iter().map(|a| *a as i32).collect::<Vec<_>>());
    let bi = ctx.buffer_from(&idx);
    let bo = ctx.buffer_zeroed::<u8>(n * k * t.bytes);
    kernel
        .arg_buffer(0, &bx)
        .arg_buffer(1, &bm)
        .arg_buffer(2, &ba)
        .arg_buffer(3, &bi)
        .arg(4, delta as u32)
        .arg(5, lane as u32)
        .arg_buffer(6, &bo);
    ctx.run(kernel, &[n], Some(&[local]));
    let got: Vec<u8> = ctx.read(&bo, n * k * t.bytes);
    let lane_idx: Vec<usize> = idx.iter().map(|v| (v & 0xffff) as usize).collect();
    let mut bad = Vec::new();
    for (sg, &(start, size)) in sgs.iter().enumerate() {
        let r = start..start + size;
        let s = Sg {
            w: size,
            x: &x[r.clone()],
            m: &m[r.clone()],
            act: &act[r.clone()],
            idx: &lane_idx[r],
            delta,
            lane,
        };
        for l in 0..size {
            let i = start + l;
            for (slot, c) in cs.iter().enumerate() {
                if (c.divergent && !act[i]) || (partial && !defined_in_partial(&c.code)) {
                    continue;
                }
                let Some(want) = (c.host)(t, &s, l) else {
                    continue;
                };
                let at = (i * k + slot) * t.bytes;
                let have = t.decode(&got[at..at + t.bytes]);
                if have != t.norm(want) {
                    bad.push(format!(
                        "{} W={w} local {local} sub-group {sg} ({size} lanes) lane {l} (active {}): {} = {have:?}, expected {want:?}",
                        t.name, act[i], c.code
                    ));
                }
            }
        }
    }
    bad
}

/// Runs every case of type `t` at every width and compares with the host.
fn run_type(t: &Ty) {
    let ctx = DeviceContext::new();
    if !available(&ctx, ALL_EXTS) {
        return;
    }
    if t.name == "half" && !require(ctx.has_extension("cl_khr_fp16"), "cl_khr_fp16") {
        return;
    }
    if t.name == "double" && !require(ctx.has_extension("cl_khr_fp64"), "cl_khr_fp64") {
        return;
    }
    for w in widths(&ctx) {
        let cs = cases(t, w);
        let src = kernel_source(t, w, &cs);
        let prog = match ctx.try_build(&src, OPTS) {
            Ok(p) => p,
            Err(e) => panic!("{} W={w}: build failed: {e:?}\n{src}", t.name),
        };
        let kernel = prog.kernel("k");
        let mut bad = Vec::new();
        // Full sub-groups, then work-groups whose last sub-group is partial (only the
        // cases defined for every sub-group size are compared there).
        for (local, partial) in [(4 * w, false), (3 * w + w / 2, true)] {
            bad.extend(run_launch(&ctx, &kernel, t, w, &cs, local, partial));
        }
        assert!(
            bad.is_empty(),
            "{} mismatches, first: {:#?}",
            bad.len(),
            &bad[..bad.len().min(12)]
        );
    }
}

#[test]
fn char_functions() {
    run_type(&TYPES[0]);
}
#[test]
fn uchar_functions() {
    run_type(&TYPES[1]);
}
#[test]
fn short_functions() {
    run_type(&TYPES[2]);
}
#[test]
fn ushort_functions() {
    run_type(&TYPES[3]);
}
#[test]
fn int_functions() {
    run_type(&TYPES[4]);
}
#[test]
fn uint_functions() {
    run_type(&TYPES[5]);
}
#[test]
fn long_functions() {
    run_type(&TYPES[6]);
}
#[test]
fn ulong_functions() {
    run_type(&TYPES[7]);
}
#[test]
fn half_functions() {
    run_type(&TYPES[8]);
}
#[test]
fn float_functions() {
    run_type(&TYPES[9]);
}
#[test]
fn double_functions() {
    run_type(&TYPES[10]);
}

/// cl_khr_subgroup_ballot and cl_khr_subgroup_non_uniform_vote (all, any, elect), the
/// logical non-uniform reductions and scans, the clustered logical reductions, under a
/// random activity mask; and cl_khr_subgroups' `sub_group_all`/`sub_group_any` in
/// uniform control flow.
#[test]
fn ballot_vote_and_logical() {
    let ctx = DeviceContext::new();
    if !available(
        &ctx,
        &["cl_khr_subgroup_ballot", "cl_khr_subgroup_non_uniform_vote"],
    ) || !available(
        &ctx,
        &[
            "cl_khr_subgroup_non_uniform_arithmetic",
            "cl_khr_subgroup_clustered_reduce",
        ],
    ) {
        return;
    }
    const K: usize = 35;
    for w in widths(&ctx) {
        let src = format!(
            r#"__attribute__((intel_reqd_sub_group_size({w})))
kernel void k(global const int* act, global const int* p, global const uint* ubin,
              global const uint* ixin, global uint* out) {{
    size_t i = get_global_id(0);
    global uint* o = out + i * {K};
    uint4 ub = (uint4)(sub_group_broadcast(ubin[i], 0), 0, 0, 0);
    uint ix = ixin[i];
    uint4 m[5] = {{ get_sub_group_eq_mask(), get_sub_group_ge_mask(), get_sub_group_gt_mask(),
                    get_sub_group_le_mask(), get_sub_group_lt_mask() }};
    for (int j = 0; j < 5; j++) {{ o[j] = m[j].x; o[5] |= m[j].y | m[j].z | m[j].w; }}
    if (act[i]) {{
        uint4 bal = sub_group_ballot(p[i]);
        o[6] = bal.x;
        o[7] = bal.y | bal.z | bal.w;
        o[8] = sub_group_inverse_ballot(ub);
        o[9] = sub_group_ballot_bit_extract(ub, ix);
        o[10] = sub_group_ballot_bit_count(ub);
        o[11] = sub_group_ballot_inclusive_scan(ub);
        o[12] = sub_group_ballot_exclusive_scan(ub);
        o[13] = sub_group_ballot_find_lsb(ub);
        o[14] = sub_group_ballot_find_msb(ub);
        o[15] = sub_group_non_uniform_all(p[i]);
        o[16] = sub_group_non_uniform_any(p[i]);
        o[17] = sub_group_elect();
        o[18] = sub_group_non_uniform_reduce_logical_and(p[i]);
        o[19] = sub_group_non_uniform_reduce_logical_or(p[i]);
        o[20] = sub_group_non_uniform_reduce_logical_xor(p[i]);
        o[21] = sub_group_non_uniform_scan_inclusive_logical_and(p[i]);
        o[22] = sub_group_non_uniform_scan_exclusive_logical_or(p[i]);
        o[23] = sub_group_non_uniform_scan_inclusive_logical_xor(p[i]);
        o[24] = sub_group_ballot_bit_count(bal);
        o[25] = sub_group_ballot_bit_extract(bal, ix);
        o[26] = sub_group_inverse_ballot(bal);
        o[27] = sub_group_non_uniform_scan_inclusive_logical_or(p[i]);
        o[28] = sub_group_non_uniform_scan_exclusive_logical_and(p[i]);
        o[29] = sub_group_non_uniform_scan_exclusive_logical_xor(p[i]);
        o[30] = sub_group_clustered_reduce_logical_and(p[i], 4);
        o[31] = sub_group_clustered_reduce_logical_or(p[i], 4);
        o[32] = sub_group_clustered_reduce_logical_xor(p[i], 4);
    }}
    o[33] = sub_group_all(p[i]);
    o[34] = sub_group_any(p[i]);
}}"#
        );
        let kernel = ctx.kernel(&src, OPTS, "k");
        let n = 8 * w;
        let mut rng = TestRng::new(77 + w as u64);
        let act: Vec<i32> = (0..n)
            .map(|i| match i / w {
                0 => 1,
                1 => (i % w == 0) as i32,
                2 => (i % w != 0) as i32,
                _ => !rng.next_u32().is_multiple_of(3) as i32,
            })
            .collect();
        let p: Vec<i32> = (0..n)
            .map(|i| match i / w {
                3 => 1,
                4 => 0,
                _ => (rng.next_u32() % 2) as i32 * (rng.next_u32() as i32 | 1),
            })
            .collect();
        // Lane 0's word is the sub-group's ballot value (never 0: find_lsb/msb).
        let ub: Vec<u32> = (0..n)
            .map(|_| rng.next_u32() | (1 << (rng.next_u32() % w as u32)))
            .collect();
        let ix: Vec<u32> = (0..n).map(|_| rng.next_u32() % w as u32).collect();
        let out = ctx.buffer_zeroed::<u32>(n * K);
        let (ba, bp, bu, bx) = (
            ctx.buffer_from(&act),
            ctx.buffer_from(&p),
            ctx.buffer_from(&ub),
            ctx.buffer_from(&ix),
        );
        kernel
            .arg_buffer(0, &ba)
            .arg_buffer(1, &bp)
            .arg_buffer(2, &bu)
            .arg_buffer(3, &bx)
            .arg_buffer(4, &out);
        ctx.run(&kernel, &[n], Some(&[2 * w]));
        let got: Vec<u32> = ctx.read(&out, n * K);
        let all = ((1u64 << w) - 1) as u32;
        for sg in 0..n / w {
            let r = sg * w..sg * w + w;
            let a: Vec<bool> = act[r.clone()].iter().map(|v| *v != 0).collect();
            let pv: Vec<bool> = p[r.clone()].iter().map(|v| *v != 0).collect();
            let u = ub[sg * w] & all;
            let bal: u32 = (0..w).filter(|&l| a[l] && pv[l]).map(|l| 1u32 << l).sum();
            let first = (0..w).find(|&l| a[l]).unwrap_or(0);
            let fold = |upto: usize, init: bool, f: fn(bool, bool) -> bool| {
                (0..upto)
                    .filter(|&j| a[j])
                    .fold(init, |acc, j| f(acc, pv[j]))
            };
            // The active lanes of lane l's cluster of 4.
            let cluster = |l: usize, init: bool, f: fn(bool, bool) -> bool| {
                (l / 4 * 4..l / 4 * 4 + 4)
                    .filter(|&j| a[j])
                    .fold(init, |acc, j| f(acc, pv[j]))
            };
            #[allow(clippy::needless_range_loop)]
            for l in 0..w {
                let i = sg * w + l;
                let o = &got[i * K..i * K + K];
                let le = ((1u64 << (l + 1)) - 1) as u32;
                let masks = [1u32 << l, all & !((1u32 << l) - 1), all & !le, le, le >> 1];
                let ctx_msg = format!("W={w} sub-group {sg} lane {l} active {}", a[l]);
                assert_eq!(
                    &o[..6],
                    &[masks[0], masks[1], masks[2], masks[3], masks[4], 0],
                    "masks eq/ge/gt/le/lt, {ctx_msg}"
                );
                // sub_group_all/any: every lane, active or not, takes part.
                assert_eq!(
                    (o[33] != 0, o[34] != 0),
                    (pv.iter().all(|&v| v), pv.iter().any(|&v| v)),
                    "sub_group_all/any, {ctx_msg}"
                );
                if !a[l] {
                    continue;
                }
                let and = |x: bool, y: bool| x && y;
                let or = |x: bool, y: bool| x || y;
                let xor = |x: bool, y: bool| x ^ y;
                let want = [
                    bal,
                    0,
                    (u >> l) & 1,
                    (u >> ix[i]) & 1,
                    u.count_ones(),
                    (u & le).count_ones(),
                    (u & (le >> 1)).count_ones(),
                    u.trailing_zeros(),
                    31 - u.leading_zeros(),
                    fold(w, true, and) as u32,
                    fold(w, false, or) as u32,
                    (l == first) as u32,
                    fold(w, true, and) as u32,
                    fold(w, false, or) as u32,
                    fold(w, false, xor) as u32,
                    fold(l + 1, true, and) as u32,
                    fold(l, false, or) as u32,
                    fold(l + 1, false, xor) as u32,
                    bal.count_ones(),
                    (bal >> ix[i]) & 1,
                    (bal >> l) & 1,
                    fold(l + 1, false, or) as u32,
                    fold(l, true, and) as u32,
                    fold(l, false, xor) as u32,
                    cluster(l, true, and) as u32,
                    cluster(l, false, or) as u32,
                    cluster(l, false, xor) as u32,
                ];
                assert_eq!(&o[6..33], &want, "ballot/vote/logical results, {ctx_msg}");
            }
        }
    }
}

/// cl_intel_subgroups (uint, unsuffixed) and cl_intel_subgroups_short / _char /
/// _long (`_ui`, `_us`, `_uc`, `_ul`) block reads and writes on global memory:
/// component `c` of lane `l` is `p[c * W + l]`.
#[test]
fn intel_block_read_write_short_char_long() {
    let ctx = DeviceContext::new();
    if !available(
        &ctx,
        &[
            "cl_intel_subgroups_short",
            "cl_intel_subgroups_char",
            "cl_intel_subgroups_long",
        ],
    ) {
        return;
    }
    for w in widths(&ctx) {
        for (ty, suf, bytes, ns) in [
            ("uint", "", 4usize, &[1usize, 2, 4, 8][..]),
            ("uint", "ui", 4, &[1, 2, 4, 8][..]),
            ("ushort", "us", 2, &[1, 2, 4, 8][..]),
            ("uchar", "uc", 1, &[1, 2, 4, 8, 16][..]),
            ("ulong", "ul", 8, &[1, 2, 4, 8][..]),
        ] {
            for &nv in ns {
                let vs = if nv == 1 {
                    String::new()
                } else {
                    nv.to_string()
                };
                // `intel_sub_group_block_read4` / `intel_sub_group_block_read_us4`.
                let f = if suf.is_empty() {
                    vs.clone()
                } else {
                    format!("_{suf}{vs}")
                };
                let src = format!(
                    r#"__attribute__((intel_reqd_sub_group_size({w})))
kernel void k(global const {ty}* in, global {ty}* out, global {ty}* copy) {{
    size_t sg = get_group_id(0) * get_num_sub_groups() + get_sub_group_id();
    const global {ty}* p = in + sg * {w} * {nv};
    {ty}{vs} v = intel_sub_group_block_read{f}(p);
    vstore{vs}(v, get_global_id(0), out);
    intel_sub_group_block_write{f}(copy + sg * {w} * {nv}, v + ({ty}{vs})1);
}}"#
                );
                let src = if nv == 1 {
                    src.replace(
                        "vstore(v, get_global_id(0), out)",
                        "out[get_global_id(0)] = v",
                    )
                } else {
                    src
                };
                let kernel = ctx.kernel(&src, OPTS, "k");
                let n = 4 * w;
                let total = n * nv;
                let data: Vec<u8> = (0..total * bytes).map(|b| (b * 7 + 3) as u8).collect();
                let val = |i: usize| -> u128 {
                    let mut x = [0u8; 16];
                    x[..bytes].copy_from_slice(&data[i * bytes..(i + 1) * bytes]);
                    u128::from_le_bytes(x)
                };
                let bin = ctx.buffer_from(&data);
                let bout = ctx.buffer_zeroed::<u8>(total * bytes);
                let bcopy = ctx.buffer_zeroed::<u8>(total * bytes);
                kernel
                    .arg_buffer(0, &bin)
                    .arg_buffer(1, &bout)
                    .arg_buffer(2, &bcopy);
                ctx.run(&kernel, &[n], Some(&[2 * w]));
                let out: Vec<u8> = ctx.read(&bout, total * bytes);
                let copy: Vec<u8> = ctx.read(&bcopy, total * bytes);
                let get = |buf: &[u8], i: usize| -> u128 {
                    let mut x = [0u8; 16];
                    x[..bytes].copy_from_slice(&buf[i * bytes..(i + 1) * bytes]);
                    u128::from_le_bytes(x)
                };
                let wrap = |v: u128| v & ((1u128 << (8 * bytes)) - 1);
                for gid in 0..n {
                    let (sg, l) = (gid / w, gid % w);
                    for c in 0..nv {
                        let src_i = sg * w * nv + c * w + l;
                        assert_eq!(
                            get(&out, gid * nv + c),
                            val(src_i),
                            "W={w} {ty}{vs} read: item {gid} component {c}"
                        );
                        assert_eq!(
                            get(&copy, src_i),
                            wrap(val(src_i) + 1),
                            "W={w} {ty}{vs} write: item {gid} component {c}"
                        );
                    }
                }
            }
        }
    }
}

/// cl_intel_subgroup_local_block_io with the short/char/long forms: block reads and
/// writes of __local arrays (uint, ushort, uchar, ulong), one program per width.
#[test]
fn intel_local_block_read_write() {
    let ctx = DeviceContext::new();
    if !available(
        &ctx,
        &[
            "cl_intel_subgroup_local_block_io",
            "cl_intel_subgroups_short",
            "cl_intel_subgroups_char",
            "cl_intel_subgroups_long",
        ],
    ) {
        return;
    }
    for w in widths(&ctx) {
        // Each sub-group reads 2 blocks (2 components) of its own part of the local
        // array, writes them back swapped and +1 into another array.
        let body = |ty: &str, suf: &str, n: usize| {
            format!(
                r#"    {{
        local {ty}* a = a_{suf};
        local {ty}* b = b_{suf};
        for (uint j = lid; j < {n}; j += ls) a[j] = ({ty})(in[gid * 0 + grp * {n} + j] * 3 + 1);
        barrier(CLK_LOCAL_MEM_FENCE);
        {ty}2 v = intel_sub_group_block_read_{suf}2(a + sg * 2 * {w});
        intel_sub_group_block_write_{suf}2(b + sg * 2 * {w}, (({ty}2)(v.y, v.x)) + ({ty}2)1);
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint j = lid; j < {n}; j += ls) out_{suf}[grp * {n} + j] = b[j];
    }}
"#
            )
        };
        let local = 2 * w;
        let n = 2 * local;
        let src = format!(
            r#"__attribute__((intel_reqd_sub_group_size({w})))
kernel void k(global const uint* in, global uint* out_ui, global ushort* out_us,
              global uchar* out_uc, global ulong* out_ul) {{
    uint lid = get_local_id(0), ls = get_local_size(0), grp = get_group_id(0);
    uint sg = get_sub_group_id();
    size_t gid = get_global_id(0);
    local uint a_ui[{n}], b_ui[{n}];
    local ushort a_us[{n}], b_us[{n}];
    local uchar a_uc[{n}], b_uc[{n}];
    local ulong a_ul[{n}], b_ul[{n}];
{}{}{}{}}}"#,
            body("uint", "ui", n),
            body("ushort", "us", n),
            body("uchar", "uc", n),
            body("ulong", "ul", n)
        );
        let kernel = ctx.kernel(&src, OPTS, "k");
        let groups = 3;
        let total = groups * n;
        let input: Vec<u32> = (0..total as u32)
            .map(|i| i.wrapping_mul(2654435761))
            .collect();
        let bin = ctx.buffer_from(&input);
        let bui = ctx.buffer_zeroed::<u32>(total);
        let bus = ctx.buffer_zeroed::<u16>(total);
        let buc = ctx.buffer_zeroed::<u8>(total);
        let bul = ctx.buffer_zeroed::<u64>(total);
        kernel
            .arg_buffer(0, &bin)
            .arg_buffer(1, &bui)
            .arg_buffer(2, &bus)
            .arg_buffer(3, &buc)
            .arg_buffer(4, &bul);
        ctx.run(&kernel, &[groups * local], Some(&[local]));
        let (ui, us, uc, ul): (Vec<u32>, Vec<u16>, Vec<u8>, Vec<u64>) = (
            ctx.read(&bui, total),
            ctx.read(&bus, total),
            ctx.read(&buc, total),
            ctx.read(&bul, total),
        );
        for g in 0..groups {
            for j in 0..n {
                // Element j of the group's array: sub-group j / (2W), block c, lane l.
                let (sg, c, l) = (j / (2 * w), (j / w) % 2, j % w);
                let src_j = sg * 2 * w + (1 - c) * w + l;
                // Computed in uint, then converted to the array's type.
                let a = |k: usize| u64::from(input[g * n + k].wrapping_mul(3).wrapping_add(1));
                let i = g * n + j;
                let want = a(src_j) + 1;
                let msg = format!("W={w} group {g} element {j}");
                assert_eq!(u64::from(ui[i]), want & 0xffff_ffff, "uint {msg}");
                assert_eq!(u64::from(us[i]), want & 0xffff, "ushort {msg}");
                assert_eq!(u64::from(uc[i]), want & 0xff, "uchar {msg}");
                assert_eq!(ul[i], a(src_j) + 1, "ulong {msg}");
            }
        }
    }
}

/// `sub_group_barrier` (cl_khr_subgroups): lanes exchange values through __local and
/// __global memory across it, also inside a branch only some sub-groups take.
#[test]
fn sub_group_barrier_orders_memory() {
    let ctx = DeviceContext::new();
    if !available(&ctx, &["cl_khr_subgroups"]) {
        return;
    }
    for w in widths(&ctx) {
        let local = 4 * w;
        let src = format!(
            r#"__attribute__((intel_reqd_sub_group_size({w})))
kernel void k(global const int* in, global int* tmp, global int* out) {{
    local int l[{local}];
    size_t i = get_global_id(0);
    uint lid = get_local_id(0), sgl = get_sub_group_local_id();
    uint base = get_sub_group_id() * {w};
    if (get_sub_group_id() % 2 == 0) {{
        l[lid] = in[i];
        sub_group_barrier(CLK_LOCAL_MEM_FENCE);
        out[i] = l[base + {w} - 1 - sgl];
    }} else {{
        tmp[i] = in[i] * 2;
        sub_group_barrier(CLK_GLOBAL_MEM_FENCE, memory_scope_sub_group);
        out[i] = tmp[i - sgl + ({w} - 1 - sgl)];
    }}
}}"#
        );
        let kernel = ctx.kernel(&src, OPTS, "k");
        let n = 2 * local;
        let input: Vec<i32> = (0..n as i32).map(|v| v * 7 - 40).collect();
        let (bi, bt, bo) = (
            ctx.buffer_from(&input),
            ctx.buffer_zeroed::<i32>(n),
            ctx.buffer_zeroed::<i32>(n),
        );
        kernel
            .arg_buffer(0, &bi)
            .arg_buffer(1, &bt)
            .arg_buffer(2, &bo);
        ctx.run(&kernel, &[n], Some(&[local]));
        let got: Vec<i32> = ctx.read(&bo, n);
        for (i, g) in got.iter().enumerate() {
            let sg = (i % local) / w;
            let mirror = i - i % w + (w - 1 - i % w);
            let want = if sg % 2 == 0 {
                input[mirror]
            } else {
                2 * input[mirror]
            };
            assert_eq!(*g, want, "W={w} item {i}");
        }
    }
}

/// A SPIR-V module calling `OpGroupNonUniformRotateKHR` (cluster 4) and a clustered
/// `OpGroupNonUniformIAdd` (cluster 2) directly runs; cluster sizes that are not
/// constant powers of two are refused at clCreateProgramWithIL.
#[test]
fn spirv_rotate_and_clustered_reduce_rules() {
    let ctx = DeviceContext::new();
    if !available(
        &ctx,
        &["cl_khr_subgroup_rotate", "cl_khr_subgroup_clustered_reduce"],
    ) || !require(
        spirv::assemble("OpCapability Kernel", "spv1.0").is_ok(),
        "spirv-as",
    ) {
        return;
    }
    let module = |body: &str| {
        format!(
            r#"OpCapability Addresses
OpCapability Kernel
OpCapability Int64
OpCapability GroupNonUniform
OpCapability GroupNonUniformBallot
OpCapability GroupNonUniformArithmetic
OpCapability GroupNonUniformClustered
OpCapability GroupNonUniformRotateKHR
OpExtension "SPV_KHR_subgroup_rotate"
OpMemoryModel Physical64 OpenCL
OpEntryPoint Kernel %k "k" %gid %lane
OpExecutionMode %k SubgroupSize 8
OpDecorate %gid BuiltIn GlobalInvocationId
OpDecorate %lane BuiltIn SubgroupLocalInvocationId
%void = OpTypeVoid
%uint = OpTypeInt 32 0
%ulong = OpTypeInt 64 0
%v3ulong = OpTypeVector %ulong 3
%v4uint = OpTypeVector %uint 4
%pin3 = OpTypePointer Input %v3ulong
%pinu = OpTypePointer Input %uint
%pu = OpTypePointer CrossWorkgroup %uint
%gid = OpVariable %pin3 Input
%lane = OpVariable %pinu Input
%sg = OpConstant %uint 3
%u1 = OpConstant %uint 1
%u2 = OpConstant %uint 2
%u3 = OpConstant %uint 3
%u4 = OpConstant %uint 4
%u100 = OpConstant %uint 100
%ft = OpTypeFunction %void %pu
%k = OpFunction %void None %ft
%o = OpFunctionParameter %pu
%entry = OpLabel
%g3 = OpLoad %v3ulong %gid
%g = OpCompositeExtract %ulong %g3 0
%l = OpLoad %uint %lane
%p = OpInBoundsPtrAccessChain %pu %o %g
{body}
OpReturn
OpFunctionEnd
"#
        )
    };
    let build = |body: &str| -> Result<Vec<u32>, cl_int> {
        let text = module(body);
        let il = spirv::assemble(&text, "spv1.4").unwrap_or_else(|e| panic!("{e}\n{text}"));
        let program = ctx.try_program_from_il(&il).map_err(|e| e.code)?;
        let program = ctx.try_build_program(program, "").map_err(|e| e.code)?;
        let kernel = program.kernel("k");
        let out = ctx.buffer_zeroed::<u32>(16);
        kernel.arg_buffer(0, &out);
        ctx.run(&kernel, &[16], Some(&[16]));
        Ok(ctx.read::<u32>(&out, 16))
    };
    let got = build(
        "%r = OpGroupNonUniformRotateKHR %uint %sg %l %u1 %u4\n\
         %s = OpGroupNonUniformIAdd %uint %sg ClusteredReduce %l %u2\n\
         %m = OpIMul %uint %s %u100\n%t = OpIAdd %uint %r %m\nOpStore %p %t",
    )
    .expect("a valid rotate / clustered reduce module runs");
    for (i, v) in got.iter().enumerate() {
        let l = (i % 8) as u32;
        let rot = ((l + 1) & 3) + (l & !3);
        let pair = (l & !1) + (l | 1);
        assert_eq!(*v, rot + 100 * pair, "work-item {i}");
    }
    for (what, body) in [
        (
            "cluster size 3",
            "%r = OpGroupNonUniformRotateKHR %uint %sg %l %u1 %u3\nOpStore %p %r",
        ),
        (
            "a cluster size that is not a constant",
            "%r = OpGroupNonUniformIAdd %uint %sg ClusteredReduce %l %l\nOpStore %p %r",
        ),
    ] {
        assert_eq!(
            build(body).map(|_| ()),
            Err(CL_INVALID_VALUE),
            "{what} must be refused"
        );
    }
}

/// cl_intel_subgroups as SPIR-V (SPV_INTEL_subgroups) through clCreateProgramWithIL:
/// OpSubgroupShuffleINTEL, ShuffleDown, ShuffleUp, ShuffleXor and the buffer block
/// reads and writes (32- and 16-bit), at every width, against the host.
#[test]
fn intel_subgroup_instructions_through_il() {
    let ctx = DeviceContext::new();
    if !available(&ctx, &["cl_intel_subgroups", "cl_intel_subgroups_short"])
        || !require(ctx.supports_spirv(), "SPIR-V programs")
    {
        return;
    }
    for w in widths(&ctx) {
        let src = format!(
            r#"#pragma OPENCL EXTENSION cl_intel_subgroups_short : enable
__attribute__((intel_reqd_sub_group_size({w})))
kernel void k(global const uint* in, global const ushort* ins, global uint* out,
              global uint* copy, global ushort* copys, uint d) {{
    size_t i = get_global_id(0);
    size_t sg = get_group_id(0) * get_num_sub_groups() + get_sub_group_id();
    uint l = get_sub_group_local_id();
    uint x = in[i];
    global uint* o = out + i * 6;
    o[0] = intel_sub_group_shuffle(x, (l * 3u + 1u) % {w}u);
    o[1] = intel_sub_group_shuffle_down(x, x + 1000u, d);
    o[2] = intel_sub_group_shuffle_up(x + 1000u, x, d);
    o[3] = intel_sub_group_shuffle_xor(x, d);
    uint2 b = intel_sub_group_block_read2(in + sg * 2 * {w});
    o[4] = b.x ^ (b.y << 1);
    ushort s = intel_sub_group_block_read_us(ins + sg * {w});
    o[5] = s;
    intel_sub_group_block_write2(copy + sg * 2 * {w}, b + (uint2)(1, 2));
    intel_sub_group_block_write_us(copys + sg * {w}, (ushort)(s + 3));
}}"#
        );
        let il = match cranecl_conformance::spirv::compile(&src, &[]) {
            Ok(il) => il,
            Err(e) => {
                require(false, &format!("clang for SPIR-V ({e})"));
                return;
            }
        };
        let program = ctx
            .try_build_il(&il, "")
            .unwrap_or_else(|f| panic!("W={w}: {f}"));
        let kernel = program.kernel("k");
        let n = 4 * w;
        let input: Vec<u32> = (0..2 * n as u32)
            .map(|i| i.wrapping_mul(2654435761) >> 7)
            .collect();
        let inputs: Vec<u16> = (0..n as u16).map(|i| i.wrapping_mul(40503)).collect();
        let d = (w / 2 + 1) as u32 % w as u32;
        let (bi, bs) = (ctx.buffer_from(&input), ctx.buffer_from(&inputs));
        let (bo, bc, bcs) = (
            ctx.buffer_zeroed::<u32>(6 * n),
            ctx.buffer_zeroed::<u32>(2 * n),
            ctx.buffer_zeroed::<u16>(n),
        );
        kernel
            .arg_buffer(0, &bi)
            .arg_buffer(1, &bs)
            .arg_buffer(2, &bo)
            .arg_buffer(3, &bc)
            .arg_buffer(4, &bcs)
            .arg(5, d);
        ctx.run(&kernel, &[n], Some(&[2 * w]));
        let out: Vec<u32> = ctx.read(&bo, 6 * n);
        let copy: Vec<u32> = ctx.read(&bc, 2 * n);
        let copys: Vec<u16> = ctx.read(&bcs, n);
        let d = d as usize;
        for i in 0..n {
            let (sg, l) = (i / w, i % w);
            let x = |j: usize| input[sg * w + j];
            let block = |c: usize| input[sg * 2 * w + c * w + l];
            let want = [
                x((l * 3 + 1) % w),
                if l + d < w {
                    x(l + d)
                } else {
                    x(l + d - w) + 1000
                },
                if l >= d {
                    x(l - d)
                } else {
                    x(w + l - d) + 1000
                },
                x(l ^ d),
                block(0) ^ (block(1) << 1),
                u32::from(inputs[sg * w + l]),
            ];
            assert_eq!(&out[i * 6..i * 6 + 6], &want, "W={w} item {i}");
            for c in 0..2 {
                assert_eq!(
                    copy[sg * 2 * w + c * w + l],
                    block(c) + 1 + c as u32,
                    "W={w} block write, item {i} component {c}"
                );
            }
            assert_eq!(
                copys[sg * w + l],
                inputs[sg * w + l].wrapping_add(3),
                "W={w} block write _us, item {i}"
            );
        }
    }
}
