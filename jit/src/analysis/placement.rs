//! Where the masked lowering may keep each value, so that the code it hands to
//! Cranelift stays about linear in the kernel's size.
//!
//! The masked (linearised) body runs blocks in the linear order and skips a block
//! whose mask is empty. A block X's *skip region* is the run of blocks right after it
//! in the linear order that X dominates and that lie in all of X's loops: when X has
//! no active lane neither have they, so X's skip jumps over the whole region. The
//! regions nest, and X's code then dominates the code of every block of its region,
//! so a value defined in X and used only there (or through a loop's live-out
//! accumulator, outside the loop) can be handed to Cranelift as a plain SSA value;
//! other values (rare: linear orders that interleave dominance subtrees) go through
//! frontend variables. Values used across a barrier live in memory (a *home* slot in
//! the sub-group's scratch area), written once where they are defined and read where
//! they are used, so barriers save nothing per value.
//!
//! Nothing here touches Cranelift.

use std::collections::{HashMap, HashSet};

use super::cfg::Cfg;
use super::liveness::Uses;
use super::uniformity::Uniformity;
use crate::spirv::Id;

/// The placement decisions for one kernel.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// By linear position: the last position of the block's skip region (itself when
    /// it has none).
    pub region_end: Vec<usize>,
    /// By linear position: the position of the innermost block whose skip region
    /// contains it (`usize::MAX` for the entry block, which contains everything).
    pub region_parent: Vec<usize>,
    /// By linear position: how many skip regions contain it (0 for the entry block).
    region_depth: Vec<usize>,
    /// Values that must live in memory: some use is reached from the definition
    /// through a barrier.
    pub homed: HashSet<Id>,
    /// Values the masked body keeps in frontend variables: some use lies outside the
    /// skip region of the defining block.
    pub in_vars: HashSet<Id>,
    /// Values used after loops that every lane leaves together and otherwise only
    /// in the skip region of their definition: the masked body reads them after the
    /// loop from a header phi's accumulator or puts them in `in_vars`.
    pub left_together: HashSet<Id>,
}

impl Placement {
    /// Computes the placement of the values of a function with the barriers (or
    /// work-group collectives) at `barriers` ((block, instruction index), any order).
    /// `home_crossing` (huge kernels without barriers): every value used outside its
    /// block lives in memory too, so that no value is live across the blocks between
    /// (the single-pass allocator costs blocks x live values: a thousand values
    /// defined first and used in a thousand divergent ifs after).
    pub fn new(
        cfg: &Cfg,
        uni: &Uniformity,
        uses: &Uses,
        barriers: &[(usize, usize)],
        home_crossing: bool,
    ) -> Placement {
        let n = cfg.order.len();
        let (region_end, region_parent) = regions(cfg);
        // A parent comes before its children in the linear order.
        let mut region_depth = vec![0usize; region_parent.len()];
        for i in 0..region_parent.len() {
            if let Some(&d) = region_depth.get(region_parent[i]) {
                region_depth[i] = d + 1;
            }
        }
        let mut p = Placement {
            region_end,
            region_parent,
            region_depth,
            homed: HashSet::new(),
            in_vars: HashSet::new(),
            left_together: HashSet::new(),
        };
        // Barrier points in linear order, and the loops holding one.
        let mut points: Vec<(usize, usize)> = barriers
            .iter()
            .filter(|(b, _)| cfg.pos[*b] != usize::MAX)
            .map(|&(b, k)| (cfg.pos[b], k))
            .collect();
        points.sort_unstable();
        let mut loop_has_barrier = vec![false; cfg.loops.len()];
        for &(b, _) in barriers {
            let mut l = cfg.loop_of[b];
            while let Some(li) = l {
                if loop_has_barrier[li] {
                    break;
                }
                loop_has_barrier[li] = true;
                l = cfg.loops[li].parent;
            }
        }
        let mut exits: HashMap<usize, Vec<usize>> = HashMap::new();
        for id in uses.defined_ids() {
            let Some((d, dk)) = uses.def_of(id) else {
                continue;
            };
            let pd = cfg.pos[d];
            if pd == usize::MAX {
                continue;
            }
            let end = p.region_end[pd];
            let inner = cfg.loop_of[d];
            let mut in_region = true;
            let mut leaves_loop = false;
            let mut homed = false;
            let mut together = false;
            for &(ub, uk) in uses.uses_of(id) {
                let pu = cfg.pos[ub];
                if pu == usize::MAX {
                    continue;
                }
                if !points.is_empty() && !homed {
                    homed = crosses_barrier(cfg, &points, &loop_has_barrier, (pd, dk), d, ub, uk);
                }
                if home_crossing && points.is_empty() && ub != d {
                    homed = true;
                }
                if ub == d || (pu > pd && pu <= end) {
                    continue;
                }
                match inner {
                    Some(l) if !cfg.in_loop(l, ub) => leaves_loop = true,
                    _ => in_region = false,
                }
            }
            if leaves_loop && in_region && read_where_left_together(cfg, uni, uses, id, d) {
                // Every lane leaves the loops together (no live-out accumulator):
                // the uses read the value where it was last defined.
                together = true;
            } else if leaves_loop && in_region {
                // The loop's exits write the live-out accumulator from the value: the
                // exiting blocks the definition dominates read it there.
                if let Some(l) = inner {
                    let sources = exits.entry(l).or_insert_with(|| {
                        cfg.loop_blocks(l)
                            .iter()
                            .copied()
                            .filter(|&x| cfg.succs[x].iter().any(|&s| !cfg.in_loop(l, s)))
                            .collect()
                    });
                    in_region = sources.iter().all(|&x| {
                        x == d || !cfg.dominates(d, x) || (cfg.pos[x] > pd && cfg.pos[x] <= end)
                    });
                }
            }
            if homed {
                p.homed.insert(id);
            } else if together {
                p.left_together.insert(id);
            } else if !in_region {
                p.in_vars.insert(id);
            }
        }
        debug_assert!(p.region_end.len() == n);
        p
    }

    /// The innermost position whose skip region contains positions `a` and `b`
    /// (either may be that position itself).
    pub fn common_region(&self, mut a: usize, mut b: usize) -> usize {
        // Depths precomputed: walking the parent chain each time made the masked
        // lowering quadratic in a kernel of many sequential ifs (regions nest).
        let (mut da, mut db) = (self.region_depth[a], self.region_depth[b]);
        while da > db {
            a = self.region_parent[a];
            da -= 1;
        }
        while db > da {
            b = self.region_parent[b];
            db -= 1;
        }
        while a != b {
            a = self.region_parent[a];
            b = self.region_parent[b];
        }
        a
    }
}

/// Skip-region ends and parents by linear position.
fn regions(cfg: &Cfg) -> (Vec<usize>, Vec<usize>) {
    let n = cfg.order.len();
    // The run of blocks dominated by each block, found by jumping over the runs of
    // the blocks inside it.
    let mut dom_end = vec![0usize; n];
    for i in (0..n).rev() {
        let x = cfg.order[i];
        let mut t = i + 1;
        while t < n && cfg.dominates(x, cfg.order[t]) {
            t = dom_end[t] + 1;
        }
        dom_end[i] = t - 1;
    }
    let mut end = vec![0usize; n];
    for i in 0..n {
        let loop_end = cfg.loop_of[cfg.order[i]].map_or(n - 1, |l| cfg.loops[l].span.1);
        end[i] = dom_end[i].min(loop_end);
    }
    let mut parent = vec![usize::MAX; n];
    let mut open: Vec<usize> = Vec::new();
    for i in 0..n {
        while open.last().is_some_and(|&j| end[j] < i) {
            open.pop();
        }
        parent[i] = open.last().copied().unwrap_or(usize::MAX);
        open.push(i);
    }
    (end, parent)
}

/// Whether every use of `id` (defined in block `def_block`) sees the lanes that left
/// the loops between them leave together (`Uniformity::leaves_loops_together`), so
/// that no use needs a per-lane copy taken as each lane leaves.
pub fn read_where_left_together(
    cfg: &Cfg,
    uni: &Uniformity,
    uses: &Uses,
    id: Id,
    def_block: usize,
) -> bool {
    uses.uses_of(id)
        .iter()
        .all(|&(ub, _)| cfg.pos[ub] == usize::MAX || uni.leaves_loops_together(cfg, def_block, ub))
}

/// Whether a value defined at (`def` position, instruction) in block `d` must survive
/// a barrier to reach its use in block `ub` at instruction `uk` (`AT_END` for
/// terminators and phi operands): a barrier lies between them in the linear order, or
/// the use is in a loop with a barrier that does not hold the definition (the value
/// must survive the loop's next iterations).
fn crosses_barrier(
    cfg: &Cfg,
    points: &[(usize, usize)],
    loop_has_barrier: &[bool],
    def: (usize, usize),
    d: usize,
    ub: usize,
    uk: usize,
) -> bool {
    let at = (cfg.pos[ub], uk);
    let first_after = points.partition_point(|&p| p <= def);
    // (A use at the end of a block, `AT_END`, comes after every instruction in it.)
    if points.get(first_after).is_some_and(|&p| p < at) {
        return true;
    }
    let mut l = cfg.loop_of[ub];
    while let Some(li) = l {
        if cfg.in_loop(li, d) {
            break;
        }
        if loop_has_barrier[li] {
            return true;
        }
        l = cfg.loops[li].parent;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::cfg::tests::{blocks_of, random_cfg};

    #[test]
    fn skip_regions_nest_and_their_blocks_are_dominated() {
        for seed in 1..300u64 {
            let succs = random_cfg(seed);
            let cfg = Cfg::new(&blocks_of(&succs)).unwrap();
            let (end, parent) = regions(&cfg);
            let n = cfg.order.len();
            for i in 0..n {
                let x = cfg.order[i];
                for t in i + 1..=end[i] {
                    let y = cfg.order[t];
                    assert!(cfg.dominates(x, y), "seed {seed}: {x} must dominate {y}");
                    if let Some(l) = cfg.loop_of[x] {
                        assert!(cfg.in_loop(l, y), "seed {seed}: {y} must be in {x}'s loop");
                    }
                    // Nesting: a region inside another ends inside it.
                    assert!(end[t] <= end[i], "seed {seed}: regions must nest");
                }
                // Maximal: the next block is not dominated or leaves x's loop.
                if end[i] + 1 < n {
                    let y = cfg.order[end[i] + 1];
                    let in_loops = cfg.loop_of[x].is_none_or(|l| cfg.in_loop(l, y));
                    assert!(
                        !cfg.dominates(x, y) || !in_loops,
                        "seed {seed}: region of {x} too short"
                    );
                }
                if i > 0 {
                    let p = parent[i];
                    assert!(p < i && end[p] >= i, "seed {seed}: parent of position {i}");
                }
            }
        }
    }
}
