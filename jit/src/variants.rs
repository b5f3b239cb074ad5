//! The functions one kernel becomes ([`compile_kernel`]): a *body* (all of the kernel: one function, or
//! one per sub-group layout behind a small entry that picks one per work-group),
//! and, for kernels with unit-stride parameters (`analysis::unit_params`), a second
//! body compiled with those parameters the constant 1 behind an entry that picks a
//! body by the launch's argument values.

use std::collections::HashMap;

use cranelift_codegen::ir::{self, condcodes::IntCC, types, AbiParam, InstBuilder};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Linkage, Module as _};

use crate::analysis::{cfg::Cfg, flatten::FlatFunction, uniformity::Uniformity};
use crate::codegen::{self, Effort, Jit};
use crate::spirv::{ConstValue, Constant, Id, Module, Type};
use crate::{lower, tiers, CompileError, CompileOptions};

/// What a body is compiled from besides its module and uniformity (which differ
/// between a kernel's bodies): the kernel and the facts the pipeline computed.
pub(crate) struct BodyInput<'a> {
    pub flat: &'a FlatFunction,
    pub cfg: &'a Cfg,
    pub w: u32,
    pub contraction_off: bool,
    pub options: &'a CompileOptions,
    pub locals: &'a HashMap<Id, u64>,
    pub local_bytes: u64,
    pub data_addrs: &'a HashMap<Id, u64>,
    pub arg_offsets: &'a [u64],
    pub reqd_local: Option<[u32; 3]>,
    pub shape: tiers::Shape,
}

/// A defined body: its function, its stack frame (with the layout functions it
/// calls) and what the lowering found (sizes, printf sites).
pub(crate) struct Body {
    pub id: FuncId,
    pub frame: usize,
    pub lowered: Box<lower::LoweredKernel>,
    /// (blocks, instructions, values) of the CLIF, for `CRANECL_JIT_TIMES`.
    pub clif_size: (usize, usize, usize),
}

/// A kernel's lowered functions: one (with how hard to compile it), or one per
/// layout body (a dispatching entry is lowered once they are defined).
enum Lowered {
    One(Box<lower::LoweredKernel>, Effort),
    Split(Box<lower::LoweredKernel>, Box<lower::LoweredKernel>),
}

impl Lowered {
    /// (blocks, instructions, values) of all functions.
    fn size(&self) -> (usize, usize, usize) {
        let of = |l: &lower::LoweredKernel| {
            (
                l.func.layout.blocks().count(),
                l.func.dfg.num_insts(),
                l.func.dfg.num_values(),
            )
        };
        match self {
            Lowered::One(l, _) => of(l),
            Lowered::Split(a, b) => add_sizes(of(a), of(b)),
        }
    }
}

/// Lowers and defines one body of the kernel (`m` the module it reads constants
/// from, `uni` its uniformity) under `name` with `linkage`.
pub(crate) fn compile_body(
    jit: &mut Jit,
    inp: &BodyInput,
    m: &Module,
    uni: &Uniformity,
    name: &str,
    linkage: Linkage,
) -> Result<Body, CompileError> {
    let lower_with = |jit: &mut Jit, allow_dup: bool, variants: lower::Variants| {
        lower::lower_kernel(
            m,
            inp.flat,
            inp.cfg,
            uni,
            inp.w,
            inp.contraction_off,
            inp.options,
            &mut jit.module,
            &mut jit.fctx,
            inp.locals,
            inp.local_bytes,
            inp.data_addrs,
            inp.arg_offsets,
            allow_dup,
            inp.reqd_local,
            variants,
            inp.shape == tiers::Shape::Huge,
        )
    };
    let lower_variants = |jit: &mut Jit, variants: lower::Variants| match lower_with(
        jit,
        !inp.options.opt_disable,
        variants,
    ) {
        Err(e) if e.message == lower::DUP_CONFLICT => lower_with(jit, false, variants),
        r => r,
    };
    // One function per layout body: the common (lane-contiguous) one fits the good
    // register allocator, the general one rarely runs and gets the fast one. Both
    // must number their printf call sites alike.
    let split_layouts = |jit: &mut Jit| -> Result<Option<_>, CompileError> {
        let fast = lower_variants(jit, lower::Variants::Contiguous)?;
        let general = lower_variants(jit, lower::Variants::General)?;
        Ok((fast.printf.sites.len() == general.printf.sites.len()).then_some((fast, general)))
    };
    let lowered = match inp.shape {
        tiers::Shape::Huge => Lowered::One(
            Box::new(lower_variants(jit, lower::Variants::General)?),
            Effort::Least,
        ),
        tiers::Shape::Split => match split_layouts(jit)? {
            Some((fast, general)) => Lowered::Split(Box::new(fast), Box::new(general)),
            None => Lowered::One(
                Box::new(lower_variants(jit, lower::Variants::Both)?),
                Effort::BySize,
            ),
        },
        tiers::Shape::OneFunction => {
            let both = lower_variants(jit, lower::Variants::Both)?;
            if both.two_layouts && both.func.dfg.num_insts() > codegen::SPLIT_LAYOUTS_MIN_INSTS {
                match split_layouts(jit)? {
                    Some((fast, general)) => Lowered::Split(Box::new(fast), Box::new(general)),
                    None => Lowered::One(Box::new(both), Effort::BySize),
                }
            } else {
                Lowered::One(Box::new(both), Effort::BySize)
            }
        }
    };
    let clif_size = lowered.size();
    match lowered {
        Lowered::Split(fast, general) => {
            // Not entry-point names (`__cranecl.` is the driver's own prefix).
            let name_fast = format!("__cranecl.{name}.contiguous");
            let name_gen = format!("__cranecl.{name}.general");
            let scratch_per_sg = fast.scratch_per_sg.max(general.scratch_per_sg);
            let private_bytes = fast.private_bytes.max(general.private_bytes);
            let (fast_id, fast_frame) =
                jit.define_with(&name_fast, fast.func, Linkage::Local, Effort::BySize)?;
            let (gen_id, gen_frame) =
                jit.define_with(&name_gen, general.func, Linkage::Local, Effort::Cold)?;
            let mut entry = lower_variants(jit, lower::Variants::Dispatch(fast_id, gen_id))?;
            let func = std::mem::replace(&mut entry.func, ir::Function::new());
            let (id, frame) = jit.define_with(name, func, linkage, Effort::BySize)?;
            entry.scratch_per_sg = scratch_per_sg;
            entry.private_bytes = private_bytes;
            entry.printf = fast.printf;
            Ok(Body {
                id,
                frame: frame + fast_frame.max(gen_frame),
                lowered: Box::new(entry),
                clif_size,
            })
        }
        Lowered::One(mut one, effort) => {
            let func = std::mem::replace(&mut one.func, ir::Function::new());
            let (id, frame) = jit.define_with(name, func, linkage, effort)?;
            Ok(Body {
                id,
                frame,
                lowered: one,
                clif_size,
            })
        }
    }
}

/// Lowers and defines kernel `name` (exported): one body, or with `unit_params`
/// (`analysis::unit_params`, empty for most kernels) a body compiled with those
/// parameters the constant 1 and one for any values, behind an entry that picks one
/// by the launch's arguments. The returned facts cover both bodies.
pub(crate) fn compile_kernel(
    jit: &mut Jit,
    inp: &BodyInput,
    m: &Module,
    uni: &Uniformity,
    name: &str,
    unit_params: &[Id],
) -> Result<Body, CompileError> {
    if unit_params.is_empty() {
        return compile_body(jit, inp, m, uni, name, Linkage::Export);
    }
    let unit_m = unit_module(m, inp.flat, unit_params);
    let unit_uni = crate::analysis::uniformity::analyze(&unit_m, inp.flat, inp.cfg);
    let unit_name = format!("__cranecl.{name}.unit");
    let unit = compile_body(jit, inp, &unit_m, &unit_uni, &unit_name, Linkage::Local)?;
    let any_name = format!("__cranecl.{name}.any");
    let any = compile_body(jit, inp, m, uni, &any_name, Linkage::Local)?;
    if unit.lowered.printf.sites.len() != any.lowered.printf.sites.len() {
        return Err(CompileError::codegen(format!(
            "kernel {name}: the unit-parameter body numbers its printf calls differently"
        )));
    }
    let offsets: Vec<(u64, Id)> = inp
        .flat
        .params
        .iter()
        .zip(inp.arg_offsets)
        .filter(|((id, _), _)| unit_params.contains(id))
        .map(|((_, ty), off)| (*off, *ty))
        .collect();
    let entry = unit_dispatch_entry(jit, m, &offsets, unit.id, any.id)?;
    let (id, frame) = jit.define(name, entry)?;
    let mut lowered = any.lowered;
    lowered.scratch_per_sg = lowered.scratch_per_sg.max(unit.lowered.scratch_per_sg);
    lowered.private_bytes = lowered.private_bytes.max(unit.lowered.private_bytes);
    lowered.collective_slots = lowered.collective_slots.max(unit.lowered.collective_slots);
    lowered.has_barriers |= unit.lowered.has_barriers;
    Ok(Body {
        id,
        frame: frame + any.frame.max(unit.frame),
        lowered,
        clif_size: add_sizes(any.clif_size, unit.clif_size),
    })
}

/// The sum of two (blocks, instructions, values) sizes.
fn add_sizes(a: (usize, usize, usize), b: (usize, usize, usize)) -> (usize, usize, usize) {
    (a.0 + b.0, a.1 + b.1, a.2 + b.2)
}

/// `m` with each parameter in `params` (integer parameters of `f`) also a constant
/// 1: lowering then reads the constant wherever the parameter is used, and the
/// analyses see the value.
fn unit_module(m: &Module, f: &FlatFunction, params: &[Id]) -> Module {
    let mut unit = m.clone();
    for (id, ty) in &f.params {
        if params.contains(id) {
            unit.constants.insert(
                *id,
                Constant {
                    ty: *ty,
                    value: ConstValue::Scalar(1),
                },
            );
        }
    }
    unit
}

/// The entry of a kernel with a unit-parameter body: calls `unit` when every
/// parameter in `params` (its argument-block offset and integer type) is 1, else
/// `any`, with the entry's two arguments.
fn unit_dispatch_entry(
    jit: &mut Jit,
    m: &Module,
    params: &[(u64, Id)],
    unit: FuncId,
    any: FuncId,
) -> Result<ir::Function, CompileError> {
    let mut sig = ir::Signature::new(jit.module.isa().default_call_conv());
    sig.params.push(AbiParam::new(types::I64));
    sig.params.push(AbiParam::new(types::I64));
    let mut func = ir::Function::with_name_signature(ir::UserFuncName::user(0, 0), sig);
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut func, &mut fctx);
    let fu = jit.module.declare_func_in_func(unit, b.func);
    let fa = jit.module.declare_func_in_func(any, b.func);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let (args, wg) = (b.block_params(entry)[0], b.block_params(entry)[1]);
    let fl = ir::MemFlagsData::trusted().with_readonly();
    let mut all_one = b.ins().iconst(types::I8, 1);
    for (off, ty) in params {
        let t = match m.types.get(ty) {
            Some(Type::Int { bits: 8 }) => types::I8,
            Some(Type::Int { bits: 16 }) => types::I16,
            Some(Type::Int { bits: 32 }) => types::I32,
            Some(Type::Int { bits: 64 }) => types::I64,
            _ => return Err(CompileError::codegen("unit parameter is not an integer")),
        };
        let off = i32::try_from(*off)
            .map_err(|_| CompileError::codegen("unit parameter offset out of range"))?;
        let v = b.ins().load(t, fl, args, off);
        let one = b.ins().icmp_imm_s(IntCC::Equal, v, 1);
        all_one = b.ins().band(all_one, one);
    }
    let (bu, ba) = (b.create_block(), b.create_block());
    b.ins().brif(all_one, bu, &[], ba, &[]);
    for (blk, f) in [(bu, fu), (ba, fa)] {
        b.switch_to_block(blk);
        b.ins().call(f, &[args, wg]);
        b.ins().return_(&[]);
    }
    b.seal_all_blocks();
    b.finalize(jit.module.isa().frontend_config());
    Ok(func)
}
