//! Kernel parameters worth a copy of the kernel compiled for the value 1.
//!
//! A lane-affine value (`base + lane * stride`) stays symbolic through the lowering
//! only while its stride is a constant. Multiplied by an integer *parameter* it
//! becomes a per-lane vector, and so does everything computed from it: loop phis,
//! 64-bit compares, and every load through it, which then checks at run time whether
//! its lanes are contiguous. pyopencl's `ReductionKernel` indexes its input with
//! `i = pcl_start + (group_base + lid) * pcl_step` and steps `i += GROUP_SIZE *
//! pcl_step`, and `pcl_step` is 1 for every contiguous array: its stage-1 loop ran 3x
//! slower than with a literal 1. Such a parameter gets a second copy of the kernel
//! compiled with the parameter a constant 1, chosen by the launch's argument value
//! (`crate::variants`).
//!
//! The candidates are the integer parameters that some `OpIMul` multiplies with a
//! value affine in the lane-contiguous layout. A parameter multiplied only with
//! uniform values (a row pitch times `get_global_id(1)`) keeps one copy: its products
//! are uniform anyway.

use std::collections::HashSet;

use super::affine::{self, Shape};
use super::cfg::Cfg;
use super::exact::{self, Layout};
use super::flatten::FlatFunction;
use super::uniformity::Uniformity;
use crate::spirv::{BinOp, Id, Module, Op, Type};

/// The integer parameters of `f` that multiply a lane-affine value, in parameter
/// order (empty for most kernels: the shape analysis runs only when a parameter is
/// an operand of a multiplication at all).
pub fn find(
    m: &Module,
    f: &FlatFunction,
    cfg: &Cfg,
    uni: &Uniformity,
    reqd_local: Option<[u32; 3]>,
    w: u32,
) -> Vec<Id> {
    let int_params: HashSet<Id> = f
        .params
        .iter()
        .filter(|(_, ty)| matches!(m.types.get(ty), Some(Type::Int { .. })))
        .map(|(id, _)| *id)
        .collect();
    // (parameter, the value it multiplies)
    let products: Vec<(Id, Id)> = f
        .blocks
        .iter()
        .flat_map(|b| &b.insts)
        .filter_map(|i| match i.op {
            Op::Binary(BinOp::IMul, a, b) if int_params.contains(&a) => Some((a, b)),
            Op::Binary(BinOp::IMul, a, b) if int_params.contains(&b) => Some((b, a)),
            _ => None,
        })
        .collect();
    if products.is_empty() {
        return Vec::new();
    }
    let types = f.value_types();
    let facts = exact::analyze(
        m,
        f,
        uni,
        &types,
        Layout::Contiguous(reqd_local),
        w,
        &HashSet::new(),
    );
    let shapes = affine::shapes(
        m,
        f,
        uni,
        &types,
        &facts,
        &affine::phi_candidates(f, cfg, uni),
    );
    let hit: HashSet<Id> = products
        .iter()
        .filter(|(_, v)| matches!(shapes.get(v), Some(Shape::Affine(_))))
        .map(|(p, _)| *p)
        .collect();
    f.params
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| hit.contains(id))
        .collect()
}
