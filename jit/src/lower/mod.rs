//! SPIR-V (our IR, analysed) -> Cranelift IR in the lane model. With `crate::codegen`
//! the only place that touches Cranelift.
//!
//! One generated function runs a whole work-group: a loop over its sub-groups, each
//! sub-group a pass over the kernel body with one work-item per SIMD lane
//! ([`value`]). The body is linearised ([`control`]): blocks run in the CFG's linear
//! order under per-block execution masks, skipped when no lane is active, loops
//! repeated while their header mask has lanes. Kernels with barriers are split into
//! regions ([`barrier`]). Instructions are lowered in [`inst`], memory accesses in
//! [`memory`] (their per-lane fallback in [`per_lane`]), OpenCL.std in [`extinst`]
//! (printf in [`printf`]), sub-group operations in [`group`].

#![allow(clippy::needless_range_loop)] // lane/component indices read clearer as indices

mod affine_cmp;
pub(crate) mod async_copy;
mod atomic;
mod barrier;
mod barrier_remat;
pub(crate) use barrier::COLLECTIVE_SLOT_BYTES;
mod bits;
mod block2d;
mod block2d_fast;
mod broadcast_load;
mod calls;
mod chunk_major;
#[cfg(test)]
mod clif_test;
mod control;
mod device_enqueue;
mod enqueue_spirv;
mod extinst;
mod float_vec;
mod generic;
mod group;
mod group_khr;
mod guard;
mod half;
mod hint;
mod hint_div;
mod inst;
mod int_vec;
mod lane_scalars;
mod left_together;
mod local_masked;
mod loop_pressure;
mod mask_pack;
mod masked;
mod memory;
mod mul64;
mod per_lane;
mod pipe;
mod pow_const;
mod printf;
mod redundant_params;
pub(crate) use loop_pressure::relieve_loops;
mod loop_spill;
pub(crate) use loop_spill::spill_loop_invariants;
mod remat;
pub(crate) use remat::remat_constants;
pub(crate) use slot_remat::remat_from_slots;
mod schedule;
mod single_lane;
mod slot_remat;
mod sparse;
mod split64;
mod state;
mod storage;
pub(crate) mod thread;
pub(crate) mod value;
mod vconst_fold;
pub(crate) use vconst_fold::fold_vector_constants;
mod vmath;
mod wide;

use std::collections::HashMap;
use std::rc::Rc;

use cranelift_codegen::ir::{self, condcodes::IntCC, types, AbiParam, InstBuilder, Value};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_module::{FuncId, Linkage, Module as _};

use crate::abi::{NdRangeInfo, WorkGroupState};
use crate::analysis::cfg::Cfg;
use crate::analysis::flatten::FlatFunction;
use crate::analysis::uniformity::Uniformity;
use crate::spirv::{BuiltIn, Id, Module, Type};
use crate::{CompileError, CompileOptions};
use value::{Elem, Lv, Val};

/// Error message of a shape conflict between the copies of a duplicated block (the
/// caller retries without duplication).
pub(crate) const DUP_CONFLICT: &str = "internal: value shapes differ between block copies";

/// Per-id storage of a defined value: Cranelift variables for each leaf.
#[derive(Clone, Debug)]
pub(crate) enum Slot {
    U(Variable),
    V(Vec<Variable>),
    A(Variable, i64),
}

/// Values of the launch and work-group, loaded once at function entry.
#[derive(Clone, Debug)]
pub(crate) struct GroupEnv {
    /// The launch's `NdRangeInfo` pointer.
    pub ndrange: Value,
    pub work_dim: Value,
    pub group_id: [Value; 3],
    pub local_size: [Value; 3],
    pub global_offset: [Value; 3],
    pub global_size: [Value; 3],
    pub enqueued: [Value; 3],
    pub num_groups: [Value; 3],
    pub local_mem: Value,
    /// Bytes of the `__local` block (`WorkGroupState::local_mem_size`).
    pub local_mem_size: Value,
    pub scratch: Value,
    /// Linear local size L.
    pub linear: Value,
    /// Number of sub-groups.
    pub n_sg: Value,
}

/// Values of the current sub-group.
#[derive(Clone, Debug)]
pub(crate) struct SubGroupEnv {
    /// Sub-group index (i64).
    pub sg: Value,
    /// Linear local id of lane 0.
    pub first: Value,
    /// Active lanes in this sub-group: min(W, L - first) (i64).
    pub size: Value,
    /// Local id of lane 0 per dimension (lane-contiguous variant), or None in the
    /// general variant.
    pub row: Option<[Value; 3]>,
    /// The initial execution mask.
    pub mask: Vec<Value>,
    /// Base of this sub-group's private memory (W copies of every private variable).
    pub private_base: Value,
}

/// The translator of one kernel.
pub(crate) struct Tr<'a, 'b> {
    pub m: &'a Module,
    pub f: &'a FlatFunction,
    pub cfg: &'a Cfg,
    pub uni: &'a Uniformity,
    pub opts: &'a CompileOptions,
    pub b: FunctionBuilder<'b>,
    pub jm: &'a mut cranelift_jit::JITModule,
    pub w: u32,
    elems_cache: HashMap<Id, Rc<Vec<Elem>>>,
    vals: HashMap<Id, storage::Stored>,
    /// Where values may live (plain values, variables, memory homes).
    pub placement: crate::analysis::placement::Placement,
    /// Whether the body being emitted is the masked (linearised) one.
    pub masked_body: bool,
    /// Byte offset of each homed value's slot in the home area.
    pub home_offsets: HashMap<Id, u64>,
    /// Bytes of the home area (per sub-group, in the scratch area).
    pub home_bytes: u64,
    /// Values read from their homes, or recomputed (`barrier_remat`), in a
    /// Cranelift block: their leaves there, reused within that block.
    block_cache: HashMap<Id, (ir::Block, Vec<Lv>)>,
    /// Values recomputed in each block that reads them instead of homed
    /// (`barrier_remat`), with their operands.
    remat: std::collections::HashSet<Id>,
    /// The home area of a kernel without barriers (huge kernels: values used
    /// outside their block), a stack slot; with barriers it is in the scratch.
    home_slot: Option<ir::StackSlot>,
    /// Access chains into built-in variables: id -> (built-in, component).
    builtin_ptrs: HashMap<Id, (BuiltIn, Option<u32>)>,
    pub genv: Option<GroupEnv>,
    pub sgenv: Option<SubGroupEnv>,
    /// Execution mask of the block being lowered.
    pub mask: Vec<Value>,
    /// Packed forms of the masked body's masks (`mask_pack`).
    packed: mask_pack::PackedMasks,
    /// Cached "mask is full" (i8) for the block being lowered.
    pub mask_full: Option<Value>,
    /// Statically known fullness of the current mask (in duplicated blocks).
    pub full_state: Option<bool>,
    /// Ids defined by the first copy of a duplicated block: the second copy writes
    /// the same variables.
    pub dup_defs: Option<std::collections::HashSet<Id>>,
    /// True while emitting the second copy of a duplicated block.
    pub dup_second: bool,
    /// Whether blocks may be duplicated for full masks.
    pub allow_dup: bool,
    /// A value had different shapes in the two copies of a duplicated block.
    pub dup_conflict: bool,
    /// Byte offsets of private variables in the per-lane private area.
    pub private_offsets: HashMap<Id, u64>,
    /// Pointers derived from private variables (`analysis::provenance`).
    pub private_ptrs: std::collections::HashSet<Id>,
    pub private_bytes: u64,
    /// Alignment of the private area: the strictest private variable's (at least 16).
    pub private_align: u64,
    /// Byte offsets of kernel-scope `__local` variables in `local_mem`.
    pub local_offsets: HashMap<Id, u64>,
    /// Addresses of constant/global data owned by the compiled program.
    pub data_addrs: HashMap<Id, u64>,
    /// Imported functions already declared in this function.
    func_refs: HashMap<String, ir::FuncRef>,
    /// Barrier regions.
    pub regions: barrier::Regions,
    /// Result type of every instruction and parameter of the flat function.
    value_types: HashMap<Id, Id>,
    /// The linearised body being emitted.
    body_state: Option<control::BodyState>,
    /// Stack slot of the private area (kernels without barriers).
    private_slot: Option<ir::StackSlot>,
    /// Stack slot that inactive lanes of branch-free per-lane accesses touch.
    sink_slot: Option<ir::StackSlot>,
    /// Scratch slot of the active-lane loops (`sparse`).
    sparse_slot: Option<ir::StackSlot>,
    /// The load or store being lowered goes through a `__local` pointer (set by
    /// `memory::load`/`store` around the access): `local_masked` may access whole
    /// vectors under a partial mask.
    local_access: bool,
    /// Where the masked body keeps its control state.
    state_area: state::StateArea,
    /// "Lane l of this mask chunk is active" values of the current Cranelift block.
    lane_cache: (Option<ir::Block>, HashMap<(Value, u8), Value>),
    /// Barrier machinery of the body being emitted.
    pub bctx: Option<barrier::BarrierCtx>,
    /// Offset in local memory of the work-group collective slots.
    pub collective_base: u64,
    /// Offset of each kernel parameter in the argument block.
    arg_offsets: Vec<u64>,
    /// `reqd_work_group_size`, when the kernel has one.
    reqd_local: Option<[u32; 3]>,
    /// Every sub-group of every launch is full (uniform work-groups of a required
    /// size that is a multiple of the width): bodies get only their full-mask copy.
    pub all_sub_groups_full: bool,
    /// Affine shapes of varying values (for loop phis of uniform bodies).
    pub shapes: HashMap<Id, crate::analysis::affine::Shape>,
    /// Which integer values may be widened or shifted right in affine form, in the
    /// sub-group layout being emitted.
    pub exact: HashMap<Id, crate::analysis::exact::Fact>,
    /// Checked affine forms of varying values of the block copy being lowered.
    hints: HashMap<Id, hint::Hint>,
    /// The facts of the lane-contiguous and of the general layout.
    exact_layouts: [HashMap<Id, crate::analysis::exact::Fact>; 2],
    /// What the lane-contiguous layout's facts assume (`analysis::guard`).
    guards: Vec<crate::analysis::guard::Guard>,
    /// Whether phis may be affine (off when retrying after a shape conflict).
    pub affine_phis: bool,
    /// An affine phi received a value of another shape.
    pub shape_conflict: bool,
    /// `CRANECL_DEBUG_SHAPES`: print the lane shape of every defined value.
    debug_shapes: bool,
    /// Private loads whose only use is a following sub-group broadcast
    /// (`broadcast_load`), and those of them lowered but not yet emitted.
    pub broadcast_loads: std::collections::HashSet<Id>,
    pub deferred_loads: HashMap<Id, (Id, Id, u32)>,
    /// Lane loads of deferred broadcasts that the mid-end may move and copy: global
    /// or constant memory, in a block no enclosing loop of which writes memory
    /// (`chunk_major` loads them again per chunk).
    pub movable_loads: std::collections::HashSet<Value>,
    /// Per loop of the function, whether it may write memory (computed with
    /// [`Tr::broadcast_loads`], empty when no load is deferred).
    pub writing_loops: Vec<bool>,
    /// The SPIR-V block being lowered (by index).
    pub cur_block: Option<usize>,
    /// printf call sites found so far.
    printf: printf::PrintfState,
    /// Which layout variants this function holds (see [`Variants`]).
    variants: Variants,
    /// Ids waiting for the next scheduling checkpoint (`schedule`).
    pending: schedule::Pending,
    /// A huge kernel (`crate::tiers`): control state in memory whatever its size,
    /// and straight-line code wherever it can be (per-lane accesses without
    /// contiguity branches or active-lane loops, no scheduling checkpoints), since
    /// its single-pass allocator costs blocks x live values.
    pub huge: bool,
    /// Whether the SPIR-V block being lowered is emitted chunk by chunk
    /// (`chunk_major`): no scheduling checkpoints inside it.
    pub chunk_major: bool,
    /// Comparison masks of an affine and a uniform value, by their first chunk.
    affine_cmps: HashMap<Value, affine_cmp::AffineCmp>,
    /// Masks that are logical combinations of others, by their first chunk.
    bool_combs: HashMap<Value, affine_cmp::BoolComb>,
    /// The single-block loop whose full-mask copy is being lowered, that copy's
    /// first block (an iteration in which every lane continues jumps back there) and
    /// the empty mask its pending mask was cleared with.
    pub self_loop: Option<(usize, ir::Block, Value)>,
    /// Blocks of the masked body that at most one lane enters, noted at the branch
    /// into them (`single_lane`).
    single_lane_blocks: HashMap<usize, single_lane::SingleLane>,
    /// The lane (i64) of the single-lane block being lowered: operands read as its
    /// scalars.
    single_lane: Option<Value>,
    /// The 32-bit halves of `long` chunk pairs (`split64`), by the two chunks.
    halves: HashMap<(Value, Value), split64::Halves>,
    /// Shuffle masks already in the function's immediates: one handle per mask, so
    /// that the mid-end sees equal shuffles as equal (GVN compares the handles).
    shuffle_imms: HashMap<[u8; 16], ir::Immediate>,
}

/// The layout variants a kernel function contains. A work-group runs the
/// lane-contiguous body (every sub-group in one row, small ids) or the general one;
/// a kernel too large for the good register allocator with both in one function is
/// compiled as one function per variant and a small entry that picks one per
/// work-group, so that the variant that runs gets the better allocator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Variants {
    /// Both bodies, chosen per work-group inside the function.
    Both,
    /// Only the lane-contiguous body: the caller checked that it applies.
    Contiguous,
    /// Only the general body (valid for every work-group).
    General,
    /// Only the choice: calls the first function for lane-contiguous work-groups,
    /// else the second, with the entry's arguments.
    Dispatch(cranelift_module::FuncId, cranelift_module::FuncId),
}

/// What lowering one kernel produces.
pub(crate) struct LoweredKernel {
    pub func: ir::Function,
    pub private_bytes: u64,
    pub scratch_per_sg: u64,
    pub has_barriers: bool,
    /// Work-group collective slots used (16 bytes each after the static locals).
    pub collective_slots: usize,
    /// The printf call sites the generated code writes records for.
    pub printf: crate::printf::PrintfInfo,
    /// The function holds two layout bodies ([`Variants::Both`] with both possible).
    pub two_layouts: bool,
}

/// Lowers one kernel to a Cranelift function.
#[allow(clippy::too_many_arguments)]
pub(crate) fn lower_kernel(
    m: &Module,
    f: &FlatFunction,
    cfg: &Cfg,
    uni: &Uniformity,
    w: u32,
    // The lowering never contracts a*b+c into an fma (only OpExtInst fma/mad under
    // -cl-mad-enable fuse), so `ContractionOff` needs no action.
    _contraction_off: bool,
    opts: &CompileOptions,
    jm: &mut cranelift_jit::JITModule,
    _fctx: &mut FunctionBuilderContext,
    local_offsets: &HashMap<Id, u64>,
    collective_base: u64,
    data_addrs: &HashMap<Id, u64>,
    arg_offsets: &[u64],
    allow_dup: bool,
    reqd_local: Option<[u32; 3]>,
    variants: Variants,
    huge: bool,
) -> Result<LoweredKernel, CompileError> {
    let mut sig = ir::Signature::new(jm.isa().default_call_conv());
    sig.params.push(AbiParam::new(types::I64));
    sig.params.push(AbiParam::new(types::I64));
    let mut func = ir::Function::with_name_signature(ir::UserFuncName::user(0, 0), sig);
    let regions = barrier::Regions::find(m, f, cfg, one_sub_group(reqd_local, w))?;
    let value_types = f.value_types();
    let has_barriers = regions.has_barriers();
    let collective_slots = regions.collectives.len();
    let value_types_for_shapes = value_types.clone();
    let facts = |layout, assume: &std::collections::HashSet<Id>| {
        crate::analysis::exact::analyze(m, f, uni, &value_types, layout, w, assume)
    };
    let contiguous = crate::analysis::exact::Layout::Contiguous(reqd_local);
    let none = std::collections::HashSet::new();
    let exact_unguarded = facts(contiguous, &none);
    // Sums the work-group's entry checks before it picks the lane-contiguous layout.
    let guards = crate::analysis::guard::find(m, f, uni, &value_types, &exact_unguarded);
    let exact_contiguous = if guards.is_empty() {
        exact_unguarded
    } else {
        facts(contiguous, &guards.iter().map(|g| g.id).collect())
    };
    let exact_general = facts(crate::analysis::exact::Layout::General, &none);
    // A fresh builder context per kernel: an error may leave one half-used.
    let mut fctx = FunctionBuilderContext::new();
    let (private_bytes, scratch_per_sg, printf, two_layouts) = {
        let b = FunctionBuilder::new(&mut func, &mut fctx);
        let mut tr = Tr {
            m,
            f,
            cfg,
            uni,
            opts,
            b,
            jm,
            w,
            elems_cache: HashMap::new(),
            vals: HashMap::new(),
            placement: crate::analysis::placement::Placement::new(
                cfg,
                uni,
                &regions.uses,
                &regions.points,
                huge,
            ),
            masked_body: false,
            home_offsets: HashMap::new(),
            home_bytes: 0,
            block_cache: HashMap::new(),
            remat: Default::default(),
            home_slot: None,
            builtin_ptrs: HashMap::new(),
            genv: None,
            sgenv: None,
            mask: Vec::new(),
            packed: Default::default(),
            mask_full: None,
            full_state: None,
            dup_defs: None,
            dup_second: false,
            allow_dup,
            dup_conflict: false,
            private_offsets: HashMap::new(),
            private_ptrs: crate::analysis::provenance::private_pointers(f),
            private_bytes: 0,
            private_align: 16,
            local_offsets: local_offsets.clone(),
            data_addrs: data_addrs.clone(),
            func_refs: HashMap::new(),
            regions,
            value_types,
            body_state: None,
            private_slot: None,
            sink_slot: None,
            sparse_slot: None,
            local_access: false,
            state_area: state::StateArea::default(),
            lane_cache: (None, HashMap::new()),
            bctx: None,
            collective_base,
            arg_offsets: arg_offsets.to_vec(),
            reqd_local,
            all_sub_groups_full: opts.uniform_work_groups
                && reqd_local.is_some_and(|[x, y, z]| {
                    (u64::from(x) * u64::from(y) * u64::from(z)).is_multiple_of(u64::from(w))
                }),
            shapes: if allow_dup {
                crate::analysis::affine::shapes(
                    m,
                    f,
                    uni,
                    &value_types_for_shapes,
                    &exact_contiguous,
                    &crate::analysis::affine::phi_candidates(f, cfg, uni),
                )
            } else {
                HashMap::new()
            },
            affine_phis: allow_dup,
            exact: exact_general.clone(),
            exact_layouts: [exact_contiguous.clone(), exact_general],
            guards,
            hints: HashMap::new(),
            shape_conflict: false,
            cur_block: None,
            printf: printf::PrintfState::default(),
            debug_shapes: std::env::var_os("CRANECL_DEBUG_SHAPES").is_some_and(|v| v != "0"),
            broadcast_loads: Default::default(),
            deferred_loads: HashMap::new(),
            movable_loads: std::collections::HashSet::new(),
            writing_loops: Vec::new(),
            variants,
            huge,
            chunk_major: false,
            pending: Default::default(),
            affine_cmps: HashMap::new(),
            bool_combs: HashMap::new(),
            self_loop: None,
            single_lane_blocks: HashMap::new(),
            single_lane: None,
            halves: HashMap::new(),
            shuffle_imms: HashMap::new(),
        };
        tr.layout_private()?;
        tr.find_broadcast_loads();
        tr.layout_homes()?;
        tr.emit_work_group()?;
        tr.finish_state(0);
        let conflict = tr.dup_conflict || tr.shape_conflict;
        let pb = tr.private_bytes;
        let scratch = tr.regions.scratch_per_sg;
        let printf = tr.printf.finish();
        let two_layouts = variants == Variants::Both && {
            let (a, b) = tr.layouts_possible();
            a && b
        };
        tr.b.seal_all_blocks();
        let fc = tr.jm.isa().frontend_config();
        tr.b.finalize(fc);
        if conflict {
            return Err(CompileError::codegen(DUP_CONFLICT));
        }
        (pb, scratch, printf, two_layouts)
    };
    redundant_params::prune(&mut func);
    Ok(LoweredKernel {
        printf,
        two_layouts,
        collective_slots,
        func,
        private_bytes,
        scratch_per_sg,
        has_barriers,
    })
}

/// Whether every work-group of a kernel with required size `reqd_local` is one
/// sub-group of width `w` (the last, ragged one included: it is smaller).
pub(crate) fn one_sub_group(reqd_local: Option<[u32; 3]>, w: u32) -> bool {
    reqd_local.is_some_and(|[x, y, z]| u64::from(x) * u64::from(y) * u64::from(z) <= u64::from(w))
}

/// Which sub-group layouts a work-group of a kernel with required size `reqd_local`
/// may need at width `w`: (lane-contiguous, general). The general one always: it also
/// runs work-groups whose global ids pass 2^30.
pub(crate) fn layouts_possible(reqd_local: Option<[u32; 3]>, w: u32) -> (bool, bool) {
    let contiguous = match reqd_local {
        Some([x, y, z]) => x % w == 0 || y * z == 1,
        None => true,
    };
    (contiguous, true)
}

impl<'a, 'b> Tr<'a, 'b> {
    /// Element types of the leaves of type `ty`.
    pub fn elems(&mut self, ty: Id) -> Result<Rc<Vec<Elem>>, CompileError> {
        if let Some(e) = self.elems_cache.get(&ty) {
            return Ok(e.clone());
        }
        let mut out = Vec::new();
        self.collect_elems(ty, &mut out)?;
        let rc = Rc::new(out);
        self.elems_cache.insert(ty, rc.clone());
        Ok(rc)
    }

    fn collect_elems(&self, ty: Id, out: &mut Vec<Elem>) -> Result<(), CompileError> {
        match self.m.ty(ty)? {
            Type::Bool => out.push(Elem::Bool),
            Type::Int { bits } => out.push(match bits {
                8 => Elem::I8,
                16 => Elem::I16,
                32 => Elem::I32,
                _ => Elem::I64,
            }),
            Type::Float { bits } => out.push(match bits {
                16 => Elem::F16,
                32 => Elem::F32,
                64 => Elem::F64,
                _ => {
                    return Err(CompileError::unsupported(format!(
                        "{bits}-bit floating-point values"
                    )))
                }
            }),
            Type::Pointer { .. } | Type::Event | Type::Pipe { .. } | Type::Queue => {
                out.push(Elem::I64)
            }
            Type::Vector { elem, count } => {
                for _ in 0..*count {
                    self.collect_elems(*elem, out)?;
                }
            }
            Type::Array { elem, len } => {
                if *len > 4096 {
                    return Err(CompileError::unsupported(format!(
                        "array value of {len} elements (arrays are only supported in memory)"
                    )));
                }
                for _ in 0..*len {
                    self.collect_elems(*elem, out)?;
                }
            }
            Type::Struct { members, .. } => {
                for m in members {
                    self.collect_elems(*m, out)?;
                }
            }
            Type::Void => {}
            other => {
                return Err(CompileError::unsupported(format!(
                    "values of type {other:?} are not supported"
                )))
            }
        }
        Ok(())
    }

    /// Type of a value id.
    pub fn type_of(&self, id: Id) -> Result<Id, CompileError> {
        if let Some(t) = self.value_types().get(&id) {
            return Ok(*t);
        }
        if let Some(c) = self.m.constants.get(&id) {
            return Ok(c.ty);
        }
        if let Some(g) = self.m.globals.get(&id) {
            return Ok(g.ty);
        }
        Err(CompileError::malformed(format!("%{id} has no known type")))
    }

    fn value_types(&self) -> &HashMap<Id, Id> {
        &self.value_types
    }

    /// A constant's value (uniform leaves).
    pub fn constant(&mut self, id: Id) -> Result<Val, CompileError> {
        let c = self
            .m
            .constants
            .get(&id)
            .ok_or_else(|| CompileError::malformed(format!("%{id} is not a constant")))?
            .clone();
        let elems = self.elems(c.ty)?;
        let mut leaves = Vec::with_capacity(elems.len());
        match &c.value {
            crate::spirv::ConstValue::Scalar(bits) => {
                let e = *elems.first().ok_or_else(|| {
                    CompileError::malformed(format!("constant %{id} of an empty type"))
                })?;
                leaves.push(Lv::U(self.scalar_const(e, *bits)));
            }
            crate::spirv::ConstValue::Null | crate::spirv::ConstValue::Undef => {
                for e in elems.iter() {
                    leaves.push(Lv::U(self.scalar_const(*e, 0)));
                }
            }
            crate::spirv::ConstValue::Composite(parts) => {
                for p in parts {
                    let v = self.get(*p)?;
                    leaves.extend(v.leaves);
                }
            }
            crate::spirv::ConstValue::Expr(_)
                if crate::spirv::const_addr::evaluate(self.m, id)?.is_some() =>
            {
                // An address (clang's byte-offset GEPs included): variable + offset.
                let address = crate::spirv::const_addr::evaluate(self.m, id)?
                    .ok_or_else(|| CompileError::codegen("address constant changed"))?;
                let base = match address.var {
                    Some(var) => match self.global_address(var)?.leaves.first() {
                        Some(Lv::U(b)) => *b,
                        _ => return Err(CompileError::codegen("variable address is not uniform")),
                    },
                    None => self.b.ins().iconst(types::I64, 0),
                };
                let lv = Lv::U(self.b.ins().iadd_imm_s(base, address.offset as i64));
                // A pointer, or an integer made from one (`(uint)&v` truncates).
                let e = *elems.first().ok_or_else(|| {
                    CompileError::malformed(format!("constant %{id} of an empty type"))
                })?;
                leaves.push(self.int_resize(&lv, Elem::I64, e, false));
            }
            crate::spirv::ConstValue::Expr(op) => {
                let inst = crate::spirv::Inst {
                    result: Some(id),
                    ty: Some(c.ty),
                    op: (**op).clone(),
                    wrap: Default::default(),
                };
                let v = self.op_value(usize::MAX, 0, &inst)?.ok_or_else(|| {
                    CompileError::malformed(format!("constant %{id} has no value"))
                })?;
                leaves.extend(v.leaves);
            }
        }
        if leaves.len() != elems.len() {
            return Err(CompileError::malformed(format!(
                "constant %{id} has {} components, its type {}",
                leaves.len(),
                elems.len()
            )));
        }
        Ok(Val { leaves, elems })
    }

    /// A scalar constant of element `e` from raw bits.
    pub fn scalar_const(&mut self, e: Elem, bits: u64) -> Value {
        match e {
            Elem::F32 => self.b.ins().f32const(f32::from_bits(bits as u32)),
            Elem::F64 => self.b.ins().f64const(f64::from_bits(bits)),
            Elem::Bool => self.b.ins().iconst(types::I8, i64::from(bits != 0)),
            _ => {
                let shift = 64 - e.bits();
                let v = ((bits << shift) as i64) >> shift;
                self.b.ins().iconst(e.scalar(), v)
            }
        }
    }

    /// Declares (once) and returns a reference to the imported function `symbol`.
    pub fn import_fn(
        &mut self,
        symbol: &str,
        params: &[ir::AbiParam],
        rets: &[ir::AbiParam],
    ) -> Result<ir::FuncRef, CompileError> {
        if let Some(r) = self.func_refs.get(symbol) {
            return Ok(*r);
        }
        let mut sig = ir::Signature::new(self.jm.isa().default_call_conv());
        sig.params.extend_from_slice(params);
        sig.returns.extend_from_slice(rets);
        let id: FuncId = self
            .jm
            .declare_function(symbol, Linkage::Import, &sig)
            .map_err(|e| CompileError::codegen(format!("declaring {symbol}: {e}")))?;
        let r = self.jm.declare_func_in_func(id, self.b.func);
        self.func_refs.insert(symbol.to_string(), r);
        Ok(r)
    }

    // ---- the work-group function ----

    /// Which sub-group layouts can occur: (lane-contiguous, general).
    /// The general one always: it also runs work-groups whose global ids pass 2^31.
    fn layouts(&self) -> (bool, bool) {
        let (want_fast, want_gen) = self.layouts_possible();
        match self.variants {
            Variants::Contiguous => (want_fast, false),
            Variants::General => (false, want_gen),
            _ => (want_fast, want_gen),
        }
    }

    /// Which layout variants a work-group of this kernel may need.
    fn layouts_possible(&self) -> (bool, bool) {
        layouts_possible(self.reqd_local, self.w)
    }

    fn emit_work_group(&mut self) -> Result<(), CompileError> {
        let entry = self.b.create_block();
        self.b.append_block_params_for_function_params(entry);
        self.b.switch_to_block(entry);
        let args = self.b.block_params(entry)[0];
        let wg = self.b.block_params(entry)[1];
        let g = self.load_group_env(wg);
        self.genv = Some(g.clone());
        self.define_params(args)?;
        let w = i64::from(self.w);
        // The lane-contiguous variant applies when every sub-group lies in one row.
        let lx_rem = self.b.ins().urem_imm_s(g.local_size[0], w);
        let lx_mult = self.b.ins().icmp_imm_s(IntCC::Equal, lx_rem, 0);
        let rows = self.b.ins().imul(g.local_size[1], g.local_size[2]);
        let one_row = self.b.ins().icmp_imm_s(IntCC::Equal, rows, 1);
        let mut fast = self.b.ins().bor(lx_mult, one_row);
        // ... and when the work-group's ids are small: the exactness analysis counts
        // on that (`analysis::exact::ID_GUARD`), so that `(int)get_global_id(0)`
        // widens back in affine form.
        let guard = crate::analysis::exact::ID_GUARD as i64;
        let mut small = |t: &mut Self, v: Value| {
            let ok =
                t.b.ins()
                    .icmp_imm_s(IntCC::UnsignedLessThanOrEqual, v, guard);
            fast = t.b.ins().band(fast, ok);
        };
        for d in 0..3 {
            let x0 = self.b.ins().imul(g.group_id[d], g.enqueued[d]);
            let x0 = self.b.ins().iadd(x0, g.global_offset[d]);
            let x_end = self.b.ins().iadd(x0, g.local_size[d]);
            small(self, x_end);
        }
        small(self, g.linear);
        // ... and when the sums its facts assume exact are (`analysis::guard`).
        for i in 0..self.guards.len() {
            let ok = self.guard_holds(i)?;
            fast = self.b.ins().band(fast, ok);
        }
        match self.variants {
            Variants::Both => {}
            Variants::Contiguous => fast = self.b.ins().iconst(types::I8, 1),
            Variants::General => fast = self.b.ins().iconst(types::I8, 0),
            Variants::Dispatch(contiguous, general) => {
                return self.emit_dispatch_entry(fast, args, wg, contiguous, general)
            }
        }

        if self.regions.has_barriers() {
            return self.emit_barrier_work_group(fast);
        }

        let sg_var = self.b.declare_var(types::I64);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(sg_var, zero);
        let rowv = self.row_vars_init();
        let head = self.b.create_block();
        let body_fast = self.b.create_block();
        let body_gen = self.b.create_block();
        let next = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(head, &[]);

        // The sub-group's index and row are read once, in `head`, which dominates
        // everything up to `next`: reading the variables after the body instead
        // would thread them through every loop of the body as block parameters.
        self.b.switch_to_block(head);
        let sg = self.b.use_var(sg_var);
        let mut rows = rowv.map(|v| self.b.use_var(v));
        if self.sub_group_per_row() {
            // A sub-group per row: x is 0 as a constant (see `rows_of_sub_group`).
            rows[0] = self.b.ins().iconst(types::I64, 0);
        }
        let done = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, sg, g.n_sg);
        let choose = self.b.create_block();
        self.b.ins().brif(done, exit, &[], choose, &[]);
        self.b.switch_to_block(choose);
        self.b.ins().brif(fast, body_fast, &[], body_gen, &[]);

        let (want_fast, want_gen) = self.layouts();
        for (blk, contiguous) in [(body_fast, true), (body_gen, false)] {
            self.b.switch_to_block(blk);
            if (contiguous && !want_fast) || (!contiguous && !want_gen) {
                // Cannot occur: the runtime enforces reqd_work_group_size.
                self.b.ins().jump(next, &[]);
                continue;
            }
            self.enter_sub_group(sg, contiguous.then_some(rows), None)?;
            self.emit_body(None, next)?;
        }

        self.b.switch_to_block(next);
        let sg1 = self.b.ins().iadd_imm_s(sg, 1);
        self.b.def_var(sg_var, sg1);
        self.row_vars_advance(rowv, rows);
        self.b.ins().jump(head, &[]);

        self.b.switch_to_block(exit);
        self.b.ins().return_(&[]);
        Ok(())
    }

    /// The entry of a kernel compiled as one function per layout variant: calls
    /// `contiguous` when `fast` holds, else `general`.
    fn emit_dispatch_entry(
        &mut self,
        fast: Value,
        args: Value,
        wg: Value,
        contiguous: cranelift_module::FuncId,
        general: cranelift_module::FuncId,
    ) -> Result<(), CompileError> {
        use cranelift_module::Module as _;
        let fc = self.jm.declare_func_in_func(contiguous, self.b.func);
        let fg = self.jm.declare_func_in_func(general, self.b.func);
        let (bc, bg) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(fast, bc, &[], bg, &[]);
        for (blk, f) in [(bc, fc), (bg, fg)] {
            self.b.switch_to_block(blk);
            self.b.ins().call(f, &[args, wg]);
            self.b.ins().return_(&[]);
        }
        Ok(())
    }

    /// Defines the kernel parameters from the argument block (uniform values).
    fn define_params(&mut self, args: Value) -> Result<(), CompileError> {
        let fl = ir::MemFlagsData::trusted().with_readonly();
        let params = self.f.params.clone();
        for (i, (id, ty)) in params.iter().enumerate() {
            if self.m.constants.contains_key(id) {
                // A parameter this copy of the kernel is specialised to
                // (`analysis::unit_params`): its uses read the constant.
                continue;
            }
            let off = *self
                .arg_offsets
                .get(i)
                .ok_or_else(|| CompileError::codegen("argument offset missing"))?;
            let by_val = self.m.decos(*id).is_some_and(|d| {
                d.param_attrs
                    .contains(&rspirv::spirv::FunctionParameterAttribute::ByVal)
            });
            let elems = self.elems(*ty)?;
            let leaves = if by_val {
                // The bytes of the struct are in the argument block: point at them.
                vec![Lv::U(self.b.ins().iadd_imm_s(args, off as i64))]
            } else {
                let offs = self.leaf_offsets(*ty)?;
                elems
                    .iter()
                    .zip(offs)
                    .map(|(e, o)| {
                        let v = self.b.ins().load(e.scalar(), fl, args, (off + o) as i32);
                        Lv::U(if *e == Elem::Bool {
                            self.b.ins().icmp_imm_s(IntCC::NotEqual, v, 0)
                        } else {
                            v
                        })
                    })
                    .collect()
            };
            self.define(*id, Val { leaves, elems });
        }
        Ok(())
    }

    fn load_group_env(&mut self, wg: Value) -> GroupEnv {
        let fl = ir::MemFlagsData::trusted().with_readonly();
        let i64t = types::I64;
        let wo = |f: usize| i32::try_from(f).unwrap_or(0);
        let nd = self.b.ins().load(
            i64t,
            fl,
            wg,
            wo(std::mem::offset_of!(WorkGroupState, ndrange)),
        );
        let load3 = |b: &mut FunctionBuilder, base: Value, off: usize| -> [Value; 3] {
            [0, 1, 2].map(|d| b.ins().load(i64t, fl, base, wo(off + 8 * d)))
        };
        let group_id = load3(
            &mut self.b,
            wg,
            std::mem::offset_of!(WorkGroupState, group_id),
        );
        let local_size = load3(
            &mut self.b,
            wg,
            std::mem::offset_of!(WorkGroupState, local_size),
        );
        let global_offset = load3(
            &mut self.b,
            nd,
            std::mem::offset_of!(NdRangeInfo, global_offset),
        );
        let global_size = load3(
            &mut self.b,
            nd,
            std::mem::offset_of!(NdRangeInfo, global_size),
        );
        let enqueued = load3(
            &mut self.b,
            nd,
            std::mem::offset_of!(NdRangeInfo, enqueued_local_size),
        );
        let num_groups = load3(
            &mut self.b,
            nd,
            std::mem::offset_of!(NdRangeInfo, num_groups),
        );
        let work_dim = self.b.ins().load(
            types::I32,
            fl,
            nd,
            wo(std::mem::offset_of!(NdRangeInfo, work_dim)),
        );
        let local_mem = self.b.ins().load(
            i64t,
            fl,
            wg,
            wo(std::mem::offset_of!(WorkGroupState, local_mem)),
        );
        let local_mem_size = self.b.ins().load(
            i64t,
            fl,
            wg,
            wo(std::mem::offset_of!(WorkGroupState, local_mem_size)),
        );
        let scratch = self.b.ins().load(
            i64t,
            fl,
            wg,
            wo(std::mem::offset_of!(WorkGroupState, scratch)),
        );
        let lxy = self.b.ins().imul(local_size[0], local_size[1]);
        let linear = self.b.ins().imul(lxy, local_size[2]);
        let wm1 = self.b.ins().iadd_imm_s(linear, i64::from(self.w) - 1);
        let n_sg = self.b.ins().udiv_imm_s(wm1, i64::from(self.w));
        GroupEnv {
            ndrange: nd,
            work_dim,
            group_id,
            local_size,
            global_offset,
            global_size,
            enqueued,
            num_groups,
            local_mem,
            local_mem_size,
            scratch,
            linear,
            n_sg,
        }
    }

    /// Whether the required work-group size makes each row exactly one sub-group, so
    /// that lane 0 of every sub-group has local id x = 0 (see `rows_of_sub_group`).
    fn sub_group_per_row(&self) -> bool {
        self.reqd_local.is_some_and(|[x, _, _]| x == self.w)
    }

    /// Variables holding the local id of lane 0 of the current sub-group in the
    /// lane-contiguous variant, initialised to (0, 0, 0).
    pub fn row_vars_init(&mut self) -> [Variable; 3] {
        let z = self.b.ins().iconst(types::I64, 0);
        [0, 1, 2].map(|_| {
            let v = self.b.declare_var(types::I64);
            self.b.def_var(v, z);
            v
        })
    }

    /// Advances the row position `cur` (the variables' values, read where they
    /// dominate the caller) by W work-items (valid when every sub-group lies in one
    /// row: x wraps exactly to 0 or never wraps).
    pub fn row_vars_advance(&mut self, v: [Variable; 3], cur: [Value; 3]) {
        let g = match &self.genv {
            Some(g) => g.clone(),
            None => return,
        };
        let [x, y, z] = cur;
        let x1 = self.b.ins().iadd_imm_s(x, i64::from(self.w));
        let wrap = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, x1, g.local_size[0]);
        let xw = self.b.ins().isub(x1, g.local_size[0]);
        let x2 = self.b.ins().select(wrap, xw, x1);
        let wrap64 = self.b.ins().uextend(types::I64, wrap);
        let y1 = self.b.ins().iadd(y, wrap64);
        let wrapy = self
            .b
            .ins()
            .icmp(IntCC::UnsignedGreaterThanOrEqual, y1, g.local_size[1]);
        let zero = self.b.ins().iconst(types::I64, 0);
        let y2 = self.b.ins().select(wrapy, zero, y1);
        let wrapy64 = self.b.ins().uextend(types::I64, wrapy);
        let z1 = self.b.ins().iadd(z, wrapy64);
        self.b.def_var(v[0], x2);
        self.b.def_var(v[1], y2);
        self.b.def_var(v[2], z1);
    }

    /// Computes the sub-group's values (ids, mask, private base) at the current point.
    pub fn enter_sub_group(
        &mut self,
        sg: Value,
        row: Option<[Value; 3]>,
        private_base: Option<Value>,
    ) -> Result<(), CompileError> {
        let g = self
            .genv
            .clone()
            .ok_or_else(|| CompileError::codegen("group env missing"))?;
        let w = i64::from(self.w);
        let first = self.b.ins().imul_imm_s(sg, w);
        let rem = self.b.ins().isub(g.linear, first);
        let wc = self.b.ins().iconst(types::I64, w);
        let size = self.b.ins().umin(rem, wc);
        let size32 = self.b.ins().ireduce(types::I32, size);
        let lim = self.b.ins().splat(types::I32X4, size32);
        let mut mask = Vec::new();
        for c in 0..(self.w / 4) as usize {
            if self.all_sub_groups_full {
                // A constant: tests of it fold away.
                mask.push(self.vconst_bytes(types::I32X4, vec![0xff; 16]));
                continue;
            }
            let io = self.iota_chunk(Elem::I32, c, 1);
            mask.push(self.b.ins().icmp(IntCC::SignedLessThan, io, lim));
        }
        let private_base = match private_base {
            Some(p) => p,
            None => self.private_stack_base(),
        };
        self.exact = self.exact_layouts[usize::from(row.is_none())].clone();
        self.sgenv = Some(SubGroupEnv {
            sg,
            first,
            size,
            row,
            mask,
            private_base,
        });
        Ok(())
    }

    /// The value of a built-in variable (all components).
    pub fn builtin_value(&mut self, b: BuiltIn) -> Result<Vec<Lv>, CompileError> {
        let g = self
            .genv
            .clone()
            .ok_or_else(|| CompileError::codegen("group env missing"))?;
        let s = self
            .sgenv
            .clone()
            .ok_or_else(|| CompileError::codegen("sub-group env missing"))?;
        let u3 = |a: [Value; 3]| a.iter().map(|v| Lv::U(*v)).collect::<Vec<_>>();
        let local_id = |t: &mut Self| -> Vec<Lv> {
            match &s.row {
                Some(r) => vec![Lv::A(r[0], 1), Lv::U(r[1]), Lv::U(r[2])],
                None => {
                    // General variant: from the linear id, x fastest.
                    let lin = Lv::A(s.first, 1);
                    let ls = g.local_size;
                    let lx = t.per_lane(&[(Elem::I64, &lin)], Elem::I64, |t, x| {
                        t.b.ins().urem(x[0], ls[0])
                    });
                    let r = t.per_lane(&[(Elem::I64, &lin)], Elem::I64, |t, x| {
                        t.b.ins().udiv(x[0], ls[0])
                    });
                    let ly = t.per_lane(&[(Elem::I64, &r)], Elem::I64, |t, x| {
                        t.b.ins().urem(x[0], ls[1])
                    });
                    let lz = t.per_lane(&[(Elem::I64, &r)], Elem::I64, |t, x| {
                        t.b.ins().udiv(x[0], ls[1])
                    });
                    vec![lx, ly, lz]
                }
            }
        };
        let i32u = |t: &mut Self, v: Value| -> Lv { Lv::U(t.b.ins().ireduce(types::I32, v)) };
        Ok(match b {
            BuiltIn::LocalInvocationId => local_id(self),
            BuiltIn::GlobalInvocationId => {
                let lid = local_id(self);
                let mut out = Vec::new();
                for d in 0..3 {
                    let base = self.b.ins().imul(g.group_id[d], g.enqueued[d]);
                    let base = self.b.ins().iadd(base, g.global_offset[d]);
                    out.push(self.add_uniform(Elem::I64, &lid[d], base));
                }
                out
            }
            BuiltIn::WorkgroupId => u3(g.group_id),
            BuiltIn::NumWorkgroups => u3(g.num_groups),
            BuiltIn::GlobalSize => u3(g.global_size),
            BuiltIn::WorkgroupSize => u3(g.local_size),
            BuiltIn::EnqueuedWorkgroupSize => u3(g.enqueued),
            BuiltIn::GlobalOffset => u3(g.global_offset),
            BuiltIn::WorkDim => vec![Lv::U(g.work_dim)],
            BuiltIn::LocalInvocationIndex => vec![Lv::A(s.first, 1)],
            BuiltIn::GlobalLinearId => {
                // ((gz - oz) * gsy + (gy - oy)) * gsx + (gx - ox), with g - o = group*enq + lid.
                let lid = local_id(self);
                let mut acc: Option<Lv> = None;
                for d in (0..3).rev() {
                    let base = self.b.ins().imul(g.group_id[d], g.enqueued[d]);
                    let gd = self.add_uniform(Elem::I64, &lid[d], base);
                    acc = Some(match acc {
                        None => gd,
                        Some(a) => {
                            let scaled = self.mul_uniform(Elem::I64, &a, g.global_size[d]);
                            self.add_lv(Elem::I64, &scaled, &gd)
                        }
                    });
                }
                vec![acc.unwrap_or(Lv::U(s.first))]
            }
            BuiltIn::SubgroupSize => vec![i32u(self, s.size)],
            BuiltIn::SubgroupMaxSize => {
                vec![Lv::U(self.b.ins().iconst(types::I32, i64::from(self.w)))]
            }
            BuiltIn::NumSubgroups => vec![i32u(self, g.n_sg)],
            BuiltIn::NumEnqueuedSubgroups => {
                let e01 = self.b.ins().imul(g.enqueued[0], g.enqueued[1]);
                let e = self.b.ins().imul(e01, g.enqueued[2]);
                let e = self.b.ins().iadd_imm_s(e, i64::from(self.w) - 1);
                let n = self.b.ins().udiv_imm_s(e, i64::from(self.w));
                vec![i32u(self, n)]
            }
            BuiltIn::SubgroupId => vec![i32u(self, s.sg)],
            BuiltIn::SubgroupLocalInvocationId => {
                let z = self.b.ins().iconst(types::I32, 0);
                vec![Lv::A(z, 1)]
            }
            BuiltIn::SubgroupEqMask
            | BuiltIn::SubgroupGeMask
            | BuiltIn::SubgroupGtMask
            | BuiltIn::SubgroupLeMask
            | BuiltIn::SubgroupLtMask => self.sub_group_mask_builtin(b),
            other => {
                return Err(CompileError::unsupported(format!(
                    "unsupported built-in variable {other:?} in kernel {}",
                    self.f.name
                )))
            }
        })
    }

    /// `lv + u` for a uniform `u`, keeping affine values affine.
    pub fn add_uniform(&mut self, e: Elem, lv: &Lv, u: Value) -> Lv {
        match lv {
            Lv::U(x) => Lv::U(self.b.ins().iadd(*x, u)),
            Lv::A(x, s) => Lv::A(self.b.ins().iadd(*x, u), *s),
            Lv::V(_) => self.add_lv(e, lv, &Lv::U(u)),
        }
    }

    /// `lv * u` for a uniform `u`.
    pub fn mul_uniform(&mut self, e: Elem, lv: &Lv, u: Value) -> Lv {
        self.vec_op2(
            e,
            lv,
            &Lv::U(u),
            |t, a, b| t.b.ins().imul(a, b),
            |t, a, b| t.b.ins().imul(a, b),
        )
    }
}
