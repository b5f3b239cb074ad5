//! Removes block parameters that always receive one and the same value.
//!
//! The frontend's SSA construction removes a parameter when, at the time its block
//! is sealed, every predecessor passes the same value. Chains of such parameters
//! (a join after a load's fast and slow paths, inside a loop whose header was not
//! sealed yet) are only recognised once their inputs are resolved, which happens
//! later: a variable that a loop never changes (an accumulator read only after the
//! loop) then rides through the loop in block parameters that every path copies,
//! and the register allocator moves or spills them in every iteration. Cranelift's
//! own constant-parameter pass does not help: it only removes a parameter whose
//! single input is an instruction's result, not another block's parameter.
//!
//! This pass repeats until nothing changes: a parameter of a block reached by two or
//! more edges whose arguments, ignoring the parameter itself, are all one value `v`
//! becomes an alias of `v` (which dominates the block: it reaches every
//! predecessor); so does every parameter of a cycle of them that receive only each
//! other and `v` (a masked loop's header and its loop-end check pass such a variable
//! to each other: clbench-style `mandel3`, a third float carried at width 8, ran at
//! 45 Mpix/s with three of them riding along, 82 without). Blocks reached by one
//! edge keep their parameters: `schedule` places them on purpose.

use std::collections::HashMap;

use cranelift_codegen::ir::{self, Block, BlockArg, Value};

/// One edge into a block with parameters: the branch and which destination it is.
struct Edge {
    inst: ir::Inst,
    index: usize,
}

/// `v` through the replacements found so far.
fn resolve(repl: &HashMap<Value, Value>, mut v: Value) -> Value {
    while let Some(&r) = repl.get(&v) {
        v = r;
    }
    v
}

/// The values the edges `es` into `b` pass for its parameter `i` (resolved), or
/// `None` when an edge passes something other than a value.
fn inputs(
    func: &ir::Function,
    repl: &HashMap<Value, Value>,
    es: &[Edge],
    i: usize,
) -> Option<Vec<Value>> {
    let dfg = &func.dfg;
    es.iter()
        .map(|e| {
            let call = dfg.insts[e.inst]
                .branch_destination(&dfg.jump_tables, &dfg.exception_tables)[e.index];
            match call.args(&dfg.value_lists).nth(i) {
                Some(BlockArg::Value(v)) => Some(resolve(repl, dfg.resolve_aliases(v))),
                _ => None,
            }
        })
        .collect()
}

/// The one value among `vals` that `skip` does not exclude, if there is exactly one
/// (repeats allowed).
fn only_other(
    vals: impl IntoIterator<Item = Value>,
    skip: impl Fn(Value) -> bool,
) -> Option<Value> {
    let mut only = None;
    for v in vals {
        if skip(v) || only == Some(v) {
            continue;
        }
        if only.is_some() {
            return None;
        }
        only = Some(v);
    }
    only
}

/// Parameters that receive only each other and one value `v` from outside (a
/// variable a loop never changes, passed from the header to the loop-end check and
/// back: each parameter sees the other as a second input) all become `v`, a cycle
/// at a time (strongly connected components of "receives", Braun et al.'s SSA
/// construction, section 3.2). Returns whether any was found. The one-parameter
/// rule in [`prune`] is not a special case of this: a parameter whose inputs are
/// all one member of a bigger component (that has several inputs from outside)
/// goes alone, while its component stays (clbench `reduce_wg` has eight such).
fn prune_cycles(
    func: &ir::Function,
    edges: &HashMap<Block, Vec<Edge>>,
    blocks: &[Block],
    repl: &mut HashMap<Value, Value>,
) -> bool {
    // Every remaining parameter and the values it receives.
    let mut ins: HashMap<Value, Vec<Value>> = HashMap::new();
    for &b in blocks {
        for (i, &p) in func.dfg.block_params(b).iter().enumerate() {
            if repl.contains_key(&p) {
                continue;
            }
            if let Some(v) = inputs(func, repl, &edges[&b], i) {
                ins.insert(p, v);
            }
        }
    }
    let mut found = false;
    for scc in strongly_connected(&ins) {
        if scc.len() < 2 {
            continue;
        }
        let all = scc.iter().flat_map(|p| ins[p].iter().copied());
        if let Some(v) = only_other(all, |v| scc.contains(&v)) {
            for p in scc {
                repl.insert(p, v);
            }
            found = true;
        }
    }
    found
}

/// The strongly connected components of the graph `p -> q` for every parameter `q`
/// among `p`'s inputs (Tarjan's algorithm, iterative).
fn strongly_connected(ins: &HashMap<Value, Vec<Value>>) -> Vec<Vec<Value>> {
    let mut nodes: Vec<Value> = ins.keys().copied().collect();
    nodes.sort_unstable();
    let mut index: HashMap<Value, usize> = HashMap::new();
    let mut low: HashMap<Value, usize> = HashMap::new();
    let mut on_stack: std::collections::HashSet<Value> = Default::default();
    let mut stack: Vec<Value> = Vec::new();
    let mut out = Vec::new();
    let mut next = 0usize;
    for &root in &nodes {
        if index.contains_key(&root) {
            continue;
        }
        // (node, position in its successor list)
        let mut work: Vec<(Value, usize)> = vec![(root, 0)];
        index.insert(root, next);
        low.insert(root, next);
        next += 1;
        stack.push(root);
        on_stack.insert(root);
        while let Some(&mut (v, ref mut pos)) = work.last_mut() {
            let succ: Vec<Value> = ins[&v]
                .iter()
                .copied()
                .filter(|w| ins.contains_key(w))
                .collect();
            if *pos < succ.len() {
                let w = succ[*pos];
                *pos += 1;
                if let std::collections::hash_map::Entry::Vacant(e) = index.entry(w) {
                    e.insert(next);
                    low.insert(w, next);
                    next += 1;
                    stack.push(w);
                    on_stack.insert(w);
                    work.push((w, 0));
                } else if on_stack.contains(&w) {
                    let lw = index[&w].min(low[&v]);
                    low.insert(v, lw);
                }
                continue;
            }
            work.pop();
            if let Some(&(u, _)) = work.last() {
                let lu = low[&u].min(low[&v]);
                low.insert(u, lu);
            }
            if low[&v] == index[&v] {
                let mut scc = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack.remove(&w);
                    scc.push(w);
                    if w == v {
                        break;
                    }
                }
                out.push(scc);
            }
        }
    }
    out
}

/// Prunes the redundant parameters of `func` (see the module comment).
pub(crate) fn prune(func: &mut ir::Function) {
    let entry = func.layout.entry_block();
    // Edges into each block that has parameters.
    let mut edges: HashMap<Block, Vec<Edge>> = HashMap::new();
    for block in func.layout.blocks() {
        let Some(inst) = func.layout.last_inst(block) else {
            continue;
        };
        let dfg = &func.dfg;
        for (index, call) in dfg.insts[inst]
            .branch_destination(&dfg.jump_tables, &dfg.exception_tables)
            .iter()
            .enumerate()
        {
            let dest = call.block(&dfg.value_lists);
            if !dfg.block_params(dest).is_empty() && Some(dest) != entry {
                edges.entry(dest).or_default().push(Edge { inst, index });
            }
        }
    }
    edges.retain(|_, e| e.len() >= 2);
    // Replacements found so far (formal -> value), resolved through chains.
    let mut repl: HashMap<Value, Value> = HashMap::new();
    let mut blocks: Vec<Block> = edges.keys().copied().collect();
    blocks.sort_unstable();
    loop {
        let mut changed = false;
        for &b in &blocks {
            let params: Vec<Value> = func.dfg.block_params(b).to_vec();
            for (i, &p) in params.iter().enumerate() {
                if repl.contains_key(&p) {
                    continue;
                }
                let Some(vals) = inputs(func, &repl, &edges[&b], i) else {
                    continue;
                };
                if let Some(v) = only_other(vals, |v| v == p) {
                    repl.insert(p, v);
                    changed = true;
                }
            }
        }
        if !changed && !prune_cycles(func, &edges, &blocks, &mut repl) {
            break;
        }
    }
    if repl.is_empty() {
        return;
    }
    // Edit: drop the arguments of the removed parameters, then the parameters.
    for (&b, es) in &edges {
        let params = func.dfg.block_params(b).to_vec();
        let keep: Vec<bool> = params.iter().map(|p| !repl.contains_key(p)).collect();
        if keep.iter().all(|k| *k) {
            continue;
        }
        for e in es {
            let dfg = &mut func.dfg;
            let dests = dfg.insts[e.inst]
                .branch_destination_mut(&mut dfg.jump_tables, &mut dfg.exception_tables);
            let call = &mut dests[e.index];
            let args: Vec<BlockArg> = call
                .args(&dfg.value_lists)
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(a, _)| a)
                .collect();
            let dest = call.block(&dfg.value_lists);
            *call = ir::BlockCall::new(dest, args, &mut dfg.value_lists);
        }
        for (p, k) in params.iter().zip(&keep).rev() {
            if !k {
                func.dfg.remove_block_param(*p);
            }
        }
    }
    for (&p, _) in repl.iter() {
        let v = resolve(&repl, p);
        func.dfg.change_to_alias(p, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::ir::{types, AbiParam, Function, InstBuilder, Signature, UserFuncName};
    use cranelift_codegen::isa::CallConv;
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

    use super::super::clif_test::finish;

    /// `f(x, c) -> i32`: a loop whose header and loop-end check pass a value to each
    /// other, both also entered from the start with `v = x + 7` (or, with
    /// `second_input`, the check with `x`): the header's parameter receives `v` and
    /// the check's, the check's `v` and the header's. Returns the function, the two
    /// parameters and `v`.
    fn cycle(second_input: bool) -> (Function, cranelift_codegen::settings::Flags, [Value; 3]) {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.push(AbiParam::new(types::I32));
        sig.params.push(AbiParam::new(types::I32));
        sig.returns.push(AbiParam::new(types::I32));
        let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut fctx);
        let [entry, header, check, exit] = [(); 4].map(|_| b.create_block());
        b.append_block_params_for_function_params(entry);
        let p = b.append_block_param(header, types::I32);
        let n = b.append_block_param(header, types::I32);
        let q = b.append_block_param(check, types::I32);
        let m = b.append_block_param(check, types::I32);
        b.switch_to_block(entry);
        let (x, c) = (b.block_params(entry)[0], b.block_params(entry)[1]);
        let v = b.ins().iadd_imm_s(x, 7);
        let into_check = if second_input { x } else { v };
        b.ins().brif(
            c,
            header,
            &[v.into(), x.into()],
            check,
            &[into_check.into(), x.into()],
        );
        b.switch_to_block(header);
        let n1 = b.ins().iadd_imm_s(n, -1);
        b.ins().jump(check, &[p.into(), n1.into()]);
        b.switch_to_block(check);
        b.ins().brif(m, header, &[q.into(), m.into()], exit, &[]);
        b.switch_to_block(exit);
        b.ins().return_(&[q]);
        let flags = finish(b);
        (func, flags, [p, q, v])
    }

    /// [`cycle`] after the pass (checked by the verifier): the function, the block
    /// parameters left, and the header's and the check's parameters and `v`.
    fn pruned(second_input: bool) -> (Function, Vec<Value>, [Value; 3]) {
        let (mut func, flags, vals) = cycle(second_input);
        prune(&mut func);
        cranelift_codegen::verify_function(&func, &flags).expect("pruned function verifies");
        let params: Vec<Value> = func
            .layout
            .blocks()
            .flat_map(|b| func.dfg.block_params(b).to_vec())
            .collect();
        (func, params, vals)
    }

    #[test]
    fn parameters_passing_one_value_around_a_cycle_become_that_value() {
        let (func, params, [p, q, v]) = pruned(false);
        assert!(!params.contains(&p) && !params.contains(&q), "{params:?}");
        assert_eq!(func.dfg.resolve_aliases(p), v);
        assert_eq!(func.dfg.resolve_aliases(q), v);
        // The counters stay: they change around the loop.
        assert_eq!(params.len(), 2 + 2, "x, c and the two counters: {params:?}");
    }

    #[test]
    fn a_cycle_with_two_values_from_outside_keeps_its_parameters() {
        let (_, params, [p, q, _]) = pruned(true);
        assert!(params.contains(&p) && params.contains(&q), "{params:?}");
    }
}
