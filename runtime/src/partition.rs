//! Device partitioning (`clCreateSubDevices`): which schemes a device offers, how a
//! property list splits its compute units, and the sub-devices that result.
//!
//! A device with at least two compute units can be split `CL_DEVICE_PARTITION_EQUALLY`,
//! `CL_DEVICE_PARTITION_BY_COUNTS` and, along the affinity domains of
//! [`crate::topology`] that split it into at least two parts,
//! `CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN`. Sub-devices share everything with their
//! parent except the compute units (a launch on a sub-device runs on at most as many
//! threads as it has units) and can be partitioned again. Error codes follow the
//! OpenCL 3.0 specification and, where it is silent, Intel's CPU runtime and PoCL:
//! - `CL_INVALID_VALUE`: malformed list, unknown or unoffered scheme or domain,
//!   `EQUALLY` with 0 units per sub-device;
//! - `CL_DEVICE_PARTITION_FAILED`: a device of one compute unit, or `EQUALLY` that
//!   would leave a single sub-device (the CTS asks for this);
//! - `CL_INVALID_DEVICE_PARTITION_COUNT`: a negative count, more compute units than
//!   the device has, an empty count list or more sub-devices than
//!   `CL_DEVICE_PARTITION_MAX_SUB_DEVICES`.

use std::sync::Arc;

use opencl_sys::*;

use crate::platform::Device;
use crate::topology::{Topology, DOMAINS};
use crate::CLResult;

/// A partition request, parsed from a property list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// `CL_DEVICE_PARTITION_EQUALLY`: as many sub-devices of `n` units as fit.
    Equally(isize),
    /// `CL_DEVICE_PARTITION_BY_COUNTS`: one sub-device per count.
    ByCounts(Vec<isize>),
    /// `CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN` with one domain bit (or
    /// `NEXT_PARTITIONABLE`).
    ByAffinityDomain(cl_device_affinity_domain),
}

/// Largest count list read from an application (far beyond any real device).
pub const MAX_COUNTS: usize = 4096;

impl Scheme {
    /// Parses a property list, terminators included (`{EQUALLY, n, 0}`,
    /// `{BY_COUNTS, a, b, ..., LIST_END, 0}`, `{BY_AFFINITY_DOMAIN, d, 0}`):
    /// `CL_INVALID_VALUE` unless it holds exactly one known scheme.
    pub fn parse(list: &[cl_device_partition_property]) -> CLResult<Scheme> {
        let (scheme, rest) = match list {
            [CL_DEVICE_PARTITION_EQUALLY, n, rest @ ..] => (Scheme::Equally(*n), rest),
            [CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN, d, rest @ ..] => {
                let domain = *d as cl_device_affinity_domain;
                let known = DOMAINS.contains(&domain)
                    || domain == CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE;
                if *d < 0 || !known {
                    return Err(CL_INVALID_VALUE);
                }
                (Scheme::ByAffinityDomain(domain), rest)
            }
            [CL_DEVICE_PARTITION_BY_COUNTS, rest @ ..] => {
                let end = rest
                    .iter()
                    .position(|c| *c == CL_DEVICE_PARTITION_BY_COUNTS_LIST_END)
                    .ok_or(CL_INVALID_VALUE)?;
                if end > MAX_COUNTS {
                    return Err(CL_INVALID_VALUE);
                }
                (Scheme::ByCounts(rest[..end].to_vec()), &rest[end + 1..])
            }
            _ => return Err(CL_INVALID_VALUE),
        };
        // Exactly one scheme, then the list's terminator.
        match rest {
            [0, ..] => Ok(scheme),
            _ => Err(CL_INVALID_VALUE),
        }
    }
}

/// `CL_DEVICE_PARTITION_MAX_SUB_DEVICES`: one sub-device per compute unit, 0 for a
/// device that cannot be split.
pub fn max_sub_devices(device: &Device) -> u32 {
    if device.units.len() >= 2 {
        device.compute_units
    } else {
        0
    }
}

/// `CL_DEVICE_PARTITION_AFFINITY_DOMAIN`: the domains along which `device` splits
/// into at least two sub-devices, plus `NEXT_PARTITIONABLE` if there is one.
pub fn affinity_domains(device: &Device) -> cl_device_affinity_domain {
    let topology = Topology::host();
    let found = DOMAINS
        .iter()
        .filter(|d| splits(topology, **d, &device.units))
        .fold(0, |acc, d| acc | d);
    if found == 0 {
        0
    } else {
        found | CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE
    }
}

fn splits(topology: &Topology, domain: cl_device_affinity_domain, units: &[u32]) -> bool {
    topology
        .group(domain, units)
        .is_some_and(|groups| groups.len() >= 2)
}

/// `CL_DEVICE_PARTITION_PROPERTIES`: the schemes `device` offers, or `[0]` if it
/// cannot be partitioned.
pub fn properties(device: &Device) -> Vec<cl_device_partition_property> {
    if max_sub_devices(device) == 0 {
        return vec![0];
    }
    let mut list = vec![CL_DEVICE_PARTITION_EQUALLY, CL_DEVICE_PARTITION_BY_COUNTS];
    if affinity_domains(device) != 0 {
        list.push(CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN);
    }
    list
}

/// How `scheme` splits `device`: the compute units of each sub-device, and the
/// affinity domain used (`NEXT_PARTITIONABLE` resolved), if any.
pub fn plan(
    device: &Device,
    scheme: &Scheme,
) -> CLResult<(Vec<Vec<u32>>, Option<cl_device_affinity_domain>)> {
    let units = &device.units;
    let n = units.len();
    if let Scheme::ByAffinityDomain(domain) = scheme {
        let offered = affinity_domains(device);
        if offered & domain == 0 {
            // Not offered by this device: either it has one compute unit, or no such
            // cache/node boundary runs through its units.
            return Err(if n < 2 {
                CL_DEVICE_PARTITION_FAILED
            } else {
                CL_INVALID_VALUE
            });
        }
        let used = if *domain == CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE {
            *DOMAINS
                .iter()
                .find(|d| offered & **d != 0)
                .ok_or(CL_DEVICE_PARTITION_FAILED)?
        } else {
            *domain
        };
        let groups = Topology::host()
            .group(used, units)
            .filter(|g| g.len() >= 2)
            .ok_or(CL_DEVICE_PARTITION_FAILED)?;
        return Ok((groups, Some(used)));
    }
    let groups = match scheme {
        Scheme::Equally(per) => {
            if *per < 0 {
                return Err(CL_INVALID_DEVICE_PARTITION_COUNT);
            }
            if *per == 0 {
                return Err(CL_INVALID_VALUE);
            }
            if n < 2 {
                return Err(CL_DEVICE_PARTITION_FAILED);
            }
            let per = *per as usize;
            if per > n {
                return Err(CL_INVALID_DEVICE_PARTITION_COUNT);
            }
            if n / per < 2 {
                return Err(CL_DEVICE_PARTITION_FAILED);
            }
            units.chunks_exact(per).map(<[u32]>::to_vec).collect()
        }
        Scheme::ByCounts(counts) => {
            if counts.iter().any(|c| *c < 0) {
                return Err(CL_INVALID_DEVICE_PARTITION_COUNT);
            }
            if n < 2 {
                return Err(CL_DEVICE_PARTITION_FAILED);
            }
            let total = counts
                .iter()
                .try_fold(0usize, |acc, c| acc.checked_add(*c as usize));
            if counts.is_empty()
                || counts.len() > max_sub_devices(device) as usize
                || total.is_none_or(|t| t > n)
            {
                return Err(CL_INVALID_DEVICE_PARTITION_COUNT);
            }
            let mut next = 0usize;
            counts
                .iter()
                .map(|c| {
                    let group = units[next..next + *c as usize].to_vec();
                    next += *c as usize;
                    group
                })
                .collect()
        }
        Scheme::ByAffinityDomain(_) => unreachable!("handled above"),
    };
    Ok((groups, None))
}

/// A checked partition request: the compute units of each sub-device and the
/// `CL_DEVICE_PARTITION_TYPE` they will report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    groups: Vec<Vec<u32>>,
    partition_type: Vec<cl_device_partition_property>,
}

impl Partition {
    /// Checks `properties` (as the C layer read them, terminators included) against
    /// `device`; the error is the code `clCreateSubDevices` returns.
    pub fn new(
        device: &Device,
        properties: &[cl_device_partition_property],
    ) -> CLResult<Partition> {
        let scheme = Scheme::parse(properties)?;
        let (groups, domain) = plan(device, &scheme)?;
        let len = match &scheme {
            Scheme::ByCounts(counts) => counts.len() + 3,
            _ => 3,
        };
        let mut partition_type = properties[..len].to_vec();
        if let Some(used) = domain {
            // NEXT_PARTITIONABLE reports the domain it used.
            partition_type[1] = used as cl_device_partition_property;
        }
        Ok(Partition {
            groups,
            partition_type,
        })
    }

    /// Number of sub-devices.
    pub fn len(&self) -> usize {
        self.groups.len()
    }

    /// Whether there are none (never, for a checked partition).
    pub fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Creates the sub-devices of `device`, each with one application reference.
    pub fn create(&self, device: &Arc<Device>) -> Vec<Arc<Device>> {
        self.groups
            .iter()
            .map(|units| Device::sub_device(device, units.clone(), self.partition_type.clone()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EQ: isize = CL_DEVICE_PARTITION_EQUALLY;
    const COUNTS: isize = CL_DEVICE_PARTITION_BY_COUNTS;
    const AFF: isize = CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN;

    #[test]
    fn parsing() {
        assert_eq!(Scheme::parse(&[EQ, 2, 0]), Ok(Scheme::Equally(2)));
        assert_eq!(
            Scheme::parse(&[COUNTS, 3, 1, 0, 0]),
            Ok(Scheme::ByCounts(vec![3, 1]))
        );
        assert_eq!(Scheme::parse(&[COUNTS, 0, 0]), Ok(Scheme::ByCounts(vec![])));
        assert_eq!(
            Scheme::parse(&[AFF, CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE as isize, 0]),
            Ok(Scheme::ByAffinityDomain(CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE))
        );
        for bad in [
            &[0][..],
            &[EQ, 1, EQ, 1, 0],
            &[EQ, 1, 5, 0],
            &[0x1234, 1, 0],
            &[AFF, 0, 0],
            &[AFF, 3, 0],
            &[AFF, -1, 0],
            &[COUNTS, 1, 1],
            &[COUNTS, 1, 0, 7, 0],
            &[EQ],
        ] {
            assert_eq!(Scheme::parse(bad), Err(CL_INVALID_VALUE), "{bad:?}");
        }
    }

    fn device_with(units: u32) -> Arc<Device> {
        let root = crate::platform::Platform::get().device();
        Device::sub_device(root, (0..units).collect(), vec![EQ, 1, 0])
    }

    #[test]
    fn equally() {
        let d = device_with(5);
        let (g, _) = plan(&d, &Scheme::Equally(2)).expect("plan");
        assert_eq!(
            g,
            vec![vec![0, 1], vec![2, 3]],
            "the fifth unit stays unused"
        );
        assert_eq!(plan(&d, &Scheme::Equally(1)).expect("plan").0.len(), 5);
        assert_eq!(
            plan(&d, &Scheme::Equally(3)),
            Err(CL_DEVICE_PARTITION_FAILED)
        );
        assert_eq!(
            plan(&d, &Scheme::Equally(5)),
            Err(CL_DEVICE_PARTITION_FAILED)
        );
        assert_eq!(
            plan(&d, &Scheme::Equally(6)),
            Err(CL_INVALID_DEVICE_PARTITION_COUNT)
        );
        assert_eq!(
            plan(&d, &Scheme::Equally(-1)),
            Err(CL_INVALID_DEVICE_PARTITION_COUNT)
        );
        assert_eq!(plan(&d, &Scheme::Equally(0)), Err(CL_INVALID_VALUE));
        let one = device_with(1);
        assert_eq!(
            plan(&one, &Scheme::Equally(1)),
            Err(CL_DEVICE_PARTITION_FAILED)
        );
        assert_eq!(properties(&one), vec![0]);
        assert_eq!(max_sub_devices(&one), 0);
        assert_eq!(max_sub_devices(&d), 5);
    }

    #[test]
    fn by_counts() {
        let d = device_with(4);
        let (g, _) = plan(&d, &Scheme::ByCounts(vec![1, 3])).expect("plan");
        assert_eq!(g, vec![vec![0], vec![1, 2, 3]]);
        let (g, _) = plan(&d, &Scheme::ByCounts(vec![4])).expect("one sub-device of all");
        assert_eq!(g, vec![vec![0, 1, 2, 3]]);
        for bad in [vec![], vec![5], vec![2, 3], vec![-1], vec![1, 1, 1, 1, 1]] {
            assert_eq!(
                plan(&d, &Scheme::ByCounts(bad.clone())),
                Err(CL_INVALID_DEVICE_PARTITION_COUNT),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn sub_devices_record_their_type_and_parent() {
        let d = device_with(4);
        let subs = Partition::new(&d, &[COUNTS, 1, 2, 0, 0])
            .expect("checked")
            .create(&d);
        assert_eq!(subs.len(), 2);
        assert_eq!(subs[1].units, vec![1, 2]);
        assert_eq!(subs[1].compute_units, 2);
        assert_eq!(subs[0].partition_type, vec![COUNTS, 1, 2, 0, 0]);
        assert!(subs[0].is_within(&d) && !d.is_within(&subs[0]));
        let nested = Partition::new(&subs[1], &[EQ, 1, 0])
            .expect("nested")
            .create(&subs[1]);
        assert_eq!(nested.len(), 2);
        assert_eq!(nested[1].units, vec![2]);
        assert!(nested[0].is_within(crate::platform::Platform::get().device()));
    }

    #[test]
    fn affinity_domains_offered_split_the_device() {
        let root = crate::platform::Platform::get().device();
        let offered = affinity_domains(root);
        for domain in DOMAINS {
            let r = plan(root, &Scheme::ByAffinityDomain(domain));
            if offered & domain != 0 {
                let (groups, used) = r.expect("an offered domain partitions");
                assert!(groups.len() >= 2);
                assert_eq!(used, Some(domain));
                let mut all: Vec<u32> = groups.concat();
                all.sort_unstable();
                assert_eq!(all, root.units, "every unit in exactly one sub-device");
            } else {
                assert!(r.is_err());
            }
        }
        let next = plan(
            root,
            &Scheme::ByAffinityDomain(CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE),
        );
        match next {
            Ok((_, Some(used))) => assert_eq!(
                used,
                *DOMAINS.iter().find(|d| offered & **d != 0).expect("one")
            ),
            other => assert_eq!(offered, 0, "{other:?}"),
        }
    }
}
