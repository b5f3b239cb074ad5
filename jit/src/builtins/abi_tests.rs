//! Calls built-ins from Cranelift-generated code, the way the code generator will: symbols
//! registered from [`all_symbols`], signatures built from [`NativeFn`], `I8`/`I16`
//! parameters marked `.sext()`, out-parameters passed as addresses. Checks the calling
//! convention documented in the module header, independently of the Rust-side tests.

use super::*;
use cranelift_codegen::ir::{types, AbiParam, InstBuilder, MemFlagsData, Signature, UserFuncName};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};

fn clif_type(s: Scalar) -> types::Type {
    match s {
        Scalar::I8 => types::I8,
        Scalar::I16 => types::I16,
        Scalar::I32 => types::I32,
        Scalar::I64 | Scalar::Ptr => types::I64,
        Scalar::F32 => types::F32,
        Scalar::F64 => types::F64,
    }
}

fn abi_param(s: Scalar) -> AbiParam {
    let p = AbiParam::new(clif_type(s));
    match s {
        Scalar::I8 | Scalar::I16 => p.sext(),
        _ => p,
    }
}

/// Wrappers `fn(args: *const u64, ret: *mut u64)` around built-ins: each argument slot
/// holds the value's bits in its low bytes (integers get garbage in the bytes above their
/// width, to prove the callee does not depend on them); the result is stored the same way
/// (integers sign-extended to 64 bits).
struct Harness {
    module: JITModule,
    wrappers: Vec<cranelift_module::FuncId>,
}

type Wrapper = unsafe extern "C" fn(*const u64, *mut u64);

impl Harness {
    fn new(fns: &[NativeFn]) -> Harness {
        let mut flags = settings::builder();
        flags.set("use_colocated_libcalls", "false").unwrap();
        flags.set("is_pic", "false").unwrap();
        let isa = cranelift_native::builder()
            .expect("host ISA")
            .finish(settings::Flags::new(flags))
            .expect("ISA flags");
        let mut jb = JITBuilder::with_isa(isa, default_libcall_names());
        for (name, addr) in all_symbols() {
            jb.symbol(name, addr);
        }
        let mut module = JITModule::new(jb);
        let ptr = module.target_config().pointer_type();
        let mut ctx = module.make_context();
        let mut fctx = FunctionBuilderContext::new();
        let mut wrappers = Vec::new();
        for (i, f) in fns.iter().enumerate() {
            let mut callee_sig = Signature::new(module.isa().default_call_conv());
            callee_sig
                .params
                .extend(f.params.iter().map(|&p| abi_param(p)));
            callee_sig.returns.push(abi_param(f.ret));
            let callee = module
                .declare_function(f.symbol, Linkage::Import, &callee_sig)
                .expect("declare import");

            let mut sig = module.make_signature();
            sig.params.push(AbiParam::new(ptr));
            sig.params.push(AbiParam::new(ptr));
            let id = module
                .declare_function(&format!("wrapper{i}"), Linkage::Local, &sig)
                .expect("declare wrapper");
            ctx.func.signature = sig;
            ctx.func.name = UserFuncName::user(0, id.as_u32());
            {
                let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
                let block = b.create_block();
                b.append_block_params_for_function_params(block);
                b.switch_to_block(block);
                let (args, ret) = (b.block_params(block)[0], b.block_params(block)[1]);
                let mut vals = Vec::new();
                for (k, &p) in f.params.iter().enumerate() {
                    let off = (k * 8) as i32;
                    let v = match p {
                        Scalar::F32 | Scalar::F64 => {
                            b.ins()
                                .load(clif_type(p), MemFlagsData::trusted(), args, off)
                        }
                        _ => {
                            let wide = b.ins().load(types::I64, MemFlagsData::trusted(), args, off);
                            if clif_type(p) == types::I64 {
                                wide
                            } else {
                                b.ins().ireduce(clif_type(p), wide)
                            }
                        }
                    };
                    vals.push(v);
                }
                let fref = module.declare_func_in_func(callee, b.func);
                let call = b.ins().call(fref, &vals);
                let r = b.inst_results(call)[0];
                let r = match f.ret {
                    Scalar::I8 | Scalar::I16 | Scalar::I32 => b.ins().sextend(types::I64, r),
                    _ => r,
                };
                b.ins().store(MemFlagsData::trusted(), r, ret, 0);
                b.ins().return_(&[]);
                b.seal_all_blocks();
                b.finalize(module.target_config());
            }
            module
                .define_function(id, &mut ctx)
                .expect("define wrapper");
            module.clear_context(&mut ctx);
            wrappers.push(id);
        }
        module.finalize_definitions().expect("finalize");
        Harness { module, wrappers }
    }

    /// Calls wrapper `i` with raw argument slots; returns the raw result slot.
    fn call(&self, i: usize, args: &[u64]) -> u64 {
        let code = self.module.get_finalized_function(self.wrappers[i]);
        // SAFETY: the wrapper was generated with exactly this signature.
        let f: Wrapper = unsafe { std::mem::transmute::<*const u8, Wrapper>(code) };
        let mut out = 0u64;
        // SAFETY: `args` holds one slot per parameter of the wrapped built-in (the
        // callers below pass the right count) and `out` is a valid u64.
        unsafe { f(args.as_ptr(), &mut out) };
        out
    }
}

const GARBAGE: u64 = 0xa5a5_a5a5_a5a5_0000;

fn int_arg(v: i64, bits: u32) -> u64 {
    let mask = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    (v as u64 & mask) | (GARBAGE & !mask)
}
fn f32_arg(v: f32) -> u64 {
    u64::from(v.to_bits()) | (GARBAGE << 16)
}
fn f64_arg(v: f64) -> u64 {
    v.to_bits()
}

#[test]
fn builtins_are_callable_from_cranelift_code() {
    use Scalar::*;
    let lookup = |op: ClOp, ty: Scalar| opencl_std(op as u32, ty).expect("entry");
    let fns = [
        lookup(ClOp::s_add_sat, I8),                                   // 0
        lookup(ClOp::u_add_sat, I8),                                   // 1
        lookup(ClOp::clz, I16),                                        // 2
        lookup(ClOp::s_mul_hi, I16),                                   // 3
        lookup(ClOp::u_upsample, I32),                                 // 4
        lookup(ClOp::s_upsample, I16),                                 // 5
        lookup(ClOp::s_mad_sat, I64),                                  // 6
        lookup(ClOp::sin, F32),                                        // 7
        lookup(ClOp::pown, F64),                                       // 8
        lookup(ClOp::ldexp, F32),                                      // 9
        lookup(ClOp::ilogb, F64),                                      // 10
        lookup(ClOp::nan, F64),                                        // 11
        lookup(ClOp::frexp, F32),                                      // 12
        lookup(ClOp::remquo, F64),                                     // 13
        lookup(ClOp::fma, F32),                                        // 14
        lookup(ClOp::s_abs, I8),                                       // 15
        lookup(ClOp::rotate, I16),                                     // 16
        geometric(ClOp::normalize as u32, F32, 3).expect("normalize"), // 17
        half_to(F64, rspirv::spirv::FPRoundingMode::RTN).expect("f64 -> half"), // 18
        half_from(F32).expect("half -> f32"),                          // 19
    ];
    let h = Harness::new(&fns);
    let as_i64 = |v: u64| v as i64;

    assert_eq!(as_i64(h.call(0, &[int_arg(120, 8), int_arg(100, 8)])), 127);
    assert_eq!(as_i64(h.call(0, &[int_arg(-128, 8), int_arg(-1, 8)])), -128);
    // u_add_sat(200, 100) = 255, returned as the i8 -1 and sign-extended by the wrapper.
    assert_eq!(as_i64(h.call(1, &[int_arg(200, 8), int_arg(100, 8)])), -1);
    assert_eq!(as_i64(h.call(2, &[int_arg(1, 16)])), 15);
    assert_eq!(
        as_i64(h.call(3, &[int_arg(-32768, 16), int_arg(-32768, 16)])),
        16384
    );
    assert_eq!(
        h.call(4, &[int_arg(0x1234, 16), int_arg(0xfffe, 16)]),
        0x1234_fffe
    );
    assert_eq!(
        as_i64(h.call(5, &[int_arg(-2, 8), int_arg(0x80, 8)])),
        -2 * 256 + 0x80
    );
    assert_eq!(
        as_i64(h.call(6, &[int_arg(i64::MAX, 64), int_arg(2, 64), int_arg(-5, 64)])),
        i64::MAX
    );
    let s = f32::from_bits(h.call(7, &[f32_arg(0.5)]) as u32);
    assert_eq!(s, f32_1(ClOp::sin)(0.5));
    let p = f64::from_bits(h.call(8, &[f64_arg(-2.0), int_arg(-3, 32)]));
    assert_eq!(p, -0.125);
    let l = f32::from_bits(h.call(9, &[f32_arg(3.0), int_arg(-2, 32)]) as u32);
    assert_eq!(l, 0.75);
    assert_eq!(as_i64(h.call(10, &[f64_arg(1e-310)])), -1030);
    assert_eq!(as_i64(h.call(10, &[f64_arg(0.0)])), i64::from(i32::MIN));
    assert_eq!(h.call(11, &[int_arg(0x42, 64)]), 0x7ff8_0000_0000_0042);

    let mut e = 0i32;
    let m = h.call(12, &[f32_arg(-96.0), &mut e as *mut i32 as u64]);
    assert_eq!((f32::from_bits(m as u32), e), (-0.75, 7));
    let mut q = 0i32;
    let r = h.call(
        13,
        &[f64_arg(17.0), f64_arg(-5.0), &mut q as *mut i32 as u64],
    );
    assert_eq!((f64::from_bits(r), q), (2.0, -3));

    let a = 1.0 + f32::EPSILON;
    let fused = f32::from_bits(h.call(
        14,
        &[f32_arg(a), f32_arg(a), f32_arg(-(1.0 + 2.0 * f32::EPSILON))],
    ) as u32);
    assert_eq!(fused, f32::EPSILON * f32::EPSILON);
    // abs(-128) is 128 as uchar: the i8 bits 0x80, sign-extended by the wrapper.
    assert_eq!(as_i64(h.call(15, &[int_arg(-128, 8)])), -128);
    assert_eq!(
        as_i64(h.call(16, &[int_arg(0x00ff, 16), int_arg(-4, 16)])),
        0xf00f_u16 as i16 as i64
    );

    let v = [0.0f32, 3.0, 4.0];
    let mut out = [0.0f32; 3];
    let len = h.call(17, &[v.as_ptr() as u64, out.as_mut_ptr() as u64]);
    assert_eq!(f32::from_bits(len as u32), 5.0);
    assert_eq!(out, [0.0, 0.6, 0.8]);

    // -1.0 - 2^-20 rounds toward -inf to the half below -1 (0xbc01), returned as an I16
    // and sign-extended by the wrapper.
    let h16 = h.call(18, &[f64_arg(-1.0 - 2f64.powi(-20))]);
    assert_eq!(h16 as i64, 0xbc01u16 as i16 as i64);
    let w = h.call(19, &[int_arg(0xc000u16 as i16 as i64, 16)]);
    assert_eq!(f32::from_bits(w as u32), -2.0);
}

/// Every symbol can be declared and resolved by a JIT module (no name is missing from
/// `all_symbols`, and each is registered under its own name).
#[test]
fn every_table_entry_links_in_a_jit_module() {
    let t = table();
    let mut fns: Vec<NativeFn> = t.map.values().copied().collect();
    fns.extend(t.vector.values().copied());
    fns.extend(t.half_from.values().copied());
    fns.extend(t.half_to.values().copied());
    fns.extend(t.convert.values().copied());
    fns.sort_by_key(|f| f.symbol);
    fns.dedup_by_key(|f| f.symbol);
    // Building wrappers for all of them links every import; a missing symbol would make
    // finalize_definitions fail (or fall back to dlsym, which finds none of ours).
    let h = Harness::new(&fns);
    assert_eq!(h.wrappers.len(), fns.len());
}

fn f32_1(op: ClOp) -> extern "C" fn(f32) -> f32 {
    let f = opencl_std(op as u32, Scalar::F32).expect("entry");
    assert_eq!(f.params, &[Scalar::F32]);
    // SAFETY: checked: [F32] -> F32.
    unsafe { std::mem::transmute::<*const u8, extern "C" fn(f32) -> f32>(f.addr) }
}
