//! Boolean round trips clang leaves in OpenCL C relational code. OpenCL C's
//! `isnan`, `isinf`, `signbit`... return `int`, so clang writes `isnan(a) || ...` as
//! `OpSelect %int %cond 1 0` and then compares the `int` with 0 (pyopencl's
//! `fmax_nanprop` does it twice per element of every float max reduction). In the
//! lane model each step is a vector operation; here the comparison becomes the
//! condition itself or its negation, and the negation of `OpIsNan x` becomes
//! `OpOrdered x x` (one `cmpordps`).

use std::collections::HashMap;

use super::flatten::FlatFunction;
use crate::spirv::{BinOp, ConstValue, Id, Module, Op, UnOp};

/// Simplifies `flat`; returns how many comparisons were rewritten.
pub fn simplify(m: &Module, flat: &mut FlatFunction) -> usize {
    // Selects of two integer constants, and IsNan results, by id.
    let mut selects: HashMap<Id, (Id, u64, u64)> = HashMap::new();
    let mut isnan: HashMap<Id, Id> = HashMap::new();
    for i in flat.blocks.iter().flat_map(|b| &b.insts) {
        let Some(r) = i.result else { continue };
        match &i.op {
            Op::Select { cond, a, b } => {
                if let (Some(x), Some(y)) = (splat_const(m, *a), splat_const(m, *b)) {
                    selects.insert(r, (*cond, x, y));
                }
            }
            Op::Unary(UnOp::IsNan, x) => {
                isnan.insert(r, *x);
            }
            _ => {}
        }
    }
    if selects.is_empty() {
        return 0;
    }
    let mut subst: HashMap<Id, Id> = HashMap::new();
    let mut made = 0;
    for i in flat.blocks.iter_mut().flat_map(|b| &mut b.insts) {
        let (Op::Binary(op @ (BinOp::IEqual | BinOp::INotEqual), a, b), Some(r)) =
            (&i.op, i.result)
        else {
            continue;
        };
        let (sel, k) = match (selects.get(a), splat_const(m, *b), selects.get(b)) {
            (Some(s), Some(k), _) => (*s, k),
            (None, _, Some(s)) => match splat_const(m, *a) {
                Some(k) => (*s, k),
                None => continue,
            },
            _ => continue,
        };
        let (cond, when_true, when_false) = sel;
        // The comparison is `cond` when it holds exactly for the true arm.
        let eq = *op == BinOp::IEqual;
        let (t, f) = ((when_true == k) == eq, (when_false == k) == eq);
        match (t, f) {
            (true, false) => {
                subst.insert(r, cond);
            }
            (false, true) => {
                i.op = match isnan.get(&cond) {
                    Some(x) => Op::Binary(BinOp::Ordered, *x, *x),
                    None => Op::Unary(UnOp::LogicalNot, cond),
                };
            }
            _ => continue,
        }
        made += 1;
    }
    if !subst.is_empty() {
        flat.replace_uses(|id| subst.get(&id).copied().unwrap_or(id));
    }
    made
}

/// The value of an integer constant, or of a vector constant whose components are
/// all that one integer.
fn splat_const(m: &Module, id: Id) -> Option<u64> {
    let c = m.constants.get(&id)?;
    match &c.value {
        ConstValue::Scalar(v) => Some(*v),
        ConstValue::Null => Some(0),
        ConstValue::Composite(parts) => {
            let first = splat_const(m, *parts.first()?)?;
            parts
                .iter()
                .all(|p| splat_const(m, *p) == Some(first))
                .then_some(first)
        }
        _ => None,
    }
}
