//! Jump threading over the masked body's mask tests, on the finished Cranelift
//! function (before the mid-end).
//!
//! The masked lowering tests a block's pending mask wherever control may reach it, and
//! joins paths in blocks that only pass values on (landing pads, the join of a
//! duplicated block's two copies). In a divergent loop that makes every iteration run
//! through a test whose outcome its path already decides: the loop-end check
//! `any(header mask)` after a body that just passed the mask it had tested non-empty,
//! or after an exit that passed zero masks. Cranelift does not see through block
//! parameters, so these tests, their joins and the registers holding the constant
//! zero masks stay in the loop (clbench `mandelbrot`: a third of the instructions of
//! an iteration). Here an edge into
//! - a *forwarding* block (nothing but `jump G(args)`) goes to `G` directly, and
//! - a *mask test* (`brif vany_true(p1 | p2 | ...), X, Y` on the block's parameters)
//!   goes to `Y` when the values it passes for `p1, p2, ...` are zero vectors or were
//!   tested empty on the way, and to `X` when they were tested non-empty (an earlier
//!   `vany_true` of the same values whose taken edge dominates the branch).

use cranelift_codegen::dominator_tree::DominatorTree;
use cranelift_codegen::entity::SecondaryMap;
use cranelift_codegen::flowgraph::ControlFlowGraph;
use cranelift_codegen::ir::{self, Block, BlockArg, BlockCall, Function, Inst, Opcode, Value};

/// Rounds of rewriting at most: each round may expose another forwarding step.
const MAX_ROUNDS: usize = 6;

/// Dominators walked up from a branch looking for the test of its masks (the test is
/// near in the masked body's loops; the bound keeps huge functions linear).
const MAX_WALK: usize = 32;

/// What a branch's target block does with the control it receives.
enum Target {
    /// `jump g(args)`: args in terms of the block's parameters.
    Forward(BlockCall),
    /// `brif vany_true(bor-chain of params), x, y`: parameter indices of the chain's
    /// leaves, in order.
    MaskTest(Vec<usize>, BlockCall, BlockCall),
}

/// Threads the function's branches (see the module comment); returns how many branch
/// edges were redirected.
pub(crate) fn thread_mask_tests(func: &mut Function) -> usize {
    func.dfg.resolve_all_aliases();
    let mut total = 0;
    for _ in 0..MAX_ROUNDS {
        let n = round(func);
        total += n;
        if n == 0 {
            break;
        }
    }
    total
}

/// Instructions of a block that may be a forwarding block or a mask test (a test of
/// up to 16 mask chunks: 15 `bor`s, the `vany_true`, the `brif`).
const MAX_TARGET_INSTS: usize = 17;

/// One round: facts from one control-flow graph, rewrites that do not invalidate them.
fn round(func: &mut Function) -> usize {
    // The blocks edges may skip: short, of the right shape, their parameters used
    // only inside them. Most functions have few, and none means nothing else is
    // computed.
    let blocks: Vec<Block> = func.layout.blocks().collect();
    let mut targets: SecondaryMap<Block, Option<std::rc::Rc<Target>>> = SecondaryMap::new();
    let mut param_of_target: SecondaryMap<Value, bool> = SecondaryMap::new();
    let mut any = false;
    for &b in &blocks {
        if func.layout.block_insts(b).nth(MAX_TARGET_INSTS).is_some() {
            continue;
        }
        if let Some(t) = classify(func, b) {
            for &q in func.dfg.block_params(b) {
                param_of_target[q] = true;
            }
            targets[b] = Some(std::rc::Rc::new(t));
            any = true;
        }
    }
    if !any {
        return 0;
    }
    // A parameter read outside its block would lose its definition on a path that
    // skips the block: count the candidates' parameters' uses, all and inside.
    let mut uses: SecondaryMap<Value, u32> = SecondaryMap::new();
    let mut inside: SecondaryMap<Value, u32> = SecondaryMap::new();
    for &b in &blocks {
        let own = targets[b].is_some();
        for i in func.layout.block_insts(b) {
            for v in func.dfg.inst_values(i) {
                if param_of_target[v] {
                    uses[v] += 1;
                    if own && func.dfg.block_params(b).contains(&v) {
                        inside[v] += 1;
                    }
                }
            }
        }
    }
    for &b in &blocks {
        if targets[b].is_some()
            && func
                .dfg
                .block_params(b)
                .iter()
                .any(|&q| uses[q] != inside[q])
        {
            targets[b] = None;
        }
    }
    let cfg = ControlFlowGraph::with_function(func);
    let dt = DominatorTree::with_function(func, &cfg);
    let mut rewrites: Vec<(Inst, usize, BlockCall, Option<Block>)> = Vec::new();
    for &p in &blocks {
        if !dt.is_reachable(p) {
            continue;
        }
        let Some(term) = func.layout.last_inst(p) else {
            continue;
        };
        let dests: Vec<BlockCall> = match &func.dfg.insts[term] {
            ir::InstructionData::Jump { destination, .. } => vec![*destination],
            ir::InstructionData::Brif { blocks, .. } => blocks.to_vec(),
            _ => continue,
        };
        for (k, call) in dests.iter().enumerate() {
            let t = call.block(&func.dfg.value_lists);
            if t == p {
                continue;
            }
            let Some(target) = targets[t].clone() else {
                continue;
            };
            let passed: Vec<BlockArg> = call.args(&func.dfg.value_lists).collect();
            let (new_call, fact) = match &*target {
                Target::Forward(g) => (*g, None),
                Target::MaskTest(leaves, x, y) => {
                    let vals: Option<Vec<Value>> =
                        leaves.iter().map(|&i| passed[i].as_value()).collect();
                    let Some(vals) = vals else { continue };
                    if vals.iter().all(|&v| is_zero_vector(func, v)) {
                        (*y, None)
                    } else {
                        match tested(func, &cfg, &dt, p, &vals) {
                            Some((true, at)) => (*x, Some(at)),
                            Some((false, at)) => (*y, Some(at)),
                            None => continue,
                        }
                    }
                }
            };
            let g = new_call.block(&func.dfg.value_lists);
            if g == t {
                continue;
            }
            // The new target's arguments: the target's parameters replaced by what
            // this edge passes for them; other values dominate the target, hence `p`.
            let params = func.dfg.block_params(t).to_vec();
            let args: Vec<BlockArg> = new_call
                .args(&func.dfg.value_lists)
                .map(|a| match a.as_value() {
                    Some(v) => match params.iter().position(|&q| q == v) {
                        Some(i) => passed[i],
                        None => a,
                    },
                    None => a,
                })
                .collect();
            let nc = BlockCall::new(g, args, &mut func.dfg.value_lists);
            rewrites.push((term, k, nc, fact));
        }
    }
    // A fact "block B is entered only from D's test" breaks when this round gives B
    // another predecessor: such rewrites wait for the next round.
    let mut new_target: SecondaryMap<Block, bool> = SecondaryMap::new();
    for (_, _, c, _) in &rewrites {
        new_target[c.block(&func.dfg.value_lists)] = true;
    }
    let mut done = 0;
    for (term, k, nc, fact) in rewrites {
        if fact.is_some_and(|b| new_target[b]) {
            continue;
        }
        match &mut func.dfg.insts[term] {
            ir::InstructionData::Jump { destination, .. } => *destination = nc,
            ir::InstructionData::Brif { blocks, .. } => blocks[k] = nc,
            _ => continue,
        }
        done += 1;
    }
    done
}

/// The shape of block `t`, if it is one threading sees through.
fn classify(func: &Function, t: Block) -> Option<Target> {
    let insts: Vec<Inst> = func.layout.block_insts(t).collect();
    let params = func.dfg.block_params(t);
    let pool = &func.dfg.value_lists;
    match insts.as_slice() {
        [j] => match &func.dfg.insts[*j] {
            ir::InstructionData::Jump { destination, .. } => {
                // Arguments must be parameters or values from outside the block.
                Some(Target::Forward(*destination))
            }
            _ => None,
        },
        [chain @ .., any, br] => {
            let ir::InstructionData::Brif { arg, blocks, .. } = &func.dfg.insts[*br] else {
                return None;
            };
            let ir::InstructionData::Unary {
                opcode: Opcode::VanyTrue,
                arg: acc,
            } = func.dfg.insts[*any]
            else {
                return None;
            };
            if *arg != func.dfg.first_result(*any) {
                return None;
            }
            let leaves = bor_leaves(func, acc, chain)?;
            let idx: Option<Vec<usize>> = leaves
                .iter()
                .map(|v| params.iter().position(|q| q == v))
                .collect();
            // The branch's arguments may not use values the block computes.
            let local = |c: &BlockCall| {
                c.args(pool).any(|a| {
                    a.as_value().is_some_and(|v| match func.dfg.value_def(v) {
                        ir::ValueDef::Result(i, _) => func.layout.inst_block(i) == Some(t),
                        _ => false,
                    })
                })
            };
            if local(&blocks[0]) || local(&blocks[1]) {
                return None;
            }
            Some(Target::MaskTest(idx?, blocks[0], blocks[1]))
        }
        _ => None,
    }
}

/// The leaves of the `bor` chain `v` (as `mask_any` builds it: `((m0 | m1) | m2) ...`)
/// when every `bor` of it is one of `chain`, in order; else `None`.
fn bor_leaves(func: &Function, v: Value, chain: &[Inst]) -> Option<Vec<Value>> {
    let mut leaves = Vec::new();
    let mut cur = v;
    for &i in chain.iter().rev() {
        // An instruction without results (a store before the test) ends the match.
        if func.dfg.inst_results(i).first() != Some(&cur) {
            return None;
        }
        let ir::InstructionData::Binary {
            opcode: Opcode::Bor,
            args: [a, b],
        } = func.dfg.insts[i]
        else {
            return None;
        };
        leaves.push(b);
        cur = a;
    }
    leaves.push(cur);
    leaves.reverse();
    Some(leaves)
}

/// Whether `v` is a vector constant of all zero bits.
fn is_zero_vector(func: &Function, v: Value) -> bool {
    super::value::vconst_of_byte(func, v, 0)
}

/// Whether the masks `vals` were tested non-empty (`true`) or empty (`false`) on every
/// path to the end of block `p`: a block dominating `p`, entered only by one edge of a
/// `brif vany_true(vals[0] | vals[1] | ...)`. Returns that block too.
fn tested(
    func: &Function,
    cfg: &ControlFlowGraph,
    dt: &DominatorTree,
    p: Block,
    vals: &[Value],
) -> Option<(bool, Block)> {
    let mut b = p;
    for _ in 0..MAX_WALK {
        let mut preds = cfg.pred_iter(b);
        if let (Some(pred), None) = (preds.next(), preds.next()) {
            if let ir::InstructionData::Brif { arg, blocks, .. } = &func.dfg.insts[pred.inst] {
                let pool = &func.dfg.value_lists;
                let (bt, bf) = (blocks[0].block(pool), blocks[1].block(pool));
                if bt != bf && (bt == b || bf == b) && tests_any_of(func, *arg, vals) {
                    return Some((bt == b, b));
                }
            }
        }
        b = dt.idom(b)?;
    }
    None
}

/// Whether `c` is `vany_true` of the `bor` chain of exactly `vals`, in order.
fn tests_any_of(func: &Function, c: Value, vals: &[Value]) -> bool {
    let ir::ValueDef::Result(i, _) = func.dfg.value_def(c) else {
        return false;
    };
    let ir::InstructionData::Unary {
        opcode: Opcode::VanyTrue,
        arg,
    } = func.dfg.insts[i]
    else {
        return false;
    };
    let mut cur = arg;
    for k in (1..vals.len()).rev() {
        let ir::ValueDef::Result(j, _) = func.dfg.value_def(cur) else {
            return false;
        };
        let ir::InstructionData::Binary {
            opcode: Opcode::Bor,
            args: [a, b],
        } = func.dfg.insts[j]
        else {
            return false;
        };
        if b != vals[k] {
            return false;
        }
        cur = a;
    }
    cur == vals[0]
}

#[cfg(test)]
mod tests {
    use super::super::clif_test::finish;
    use super::*;
    use cranelift_codegen::ir::{types, AbiParam, InstBuilder, Signature, UserFuncName};
    use cranelift_codegen::isa::CallConv;
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

    /// The blocks the branches of `f` lead to.
    fn targets(f: &Function) -> Vec<Block> {
        let mut t = Vec::new();
        for b in f.layout.blocks() {
            if let Some(i) = f.layout.last_inst(b) {
                for c in
                    f.dfg.insts[i].branch_destination(&f.dfg.jump_tables, &f.dfg.exception_tables)
                {
                    t.push(c.block(&f.dfg.value_lists));
                }
            }
        }
        t
    }

    /// A masked loop as the lowering emits it: the header tests its mask, the body
    /// passes the mask on through a forwarding join to the loop-end check, and an
    /// exit passes zero masks to the same check.
    #[test]
    fn loop_end_check_is_threaded() {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.push(AbiParam::new(types::I32X4));
        sig.params.push(AbiParam::new(types::I32));
        let mut f = Function::with_name_signature(UserFuncName::user(0, 0), sig);
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut f, &mut fctx);
        let [entry, header, body, exit_path, join, check, done] =
            std::array::from_fn(|_| b.create_block());
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let m0 = b.block_params(entry)[0];
        let n = b.block_params(entry)[1];
        b.ins().jump(header, &[BlockArg::Value(m0)]);
        b.append_block_param(header, types::I32X4);
        b.switch_to_block(header);
        let m = b.block_params(header)[0];
        let any = b.ins().vany_true(m);
        b.ins().brif(any, body, &[], done, &[]);
        b.switch_to_block(body);
        let c = b.ins().icmp_imm_s(ir::condcodes::IntCC::Equal, n, 3);
        b.ins().brif(c, exit_path, &[], join, &[BlockArg::Value(m)]);
        b.switch_to_block(exit_path);
        let zero = b.func.dfg.constants.insert(vec![0u8; 16].into());
        let z = b.ins().vconst(types::I32X4, zero);
        b.ins().jump(join, &[BlockArg::Value(z)]);
        b.append_block_param(join, types::I32X4);
        b.switch_to_block(join);
        let jm = b.block_params(join)[0];
        b.ins().jump(check, &[BlockArg::Value(jm)]);
        b.append_block_param(check, types::I32X4);
        b.switch_to_block(check);
        let cm = b.block_params(check)[0];
        let any2 = b.ins().vany_true(cm);
        b.ins()
            .brif(any2, header, &[BlockArg::Value(cm)], done, &[]);
        b.switch_to_block(done);
        b.ins().return_(&[]);
        let flags = finish(b);

        let n = thread_mask_tests(&mut f);
        assert!(n > 0);
        cranelift_codegen::verifier::verify_function(&f, &flags).expect("valid after threading");
        let t = targets(&f);
        let cfg = ControlFlowGraph::with_function(&f);
        let dt = DominatorTree::with_function(&f, &cfg);
        // Nothing reachable leads to the join or the check any more: the body goes
        // straight back to the header (its mask was tested non-empty there), the
        // exit path straight out (its masks are zero).
        for blk in [join, check] {
            assert!(
                cfg.pred_iter(blk).all(|p| !dt.is_reachable(p.block)),
                "{blk} still reached: {t:?}\n{}",
                f.display()
            );
        }
    }

    /// A block that stores before its mask test is not a mask test: threading leaves
    /// the edge into it alone instead of failing on the store, which has no result
    /// (pyopencl's bessel_yn reached this through a decided branch).
    #[test]
    fn store_before_a_mask_test_is_left_alone() {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.push(AbiParam::new(types::I32X4));
        sig.params.push(AbiParam::new(types::I64));
        let mut f = Function::with_name_signature(UserFuncName::user(0, 0), sig);
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut f, &mut fctx);
        let [entry, check, yes, no] = std::array::from_fn(|_| b.create_block());
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let m0 = b.block_params(entry)[0];
        let p = b.block_params(entry)[1];
        b.ins().jump(check, &[BlockArg::Value(m0)]);
        b.append_block_param(check, types::I32X4);
        b.switch_to_block(check);
        let cm = b.block_params(check)[0];
        b.ins().store(ir::MemFlagsData::trusted(), cm, p, 0);
        let any = b.ins().vany_true(cm);
        b.ins().brif(any, yes, &[], no, &[]);
        for blk in [yes, no] {
            b.switch_to_block(blk);
            b.ins().return_(&[]);
        }
        let flags = finish(b);

        assert_eq!(thread_mask_tests(&mut f), 0);
        cranelift_codegen::verifier::verify_function(&f, &flags).expect("valid after threading");
        assert_eq!(targets(&f), vec![check, yes, no]);
    }
}
