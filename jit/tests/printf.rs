//! printf in the jit: call sites parsed at compile time, one record per active
//! work-item in work-item order, return values, and formats refused at build time.
//! (Turning records into text is the runtime's; see runtime::printf.)

mod common;
use common::*;

use cranecl_jit::printf::{ScalarKind, SitePiece, Slot};

fn u32_at(r: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(r[at..at + 4].try_into().unwrap())
}

fn f64_at(r: &[u8], at: usize) -> f64 {
    f64::from_le_bytes(r[at..at + 8].try_into().unwrap())
}

/// The slots of a site's stored values, in format order.
fn slots(k: &cranecl_jit::CompiledKernel, site: usize) -> Vec<Slot> {
    k.printf().sites[site]
        .pieces
        .iter()
        .filter_map(|p| match p {
            SitePiece::Value { slot, .. } | SitePiece::StrPointer { slot, .. } => Some(*slot),
            _ => None,
        })
        .collect()
}

#[test]
fn one_record_per_work_item_in_order() {
    let src = r#"
kernel void k(global int *ret, float f) {
  int i = get_global_id(0);
  ret[i] = printf("i=%d f=%f\n", i, f * i);
}
"#;
    for w in [4, 8, 16, 32] {
        let p = build_w(src, w);
        let k = kernel(&p, "k");
        assert_eq!(k.printf().sites.len(), 1);
        let s = slots(k, 0);
        assert_eq!(s[0].kind, ScalarKind::Int { bytes: 4 });
        // float is promoted to double by the C rules.
        assert_eq!(s[1].kind, ScalarKind::Float { bytes: 8 });
        let (data, buffer) = printf_buffer(1 << 16);
        let n = 40;
        let mut ret = vec![7i32; n];
        run_with_printf(k, &[n], &[20], &[buf(&mut ret), val(0.5f32)], Some(&buffer));
        assert_eq!(ret, vec![0; n], "w={w}: printf returns 0");
        let records = printf_records(k, &data, &buffer);
        assert_eq!(records.len(), n, "w={w}");
        for (i, (site, r)) in records.iter().enumerate() {
            assert_eq!(*site, 0);
            assert_eq!(u32_at(r, s[0].offset as usize), i as u32, "w={w}");
            assert_eq!(f64_at(r, s[1].offset as usize), 0.5 * i as f64, "w={w}");
        }
    }
}

#[test]
fn inactive_lanes_print_nothing() {
    let src = r#"
kernel void k(global int *ret) {
  int i = get_global_id(0);
  int r = 5;
  if (i % 3 == 1) r = printf("%d\n", i);
  else if (i % 5 == 0) r = printf("five %d %d\n", i, -i);
  ret[i] = r;
}
"#;
    let p = build_w(src, 8);
    let k = kernel(&p, "k");
    assert_eq!(k.printf().sites.len(), 2);
    let (data, buffer) = printf_buffer(1 << 16);
    let n = 64;
    let mut ret = vec![0i32; n];
    run_with_printf(k, &[n], &[32], &[buf(&mut ret)], Some(&buffer));
    let got: Vec<Vec<i32>> = printf_records(k, &data, &buffer)
        .into_iter()
        .map(|(site, r)| {
            slots(k, site as usize)
                .iter()
                .map(|s| u32_at(&r, s.offset as usize) as i32)
                .collect()
        })
        .collect();
    // Each sub-group (8 work-items) runs both branches of the if one after the
    // other, each for its active lanes in lane order.
    for sg in 0..n as i32 / 8 {
        let ids = sg * 8..sg * 8 + 8;
        let of = |v: &Vec<i32>| ids.contains(&v[0]);
        let three: Vec<Vec<i32>> = ids
            .clone()
            .filter(|i| i % 3 == 1)
            .map(|i| vec![i])
            .collect();
        let five: Vec<Vec<i32>> = ids
            .clone()
            .filter(|i| i % 3 != 1 && i % 5 == 0)
            .map(|i| vec![i, -i])
            .collect();
        let got3: Vec<Vec<i32>> = got
            .iter()
            .filter(|v| of(v) && v.len() == 1)
            .cloned()
            .collect();
        let got5: Vec<Vec<i32>> = got
            .iter()
            .filter(|v| of(v) && v.len() == 2)
            .cloned()
            .collect();
        assert_eq!(got3, three, "sub-group {sg}");
        assert_eq!(got5, five, "sub-group {sg}");
    }
    assert_eq!(
        got.len(),
        (0..n).filter(|i| i % 3 == 1 || i % 5 == 0).count()
    );
    for (i, r) in ret.iter().enumerate() {
        let want = if i % 3 == 1 || i % 5 == 0 { 0 } else { 5 };
        assert_eq!(*r, want, "ret[{i}]");
    }
}

#[test]
fn full_buffer_and_missing_buffer_return_minus_one() {
    let src = r#"
kernel void k(global int *ret) {
  int i = get_global_id(0);
  ret[i] = printf("%d\n", i);
}
"#;
    let p = build_w(src, 8);
    let k = kernel(&p, "k");
    let size = k.printf().sites[0].record_size as usize;
    assert_eq!(size, 8);
    // Room for two sub-groups and a half: the third sub-group's claim fails whole.
    let (data, buffer) = printf_buffer(size * 20);
    let n = 32;
    let mut ret = vec![9i32; n];
    run_with_printf(k, &[n], &[32], &[buf(&mut ret)], Some(&buffer));
    let want: Vec<i32> = (0..n).map(|i| if i < 16 { 0 } else { -1 }).collect();
    assert_eq!(ret, want);
    let records = printf_records(k, &data, &buffer);
    assert_eq!(records.len(), 16);
    assert_eq!(
        buffer.limit.load(std::sync::atomic::Ordering::Relaxed),
        16 * 8
    );

    let mut ret = vec![9i32; n];
    run_with_printf(k, &[n], &[32], &[buf(&mut ret)], None);
    assert_eq!(ret, vec![-1; n]);
}

#[test]
fn vectors_strings_and_pointers() {
    let src = r#"
kernel void k(global int *p, int c) {
  int i = get_global_id(0);
  float4 f = (float4)(1.0f, 2.0f, 3.0f, 4.0f) * i;
  uchar2 u = (uchar2)(0xFA, i);
  printf("%s %v4hlf %#v2hhx %p %s %c\n", "lit", f, u, p, c ? "yes" : "no", 'x');
}
"#;
    let p = build_w(src, 4);
    let k = kernel(&p, "k");
    let site = &k.printf().sites[0];
    assert!(site.pieces.iter().any(|piece| matches!(
        piece,
        SitePiece::Str { text, .. } if text == b"lit"
    )));
    let s = slots(k, 0);
    assert_eq!(s.len(), 5, "{:?}", site.pieces);
    assert_eq!((s[0].kind, s[0].count), (ScalarKind::Float { bytes: 4 }, 4));
    assert_eq!((s[1].kind, s[1].count), (ScalarKind::Int { bytes: 1 }, 2));
    assert_eq!(s[2].kind, ScalarKind::Int { bytes: 8 });
    assert!(matches!(
        site.pieces
            .iter()
            .filter(|p| matches!(p, SitePiece::StrPointer { .. }))
            .count(),
        1
    ));
    let (data, buffer) = printf_buffer(1 << 12);
    let mut target = vec![0i32; 4];
    let addr = target.as_ptr() as u64;
    run_with_printf(k, &[4], &[4], &[buf(&mut target), val(1i32)], Some(&buffer));
    let records = printf_records(k, &data, &buffer);
    assert_eq!(records.len(), 4);
    for (i, (_, r)) in records.iter().enumerate() {
        let f: Vec<f32> = (0..4)
            .map(|c| f32::from_le_bytes(r[s[0].offset as usize + 4 * c..][..4].try_into().unwrap()))
            .collect();
        assert_eq!(f, [1.0, 2.0, 3.0, 4.0].map(|x| x * i as f32));
        assert_eq!(&r[s[1].offset as usize..][..2], &[0xFA, i as u8]);
        assert_eq!(
            u64::from_le_bytes(r[s[2].offset as usize..][..8].try_into().unwrap()),
            addr
        );
        let str_ptr = u64::from_le_bytes(r[s[3].offset as usize..][..8].try_into().unwrap());
        assert_eq!(k.printf().string_at(str_ptr), Some(&b"yes"[..]));
        assert_eq!(u32_at(r, s[4].offset as usize), u32::from(b'x'));
    }
}

#[test]
fn a_site_is_parsed_once_per_call() {
    let src = r#"
kernel void k(int n) {
  for (int j = 0; j < n; j++) printf("j=%d\n", j);
  printf("done\n");
}
"#;
    let p = build_w(src, 8);
    let k = kernel(&p, "k");
    assert_eq!(k.printf().sites.len(), 2);
    let (data, buffer) = printf_buffer(1 << 12);
    run_with_printf(k, &[2], &[2], &[val(3i32)], Some(&buffer));
    let sites: Vec<u32> = printf_records(k, &data, &buffer)
        .iter()
        .map(|(s, _)| *s)
        .collect();
    let j = sites[0];
    assert_eq!(sites, vec![j, j, j, j, j, j, 1 - j, 1 - j]);
}

#[test]
fn divergent_loops_and_barriers() {
    let src = r#"
kernel void k(local int *tmp) {
  int i = get_local_id(0);
  for (int j = 0; j < i % 4; j++) printf("%d:%d\n", i, j);
  tmp[i] = i * 10;
  barrier(CLK_LOCAL_MEM_FENCE);
  printf("after %d\n", tmp[(i + 1) % get_local_size(0)]);
}
"#;
    let p = build_w(src, 8);
    let k = kernel(&p, "k");
    let loop_site = (0..2).find(|s| slots(k, *s).len() == 2).unwrap();
    let (data, buffer) = printf_buffer(1 << 14);
    let n = 16;
    run_with_printf(k, &[n], &[n], &[Arg::Local(4 * n)], Some(&buffer));
    let records = printf_records(k, &data, &buffer);
    let values = |site: u32, r: &[u8]| -> Vec<u32> {
        slots(k, site as usize)
            .iter()
            .map(|s| u32_at(r, s.offset as usize))
            .collect()
    };
    let mut looped: Vec<Vec<u32>> = Vec::new();
    let mut after: Vec<u32> = Vec::new();
    for (site, r) in &records {
        if *site as usize == loop_site {
            looped.push(values(*site, r));
        } else {
            after.push(values(*site, r)[0]);
        }
    }
    // Iteration j of each sub-group runs for the lanes still in the loop, in lane
    // order; the barrier splits the kernel, the second call sees every lane's store.
    let mut want = Vec::new();
    for sg in 0..2u32 {
        for j in 0..3 {
            for i in sg * 8..sg * 8 + 8 {
                if j < i % 4 {
                    want.push(vec![i, j]);
                }
            }
        }
    }
    assert_eq!(looped, want);
    let want_after: Vec<u32> = (0..n as u32).map(|i| (i + 1) % n as u32 * 10).collect();
    assert_eq!(after, want_after);
}

#[test]
fn formats_opencl_c_refuses_fail_the_build() {
    for (body, why) in [
        (r#"printf("%v4hld\n", (int2)(1, 2));"#, "4-component vector"),
        (r#"printf("%d %d\n", 1);"#, "has no argument"),
        (r#"printf("%n\n", 1);"#, "'n' conversion"),
        (r#"printf("%5.3Lf\n", 1.0);"#, "'L' length modifier"),
    ] {
        let src = format!("kernel void k() {{ {body} }}");
        let words = spirv(&src);
        let err = match cranecl_jit::compile(&words, &Default::default()) {
            Ok(_) => panic!("{body}: built"),
            Err(e) => e,
        };
        assert!(
            err.message.contains(why) && err.message.contains("kernel k"),
            "{body}: {}",
            err.message
        );
    }
}
