//! Device partitioning (`clCreateSubDevices`): the partition schemes, their error
//! codes, the queries of root and sub-devices, nested partitioning and reference
//! counting. Tests that need several compute units re-run in a child with
//! `CRANECL_NUM_THREADS=4` (cranecl then has 4 compute units on any machine); on
//! another platform they use what it reports and skip if it cannot be partitioned.
//! Error codes the specification leaves open are asserted for cranecl only.

use std::ptr;

use cranecl_conformance::sys::*;
use cranecl_conformance::*;

const EQ: isize = CL_DEVICE_PARTITION_EQUALLY as isize;
const COUNTS: isize = CL_DEVICE_PARTITION_BY_COUNTS as isize;
const AFFINITY: isize = CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN as isize;
const END: isize = CL_DEVICE_PARTITION_BY_COUNTS_LIST_END as isize;
/// `CL_DEVICE_AFFINITY_DOMAIN_{NUMA, L4, L3, L2, L1}_CACHE`.
const DOMAINS: [u64; 5] = [1, 2, 4, 8, 16];
const NEXT_PARTITIONABLE: u64 = 32;

/// The number of sub-devices `props` yields (`clCreateSubDevices` with no output).
fn count(device: cl_device_id, props: &[isize]) -> Result<u32, cl_int> {
    let mut n = u32::MAX;
    // SAFETY: `props` is a terminated property list; no devices are written.
    let code = unsafe { clCreateSubDevices(device, props.as_ptr(), 0, ptr::null_mut(), &mut n) };
    if code == CL_SUCCESS {
        Ok(n)
    } else {
        assert_eq!(
            n,
            u32::MAX,
            "num_devices_ret written although the call failed"
        );
        Err(code)
    }
}

/// Partitions `device` with `props`, checking the count query agrees.
fn partition(device: cl_device_id, props: &[isize]) -> Result<Vec<SubDevice>, cl_int> {
    let n = count(device, props)?;
    let mut out = vec![ptr::null_mut(); n as usize + 1];
    let mut m = 0u32;
    // SAFETY: `out` has room for n + 1 handles.
    let code =
        unsafe { clCreateSubDevices(device, props.as_ptr(), n + 1, out.as_mut_ptr(), &mut m) };
    check(code, format!("clCreateSubDevices({props:?})")).map_err(|e| e.code)?;
    assert_eq!(m, n, "count and creation disagree for {props:?}");
    assert!(
        out[n as usize].is_null(),
        "more handles written than reported"
    );
    // SAFETY: every handle was just created for us.
    Ok(out[..n as usize]
        .iter()
        .map(|d| unsafe { SubDevice::from_raw(*d) })
        .collect())
}

fn properties(device: cl_device_id) -> Vec<isize> {
    from_bytes(&device_info_bytes(device, CL_DEVICE_PARTITION_PROPERTIES).expect("properties"))
}

fn partition_type(device: cl_device_id) -> Vec<isize> {
    from_bytes(&device_info_bytes(device, CL_DEVICE_PARTITION_TYPE).expect("partition type"))
}

fn units(device: cl_device_id) -> u32 {
    device_info::<u32>(device, CL_DEVICE_MAX_COMPUTE_UNITS).expect("compute units")
}

fn parent(device: cl_device_id) -> cl_device_id {
    device_info::<usize>(device, CL_DEVICE_PARENT_DEVICE).expect("parent") as cl_device_id
}

fn refs(device: cl_device_id) -> u32 {
    device_info::<u32>(device, CL_DEVICE_REFERENCE_COUNT).expect("reference count")
}

/// The root device if it offers `EQUALLY` and `BY_COUNTS` (cranecl does with its
/// four compute units in [`with_four_units`]), else `None` after a note.
fn partitionable_root() -> Option<cl_device_id> {
    let root = first_device(find_platform());
    let offered = properties(root);
    let ok = offered.contains(&EQ) && offered.contains(&COUNTS);
    require(ok, "CL_DEVICE_PARTITION_EQUALLY and BY_COUNTS").then_some(root)
}

/// Runs `body` in a child with four cranecl compute units (directly on other
/// platforms).
fn with_four_units(name: &str, body: impl FnOnce()) {
    if testing_cranecl() && !is_child() {
        run_in_child(name, &[("CRANECL_NUM_THREADS", "4")]);
        return;
    }
    body();
    println!("CHILD-OK");
}

#[test]
fn root_device_queries() {
    let root = first_device(find_platform());
    assert!(parent(root).is_null(), "the root device has no parent");
    let ty = partition_type(root);
    assert!(
        ty.is_empty() || ty == [0],
        "root CL_DEVICE_PARTITION_TYPE {ty:?}"
    );
    let n = units(root);
    let max = device_info::<u32>(root, CL_DEVICE_PARTITION_MAX_SUB_DEVICES).expect("max");
    let offered = properties(root);
    let domains = device_info::<u64>(root, CL_DEVICE_PARTITION_AFFINITY_DOMAIN).expect("domains");
    assert_eq!(
        domains & !63,
        0,
        "unknown affinity domain bits {domains:#x}"
    );
    assert!(
        max <= n,
        "more sub-devices ({max}) than compute units ({n})"
    );
    if offered == [0] {
        assert_eq!(
            domains, 0,
            "no partitioning, yet affinity domains {domains:#x}"
        );
    }
    if testing_cranecl() {
        assert_eq!(max, if n >= 2 { n } else { 0 });
        assert_eq!(
            offered.contains(&AFFINITY),
            domains != 0,
            "BY_AFFINITY_DOMAIN offered iff some domain is: {offered:?}, {domains:#x}"
        );
        if n >= 2 {
            assert_eq!(&offered[..2], &[EQ, COUNTS]);
        }
        // Retain and release are no-ops on the root device.
        // SAFETY: a valid device handle.
        unsafe {
            assert_eq!(clRetainDevice(root), CL_SUCCESS);
            assert_eq!(clReleaseDevice(root), CL_SUCCESS);
            assert_eq!(clReleaseDevice(root), CL_SUCCESS);
        }
        assert_eq!(refs(root), 1);
        assert_eq!(units(root) as usize, n as usize);
    }
}

#[test]
fn equally_and_by_counts() {
    with_four_units("equally_and_by_counts", || {
        let Some(root) = partitionable_root() else {
            return;
        };
        let n = units(root);
        if testing_cranecl() {
            assert_eq!(n, 4, "CRANECL_NUM_THREADS=4 gives four compute units");
        }
        // EQUALLY 1: one sub-device per unit, each a child of the root.
        let ones = partition(root, &[EQ, 1, 0]).expect("EQUALLY 1");
        assert_eq!(ones.len(), n as usize);
        for d in &ones {
            assert_eq!(units(d.raw()), 1);
            assert_eq!(parent(d.raw()), root);
            assert_eq!(partition_type(d.raw()), [EQ, 1, 0]);
            assert_eq!(refs(d.raw()), 1);
            assert_eq!(
                device_info::<u32>(d.raw(), CL_DEVICE_PARTITION_MAX_SUB_DEVICES).expect("max"),
                0
            );
            assert_eq!(count(d.raw(), &[EQ, 1, 0]), Err(CL_DEVICE_PARTITION_FAILED));
            if testing_cranecl() {
                assert_eq!(
                    properties(d.raw()),
                    [0],
                    "a one-unit device cannot be split"
                );
            }
        }
        assert_ne!(ones[0].raw(), ones[1].raw());
        // BY_COUNTS {1, n-1} and {n}.
        let two = partition(root, &[COUNTS, 1, n as isize - 1, END, 0]).expect("BY_COUNTS");
        assert_eq!(two.len(), 2);
        assert_eq!((units(two[0].raw()), units(two[1].raw())), (1, n - 1));
        let ty = partition_type(two[1].raw());
        assert_eq!(&ty[..3], &[COUNTS, 1, n as isize - 1], "{ty:?}");
        if testing_cranecl() {
            assert_eq!(ty, [COUNTS, 1, n as isize - 1, END, 0], "the list as given");
        }
        let all = partition(root, &[COUNTS, n as isize, END, 0]).expect("BY_COUNTS {n}");
        assert_eq!(all.len(), 1);
        assert_eq!(units(all[0].raw()), n);
        if n >= 4 {
            // Nested: EQUALLY 2, then each half EQUALLY 1.
            let halves = partition(root, &[EQ, 2, 0]).expect("EQUALLY 2");
            assert_eq!(halves.len(), n as usize / 2);
            let quarter = partition(halves[1].raw(), &[EQ, 1, 0]).expect("nested EQUALLY 1");
            assert_eq!(quarter.len(), 2);
            assert_eq!(parent(quarter[0].raw()), halves[1].raw());
            assert_eq!(parent(halves[1].raw()), root);
            assert_eq!(units(quarter[1].raw()), 1);
            let nested = partition(halves[0].raw(), &[COUNTS, 1, 1, END, 0]).expect("nested");
            assert_eq!(nested.len(), 2);
        }
    });
}

#[test]
fn partition_error_codes() {
    with_four_units("partition_error_codes", || {
        let Some(root) = partitionable_root() else {
            return;
        };
        let n = units(root) as isize;
        let mut cases: Vec<(Vec<isize>, cl_int)> = vec![
            // The CTS's expectations (api negative_create_sub_devices).
            (vec![EQ, n, 0], CL_DEVICE_PARTITION_FAILED),
            (vec![EQ, n + 1, 0], CL_INVALID_DEVICE_PARTITION_COUNT),
            (
                vec![COUNTS, n + 1, END, 0],
                CL_INVALID_DEVICE_PARTITION_COUNT,
            ),
            (vec![COUNTS, -1, END, 0], CL_INVALID_DEVICE_PARTITION_COUNT),
            (vec![-1, 1, 0], CL_INVALID_VALUE),
            (vec![0x1234, 1, 0], CL_INVALID_VALUE),
            (vec![0], CL_INVALID_VALUE),
            (vec![EQ, 1, EQ, 1, 0], CL_INVALID_VALUE),
            (vec![EQ, 1, 5, 0], CL_INVALID_VALUE),
        ];
        let mut too_many = vec![COUNTS];
        too_many.extend(std::iter::repeat_n(1, n as usize + 1));
        too_many.extend([END, 0]);
        cases.push((too_many, CL_INVALID_DEVICE_PARTITION_COUNT));
        if testing_cranecl() {
            cases.extend([
                (vec![EQ, 0, 0], CL_INVALID_VALUE),
                (vec![EQ, -1, 0], CL_INVALID_DEVICE_PARTITION_COUNT),
                (vec![COUNTS, END, 0], CL_INVALID_DEVICE_PARTITION_COUNT),
                (
                    vec![COUNTS, n, 1, END, 0],
                    CL_INVALID_DEVICE_PARTITION_COUNT,
                ),
                (vec![AFFINITY, 3, 0], CL_INVALID_VALUE),
                (vec![AFFINITY, 0, 0], CL_INVALID_VALUE),
            ]);
        }
        for (props, expected) in &cases {
            assert_eq!(count(root, props), Err(*expected), "{props:?}");
        }
        let mut out = [ptr::null_mut(); 8];
        let mut m = 0u32;
        // SAFETY (all calls below): valid or deliberately invalid handles and lists.
        unsafe {
            assert_eq!(
                clCreateSubDevices(root, ptr::null(), 8, out.as_mut_ptr(), &mut m),
                CL_INVALID_VALUE,
                "NULL properties"
            );
            assert_eq!(
                clCreateSubDevices(root, [EQ, 1, 0].as_ptr(), 0, out.as_mut_ptr(), &mut m),
                CL_INVALID_VALUE,
                "out_devices with num_devices 0"
            );
            if testing_cranecl() {
                assert_eq!(
                    clCreateSubDevices(root, [EQ, 1, 0].as_ptr(), 1, out.as_mut_ptr(), &mut m),
                    CL_INVALID_VALUE,
                    "room for 1 of {n} sub-devices"
                );
            }
            assert!(
                out.iter().all(|d| d.is_null()),
                "no handle written by a failed call"
            );
            assert_eq!(
                clCreateSubDevices(
                    ptr::null_mut(),
                    [EQ, 1, 0].as_ptr(),
                    8,
                    out.as_mut_ptr(),
                    &mut m
                ),
                CL_INVALID_DEVICE
            );
        }
        // An affinity domain the device does not offer.
        let offered =
            device_info::<u64>(root, CL_DEVICE_PARTITION_AFFINITY_DOMAIN).expect("domains");
        for d in DOMAINS.iter().filter(|d| offered & **d == 0) {
            let r = count(root, &[AFFINITY, *d as isize, 0]);
            if testing_cranecl() {
                assert_eq!(r, Err(CL_INVALID_VALUE), "domain {d:#x} not offered");
            } else {
                assert!(r.is_err() || r == Ok(1), "domain {d:#x}: {r:?}");
            }
        }
    });
}

#[test]
fn by_affinity_domain() {
    with_four_units("by_affinity_domain", || {
        let root = first_device(find_platform());
        let n = units(root);
        let offered =
            device_info::<u64>(root, CL_DEVICE_PARTITION_AFFINITY_DOMAIN).expect("domains");
        if offered == 0 {
            assert!(!properties(root).contains(&AFFINITY));
            eprintln!("note: the host offers no affinity domain to split along");
            return;
        }
        assert!(properties(root).contains(&AFFINITY));
        assert_ne!(offered & NEXT_PARTITIONABLE, 0, "{offered:#x}");
        for d in DOMAINS.iter().filter(|d| offered & **d != 0) {
            let subs = partition(root, &[AFFINITY, *d as isize, 0]).expect("offered domain");
            assert!(
                subs.len() >= 2,
                "domain {d:#x} gave {} sub-devices",
                subs.len()
            );
            let total: u32 = subs.iter().map(|s| units(s.raw())).sum();
            assert_eq!(
                total, n,
                "domain {d:#x}: every unit in exactly one sub-device"
            );
            for s in &subs {
                assert_eq!(partition_type(s.raw()), [AFFINITY, *d as isize, 0]);
                assert_eq!(parent(s.raw()), root);
            }
        }
        let next = partition(root, &[AFFINITY, NEXT_PARTITIONABLE as isize, 0]).expect("next");
        let ty = partition_type(next[0].raw());
        let first = DOMAINS
            .iter()
            .find(|d| offered & **d != 0)
            .expect("a domain");
        assert_eq!(ty[0], AFFINITY);
        assert_eq!(
            ty[1], *first as isize,
            "NEXT_PARTITIONABLE reports the domain it used"
        );
    });
}

#[test]
fn sub_device_reference_counting() {
    with_four_units("sub_device_reference_counting", || {
        let Some(root) = partitionable_root() else {
            return;
        };
        let subs = partition(root, &[EQ, 1, 0]).expect("EQUALLY 1");
        let d = subs[0].raw();
        assert_eq!(refs(d), 1);
        let extra = subs[0].clone();
        assert_eq!(refs(d), 2);
        drop(extra);
        assert_eq!(refs(d), 1);
        // A context keeps its sub-device alive without an API reference.
        let mut err = 0;
        // SAFETY: one valid device, no callback.
        let ctx = unsafe { clCreateContext(ptr::null(), 1, &d, None, ptr::null_mut(), &mut err) };
        check(err, "clCreateContext(sub-device)").expect("context");
        // SAFETY: created above; we own the reference.
        let ctx = unsafe { Context::from_raw(ctx) };
        assert_eq!(refs(d), 1, "contexts hold no API reference");
        // SAFETY: valid context and device.
        let q = unsafe { clCreateCommandQueue(ctx.raw(), d, 0, &mut err) };
        check(err, "clCreateCommandQueue(sub-device)").expect("queue");
        // SAFETY: created above; we own the reference.
        let q = unsafe { Queue::from_raw(q) };
        let mut subs = subs;
        drop(subs.remove(0));
        if testing_cranecl() {
            // The handle is gone (the application released it), the device lives on
            // in the context and queue.
            assert_eq!(
                // SAFETY: a released handle is rejected without being dereferenced
                // beyond its header, which the context keeps alive.
                unsafe { clRetainDevice(d) },
                CL_INVALID_DEVICE
            );
        }
        let mut dev_of_queue: cl_device_id = ptr::null_mut();
        // SAFETY: valid queue; a device handle fits the output.
        let code = unsafe {
            clGetCommandQueueInfo(
                q.raw(),
                CL_QUEUE_DEVICE,
                std::mem::size_of::<cl_device_id>(),
                (&mut dev_of_queue as *mut cl_device_id).cast(),
                ptr::null_mut(),
            )
        };
        check(code, "clGetCommandQueueInfo(CL_QUEUE_DEVICE)").expect("queue device");
        assert_eq!(dev_of_queue, d);
        // SAFETY: valid queue.
        check(unsafe { clFinish(q.raw()) }, "clFinish").expect("finish");
    });
}

#[test]
fn device_uuids() {
    with_four_units("device_uuids", || {
        let root = first_device(find_platform());
        let has = device_info_string(root, CL_DEVICE_EXTENSIONS)
            .expect("extensions")
            .split_whitespace()
            .any(|e| e == "cl_khr_device_uuid");
        if !require(has, "cl_khr_device_uuid") {
            return;
        }
        const DEVICE_UUID: cl_uint = 0x106A;
        const DRIVER_UUID: cl_uint = 0x106B;
        const LUID_VALID: cl_uint = 0x106C;
        let uuid = |d| device_info::<[u8; 16]>(d, DEVICE_UUID).expect("CL_DEVICE_UUID_KHR");
        let driver = |d| device_info::<[u8; 16]>(d, DRIVER_UUID).expect("CL_DRIVER_UUID_KHR");
        assert_eq!(uuid(root), uuid(root), "stable across queries");
        assert_ne!(uuid(root), [0; 16]);
        assert_ne!(driver(root), [0; 16]);
        let valid = device_info::<u32>(root, LUID_VALID).expect("CL_DEVICE_LUID_VALID_KHR");
        assert!(valid <= 1, "a cl_bool: {valid}");
        let Some(root) = partitionable_root() else {
            return;
        };
        let subs = partition(root, &[EQ, 1, 0]).expect("EQUALLY 1");
        assert_eq!(driver(subs[0].raw()), driver(root), "one driver");
        if testing_cranecl() {
            assert_ne!(uuid(subs[0].raw()), uuid(subs[1].raw()));
            assert_ne!(uuid(subs[0].raw()), uuid(root));
            let again = partition(root, &[EQ, 1, 0]).expect("EQUALLY 1 again");
            assert_eq!(
                uuid(again[1].raw()),
                uuid(subs[1].raw()),
                "same units, same device"
            );
        }
    });
}
