//! OpenCL C 2.0/3.0 memory model in the jit: C11 atomics (min/max, flags, 64-bit,
//! float), the generic address space (`to_global`/`to_local`/`to_private`,
//! `get_fence`), results checked against the host.

mod common;
use common::*;

#[test]
fn c11_fetch_min_max_signed_unsigned_32_and_64() {
    let src = r#"
kernel void k(global atomic_int* si, global atomic_uint* ui, global atomic_long* sl,
              global atomic_ulong* ul, global const int* in, global int* old,
              global int* lres) {
  size_t i = get_global_id(0);
  int v = in[i];
  local atomic_int lmin, lmax;
  if (get_local_id(0) == 0) {
    atomic_init(&lmin, INT_MAX);
    atomic_init(&lmax, INT_MIN);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  old[i] = atomic_fetch_min(&si[0], v);
  atomic_fetch_max_explicit(&si[1], v, memory_order_relaxed);
  atomic_fetch_min_explicit(&ui[0], (uint)v, memory_order_acq_rel, memory_scope_device);
  atomic_fetch_max_explicit(&ui[1], (uint)v, memory_order_seq_cst, memory_scope_work_group);
  atomic_fetch_min(&sl[0], (long)v * 3);
  atomic_fetch_max(&sl[1], (long)v * 3);
  atomic_fetch_min(&ul[0], (ulong)(long)v);
  atomic_fetch_max(&ul[1], (ulong)(long)v);
  atomic_fetch_min_explicit(&lmin, v, memory_order_relaxed, memory_scope_work_group);
  atomic_fetch_max_explicit(&lmax, v, memory_order_relaxed, memory_scope_work_group);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0) {
    lres[2 * get_group_id(0)] = atomic_load(&lmin);
    lres[2 * get_group_id(0) + 1] = atomic_load(&lmax);
  }
}
"#;
    let p = build_memory_model(src);
    let k = kernel(&p, "k");
    let n = 96;
    let local = 24;
    let mut input: Vec<i32> = (0..n as i32)
        .map(|i| (i * 7919 % 201) - 100 + if i % 13 == 0 { -1_000_000 } else { 0 })
        .collect();
    input[50] = i32::MAX - 3;
    let mut si = vec![i32::MAX, i32::MIN];
    let mut ui = vec![u32::MAX, 0];
    let mut sl = vec![i64::MAX, i64::MIN];
    let mut ul = vec![u64::MAX, 0];
    let mut old = vec![0i32; n];
    let mut lres = vec![0i32; 2 * n / local];
    run(
        k,
        &[n],
        &[local],
        &[
            buf(&mut si),
            buf(&mut ui),
            buf(&mut sl),
            buf(&mut ul),
            buf(&mut input),
            buf(&mut old),
            buf(&mut lres),
        ],
    );
    let min = *input.iter().min().unwrap();
    let max = *input.iter().max().unwrap();
    assert_eq!(si, vec![min, max]);
    let umin = input.iter().map(|&v| v as u32).min().unwrap();
    let umax = input.iter().map(|&v| v as u32).max().unwrap();
    assert_eq!(ui, vec![umin, umax], "unsigned min/max compare as unsigned");
    assert_eq!(sl, vec![min as i64 * 3, max as i64 * 3]);
    let ulmin = input.iter().map(|&v| v as i64 as u64).min().unwrap();
    let ulmax = input.iter().map(|&v| v as i64 as u64).max().unwrap();
    assert_eq!(ul, vec![ulmin, ulmax]);
    // Work-items run in order here: each one sees the minimum of those before it.
    let mut running = i32::MAX;
    for i in 0..n {
        assert_eq!(old[i], running, "old value seen by work-item {i}");
        running = running.min(input[i]);
    }
    for g in 0..n / local {
        let part = &input[g * local..(g + 1) * local];
        assert_eq!(
            lres[2 * g],
            *part.iter().min().unwrap(),
            "group {g} local min"
        );
        assert_eq!(
            lres[2 * g + 1],
            *part.iter().max().unwrap(),
            "group {g} local max"
        );
    }
}

#[test]
fn c11_flags_admit_exactly_one_visitor() {
    // Each work-item walks the flags until it is the first to set one: every flag is
    // won by exactly one work-item and the last flags stay clear after clearing.
    let src = r#"
kernel void k(global atomic_flag* gflags, global int* winner, global int* first_try,
              global int* cleared) {
  int i = get_global_id(0);
  local atomic_flag lflags[64];
  int l = get_local_id(0);
  atomic_flag_clear_explicit(&lflags[l], memory_order_relaxed, memory_scope_work_group);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int c = 0; c < 1024; c++) {
    if (!atomic_flag_test_and_set(&gflags[c])) {
      winner[c] = i;
      break;
    }
  }
  first_try[i] = atomic_flag_test_and_set_explicit(&lflags[(l + 1) % get_local_size(0)],
      memory_order_acquire, memory_scope_work_group) ? 1 : 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_flag_clear_explicit(&lflags[l], memory_order_release, memory_scope_work_group);
  barrier(CLK_LOCAL_MEM_FENCE);
  cleared[i] = atomic_flag_test_and_set(&lflags[l]) ? 1 : 0;
}
"#;
    let p = build_memory_model(src);
    let k = kernel(&p, "k");
    let n = 128;
    let mut flags = vec![0i32; 1024];
    // A flag set beforehand (any non-zero value) is never won.
    flags[3] = 1;
    let mut winner = vec![-1i32; 1024];
    let mut first_try = vec![7i32; n];
    let mut cleared = vec![7i32; n];
    run(
        k,
        &[n],
        &[32],
        &[
            buf(&mut flags),
            buf(&mut winner),
            buf(&mut first_try),
            buf(&mut cleared),
        ],
    );
    let mut won: Vec<i32> = winner.iter().copied().filter(|&w| w >= 0).collect();
    assert_eq!(winner[3], -1, "a preset flag is not won");
    assert_eq!(won.len(), n, "one flag per work-item");
    won.sort();
    assert_eq!(won, (0..n as i32).collect::<Vec<_>>());
    assert_eq!(flags.iter().filter(|&&f| f != 0).count(), n + 1);
    assert!(first_try.iter().all(|&f| f == 0), "{first_try:?}");
    assert!(cleared.iter().all(|&f| f == 0), "{cleared:?}");
}

#[test]
fn c11_atomics_through_generic_pointers() {
    let src = r#"
void bump(atomic_int* p, int v) {
  atomic_fetch_add_explicit(&p[0], 1, memory_order_relaxed, memory_scope_work_group);
  atomic_fetch_max(&p[1], v);
  atomic_fetch_min_explicit(&p[2], v, memory_order_seq_cst, memory_scope_device);
}
kernel void k(global atomic_int* g, global int* out) {
  local atomic_int l[3];
  if (get_local_id(0) == 0) {
    atomic_init(&l[0], 0);
    atomic_init(&l[1], INT_MIN);
    atomic_init(&l[2], INT_MAX);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  bump(l, get_local_id(0) + 10);
  bump(g, get_global_id(0) - 5);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) < 3) out[3 * get_group_id(0) + get_local_id(0)] = atomic_load(&l[get_local_id(0)]);
}
"#;
    let p = build_memory_model(src);
    let k = kernel(&p, "k");
    let (n, local) = (64, 16);
    let mut g = vec![0i32, i32::MIN, i32::MAX];
    let mut out = vec![0i32; 3 * n / local];
    run(k, &[n], &[local], &[buf(&mut g), buf(&mut out)]);
    for grp in 0..n / local {
        assert_eq!(
            &out[3 * grp..3 * grp + 3],
            &[local as i32, local as i32 - 1 + 10, 10],
            "group {grp}"
        );
    }
    assert_eq!(g, vec![n as i32, n as i32 - 1 - 5, -5]);
}

#[test]
fn generic_casts_and_fences_know_the_address_space() {
    let src = r#"
int classify(int* p) {
  int r = 0;
  if (to_global(p)) r |= 1;
  if (to_local(p)) r |= 2;
  if (to_private(p)) r |= 4;
  return r | (get_fence(p) << 4);
}
kernel void k(global int* buf, local int* larg, global int* out) {
  int i = get_global_id(0);
  local int lvar[4];
  int priv[3] = {i, i + 1, i + 2};
  larg[get_local_id(0)] = i;
  lvar[i & 3] = i;
  int* gen = (i & 1) ? (int*)&buf[i] : (int*)&priv[i % 3];
  out[6 * i + 0] = classify(&buf[i]);
  out[6 * i + 1] = classify(&larg[get_local_id(0)]);
  out[6 * i + 2] = classify(&lvar[1]);
  out[6 * i + 3] = classify(&priv[1]);
  out[6 * i + 4] = classify(gen);
  // A cast back gives the same address, usable for access.
  global int* back = to_global(gen);
  private int* pb = to_private(gen);
  out[6 * i + 5] = back ? *back : *pb;
}
"#;
    let p = build_memory_model(src);
    let k = kernel(&p, "k");
    let n = 40;
    let mut b: Vec<i32> = (0..n as i32).map(|i| 100 + i).collect();
    let mut out = vec![-1i32; 6 * n];
    run(
        k,
        &[n],
        &[8],
        &[buf(&mut b), Arg::Local(8 * 4), buf(&mut out)],
    );
    // get_fence: CLK_GLOBAL_MEM_FENCE = 2, CLK_LOCAL_MEM_FENCE = 1, private 0.
    let global = 1 | (2 << 4);
    let local = 2 | (1 << 4);
    let private = 4;
    for i in 0..n {
        let got = &out[6 * i..6 * i + 6];
        let odd = i % 2 == 1;
        let gen = if odd { global } else { private };
        let val = if odd {
            100 + i as i32
        } else {
            (i + i % 3) as i32
        };
        assert_eq!(
            got,
            &[global, local, local, private, gen, val],
            "work-item {i}"
        );
    }
}

#[test]
fn float_atomics_add_min_max() {
    let src = r#"
kernel void k(global atomic_float* f, global atomic_double* d, global const float* in) {
  float v = in[get_global_id(0)];
  atomic_fetch_add_explicit(&f[0], v, memory_order_relaxed, memory_scope_device);
  atomic_fetch_min(&f[1], v);
  atomic_fetch_max(&f[2], v);
  // fmin/fmax semantics: a NaN operand never wins.
  atomic_fetch_min(&f[3], NAN);
  atomic_fetch_max(&f[4], v);
  atomic_fetch_sub(&f[5], v);
  atomic_fetch_add(&d[0], (double)v);
  atomic_fetch_min_explicit(&d[1], (double)v, memory_order_relaxed);
  atomic_fetch_max(&d[2], (double)v);
  atomic_fetch_min(&d[3], (double)v);
}
"#;
    let p = build_memory_model(src);
    let k = kernel(&p, "k");
    let n = 64;
    // Values whose sums are exact in any order.
    let mut input: Vec<f32> = (0..n).map(|i| (i as f32 - 20.0) * 0.25).collect();
    let mut f = vec![0.0f32, f32::INFINITY, f32::NEG_INFINITY, 5.0, f32::NAN, 1.0];
    let mut d = vec![0.0f64, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
    run(k, &[n], &[16], &[buf(&mut f), buf(&mut d), buf(&mut input)]);
    let sum: f32 = input.iter().sum();
    let min = input.iter().copied().fold(f32::INFINITY, f32::min);
    let max = input.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    assert_eq!(f, vec![sum, min, max, 5.0, max, 1.0 - sum]);
    assert_eq!(d, vec![sum as f64, min as f64, max as f64, min as f64]);
}

#[test]
fn generic_casts_know_private_memory_across_barriers() {
    // Kernels with barriers keep private variables in the per-sub-group scratch area
    // instead of the stack: to_private must know that area too.
    let src = r#"
int where(int* p) {
  return (to_global(p) ? 1 : 0) | (to_local(p) ? 2 : 0) | (to_private(p) ? 4 : 0);
}
kernel void k(global int* g, global int* out) {
  local int l[64];
  int priv[4] = {1, 2, 3, 4};
  int i = get_global_id(0);
  int* p = (i % 3 == 0) ? (int*)&priv[i & 3] : (i % 3 == 1) ? (int*)&l[get_local_id(0)] : (int*)&g[i];
  l[get_local_id(0)] = i;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[2 * i] = where(p);
  barrier(CLK_LOCAL_MEM_FENCE);
  out[2 * i + 1] = *p + priv[(i + 1) & 3];
}
"#;
    let p = build_memory_model(src);
    let k = kernel(&p, "k");
    let (n, local) = (96, 32);
    let mut g: Vec<i32> = (0..n as i32).map(|v| 1000 + v).collect();
    let mut out = vec![-1i32; 2 * n];
    run(k, &[n], &[local], &[buf(&mut g), buf(&mut out)]);
    for i in 0..n {
        let (space, value) = match i % 3 {
            0 => (4, (i & 3) as i32 + 1),
            1 => (2, i as i32),
            _ => (1, 1000 + i as i32),
        };
        assert_eq!(out[2 * i], space, "address space seen by work-item {i}");
        assert_eq!(
            out[2 * i + 1],
            value + ((i + 1) & 3) as i32 + 1,
            "work-item {i}"
        );
    }
}

#[test]
fn explicit_loads_with_every_order_and_scope() {
    // clang-22 writes atomic_load_explicit's memory order where the scope belongs
    // (seq_cst = 5, a variable order as it is): such loads must build and load.
    let src = r#"
kernel void k(global atomic_int* a, global atomic_long* b, global atomic_float* f,
              global long* out, memory_order mo) {
  size_t i = get_global_id(0);
  local atomic_int l;
  if (get_local_id(0) == 0) atomic_init(&l, 7 * (int)get_group_id(0));
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_fetch_add(&a[1], 1);
  long s = atomic_load_explicit(&a[0], memory_order_seq_cst, memory_scope_all_svm_devices);
  s += 10 * atomic_load_explicit(&a[0], memory_order_seq_cst, memory_scope_all_devices);
  s += 100 * atomic_load_explicit(&a[0], memory_order_acquire, memory_scope_work_group);
  s += 1000 * atomic_load_explicit(&a[0], memory_order_relaxed);
  s += 10000 * atomic_load_explicit(&b[0], memory_order_acquire, memory_scope_device);
  s += 100000 * (long)atomic_load_explicit(&f[0], memory_order_seq_cst, memory_scope_sub_group);
  s += 1000000 * atomic_load_explicit(&l, mo, memory_scope_work_group);
  generic atomic_int* g = (i & 1) ? (generic atomic_int*)&a[0] : (generic atomic_int*)&l;
  out[2 * i] = s;
  out[2 * i + 1] = atomic_load_explicit(g, memory_order_seq_cst, memory_scope_work_group);
}
"#;
    let p = build_memory_model(src);
    let k = kernel(&p, "k");
    let (n, local) = (64, 16);
    let mut a = vec![3i32, 0];
    let mut b = vec![5i64];
    let mut f = vec![2.0f32];
    let mut out = vec![0i64; 2 * n];
    for mo in [0i32, 2, 5] {
        a[1] = 0;
        run(
            k,
            &[n],
            &[local],
            &[
                buf(&mut a),
                buf(&mut b),
                buf(&mut f),
                buf(&mut out),
                val(mo),
            ],
        );
        assert_eq!(a[1], n as i32, "every work-item's add (order {mo})");
        for i in 0..n {
            let group = (i / local) as i64;
            let s = 3 + 30 + 300 + 3000 + 50_000 + 200_000 + 1_000_000 * 7 * group;
            assert_eq!(out[2 * i], s, "work-item {i}, order {mo}");
            let g = if i & 1 == 1 { 3 } else { 7 * group };
            assert_eq!(out[2 * i + 1], g, "generic load of work-item {i}");
        }
    }
}

#[test]
fn local_atomics_of_every_kind_against_the_host() {
    // __local atomics are plain read-modify-writes (one thread runs a work-group):
    // every operation, contended by every work-item of the group, against the host.
    let src = r#"
kernel void k(global const int* in, global int* olds, global int* res, global long* lres,
              global float* fres) {
  local atomic_int c[10];
  local atomic_uint u[2];
  local atomic_long l;
  local atomic_float f[3];
  local atomic_flag flag;
  local int legacy[2];
  size_t lid = get_local_id(0), gid = get_global_id(0), n = get_local_size(0);
  if (lid == 0) {
    for (int j = 0; j < 10; j++) atomic_init(&c[j], 0);
    atomic_init(&c[2], INT_MAX); atomic_init(&c[3], INT_MIN); atomic_init(&c[5], -1);
    atomic_init(&c[7], -7);
    atomic_init(&u[0], UINT_MAX); atomic_init(&u[1], 0);
    atomic_init(&l, 1L << 40);
    atomic_init(&f[0], 0.5f); atomic_init(&f[1], INFINITY); atomic_init(&f[2], -INFINITY);
    atomic_flag_clear(&flag);
    legacy[0] = 100; legacy[1] = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  int v = in[gid];
  int o = 0;
  o |= atomic_fetch_add(&c[0], 1);                          // 0..n-1 once each
  atomic_fetch_sub_explicit(&c[1], v, memory_order_relaxed, memory_scope_work_group);
  atomic_fetch_min(&c[2], v);
  atomic_fetch_max(&c[3], v);
  atomic_fetch_or(&c[4], 1 << (lid % 31));
  atomic_fetch_and(&c[5], ~(1 << (lid % 29)));
  atomic_fetch_xor(&c[6], v);
  int x = atomic_exchange(&c[7], (int)lid);                  // a chain through every id
  int e = atomic_load(&c[8]);
  while (!atomic_compare_exchange_weak(&c[8], &e, e + 3)) {}
  atomic_fetch_min(&u[0], (uint)v);
  atomic_fetch_max(&u[1], (uint)v);
  atomic_fetch_add(&l, (long)v << 20);
  atomic_fetch_add(&f[0], (float)v);
  atomic_fetch_min(&f[1], (float)v);
  atomic_fetch_max(&f[2], (float)v);
  int won = !atomic_flag_test_and_set(&flag);
  int inc = atomic_inc(&legacy[0]);
  int seen1 = atomic_add(&legacy[1], 0), was;
  while ((was = atomic_cmpxchg(&legacy[1], seen1, seen1 + 2)) != seen1) seen1 = was;
  atomic_store(&c[9], 5);
  olds[4 * gid] = o;
  olds[4 * gid + 1] = x;
  olds[4 * gid + 2] = won;
  olds[4 * gid + 3] = inc;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) {
    size_t g = get_group_id(0);
    for (int j = 0; j < 10; j++) res[12 * g + j] = atomic_load(&c[j]);
    res[12 * g + 10] = (int)atomic_load(&u[0]);
    res[12 * g + 11] = (int)atomic_load(&u[1]);
    lres[g] = atomic_load(&l);
    fres[3 * g] = atomic_load(&f[0]);
    fres[3 * g + 1] = atomic_load(&f[1]);
    fres[3 * g + 2] = atomic_load(&f[2]);
    res[12 * get_num_groups(0) + g] = legacy[1];
  }
}
"#;
    let p = build_memory_model(src);
    let k = kernel(&p, "k");
    let (groups, local) = (3usize, 37usize); // ragged: the last sub-group is partial
    let n = groups * local;
    let input: Vec<i32> = (0..n as i32).map(|i| (i * 7919) % 2001 - 1000).collect();
    let mut inp = input.clone();
    let mut olds = vec![0i32; 4 * n];
    let mut res = vec![0i32; 13 * groups];
    let mut lres = vec![0i64; groups];
    let mut fres = vec![0f32; 3 * groups];
    run(
        k,
        &[n],
        &[local],
        &[
            buf(&mut inp),
            buf(&mut olds),
            buf(&mut res),
            buf(&mut lres),
            buf(&mut fres),
        ],
    );
    for g in 0..groups {
        let vs = &input[g * local..(g + 1) * local];
        let ids = g * local..(g + 1) * local;
        let r = &res[12 * g..12 * g + 12];
        let or = (0..local).fold(0, |a, l| a | 1 << (l % 31));
        let and = (0..local).fold(-1, |a, l| a & !(1 << (l % 29)));
        let xor = vs.iter().fold(0, |a, v| a ^ v);
        let sum: i32 = vs.iter().sum();
        assert_eq!(r[0], local as i32, "group {g}: add");
        assert_eq!(r[1], -sum, "group {g}: sub");
        assert_eq!(r[2], *vs.iter().min().unwrap(), "group {g}: min");
        assert_eq!(r[3], *vs.iter().max().unwrap(), "group {g}: max");
        assert_eq!((r[4], r[5], r[6]), (or, and, xor), "group {g}: or/and/xor");
        assert_eq!(r[8], 3 * local as i32, "group {g}: compare-exchange loop");
        assert_eq!(r[9], 5, "group {g}: store");
        let umin = vs.iter().map(|v| *v as u32).min().unwrap();
        let umax = vs.iter().map(|v| *v as u32).max().unwrap();
        assert_eq!(
            (r[10] as u32, r[11] as u32),
            (umin, umax),
            "group {g}: unsigned"
        );
        assert_eq!(
            lres[g],
            (1i64 << 40) + (i64::from(sum) << 20),
            "group {g}: long add"
        );
        let fmin = vs.iter().map(|v| *v as f32).fold(f32::INFINITY, f32::min);
        let fmax = vs
            .iter()
            .map(|v| *v as f32)
            .fold(f32::NEG_INFINITY, f32::max);
        assert_eq!(
            &fres[3 * g..3 * g + 3],
            &[0.5 + sum as f32, fmin, fmax],
            "group {g}: float"
        );
        assert_eq!(
            res[12 * groups + g],
            2 * local as i32,
            "group {g}: atomic_cmpxchg loop"
        );
        // Old values: each add and atomic_inc result once, one flag winner, and the
        // exchanges form one chain from the initial -7 through every id.
        let mut adds: Vec<i32> = ids.clone().map(|i| olds[4 * i]).collect();
        let mut incs: Vec<i32> = ids.clone().map(|i| olds[4 * i + 3] - 100).collect();
        adds.sort_unstable();
        incs.sort_unstable();
        let want: Vec<i32> = (0..local as i32).collect();
        assert_eq!(adds, want, "group {g}: fetch_add results");
        assert_eq!(incs, want, "group {g}: atomic_inc results");
        assert_eq!(
            ids.clone().filter(|i| olds[4 * i + 2] == 1).count(),
            1,
            "group {g}: flag"
        );
        let mut seen: Vec<i32> = ids.clone().map(|i| olds[4 * i + 1]).collect();
        seen.push(r[7]);
        seen.sort_unstable();
        let mut chain: Vec<i32> = (0..local as i32).collect();
        chain.push(-7);
        chain.sort_unstable();
        assert_eq!(seen, chain, "group {g}: exchange chain");
    }
}
