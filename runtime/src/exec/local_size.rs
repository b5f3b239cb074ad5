//! The work-group size chosen when the application passes `local_work_size = NULL`.
//!
//! Order of preference: the kernel's `reqd_work_group_size`; its
//! `work_group_size_hint` when it divides the global size; else per dimension the
//! largest exact divisor of the global size that keeps dimension 0 a multiple of the
//! sub-group width, makes groups large enough to amortise the per-group call
//! (up to [`TARGET_ITEMS`] work-items, [`TARGET_ITEMS_NO_BARRIERS`] for kernels
//! without barriers) and leaves at least one group per worker.
//! Non-uniform (ragged) groups are used only when the caller allows them and no
//! reasonable divisor exists. Pure arithmetic: no pool, no kernel code.

use cranecl_jit::KernelInfo;

/// Work-items per group the chooser aims for: a group is one call of the kernel entry
/// and a loop over its sub-groups, so larger groups amortise the call; beyond a few
/// hundred items the gain is gone and load balance suffers.
pub const TARGET_ITEMS: usize = 256;

/// Work-items per group for kernels without barriers or work-group collectives: their
/// groups keep nothing per work-item between sub-groups, so a larger group only
/// saves per-group calls (about 15% of a streaming kernel like saxpy at 256 items).
pub const TARGET_ITEMS_NO_BARRIERS: usize = 1024;

/// Picks a local size for `global_size` (dimensions past `work_dim` get 1).
/// `non_uniform` allows a ragged last group (OpenCL C 2.0+ programs built without
/// `-cl-uniform-work-group-size`) when the global size has no useful divisor.
pub fn choose(
    info: &KernelInfo,
    work_dim: u32,
    global_size: [usize; 3],
    max_work_group_size: usize,
    workers: usize,
    non_uniform: bool,
) -> [usize; 3] {
    let dims = (work_dim as usize).clamp(1, 3);
    let mut global = [1usize; 3];
    for d in 0..dims {
        global[d] = global_size[d].max(1);
    }
    if let Some(reqd) = info.reqd_work_group_size {
        let mut local = [1usize; 3];
        for d in 0..dims {
            local[d] = (reqd[d] as usize).max(1);
        }
        return local;
    }
    let max_items = max_work_group_size.max(1);
    if let Some(n) = info.required_num_sub_groups {
        return for_sub_group_count(info, n as usize, dims, global, max_items);
    }
    if let Some(hint) = info.work_group_size_hint {
        let mut local = [1usize; 3];
        for d in 0..dims {
            local[d] = (hint[d] as usize).max(1);
        }
        let items: usize = local.iter().product();
        if items <= max_items && (0..dims).all(|d| global[d] % local[d] == 0) {
            return local;
        }
    }

    let width = (info.sub_group_width as usize).max(1);
    let target = if info.has_barriers {
        TARGET_ITEMS
    } else {
        TARGET_ITEMS_NO_BARRIERS
    };
    let budget = target.min(max_items);
    let total_items: usize = global
        .iter()
        .take(dims)
        .fold(1usize, |a, &g| a.saturating_mul(g));
    // Leave at least one group per worker when the ND-range is large enough to split.
    let budget = if total_items / workers.max(1) >= width {
        budget.min((total_items / workers.max(1)).max(1))
    } else {
        budget
    };

    let mut local = [1usize; 3];
    let mut remaining = budget;
    for d in 0..dims {
        let prefer_multiple = if d == 0 { width } else { 1 };
        local[d] = pick_divisor(global[d], remaining, prefer_multiple);
        remaining = (remaining / local[d]).max(1);
    }

    if non_uniform && dims >= 1 {
        // A poor exact divisor in dimension 0 (e.g. a prime global size): use full
        // sub-groups and let the last group be ragged.
        let multiple_budget = budget / width * width;
        if local[0] < width && global[0] > multiple_budget && multiple_budget >= width {
            local = [1; 3];
            local[0] = multiple_budget;
        }
    }
    local
}

/// A local size with exactly `count` sub-groups (`SubgroupsPerWorkgroup`): the
/// largest product of exact divisors of the global sizes in `((count-1)*W, count*W]`,
/// else `count*W` work-items in dimension 0 (a ragged last group, which the caller
/// refuses when work-groups must be uniform).
fn for_sub_group_count(
    info: &KernelInfo,
    count: usize,
    dims: usize,
    global: [usize; 3],
    max_items: usize,
) -> [usize; 3] {
    let width = (info.sub_group_width as usize).max(1);
    let hi = count.saturating_mul(width).min(max_items);
    let lo = count.saturating_sub(1).saturating_mul(width);
    let divisors = |g: usize, limit: usize| -> Vec<usize> {
        (1..=limit.min(g))
            .rev()
            .filter(|c| g.is_multiple_of(*c))
            .collect()
    };
    let mut best: Option<[usize; 3]> = None;
    for x in divisors(global[0], hi) {
        let ys = if dims > 1 {
            divisors(global[1], hi / x)
        } else {
            vec![1]
        };
        for y in ys {
            let zs = if dims > 2 {
                divisors(global[2], hi / (x * y))
            } else {
                vec![1]
            };
            // The largest z that fits is first: it gives this (x, y) its best product.
            let Some(&z) = zs.first() else { continue };
            let items = x * y * z;
            if items > lo && best.is_none_or(|b| items > b.iter().product()) {
                best = Some([x, y, z]);
            }
        }
    }
    best.unwrap_or([count.saturating_mul(width), 1, 1])
}

/// The largest divisor of `n` that is at most `limit`, or the largest such divisor
/// that is a multiple of `multiple` when that one is at least half as large.
fn pick_divisor(n: usize, limit: usize, multiple: usize) -> usize {
    let limit = limit.clamp(1, n);
    let best = (1..=limit)
        .rev()
        .find(|c| n.is_multiple_of(*c))
        .unwrap_or(1);
    if multiple <= 1 || best % multiple == 0 {
        return best;
    }
    let best_multiple = (1..=limit / multiple)
        .rev()
        .map(|k| k * multiple)
        .find(|c| n.is_multiple_of(*c));
    match best_multiple {
        Some(m) if m * 2 >= best => m,
        _ => best,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranecl_jit::KernelInfo;

    pub(crate) fn info(width: u32) -> KernelInfo {
        KernelInfo::new("k", width)
    }

    #[test]
    fn reqd_size_wins() {
        let mut k = info(8);
        k.reqd_work_group_size = Some([16, 4, 1]);
        assert_eq!(choose(&k, 2, [64, 64, 1], 1024, 2, false), [16, 4, 1]);
    }

    /// A kernel with barriers (the chooser's smaller target applies).
    fn info_with_barriers(width: u32) -> KernelInfo {
        KernelInfo {
            has_barriers: true,
            ..info(width)
        }
    }

    #[test]
    fn barrier_free_kernels_get_larger_groups() {
        let k = info(8);
        assert_eq!(choose(&k, 1, [1 << 24, 1, 1], 1024, 2, false), [1024, 1, 1]);
        assert_eq!(choose(&k, 1, [1 << 24, 1, 1], 512, 2, false), [512, 1, 1]);
        // Still at least one group per worker.
        assert_eq!(choose(&k, 1, [1024, 1, 1], 1024, 2, false), [512, 1, 1]);
        let l = choose(&k, 2, [2048, 2048, 1], 1024, 2, false);
        assert_eq!(l[0] * l[1], 1024, "{l:?}");
        assert_eq!(
            choose(&info_with_barriers(8), 1, [1 << 24, 1, 1], 1024, 2, false),
            [TARGET_ITEMS, 1, 1]
        );
    }

    #[test]
    fn one_dimensional_power_of_two() {
        let k = info_with_barriers(8);
        assert_eq!(choose(&k, 1, [1 << 20, 1, 1], 1024, 2, false), [256, 1, 1]);
        // Small range: keep one group per worker.
        assert_eq!(choose(&k, 1, [256, 1, 1], 1024, 2, false), [128, 1, 1]);
        assert_eq!(choose(&k, 1, [8, 1, 1], 1024, 2, false), [8, 1, 1]);
        assert_eq!(choose(&k, 1, [1, 1, 1], 1024, 2, false), [1, 1, 1]);
    }

    #[test]
    fn divides_and_prefers_sub_group_multiples() {
        let k = info_with_barriers(8);
        for g in [1000usize, 96, 640, 1920, 4800, 100_000, 3 * 1024] {
            let l = choose(&k, 1, [g, 1, 1], 1024, 2, false);
            assert_eq!(g % l[0], 0, "g={g} l={l:?}");
            assert_eq!(l[0] % 8, 0, "g={g} l={l:?}");
            assert!(l[0] <= TARGET_ITEMS);
        }
        // Odd sizes: still an exact divisor.
        let l = choose(&k, 1, [999, 1, 1], 1024, 2, false);
        assert_eq!(999 % l[0], 0);
        assert!(l[0] >= 27, "{l:?}");
    }

    #[test]
    fn prime_sizes() {
        let k = info(8);
        // Uniform only: the only divisors of a prime are 1 and itself.
        assert_eq!(choose(&k, 1, [1009, 1, 1], 1024, 2, false), [1, 1, 1]);
        // Non-uniform allowed: full sub-groups, a ragged last group.
        let l = choose(&k, 1, [1009, 1, 1], 1024, 2, true);
        assert_eq!(l[0] % 8, 0);
        assert!(l[0] >= 64, "{l:?}");
        // Small prime: one group covers it.
        assert_eq!(choose(&k, 1, [7, 1, 1], 1024, 2, true), [7, 1, 1]);
    }

    #[test]
    fn multi_dimensional() {
        let k = info_with_barriers(8);
        let l = choose(&k, 2, [1024, 1024, 1], 1024, 2, false);
        assert_eq!(l[0] % 8, 0);
        assert!(l[0] * l[1] <= TARGET_ITEMS);
        assert_eq!(1024 % l[1], 0);
        assert_eq!(l[2], 1);
        let l = choose(&k, 3, [16, 6, 10], 1024, 2, false);
        for d in 0..3 {
            assert_eq!([16, 6, 10][d] % l[d], 0, "{l:?}");
        }
        assert!(l[0] * l[1] * l[2] <= TARGET_ITEMS);
        // Unused dimensions are 1 whatever the caller passed.
        assert_eq!(choose(&k, 1, [64, 77, 99], 1024, 2, false)[1..], [1, 1]);
    }

    #[test]
    fn respects_max_work_group_size() {
        let k = info(16);
        let l = choose(&k, 1, [1 << 16, 1, 1], 64, 2, false);
        assert_eq!(l, [64, 1, 1]);
        let l = choose(&k, 2, [512, 512, 1], 32, 2, false);
        assert!(l[0] * l[1] <= 32);
    }

    #[test]
    fn hint_used_when_it_divides() {
        let mut k = info(8);
        k.work_group_size_hint = Some([32, 2, 1]);
        assert_eq!(choose(&k, 2, [64, 64, 1], 1024, 2, false), [32, 2, 1]);
        assert_ne!(choose(&k, 2, [60, 64, 1], 1024, 2, false), [32, 2, 1]);
    }
}
