//! The control-flow graph of a flat function: successors and predecessors,
//! dominators, natural loops (irreducible graphs are rejected), and the linear block
//! order used by the masked lowering: topological with respect to forward edges, each
//! loop's blocks contiguous with the header first.

use std::collections::HashMap;

use crate::spirv::{Block, Id};
use crate::CompileError;

/// A natural loop (all back edges to one header merged).
#[derive(Clone, Debug)]
pub struct Loop {
    pub header: usize,
    /// Number of blocks, nested loops' included.
    pub size: usize,
    /// Innermost enclosing loop.
    pub parent: Option<usize>,
    /// Positions of its first and last block in [`Cfg::order`] (a loop is contiguous
    /// there, header first).
    pub span: (usize, usize),
    /// Pre-order number in the loop tree and the last number of its subtree: `b` is in
    /// this loop iff its innermost loop's number lies in `tree.0..=tree.1`.
    tree: (usize, usize),
}

/// The CFG of one function; blocks are referred to by their index in the function.
///
/// Every query is O(1) or proportional to the answer, and building it takes time and
/// memory about linear in the number of blocks and edges (nested depth aside), so
/// that kernels of many thousands of blocks analyse quickly.
#[derive(Clone, Debug)]
pub struct Cfg {
    pub labels: Vec<Id>,
    pub index: HashMap<Id, usize>,
    pub succs: Vec<Vec<usize>>,
    pub preds: Vec<Vec<usize>>,
    /// Immediate dominator (entry: itself). Unreachable blocks: usize::MAX.
    pub idom: Vec<usize>,
    pub loops: Vec<Loop>,
    /// Innermost loop of each block.
    pub loop_of: Vec<Option<usize>>,
    /// Reachable blocks in linear order.
    pub order: Vec<usize>,
    /// Position of each block in `order` (usize::MAX: unreachable).
    pub pos: Vec<usize>,
    /// Dominator-tree pre-order number of each block and the last number of its
    /// subtree (dominance queries in O(1)).
    dom_tree: Vec<(usize, usize)>,
}

impl Cfg {
    /// Builds the CFG of `blocks` (entry first).
    pub fn new(blocks: &[Block]) -> Result<Cfg, CompileError> {
        let n = blocks.len();
        let labels: Vec<Id> = blocks.iter().map(|b| b.label).collect();
        let index: HashMap<Id, usize> = labels.iter().enumerate().map(|(i, l)| (*l, i)).collect();
        let mut succs = vec![Vec::new(); n];
        let mut preds = vec![Vec::new(); n];
        let mut seen = std::collections::HashSet::new();
        for (i, b) in blocks.iter().enumerate() {
            seen.clear();
            for s in b.term.successors() {
                let si = *index.get(&s).ok_or_else(|| {
                    CompileError::malformed(format!(
                        "branch to %{s}, which is not a block of this function"
                    ))
                })?;
                if seen.insert(si) {
                    succs[i].push(si);
                    preds[si].push(i);
                }
            }
        }
        let mut cfg = Cfg {
            labels,
            index,
            succs,
            preds,
            idom: Vec::new(),
            loops: Vec::new(),
            loop_of: vec![None; n],
            order: Vec::new(),
            pos: Vec::new(),
            dom_tree: Vec::new(),
        };
        if n == 0 {
            return Err(CompileError::malformed("function without blocks"));
        }
        cfg.dominators();
        cfg.number_dom_tree();
        cfg.find_loops()?;
        cfg.order = cfg.linear_order();
        cfg.pos = vec![usize::MAX; n];
        for (i, &b) in cfg.order.iter().enumerate() {
            cfg.pos[b] = i;
        }
        for l in 0..cfg.loops.len() {
            let h = cfg.loops[l].header;
            let first = cfg.pos[h];
            cfg.loops[l].span = (first, first + cfg.loops[l].size - 1);
        }
        Ok(cfg)
    }

    /// Reverse post-order of reachable blocks.
    pub fn rpo(&self) -> Vec<usize> {
        reverse_post_order(self.succs.len(), 0, |b| &self.succs[b])
    }

    fn dominators(&mut self) {
        // Cooper, Harvey, Kennedy: "A Simple, Fast Dominance Algorithm".
        let n = self.succs.len();
        let rpo = self.rpo();
        let mut pos = vec![usize::MAX; n];
        for (i, b) in rpo.iter().enumerate() {
            pos[*b] = i;
        }
        let preds = &self.preds;
        let idom = immediate_dominators(&rpo, &pos, n, |b| preds[b].clone());
        self.idom = idom;
    }

    /// Numbers the dominator tree in pre-order (iteratively: trees may be deep).
    fn number_dom_tree(&mut self) {
        let n = self.succs.len();
        let mut children = vec![Vec::new(); n];
        for b in 1..n {
            if self.idom[b] != usize::MAX {
                children[self.idom[b]].push(b);
            }
        }
        let mut tree = vec![(usize::MAX, usize::MAX); n];
        let mut next = 0;
        let mut stack = vec![(0usize, 0usize)];
        tree[0].0 = next;
        next += 1;
        while let Some((b, i)) = stack.pop() {
            if let Some(&c) = children[b].get(i) {
                stack.push((b, i + 1));
                tree[c].0 = next;
                next += 1;
                stack.push((c, 0));
            } else {
                tree[b].1 = next - 1;
            }
        }
        self.dom_tree = tree;
    }

    /// Whether block `a` dominates block `b`.
    pub fn dominates(&self, a: usize, b: usize) -> bool {
        let (pa, la) = self.dom_tree[a];
        let (pb, _) = self.dom_tree[b];
        pa != usize::MAX && pb != usize::MAX && pa <= pb && pb <= la
    }

    /// Whether `b` is reachable from the entry.
    pub fn reachable(&self, b: usize) -> bool {
        self.idom[b] != usize::MAX
    }

    fn find_loops(&mut self) -> Result<(), CompileError> {
        let n = self.succs.len();
        // Back edges (to a dominator), by header.
        let mut latches: HashMap<usize, Vec<usize>> = HashMap::new();
        for b in 0..n {
            if !self.reachable(b) {
                continue;
            }
            for &s in &self.succs[b] {
                if self.dominates(s, b) {
                    latches.entry(s).or_default().push(b);
                }
            }
        }
        // Irreducibility check: every cycle must go through a back edge. Remove back
        // edges and check the rest is acyclic.
        {
            let mut indeg = vec![0usize; n];
            for b in 0..n {
                if !self.reachable(b) {
                    continue;
                }
                for &s in &self.succs[b] {
                    if !self.dominates(s, b) {
                        indeg[s] += 1;
                    }
                }
            }
            let mut work: Vec<usize> = (0..n)
                .filter(|&b| self.reachable(b) && indeg[b] == 0)
                .collect();
            let mut count = 0;
            while let Some(b) = work.pop() {
                count += 1;
                for &s in &self.succs[b] {
                    if !self.dominates(s, b) {
                        indeg[s] -= 1;
                        if indeg[s] == 0 {
                            work.push(s);
                        }
                    }
                }
            }
            let reachable = (0..n).filter(|&b| self.reachable(b)).count();
            if count != reachable {
                return Err(CompileError::unsupported(
                    "irreducible control flow (a loop with several entries) is not supported",
                ));
            }
        }
        // Natural loop bodies, inner loops first (a header dominated by another comes
        // later in the dominator tree's pre-order). A block belongs to the first loop
        // that reaches it; an outer loop reaching a block of an inner one adopts the
        // inner loop whole and continues from the inner header's predecessors, so every
        // block is visited about once per loop level.
        let mut headers: Vec<usize> = latches.keys().copied().collect();
        headers.sort_by_key(|&h| std::cmp::Reverse(self.dom_tree[h].0));
        let mut owner: Vec<Option<usize>> = vec![None; n];
        let mut parent: Vec<Option<usize>> = vec![None; headers.len()];
        let mut own_count = vec![0usize; headers.len()];
        let top = |parent: &[Option<usize>], mut l: usize| {
            while let Some(p) = parent[l] {
                l = p;
            }
            l
        };
        for (li, &h) in headers.iter().enumerate() {
            owner[h] = Some(li);
            own_count[li] += 1;
            let mut work: Vec<usize> = latches[&h].clone();
            while let Some(x) = work.pop() {
                match owner[x] {
                    None => {
                        owner[x] = Some(li);
                        own_count[li] += 1;
                        work.extend(self.preds[x].iter().filter(|&&p| self.reachable(p)));
                    }
                    Some(o) => {
                        let t = top(&parent, o);
                        if t != li {
                            parent[t] = Some(li);
                            let th = headers[t];
                            work.extend(self.preds[th].iter().filter(|&&p| self.reachable(p)));
                        }
                    }
                }
            }
        }
        // Sizes: inner loops were numbered first, so children precede parents.
        let mut size = own_count;
        for li in 0..headers.len() {
            if let Some(p) = parent[li] {
                size[p] += size[li];
            }
        }
        // Outer loops first (larger bodies), deterministic.
        let mut by_rank: Vec<usize> = (0..headers.len()).collect();
        by_rank.sort_by_key(|&li| (std::cmp::Reverse(size[li]), headers[li]));
        let mut rank = vec![0usize; headers.len()];
        for (r, &li) in by_rank.iter().enumerate() {
            rank[li] = r;
        }
        let mut loops: Vec<Loop> = by_rank
            .iter()
            .map(|&li| Loop {
                header: headers[li],
                size: size[li],
                parent: parent[li].map(|p| rank[p]),
                span: (0, 0),
                tree: (0, 0),
            })
            .collect();
        // Loop-tree numbering (parents precede children in `loops`).
        let mut children = vec![Vec::new(); loops.len()];
        let mut roots = Vec::new();
        for (l, lp) in loops.iter().enumerate() {
            match lp.parent {
                Some(p) => children[p].push(l),
                None => roots.push(l),
            }
        }
        let mut next = 0;
        for r in roots {
            let mut stack = vec![(r, 0usize)];
            loops[r].tree.0 = next;
            next += 1;
            while let Some((l, i)) = stack.pop() {
                if let Some(&c) = children[l].get(i) {
                    stack.push((l, i + 1));
                    loops[c].tree.0 = next;
                    next += 1;
                    stack.push((c, 0));
                } else {
                    loops[l].tree.1 = next - 1;
                }
            }
        }
        for b in 0..n {
            self.loop_of[b] = owner[b].map(|li| rank[li]);
        }
        self.loops = loops;
        Ok(())
    }

    /// Whether block `b` is in loop `l` (or a loop nested in it).
    pub fn in_loop(&self, l: usize, b: usize) -> bool {
        self.loop_of[b].is_some_and(|x| self.loop_contains(l, x))
    }

    /// Whether loop `inner` is loop `outer` or nested in it.
    pub fn loop_contains(&self, outer: usize, inner: usize) -> bool {
        let (a, z) = self.loops[outer].tree;
        let t = self.loops[inner].tree.0;
        a <= t && t <= z
    }

    /// The blocks of loop `l` (nested loops' included), in linear order.
    pub fn loop_blocks(&self, l: usize) -> &[usize] {
        let (a, z) = self.loops[l].span;
        &self.order[a..=z]
    }

    /// The outermost loop containing `b` that is nested directly in `region` (None =
    /// function level), if `b` is inside such a loop.
    fn child_loop_in(&self, region: Option<usize>, b: usize) -> Option<usize> {
        let mut l = self.loop_of[b]?;
        loop {
            let p = self.loops[l].parent;
            if p == region {
                return Some(l);
            }
            l = p?;
        }
    }

    /// The innermost loop containing both loops (None: the function level).
    fn common_loop(&self, a: Option<usize>, b: Option<usize>) -> Option<usize> {
        let (mut a, b) = (a?, b?);
        loop {
            if self.loop_contains(a, b) {
                return Some(a);
            }
            a = self.loops[a].parent?;
        }
    }

    /// Orders the blocks: in each region (a loop, or the whole function), a
    /// topological order of its forward edges in which nested loops are single nodes,
    /// expanded in place (header first); among ready nodes the lowest block index
    /// first (keeps the module's order when valid).
    fn linear_order(&self) -> Vec<usize> {
        let n = self.succs.len();
        let nl = self.loops.len();
        // Region of a node: regions are 0 (function) and 1 + loop index.
        let region_id = |r: Option<usize>| r.map_or(0, |l| l + 1);
        // A block is a member of its innermost loop's region; a loop header also
        // stands for its whole loop in the enclosing region (as a "rep" node).
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); nl + 1];
        for b in 0..n {
            if !self.reachable(b) {
                continue;
            }
            members[region_id(self.loop_of[b])].push(b);
            if let Some(l) = self.loop_of[b] {
                if self.loops[l].header == b {
                    members[region_id(self.loops[l].parent)].push(b);
                }
            }
        }
        for m in &mut members {
            m.sort_unstable();
        }
        // Edges between nodes of each region: an edge b -> s belongs to the innermost
        // region holding both; the nodes are b's and s's representatives there.
        // Node keys: a block as a member (its own region) or as a loop's rep.
        let node = |region: Option<usize>, b: usize| -> (usize, bool) {
            match self.child_loop_in(region, b) {
                Some(l) => (self.loops[l].header, true),
                None => (b, false),
            }
        };
        let mut edges_member: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut edges_rep: Vec<Vec<usize>> = vec![Vec::new(); n];
        for b in 0..n {
            if !self.reachable(b) {
                continue;
            }
            for &s in &self.succs[b] {
                if !self.reachable(s) {
                    continue;
                }
                let region = self.common_loop(self.loop_of[b], self.loop_of[s]);
                if region.is_some_and(|l| self.loops[l].header == s) {
                    continue; // a back edge
                }
                let (rb, b_rep) = node(region, b);
                let (rs, _) = node(region, s);
                if rb == rs {
                    continue;
                }
                if b_rep {
                    edges_rep[rb].push(rs);
                } else {
                    edges_member[rb].push(rs);
                }
            }
        }
        for e in edges_member.iter_mut().chain(edges_rep.iter_mut()) {
            e.sort_unstable();
            e.dedup();
        }
        // In-degrees per (node, role): a target is a rep in its region iff it is the
        // header of a loop nested directly in that region.
        let mut indeg_member = vec![0usize; n];
        let mut indeg_rep = vec![0usize; n];
        let is_rep_in = |region: Option<usize>, b: usize| -> bool {
            self.loop_of[b]
                .is_some_and(|l| self.loops[l].header == b && self.loops[l].parent == region)
        };
        let region_of_node = |b: usize, rep: bool| -> Option<usize> {
            if rep {
                self.loop_of[b].and_then(|l| self.loops[l].parent)
            } else {
                self.loop_of[b]
            }
        };
        for b in 0..n {
            for (list, rep) in [(&edges_member[b], false), (&edges_rep[b], true)] {
                let region = region_of_node(b, rep);
                for &s in list {
                    if is_rep_in(region, s) {
                        indeg_rep[s] += 1;
                    } else {
                        indeg_member[s] += 1;
                    }
                }
            }
        }
        let mut out = Vec::with_capacity(n);
        // Iterative expansion: a stack of regions being ordered.
        struct Frame {
            region: Option<usize>,
            ready: std::collections::BTreeSet<usize>,
        }
        let start_frame = |region: Option<usize>, indeg_rep: &[usize], indeg_member: &[usize]| {
            let start = region.map_or(0, |l| self.loops[l].header);
            let mut ready = std::collections::BTreeSet::new();
            ready.insert(start);
            for &b in &members[region_id(region)] {
                let rep = is_rep_in(region, b);
                let deg = if rep { indeg_rep[b] } else { indeg_member[b] };
                if deg == 0 && b != start {
                    ready.insert(b);
                }
            }
            Frame { region, ready }
        };
        let mut stack = vec![start_frame(None, &indeg_rep, &indeg_member)];
        while let Some(frame) = stack.last_mut() {
            let Some(b) = frame.ready.pop_first() else {
                stack.pop();
                continue;
            };
            let region = frame.region;
            let rep = is_rep_in(region, b);
            let list = if rep { &edges_rep[b] } else { &edges_member[b] };
            for &s in list {
                let srep = is_rep_in(region, s);
                let d = if srep {
                    &mut indeg_rep[s]
                } else {
                    &mut indeg_member[s]
                };
                *d -= 1;
                if *d == 0 {
                    frame.ready.insert(s);
                }
            }
            if rep {
                let l = self.loop_of[b].unwrap_or(0);
                let child = start_frame(Some(l), &indeg_rep, &indeg_member);
                stack.push(child);
            } else {
                out.push(b);
            }
        }
        out
    }
}

/// The nodes of a graph of `n` nodes reachable from `root`, in reverse post-order
/// (`root` first), by an iterative depth-first walk (graphs may be deep). Shared by
/// [`Cfg`], the SPIR-V validator (which needs dominators before a `Cfg` can be built)
/// and `analysis::reconverge` (on the reversed graph).
pub(crate) fn reverse_post_order<'a>(
    n: usize,
    root: usize,
    succs: impl Fn(usize) -> &'a [usize],
) -> Vec<usize> {
    let mut post = Vec::with_capacity(n);
    if root >= n {
        return post;
    }
    let mut seen = vec![false; n];
    let mut stack = vec![(root, 0usize)];
    seen[root] = true;
    while let Some((b, i)) = stack.pop() {
        if let Some(&s) = succs(b).get(i) {
            stack.push((b, i + 1));
            if !seen[s] {
                seen[s] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(b);
        }
    }
    post.reverse();
    post
}

/// Cooper, Harvey, Kennedy ("A Simple, Fast Dominance Algorithm"): the immediate
/// dominator of every node of a graph of `n` nodes, given its reverse post-order
/// `order` (the root first), each node's position in it (`pos`) and its
/// predecessors. Unreached nodes get `usize::MAX`. Also serves post-dominators
/// (`analysis::reconverge`), on the reversed graph.
pub(crate) fn immediate_dominators(
    order: &[usize],
    pos: &[usize],
    n: usize,
    preds: impl Fn(usize) -> Vec<usize>,
) -> Vec<usize> {
    let mut idom = vec![usize::MAX; n];
    let Some(&root) = order.first() else {
        return idom;
    };
    idom[root] = root;
    let mut changed = true;
    while changed {
        changed = false;
        for &b in order.iter().skip(1) {
            let mut new = usize::MAX;
            for p in preds(b) {
                if idom[p] == usize::MAX {
                    continue;
                }
                new = if new == usize::MAX {
                    p
                } else {
                    let (mut x, mut y) = (p, new);
                    while x != y {
                        while pos[x] > pos[y] {
                            x = idom[x];
                        }
                        while pos[y] > pos[x] {
                            y = idom[y];
                        }
                    }
                    x
                };
            }
            if new != usize::MAX && idom[b] != new {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::spirv::Terminator;

    fn blocks(edges: &[&[u32]]) -> Vec<Block> {
        edges
            .iter()
            .enumerate()
            .map(|(i, s)| Block {
                label: 100 + i as u32,
                insts: Vec::new(),
                term: match s.len() {
                    0 => Terminator::Return,
                    1 => Terminator::Branch(100 + s[0]),
                    _ => Terminator::BranchCond {
                        cond: 1,
                        t: 100 + s[0],
                        f: 100 + s[1],
                    },
                },
            })
            .collect()
    }

    #[test]
    fn loop_blocks_are_contiguous() {
        // 0 -> 1; 1 -> 2, 4 (loop header 1: exit to 4); 2 -> 3; 3 -> 1; 4 -> ret
        // Blocks deliberately numbered so that the exit comes before the latch.
        let b = blocks(&[&[1], &[4, 2], &[3, 4], &[1], &[]]);
        let cfg = Cfg::new(&b).unwrap();
        assert_eq!(cfg.loops.len(), 1);
        assert_eq!(cfg.order, vec![0, 1, 2, 3, 4]);
        // Reorder: exit block placed first in the module.
        let b = blocks(&[&[2], &[], &[1, 3], &[2]]);
        let cfg = Cfg::new(&b).unwrap();
        assert_eq!(cfg.order, vec![0, 2, 3, 1]);
    }

    #[test]
    fn nested_loops_and_diamond() {
        // 0 -> 1 (outer header) -> 2 (inner header) -> 3 -> 2 | 4; 4 -> 1 | 5; 5 ret
        let b = blocks(&[&[1], &[2], &[3], &[2, 4], &[1, 5], &[]]);
        let cfg = Cfg::new(&b).unwrap();
        assert_eq!(cfg.loops.len(), 2);
        assert_eq!(cfg.order, vec![0, 1, 2, 3, 4, 5]);
        let inner = cfg.loop_of[3].unwrap();
        assert_eq!(cfg.loops[inner].header, 2);
        assert_eq!(
            cfg.loops[inner].parent.map(|p| cfg.loops[p].header),
            Some(1)
        );
        // Diamond
        let b = blocks(&[&[2, 1], &[3], &[3], &[]]);
        let cfg = Cfg::new(&b).unwrap();
        assert!(cfg.loops.is_empty());
        assert_eq!(cfg.order, vec![0, 1, 2, 3]);
        assert_eq!(cfg.idom[3], 0);
    }

    #[test]
    fn irreducible_is_rejected() {
        // 0 -> 1 | 2; 1 -> 2; 2 -> 1 | 3
        let b = blocks(&[&[1, 2], &[2], &[1, 3], &[]]);
        let e = Cfg::new(&b).unwrap_err();
        assert!(e.message.contains("irreducible"));
    }

    /// Random structured (reducible) control flow: sequences, ifs, if-elses, loops
    /// with breaks and continues, nested; block numbers shuffled (entry stays 0).
    struct Gen {
        edges: Vec<Vec<u32>>,
        rng: u64,
    }

    impl Gen {
        fn next(&mut self, n: u64) -> u64 {
            self.rng ^= self.rng << 13;
            self.rng ^= self.rng >> 7;
            self.rng ^= self.rng << 17;
            self.rng % n
        }

        fn block(&mut self) -> usize {
            self.edges.push(Vec::new());
            self.edges.len() - 1
        }

        fn edge(&mut self, a: usize, b: usize) {
            self.edges[a].push(b as u32);
        }

        /// Statements starting in open block `cur`; returns the open block after them.
        fn stmts(&mut self, mut cur: usize, depth: u32, lp: Option<(usize, usize)>) -> usize {
            let count = 1 + self.next(3);
            for _ in 0..count {
                if self.edges.len() > 60 {
                    break;
                }
                cur = match self.next(if depth == 0 { 2 } else { 7 }) {
                    0 => cur,
                    1 => {
                        let b = self.block();
                        self.edge(cur, b);
                        b
                    }
                    2 => {
                        let (t, j) = (self.block(), self.block());
                        self.edge(cur, t);
                        self.edge(cur, j);
                        let te = self.stmts(t, depth - 1, lp);
                        self.edge(te, j);
                        j
                    }
                    3 => {
                        let (t, e, j) = (self.block(), self.block(), self.block());
                        self.edge(cur, t);
                        self.edge(cur, e);
                        let te = self.stmts(t, depth - 1, lp);
                        let ee = self.stmts(e, depth - 1, lp);
                        self.edge(te, j);
                        self.edge(ee, j);
                        j
                    }
                    4 | 5 => {
                        let (h, body, x) = (self.block(), self.block(), self.block());
                        self.edge(cur, h);
                        self.edge(h, body);
                        self.edge(h, x);
                        let be = self.stmts(body, depth - 1, Some((h, x)));
                        self.edge(be, h);
                        x
                    }
                    _ => match lp {
                        Some((h, x)) => {
                            // break or continue under a condition
                            let c = self.block();
                            let target = if self.next(2) == 0 { x } else { h };
                            self.edge(cur, target);
                            self.edge(cur, c);
                            c
                        }
                        None => cur,
                    },
                };
            }
            cur
        }
    }

    pub(crate) fn random_cfg(seed: u64) -> Vec<Vec<usize>> {
        let mut g = Gen {
            edges: Vec::new(),
            rng: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
        };
        let entry = g.block();
        g.stmts(entry, 4, None);
        // Shuffle numbering (entry stays 0).
        let n = g.edges.len();
        let mut perm: Vec<usize> = (0..n).collect();
        for i in (2..n).rev() {
            let j = 1 + g.next(i as u64) as usize;
            perm.swap(i, j);
        }
        let mut out = vec![Vec::new(); n];
        for (a, succ) in g.edges.iter().enumerate() {
            out[perm[a]] = succ.iter().map(|&b| perm[b as usize]).collect();
        }
        out
    }

    pub(crate) fn blocks_of(edges: &[Vec<usize>]) -> Vec<Block> {
        let e: Vec<Vec<u32>> = edges
            .iter()
            .map(|s| s.iter().map(|&x| x as u32).collect())
            .collect();
        let refs: Vec<&[u32]> = e.iter().map(|v| v.as_slice()).collect();
        blocks(&refs)
    }

    /// The straightforward versions (quadratic; this module used them before it had
    /// to handle huge kernels): dominance by removal, natural loops as block sets, and
    /// the region-recursive linear order.
    struct Reference {
        dom: Vec<Vec<bool>>,
        loops: Vec<(usize, Vec<bool>)>,
        order: Vec<usize>,
    }

    fn reference(succs: &[Vec<usize>]) -> Reference {
        let n = succs.len();
        let reach_without = |skip: Option<usize>| {
            let mut seen = vec![false; n];
            if skip == Some(0) {
                return seen;
            }
            let mut work = vec![0];
            seen[0] = true;
            while let Some(x) = work.pop() {
                for &s in &succs[x] {
                    if Some(s) != skip && !seen[s] {
                        seen[s] = true;
                        work.push(s);
                    }
                }
            }
            seen
        };
        let reachable = reach_without(None);
        let mut dom = vec![vec![false; n]; n];
        for a in 0..n {
            let r = reach_without(Some(a));
            for b in 0..n {
                dom[a][b] = reachable[b] && (a == b || !r[b]);
            }
        }
        let mut preds = vec![Vec::new(); n];
        for (a, ss) in succs.iter().enumerate() {
            for &s in ss {
                preds[s].push(a);
            }
        }
        let mut by_header: std::collections::BTreeMap<usize, Vec<bool>> = Default::default();
        for b in 0..n {
            for &s in &succs[b] {
                if reachable[b] && dom[s][b] {
                    let body = by_header.entry(s).or_insert_with(|| vec![false; n]);
                    body[s] = true;
                    let mut work = vec![b];
                    while let Some(x) = work.pop() {
                        if body[x] {
                            continue;
                        }
                        body[x] = true;
                        work.extend(preds[x].iter().filter(|&&p| reachable[p]));
                    }
                }
            }
        }
        let mut loops: Vec<(usize, Vec<bool>)> = by_header.into_iter().collect();
        loops.sort_by_key(|(h, b)| (std::cmp::Reverse(b.iter().filter(|x| **x).count()), *h));
        let parent: Vec<Option<usize>> = (0..loops.len())
            .map(|i| (0..i).rev().find(|&j| loops[j].1[loops[i].0]))
            .collect();
        let loop_of: Vec<Option<usize>> = (0..n)
            .map(|b| (0..loops.len()).rev().find(|&l| loops[l].1[b]))
            .collect();
        fn order_region(
            succs: &[Vec<usize>],
            reachable: &[bool],
            loops: &[(usize, Vec<bool>)],
            parent: &[Option<usize>],
            loop_of: &[Option<usize>],
            region: Option<usize>,
            out: &mut Vec<usize>,
        ) {
            let n = succs.len();
            let in_region = |b: usize| reachable[b] && region.is_none_or(|l| loops[l].1[b]);
            let header = region.map(|l| loops[l].0);
            let child = |b: usize| -> Option<usize> {
                let mut l = loop_of[b]?;
                loop {
                    if parent[l] == region {
                        return Some(l);
                    }
                    l = parent[l]?;
                }
            };
            let rep = |b: usize| child(b).map_or(b, |l| loops[l].0);
            let mut indeg = vec![0usize; n];
            let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n];
            for b in 0..n {
                if !in_region(b) {
                    continue;
                }
                for &s in &succs[b] {
                    if !in_region(s) || Some(s) == header || rep(s) == rep(b) {
                        continue;
                    }
                    if !edges[rep(b)].contains(&rep(s)) {
                        edges[rep(b)].push(rep(s));
                        indeg[rep(s)] += 1;
                    }
                }
            }
            let start = header.unwrap_or(0);
            let mut ready = std::collections::BTreeSet::new();
            ready.insert(start);
            for b in 0..n {
                if in_region(b) && rep(b) == b && indeg[b] == 0 && b != start {
                    ready.insert(b);
                }
            }
            while let Some(b) = ready.pop_first() {
                match child(b) {
                    Some(l) if loops[l].0 == b => {
                        order_region(succs, reachable, loops, parent, loop_of, Some(l), out)
                    }
                    _ => out.push(b),
                }
                for &s in &edges[b] {
                    indeg[s] -= 1;
                    if indeg[s] == 0 {
                        ready.insert(s);
                    }
                }
            }
        }
        let mut order = Vec::new();
        order_region(
            succs, &reachable, &loops, &parent, &loop_of, None, &mut order,
        );
        Reference { dom, loops, order }
    }

    #[test]
    fn random_structured_graphs_match_the_reference() {
        for seed in 1..400u64 {
            let succs = random_cfg(seed);
            let n = succs.len();
            let cfg = Cfg::new(&blocks_of(&succs)).unwrap();
            let r = reference(&succs);
            for a in 0..n {
                for b in 0..n {
                    assert_eq!(
                        cfg.dominates(a, b),
                        r.dom[a][b],
                        "seed {seed}: dom({a},{b})"
                    );
                }
            }
            assert_eq!(cfg.loops.len(), r.loops.len(), "seed {seed}: loop count");
            for (l, (h, body)) in r.loops.iter().enumerate() {
                assert_eq!(cfg.loops[l].header, *h, "seed {seed}: loop {l} header");
                for b in 0..n {
                    assert_eq!(
                        cfg.in_loop(l, b),
                        body[b],
                        "seed {seed}: block {b} in loop {l}"
                    );
                }
                let mut listed: Vec<usize> = cfg.loop_blocks(l).to_vec();
                listed.sort_unstable();
                let want: Vec<usize> = (0..n).filter(|&b| body[b]).collect();
                assert_eq!(listed, want, "seed {seed}: blocks of loop {l}");
            }
            assert_eq!(cfg.order, r.order, "seed {seed}: linear order");
            for (i, &b) in cfg.order.iter().enumerate() {
                assert_eq!(cfg.pos[b], i);
            }
        }
    }

    #[test]
    fn deeply_nested_loops() {
        // 2000 loops, each directly inside the previous one.
        let n = 2000;
        let mut succs: Vec<Vec<usize>> = Vec::new();
        for i in 0..n {
            succs.push(vec![i + 1]); // header i -> next header (or the body)
        }
        succs.push(vec![n + 1]); // the innermost body
        for k in 0..n {
            // latch of loop n-1-k: back to its header or on to the next latch
            succs.push(vec![n - 1 - k, n + 2 + k]);
        }
        succs.push(vec![]);
        let cfg = Cfg::new(&blocks_of(&succs)).unwrap();
        assert_eq!(cfg.loops.len(), n);
        for (l, lp) in cfg.loops.iter().enumerate() {
            // Sorted outermost first: loop l has header l and parent l - 1.
            assert_eq!(lp.header, l);
            assert_eq!(lp.parent, l.checked_sub(1));
            assert_eq!(lp.size, 2 * (n - l) + 1);
            assert_eq!(cfg.loop_blocks(l)[0], l);
        }
        assert!(cfg.in_loop(0, n) && cfg.in_loop(n - 1, n) && !cfg.in_loop(n - 1, n + 2));
    }
}
