//! A cheap estimate of a function's register pressure, to pick the register allocator.
//!
//! regalloc2's backtracking allocator grows faster than linearly with the number of
//! values live at once: pyopencl's 16-element bitonic sorting network (32 660
//! Cranelift instructions, 32 keys and indices live throughout, two or more vector
//! registers each at width 8) took 3.1 s of CPU in it, 74% in
//! `try_to_allocate_bundle_to_reg` probing the same crowded registers again and again;
//! pyopencl needs 20 such kernels. [`max_live`] numbers the instructions in layout
//! order and counts the values whose span from definition to last use (in that order)
//! covers a point: exact for straight-line code, an underestimate around loops, which is
//! enough to tell those kernels from the ones the allocator handles well.

use cranelift_codegen::entity::EntityRef;
use cranelift_codegen::ir::{Function, Value};

/// The largest number of values whose [definition, last use] spans, in layout order,
/// overlap one instruction.
pub fn max_live(func: &Function) -> usize {
    let values = func.dfg.num_values();
    let mut def = vec![usize::MAX; values];
    let mut last = vec![0usize; values];
    let mut pos = 0;
    let note_use = |v: Value, pos: usize, last: &mut Vec<usize>| {
        let v = func.dfg.resolve_aliases(v);
        last[v.index()] = last[v.index()].max(pos);
    };
    for block in func.layout.blocks() {
        for &param in func.dfg.block_params(block) {
            def[param.index()] = def[param.index()].min(pos);
        }
        for inst in func.layout.block_insts(block) {
            pos += 1;
            for &arg in func.dfg.inst_args(inst) {
                note_use(arg, pos, &mut last);
            }
            for dest in func.dfg.insts[inst]
                .branch_destination(&func.dfg.jump_tables, &func.dfg.exception_tables)
            {
                for arg in dest.args(&func.dfg.value_lists) {
                    if let Some(v) = arg.as_value() {
                        note_use(v, pos, &mut last);
                    }
                }
            }
            for &result in func.dfg.inst_results(inst) {
                def[result.index()] = pos;
            }
        }
    }
    let mut delta = vec![0i64; pos + 2];
    for v in 0..values {
        if def[v] != usize::MAX && last[v] > def[v] {
            delta[def[v]] += 1;
            delta[last[v]] -= 1;
        }
    }
    let mut live = 0i64;
    let mut best = 0i64;
    for d in delta {
        live += d;
        best = best.max(live);
    }
    best as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::ir::{types, AbiParam, InstBuilder, Signature};
    use cranelift_codegen::isa::CallConv;
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

    /// `n` values defined one after another and all summed at the end: `n` live at
    /// once (plus the running sum); a chain where each value dies at once: 2.
    #[test]
    fn counts_values_live_at_once() {
        for (keep_all, n, want) in [(true, 12, 13), (false, 12, 2)] {
            let mut sig = Signature::new(CallConv::SystemV);
            sig.params.push(AbiParam::new(types::I32));
            sig.returns.push(AbiParam::new(types::I32));
            let mut func = Function::with_name_signature(Default::default(), sig);
            let mut fctx = FunctionBuilderContext::new();
            let mut b = FunctionBuilder::new(&mut func, &mut fctx);
            let entry = b.create_block();
            b.append_block_params_for_function_params(entry);
            b.switch_to_block(entry);
            let x = b.block_params(entry)[0];
            let mut values = Vec::new();
            let mut last = x;
            for i in 0..n {
                let v = b.ins().iadd_imm_s(if keep_all { x } else { last }, i);
                values.push(v);
                last = v;
            }
            let result = if keep_all {
                values
                    .iter()
                    .skip(1)
                    .fold(values[0], |acc, &v| b.ins().iadd(acc, v))
            } else {
                last
            };
            b.ins().return_(&[result]);
            b.seal_all_blocks();
            let isa = cranelift_native::builder()
                .expect("host ISA")
                .finish(cranelift_codegen::settings::Flags::new(
                    cranelift_codegen::settings::builder(),
                ))
                .expect("host ISA");
            b.finalize(isa.frontend_config());
            // `x` is live until the last value that reads it.
            assert_eq!(max_live(&func), want, "keep_all {keep_all}");
        }
    }
}
