//! Values used after loops that every lane of the sub-group leaves together (the
//! same iteration, the same exit): they need no per-lane live-out copy taken at the
//! exits (`masked::liveout_accumulators`), since the last value defined is every
//! lane's value. When the loop's only latch passes such a value to a header phi,
//! uses after the loop read that phi's accumulator and the latch's branch is
//! lowered by masks (`BodyState::via_header`, `branchless_latch`): the value's
//! computation then ends in a single use, which lets Cranelift fold the loads
//! under it (a sub-group GEMM's 512 broadcast loads per step). Other such values
//! live in frontend variables.

use super::control::BodyState;
use super::Tr;
use crate::spirv::{Id, Op, Terminator};

impl Tr<'_, '_> {
    /// Plans how uses after loop `l` read `id` (defined in block `def.0`, innermost
    /// loop `def.1`, last read at linear position `end`) when every lane leaves the
    /// loops between together; false when some use needs a per-lane live-out copy.
    pub(super) fn plan_left_together(
        &mut self,
        st: &mut BodyState,
        id: Id,
        (db, l): (usize, usize),
        end: usize,
    ) -> bool {
        let together = crate::analysis::placement::read_where_left_together(
            self.cfg,
            self.uni,
            &self.regions.uses,
            id,
            db,
        );
        if !together {
            return false;
        }
        // Values homed or kept in variables for other reasons already read right.
        if self.placement.left_together.contains(&id) {
            match self.latch_phi_of(id, l, &st.lone_edges) {
                Some((latch, phi)) => {
                    st.via_header.insert(id, (l, phi));
                    st.branchless_latch.insert(latch);
                    st.liveout_end.insert(id, end);
                }
                None => {
                    self.placement.in_vars.insert(id);
                }
            }
        }
        true
    }

    /// For `id`, defined in loop `l` and used after it: (the loop's only latch, the
    /// header phi the latch passes `id` to) when the latch is also the loop's only
    /// exiting block and its edge to the header is lone (see
    /// [`BodyState::lone_edges`]), so that the phi's accumulator holds `id` for
    /// every lane when the loop ends.
    fn latch_phi_of(&self, id: Id, l: usize, lone_edges: &[bool]) -> Option<(usize, Id)> {
        let h = self.cfg.loops[l].header;
        if !lone_edges.get(h).copied().unwrap_or(false) {
            return None;
        }
        let mut latch = None;
        for &b in self.cfg.loop_blocks(l) {
            let succs = &self.cfg.succs[b];
            let exits = succs.iter().any(|&s| !self.cfg.in_loop(l, s));
            let back = succs.contains(&h);
            if exits || back {
                if !(exits && back) || latch.is_some() {
                    return None;
                }
                latch = Some(b);
            }
        }
        let latch = latch?;
        let Terminator::BranchCond { t, f, .. } = &self.f.blocks[latch].term else {
            return None;
        };
        if t == f {
            return None;
        }
        let label = self.f.blocks[latch].label;
        self.f.blocks[h]
            .insts
            .iter()
            .find_map(|inst| match (&inst.op, inst.result) {
                (Op::Phi(inc), Some(r)) if inc.iter().any(|&(v, p)| v == id && p == label) => {
                    Some((latch, r))
                }
                _ => None,
            })
    }
}
