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
//! predecessor). Blocks reached by one edge keep their parameters: `schedule`
//! places them on purpose.

use std::collections::HashMap;

use cranelift_codegen::ir::{self, Block, BlockArg, Value};

/// One edge into a block with parameters: the branch and which destination it is.
struct Edge {
    inst: ir::Inst,
    index: usize,
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
    fn resolve(repl: &HashMap<Value, Value>, mut v: Value) -> Value {
        while let Some(&r) = repl.get(&v) {
            v = r;
        }
        v
    }
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
                let mut only: Option<Value> = None;
                let mut many = false;
                for e in &edges[&b] {
                    let dfg = &func.dfg;
                    let call = dfg.insts[e.inst]
                        .branch_destination(&dfg.jump_tables, &dfg.exception_tables)[e.index];
                    let arg = call.args(&dfg.value_lists).nth(i);
                    let v = match arg {
                        Some(BlockArg::Value(v)) => resolve(&repl, dfg.resolve_aliases(v)),
                        _ => {
                            many = true;
                            break;
                        }
                    };
                    if v == p {
                        continue;
                    }
                    match only {
                        None => only = Some(v),
                        Some(o) if o == v => {}
                        Some(_) => {
                            many = true;
                            break;
                        }
                    }
                }
                if let (false, Some(v)) = (many, only) {
                    repl.insert(p, v);
                    changed = true;
                }
            }
        }
        if !changed {
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
