//! The host CPU topology that partitioning by affinity domain needs: which logical
//! CPU each compute unit stands for, and which NUMA node and caches each CPU shares.
//!
//! Read once from Linux's `/sys` (`devices/system/node/node*/cpulist`,
//! `devices/system/cpu/cpu*/cache/index*/{level,type,shared_cpu_list}`). A machine
//! without NUMA information is one node; a cache level that some CPU does not report
//! is unknown, and partitioning along it is not offered. Compute unit `i` of the root
//! device stands for the `i`-th CPU the process may run on (modulo their number, when
//! `CRANECL_NUM_THREADS` asks for more units than CPUs). Nothing is pinned: this only
//! decides which compute units belong together.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use opencl_sys::*;

/// The affinity domains in the order `CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE`
/// tries them (the OpenCL order: NUMA, L4, L3, L2, L1).
pub const DOMAINS: [cl_device_affinity_domain; 5] = [
    CL_DEVICE_AFFINITY_DOMAIN_NUMA,
    CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE,
    CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE,
    CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE,
    CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE,
];

/// Which CPUs share each affinity domain.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Topology {
    /// The logical CPUs compute units stand for, ascending.
    cpus: Vec<usize>,
    /// Per entry of [`DOMAINS`]: the instance (an id shared by exactly the CPUs of one
    /// NUMA node or one cache) of each CPU of `cpus`, or `None` if unknown.
    instances: [Option<Vec<usize>>; 5],
}

impl Topology {
    /// The host's topology, read on first use.
    pub fn host() -> &'static Topology {
        static HOST: OnceLock<Topology> = OnceLock::new();
        HOST.get_or_init(|| Topology::read(Path::new("/sys"), allowed_cpus()))
    }

    /// The topology of `cpus` as the sysfs tree at `sys` describes it.
    pub fn read(sys: &Path, cpus: Vec<usize>) -> Topology {
        let cpus = if cpus.is_empty() { vec![0] } else { cpus };
        let numa = numa_nodes(sys);
        let mut instances: [Option<Vec<usize>>; 5] = Default::default();
        instances[0] = Some(
            cpus.iter()
                .map(|c| numa.get(c).copied().unwrap_or(0))
                .collect(),
        );
        for (slot, level) in [(1, 4), (2, 3), (3, 2), (4, 1)] {
            instances[slot] = cpus
                .iter()
                .map(|&c| cache_instance(sys, c, level))
                .collect();
        }
        Topology { cpus, instances }
    }

    /// The logical CPU compute unit `unit` of the root device stands for.
    pub fn cpu_of(&self, unit: u32) -> usize {
        self.cpus[unit as usize % self.cpus.len()]
    }

    /// The instance of `domain` (one of [`DOMAINS`]) that compute unit `unit`
    /// belongs to; `None` if the host does not say.
    pub fn instance_of(&self, domain: cl_device_affinity_domain, unit: u32) -> Option<usize> {
        let slot = DOMAINS.iter().position(|d| *d == domain)?;
        let list = self.instances[slot].as_ref()?;
        Some(list[unit as usize % list.len()])
    }

    /// `units` grouped by their instance of `domain`, groups in order of their first
    /// unit; `None` if some unit's instance is unknown.
    pub fn group(&self, domain: cl_device_affinity_domain, units: &[u32]) -> Option<Vec<Vec<u32>>> {
        let mut groups: Vec<(usize, Vec<u32>)> = Vec::new();
        for &u in units {
            let id = self.instance_of(domain, u)?;
            match groups.iter_mut().find(|(g, _)| *g == id) {
                Some((_, members)) => members.push(u),
                None => groups.push((id, vec![u])),
            }
        }
        Some(groups.into_iter().map(|(_, m)| m).collect())
    }
}

/// The CPUs this process may run on (its affinity mask), ascending.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: `set` is a plain bit set that sched_getaffinity fills for this process;
    // CPU_ISSET only reads it, for indices below CPU_SETSIZE.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0 {
            let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect();
            if !cpus.is_empty() {
                return cpus;
            }
        }
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..n).collect()
}

/// A Linux CPU list (`0-3,8,10-11`); `None` if malformed.
pub fn parse_cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (a.parse::<usize>().ok()?, b.parse::<usize>().ok()?);
                if b < a || b - a > 1 << 16 {
                    return None;
                }
                cpus.extend(a..=b);
            }
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

/// CPU -> NUMA node, from `devices/system/node/node<N>/cpulist` (empty if absent).
fn numa_nodes(sys: &Path) -> BTreeMap<usize, usize> {
    let mut map = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(sys.join("devices/system/node")) else {
        return map;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(node) = name
            .to_str()
            .and_then(|n| n.strip_prefix("node"))
            .and_then(|n| n.parse::<usize>().ok())
        else {
            continue;
        };
        let list = std::fs::read_to_string(entry.path().join("cpulist")).unwrap_or_default();
        for cpu in parse_cpu_list(&list).unwrap_or_default() {
            map.insert(cpu, node);
        }
    }
    map
}

/// The instance of the level-`level` data or unified cache of `cpu`: the lowest CPU
/// sharing it (so CPUs sharing one cache get one id). `None` if not reported.
fn cache_instance(sys: &Path, cpu: usize, level: u32) -> Option<usize> {
    let dir = sys.join(format!("devices/system/cpu/cpu{cpu}/cache"));
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let read = |file: &str| std::fs::read_to_string(entry.path().join(file)).ok();
        if read("level").and_then(|l| l.trim().parse::<u32>().ok()) != Some(level) {
            continue;
        }
        if read("type").is_some_and(|t| t.trim() == "Instruction") {
            continue;
        }
        let shared = parse_cpu_list(&read("shared_cpu_list")?)?;
        return shared.into_iter().min().or(Some(cpu));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A fake sysfs tree, removed when dropped.
    struct FakeSys(PathBuf);

    impl FakeSys {
        fn new(tag: &str) -> FakeSys {
            let dir =
                std::env::temp_dir().join(format!("cranecl-topology-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            FakeSys(dir)
        }

        fn write(&self, path: &str, text: &str) {
            let p = self.0.join(path);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(p, text).expect("write");
        }

        fn cache(&self, cpu: usize, index: usize, level: u32, ty: &str, shared: &str) {
            let base = format!("devices/system/cpu/cpu{cpu}/cache/index{index}");
            self.write(&format!("{base}/level"), &format!("{level}\n"));
            self.write(&format!("{base}/type"), &format!("{ty}\n"));
            self.write(&format!("{base}/shared_cpu_list"), &format!("{shared}\n"));
        }
    }

    impl Drop for FakeSys {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn two_sockets_with_shared_l3_and_private_l2() {
        // 8 CPUs: two NUMA nodes of 4, one L3 per node, an L2 per pair, private L1d
        // (and an L1i that must not count).
        let sys = FakeSys::new("sockets");
        sys.write("devices/system/node/node0/cpulist", "0-3\n");
        sys.write("devices/system/node/node1/cpulist", "4-7\n");
        for cpu in 0..8 {
            let node = if cpu < 4 { "0-3" } else { "4-7" };
            let pair = format!("{}-{}", cpu & !1, (cpu & !1) + 1);
            sys.cache(cpu, 0, 1, "Data", &cpu.to_string());
            sys.cache(cpu, 1, 1, "Instruction", &pair);
            sys.cache(cpu, 2, 2, "Unified", &pair);
            sys.cache(cpu, 3, 3, "Unified", node);
        }
        let t = Topology::read(&sys.0, (0..8).collect());
        let all: Vec<u32> = (0..8).collect();
        let numa = t.group(CL_DEVICE_AFFINITY_DOMAIN_NUMA, &all).expect("numa");
        assert_eq!(numa, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]);
        assert_eq!(
            t.group(CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE, &all),
            Some(numa)
        );
        assert_eq!(
            t.group(CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE, &[2, 3, 4, 5]),
            Some(vec![vec![2, 3], vec![4, 5]])
        );
        assert_eq!(
            t.group(CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE, &[2, 3]),
            Some(vec![vec![2], vec![3]])
        );
        assert_eq!(t.group(CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE, &all), None);
    }

    #[test]
    fn more_units_than_cpus_wrap_and_missing_numa_is_one_node() {
        let sys = FakeSys::new("wrap");
        for cpu in [2, 5] {
            sys.cache(cpu, 0, 2, "Unified", &cpu.to_string());
        }
        // The process may run on CPUs 2 and 5 only; four compute units.
        let t = Topology::read(&sys.0, vec![2, 5]);
        assert_eq!(
            (t.cpu_of(0), t.cpu_of(1), t.cpu_of(2), t.cpu_of(3)),
            (2, 5, 2, 5)
        );
        assert_eq!(
            t.group(CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE, &[0, 1, 2, 3]),
            Some(vec![vec![0, 2], vec![1, 3]])
        );
        assert_eq!(
            t.group(CL_DEVICE_AFFINITY_DOMAIN_NUMA, &[0, 1, 2, 3]),
            Some(vec![vec![0, 1, 2, 3]])
        );
        assert_eq!(t.group(CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE, &[0]), None);
    }

    #[test]
    fn the_host_topology_covers_every_cpu() {
        let t = Topology::host();
        assert!(!t.cpus.is_empty());
        assert!(t.instances[0]
            .as_ref()
            .is_some_and(|v| v.len() == t.cpus.len()));
    }
}
