//! What lowering needs to know about a kernel before emitting code: the flat (inlined)
//! function, its control-flow graph and linear block order, which values and branches
//! are uniform across a sub-group, and which values live across barriers.
//!
//! Nothing here touches Cranelift.

#![allow(clippy::needless_range_loop)] // block indices index several parallel tables

pub mod affine;
pub mod cfg;
pub mod combine;
pub mod const_offsets;
pub mod exact;
pub mod flatten;
pub mod guard;
pub mod ifconvert;
pub mod liveness;
pub mod new_ids;
pub mod placement;
pub mod promote;
pub mod provenance;
pub mod reconverge;
pub mod simplify;
pub mod spin;
pub mod uniformity;
pub mod unit_params;

pub use crate::spirv::{for_each_operand, for_each_operand_mut};
