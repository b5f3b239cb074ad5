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
    /// Membership by block index.
    pub blocks: Vec<bool>,
    /// Innermost enclosing loop.
    pub parent: Option<usize>,
}

/// The CFG of one function; blocks are referred to by their index in the function.
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
}

impl Cfg {
    /// Builds the CFG of `blocks` (entry first).
    pub fn new(blocks: &[Block]) -> Result<Cfg, CompileError> {
        let n = blocks.len();
        let labels: Vec<Id> = blocks.iter().map(|b| b.label).collect();
        let index: HashMap<Id, usize> = labels.iter().enumerate().map(|(i, l)| (*l, i)).collect();
        let mut succs = vec![Vec::new(); n];
        let mut preds = vec![Vec::new(); n];
        for (i, b) in blocks.iter().enumerate() {
            for s in b.term.successors() {
                let si = *index.get(&s).ok_or_else(|| {
                    CompileError::malformed(format!(
                        "branch to %{s}, which is not a block of this function"
                    ))
                })?;
                if !succs[i].contains(&si) {
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
        };
        if n == 0 {
            return Err(CompileError::malformed("function without blocks"));
        }
        cfg.dominators();
        cfg.find_loops()?;
        cfg.order = cfg.linear_order();
        Ok(cfg)
    }

    /// Reverse post-order of reachable blocks.
    pub fn rpo(&self) -> Vec<usize> {
        let n = self.succs.len();
        let mut seen = vec![false; n];
        let mut post = Vec::with_capacity(n);
        let mut stack = vec![(0usize, 0usize)];
        seen[0] = true;
        while let Some((b, i)) = stack.pop() {
            if i < self.succs[b].len() {
                stack.push((b, i + 1));
                let s = self.succs[b][i];
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

    fn dominators(&mut self) {
        // Cooper, Harvey, Kennedy: "A Simple, Fast Dominance Algorithm".
        let n = self.succs.len();
        let rpo = self.rpo();
        let mut pos = vec![usize::MAX; n];
        for (i, b) in rpo.iter().enumerate() {
            pos[*b] = i;
        }
        let mut idom = vec![usize::MAX; n];
        idom[0] = 0;
        let mut changed = true;
        while changed {
            changed = false;
            for &b in rpo.iter().skip(1) {
                let mut new = usize::MAX;
                for &p in &self.preds[b] {
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
        self.idom = idom;
    }

    /// Whether block `a` dominates block `b`.
    pub fn dominates(&self, a: usize, mut b: usize) -> bool {
        if self.idom[b] == usize::MAX {
            return false;
        }
        loop {
            if a == b {
                return true;
            }
            if b == 0 {
                return false;
            }
            b = self.idom[b];
        }
    }

    /// Whether `b` is reachable from the entry.
    pub fn reachable(&self, b: usize) -> bool {
        self.idom[b] != usize::MAX
    }

    fn find_loops(&mut self) -> Result<(), CompileError> {
        let n = self.succs.len();
        let mut by_header: HashMap<usize, Vec<bool>> = HashMap::new();
        // A retreating edge (target visited earlier in DFS, still on the stack) that is
        // not a back edge to a dominator means an irreducible graph.
        for b in 0..n {
            if !self.reachable(b) {
                continue;
            }
            for &s in &self.succs[b] {
                if self.dominates(s, b) {
                    let body = by_header.entry(s).or_insert_with(|| vec![false; n]);
                    body[s] = true;
                    let mut work = vec![b];
                    while let Some(x) = work.pop() {
                        if body[x] {
                            continue;
                        }
                        body[x] = true;
                        for &p in &self.preds[x] {
                            if self.reachable(p) {
                                work.push(p);
                            }
                        }
                    }
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
        let mut loops: Vec<Loop> = by_header
            .into_iter()
            .map(|(header, blocks)| Loop {
                header,
                blocks,
                parent: None,
            })
            .collect();
        // Outer loops first (larger bodies), deterministic.
        loops.sort_by_key(|l| {
            (
                std::cmp::Reverse(l.blocks.iter().filter(|x| **x).count()),
                l.header,
            )
        });
        for i in 0..loops.len() {
            // Parent: the smallest earlier loop containing this header.
            let mut parent = None;
            for j in 0..i {
                if loops[j].blocks[loops[i].header] {
                    parent = Some(j);
                }
            }
            loops[i].parent = parent;
        }
        for (li, l) in loops.iter().enumerate() {
            for b in 0..n {
                if l.blocks[b] {
                    self.loop_of[b] = Some(li);
                }
            }
        }
        self.loops = loops;
        Ok(())
    }

    /// Whether block `b` is in loop `l` (or a loop nested in it).
    pub fn in_loop(&self, l: usize, b: usize) -> bool {
        self.loops[l].blocks[b]
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

    fn linear_order(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.order_region(None, &mut out);
        out
    }

    /// Orders the blocks of `region` (a loop, or the whole function): a topological
    /// order of its forward edges in which nested loops are single nodes, expanded in
    /// place (header first).
    fn order_region(&self, region: Option<usize>, out: &mut Vec<usize>) {
        let n = self.succs.len();
        let in_region = |b: usize| -> bool {
            self.reachable(b) && region.is_none_or(|l| self.loops[l].blocks[b])
        };
        let header = region.map(|l| self.loops[l].header);
        // Representative node of a block: itself, or the header of its child loop.
        let rep = |b: usize| -> usize {
            self.child_loop_in(region, b)
                .map_or(b, |l| self.loops[l].header)
        };
        let mut indeg = vec![0usize; n];
        let mut edges: Vec<Vec<usize>> = vec![Vec::new(); n];
        for b in 0..n {
            if !in_region(b) {
                continue;
            }
            let rb = rep(b);
            for &s in &self.succs[b] {
                if !in_region(s) || Some(s) == header {
                    continue;
                }
                let rs = rep(s);
                if rs == rb {
                    continue;
                }
                if !edges[rb].contains(&rs) {
                    edges[rb].push(rs);
                    indeg[rs] += 1;
                }
            }
        }
        let start = header.unwrap_or(0);
        // Kahn's algorithm, lowest block index first (keeps the module's order when valid).
        let mut ready: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();
        ready.insert(start);
        for b in 0..n {
            if in_region(b) && rep(b) == b && indeg[b] == 0 && b != start {
                ready.insert(b);
            }
        }
        while let Some(&b) = ready.iter().next() {
            ready.remove(&b);
            match self.child_loop_in(region, b) {
                Some(l) if self.loops[l].header == b => self.order_region(Some(l), out),
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
}

#[cfg(test)]
mod tests {
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
}
