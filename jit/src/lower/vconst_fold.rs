//! Constant folding of vector operations, on the finished Cranelift function before
//! jump threading and the mid-end.
//!
//! Tests of a local id against constants build their lane masks from the id's base
//! and a lane-index vector. When the base is a constant (a sub-group per row of a
//! required work-group size, `lower::barrier::rows_of_sub_group`), so is every such
//! mask: a tile's edge test `lx == 0` is lane 0 of every sub-group. Cranelift's
//! mid-end folds scalar constants but not vector ones, so the masks were computed,
//! kept in registers (or spilled and reloaded) and tested for every sub-group
//! (clbench `stencil2d`: four edge tests per sub-group). Here every vector operation
//! of constant operands becomes a `vconst`, a `vany_true` / `vall_true` of a constant
//! becomes an `iconst`, and a `brif` on a constant becomes a `jump`, so that the
//! dead side, the masks and their tests disappear in the mid-end.
//!
//! Only values defined earlier in layout order are known (block parameters are not
//! followed): that misses nothing the lowering builds from constants in straight-line
//! code, and needs no fixed point.

use std::collections::HashMap;

use cranelift_codegen::ir::{
    self, condcodes::IntCC, types, ConstantData, Function, InstBuilder, Opcode, Type, Value,
};

/// A known constant: a scalar integer's bits (zero-extended to 64) or a vector's lanes
/// (each zero-extended to 64 bits).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Known {
    Int(u64),
    Lanes(Vec<u64>),
}

/// The low `bits` bits of `x`.
fn trunc(x: u64, bits: u32) -> u64 {
    if bits >= 64 {
        x
    } else {
        x & ((1u64 << bits) - 1)
    }
}

/// `x` (of `bits` bits) sign-extended to 64.
fn sext(x: u64, bits: u32) -> i64 {
    let s = 64 - bits.min(64);
    ((x << s) as i64) >> s
}

/// Whether `cc` holds between `a` and `b`, integers of `bits` bits.
fn compare(cc: IntCC, a: u64, b: u64, bits: u32) -> bool {
    let (sa, sb) = (sext(a, bits), sext(b, bits));
    match cc {
        IntCC::Equal => a == b,
        IntCC::NotEqual => a != b,
        IntCC::SignedLessThan => sa < sb,
        IntCC::SignedLessThanOrEqual => sa <= sb,
        IntCC::SignedGreaterThan => sa > sb,
        IntCC::SignedGreaterThanOrEqual => sa >= sb,
        IntCC::UnsignedLessThan => a < b,
        IntCC::UnsignedLessThanOrEqual => a <= b,
        IntCC::UnsignedGreaterThan => a > b,
        IntCC::UnsignedGreaterThanOrEqual => a >= b,
    }
}

/// A lane-wise binary integer operation, or `None` for other opcodes.
fn binary(op: Opcode, a: u64, b: u64, bits: u32) -> Option<u64> {
    Some(trunc(
        match op {
            Opcode::Iadd => a.wrapping_add(b),
            Opcode::Isub => a.wrapping_sub(b),
            Opcode::Imul => a.wrapping_mul(b),
            Opcode::Band => a & b,
            Opcode::Bor => a | b,
            Opcode::Bxor => a ^ b,
            _ => return None,
        },
        bits,
    ))
}

/// The lanes of a 16-byte vector constant of type `ty`, little-endian.
fn lanes_of(bytes: &[u8], ty: Type) -> Option<Vec<u64>> {
    let lb = (ty.lane_bits() / 8) as usize;
    if bytes.len() != 16 || lb == 0 || ty.lane_type().is_float() {
        return None;
    }
    Some(
        bytes
            .chunks(lb)
            .map(|c| c.iter().rev().fold(0u64, |a, &b| (a << 8) | u64::from(b)))
            .collect(),
    )
}

/// The 16 bytes of `lanes` of `bits` bits each, little-endian.
fn bytes_of(lanes: &[u64], bits: u32) -> Vec<u8> {
    let lb = (bits / 8) as usize;
    lanes
        .iter()
        .flat_map(|&l| (0..lb).map(move |i| (l >> (8 * i)) as u8))
        .collect()
}

/// Folds the function's vector constants (see the module comment); returns how many
/// instructions were rewritten.
pub(crate) fn fold_vector_constants(func: &mut Function) -> usize {
    let mut known: HashMap<Value, Known> = HashMap::new();
    let mut rewritten = 0;
    let blocks: Vec<ir::Block> = func.layout.blocks().collect();
    for b in blocks {
        let insts: Vec<ir::Inst> = func.layout.block_insts(b).collect();
        for inst in insts {
            let data = func.dfg.insts[inst];
            let results = func.dfg.inst_results(inst);
            let result = results.first().copied();
            let ty = result.map(|r| func.dfg.value_type(r));
            let int_ty = ty.filter(|t| t.is_int() && !t.is_vector());
            let vec_ty = ty.filter(|t| t.is_vector() && t.lane_type().is_int() && t.bits() == 128);
            let get = |v: Value| known.get(&func.dfg.resolve_aliases(v)).cloned();
            let value: Option<Known> = match data {
                ir::InstructionData::UnaryImm {
                    opcode: Opcode::Iconst,
                    imm,
                } => int_ty.map(|t| Known::Int(trunc(imm.bits() as u64, t.bits()))),
                ir::InstructionData::UnaryConst {
                    opcode: Opcode::Vconst,
                    constant_handle,
                } => vec_ty.and_then(|t| {
                    lanes_of(func.dfg.constants.get(constant_handle).as_slice(), t)
                        .map(Known::Lanes)
                }),
                ir::InstructionData::Unary { opcode, arg } => match (opcode, get(arg)) {
                    (Opcode::Splat, Some(Known::Int(x))) => vec_ty.map(|t| {
                        Known::Lanes(vec![trunc(x, t.lane_bits()); t.lane_count() as usize])
                    }),
                    (Opcode::Ireduce | Opcode::Uextend, Some(Known::Int(x))) => {
                        int_ty.map(|t| Known::Int(trunc(x, t.bits())))
                    }
                    (Opcode::Sextend, Some(Known::Int(x))) => {
                        let from = func.dfg.value_type(arg).bits();
                        int_ty.map(|t| Known::Int(trunc(sext(x, from) as u64, t.bits())))
                    }
                    (Opcode::Bnot, Some(Known::Int(x))) => {
                        int_ty.map(|t| Known::Int(trunc(!x, t.bits())))
                    }
                    (Opcode::Bnot, Some(Known::Lanes(l))) => vec_ty.map(|t| {
                        Known::Lanes(l.iter().map(|&x| trunc(!x, t.lane_bits())).collect())
                    }),
                    (Opcode::SwidenLow | Opcode::SwidenHigh, Some(Known::Lanes(l))) => {
                        // Packed masks (`mask_pack`) unpacked.
                        let from = func.dfg.value_type(arg).lane_bits();
                        let half = l.len() / 2;
                        let part = if opcode == Opcode::SwidenLow {
                            &l[..half]
                        } else {
                            &l[half..]
                        };
                        vec_ty.map(|t| {
                            Known::Lanes(
                                part.iter()
                                    .map(|&x| trunc(sext(x, from) as u64, t.lane_bits()))
                                    .collect(),
                            )
                        })
                    }
                    (Opcode::VanyTrue, Some(Known::Lanes(l))) => {
                        Some(Known::Int(u64::from(l.iter().any(|&x| x != 0))))
                    }
                    (Opcode::VallTrue, Some(Known::Lanes(l))) => {
                        Some(Known::Int(u64::from(l.iter().all(|&x| x != 0))))
                    }
                    _ => None,
                },
                ir::InstructionData::Binary { opcode, args } => {
                    match (get(args[0]), get(args[1])) {
                        (Some(Known::Int(a)), Some(Known::Int(b))) => {
                            int_ty.and_then(|t| binary(opcode, a, b, t.bits()).map(Known::Int))
                        }
                        (Some(Known::Lanes(a)), Some(Known::Lanes(b)))
                            if opcode == Opcode::Snarrow =>
                        {
                            // Masks packed (`mask_pack`): signed saturation.
                            let from = func.dfg.value_type(args[0]).lane_bits();
                            vec_ty.map(|t| {
                                let (lo, hi) = (
                                    -(1i64 << (t.lane_bits() - 1)),
                                    (1i64 << (t.lane_bits() - 1)) - 1,
                                );
                                Known::Lanes(
                                    a.iter()
                                        .chain(&b)
                                        .map(|&x| {
                                            trunc(sext(x, from).clamp(lo, hi) as u64, t.lane_bits())
                                        })
                                        .collect(),
                                )
                            })
                        }
                        (Some(Known::Lanes(a)), Some(Known::Lanes(b))) => vec_ty.and_then(|t| {
                            a.iter()
                                .zip(&b)
                                .map(|(&x, &y)| binary(opcode, x, y, t.lane_bits()))
                                .collect::<Option<Vec<u64>>>()
                                .map(Known::Lanes)
                        }),
                        _ => None,
                    }
                }
                ir::InstructionData::IntCompare { cond, args, .. } => {
                    let bits = func.dfg.value_type(args[0]).lane_bits();
                    match (get(args[0]), get(args[1])) {
                        (Some(Known::Int(a)), Some(Known::Int(b))) => {
                            Some(Known::Int(u64::from(compare(cond, a, b, bits))))
                        }
                        (Some(Known::Lanes(a)), Some(Known::Lanes(b))) => vec_ty.map(|t| {
                            let ones = trunc(u64::MAX, t.lane_bits());
                            Known::Lanes(
                                a.iter()
                                    .zip(&b)
                                    .map(
                                        |(&x, &y)| if compare(cond, x, y, bits) { ones } else { 0 },
                                    )
                                    .collect(),
                            )
                        }),
                        _ => None,
                    }
                }
                ir::InstructionData::Brif { arg, blocks, .. } => {
                    if let Some(Known::Int(c)) = get(arg) {
                        let to = blocks[usize::from(c == 0)];
                        func.dfg.insts[inst] = ir::InstructionData::Jump {
                            opcode: Opcode::Jump,
                            destination: to,
                        };
                        rewritten += 1;
                    }
                    None
                }
                _ => None,
            };
            let (Some(r), Some(k)) = (result, value) else {
                continue;
            };
            let opcode = data.opcode();
            match (&k, ty) {
                (Known::Lanes(l), Some(t)) if opcode != Opcode::Vconst => {
                    let bytes = bytes_of(l, t.lane_bits());
                    let handle = func.dfg.constants.insert(ConstantData::from(bytes));
                    func.replace(inst).vconst(t, handle);
                    rewritten += 1;
                }
                (Known::Int(x), Some(t))
                    if matches!(opcode, Opcode::VanyTrue | Opcode::VallTrue) && t == types::I8 =>
                {
                    func.replace(inst).iconst(t, *x as i64);
                    rewritten += 1;
                }
                _ => {}
            }
            known.insert(r, k);
        }
    }
    rewritten
}

#[cfg(test)]
mod tests {
    use super::*;
    use cranelift_codegen::ir::{AbiParam, Signature, UserFuncName};
    use cranelift_codegen::isa::CallConv;
    use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};

    use super::super::clif_test::finish;

    /// `f(x: i32) -> i32`: `x + 1` when lane 0 of `(splat(base) + [0,1,2,3]) == 0` is
    /// the only true lane (tested with vany_true of the mask and vall_true), else `x`.
    fn edge_test(base: i64) -> (Function, cranelift_codegen::settings::Flags) {
        let mut sig = Signature::new(CallConv::SystemV);
        sig.params.push(AbiParam::new(types::I32));
        sig.returns.push(AbiParam::new(types::I32));
        let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut fctx);
        let [entry, yes, no] = [(); 3].map(|_| b.create_block());
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let x = b.block_params(entry)[0];
        let base64 = b.ins().iconst(types::I64, base);
        let base32 = b.ins().ireduce(types::I32, base64);
        let s = b.ins().splat(types::I32X4, base32);
        let iota = b
            .func
            .dfg
            .constants
            .insert(ConstantData::from(bytes_of(&[0, 1, 2, 3], 32)));
        let iota = b.ins().vconst(types::I32X4, iota);
        let ids = b.ins().iadd(s, iota);
        let zero = b.ins().iconst(types::I32, 0);
        let zeros = b.ins().splat(types::I32X4, zero);
        let mask = b.ins().icmp(IntCC::Equal, ids, zeros);
        let all = b.ins().vall_true(mask);
        let any = b.ins().vany_true(mask);
        let one_lane = b.ins().band_not(any, all);
        b.ins().brif(one_lane, yes, &[], no, &[]);
        b.switch_to_block(yes);
        let x1 = b.ins().iadd_imm_s(x, 1);
        b.ins().return_(&[x1]);
        b.switch_to_block(no);
        b.ins().return_(&[x]);
        let flags = finish(b);
        (func, flags)
    }

    fn opcodes(func: &Function) -> Vec<Opcode> {
        func.layout
            .blocks()
            .flat_map(|b| func.layout.block_insts(b))
            .map(|i| func.dfg.insts[i].opcode())
            .collect()
    }

    #[test]
    fn constant_lane_masks_decide_their_branch() {
        // Base 0: lane 0 alone matches, so the branch goes to `yes`; base -2: lane 2.
        // Base 5: no lane matches, so `no`.
        for (base, taken) in [(0i64, 1usize), (-2, 1), (5, 2)] {
            let (mut func, flags) = edge_test(base);
            assert!(fold_vector_constants(&mut func) > 0);
            cranelift_codegen::verify_function(&func, &flags).expect("folded function verifies");
            let ops = opcodes(&func);
            assert!(!ops.contains(&Opcode::Brif), "base {base}: {ops:?}");
            assert!(!ops.contains(&Opcode::Icmp) && !ops.contains(&Opcode::VanyTrue));
            let entry = func.layout.entry_block().unwrap();
            let term = func.layout.last_inst(entry).unwrap();
            let ir::InstructionData::Jump { destination, .. } = func.dfg.insts[term] else {
                panic!("base {base}: entry does not end in a jump");
            };
            let to = destination.block(&func.dfg.value_lists);
            let blocks: Vec<ir::Block> = func.layout.blocks().collect();
            assert_eq!(to, blocks[taken], "base {base}");
        }
    }

    #[test]
    fn unknown_operands_are_left_alone() {
        let (mut func, _) = edge_test(0);
        // Make the splatted base a function parameter instead of a constant.
        let entry = func.layout.entry_block().unwrap();
        let x = func.dfg.block_params(entry)[0];
        let splat = func
            .layout
            .block_insts(entry)
            .find(|&i| func.dfg.insts[i].opcode() == Opcode::Splat)
            .unwrap();
        func.dfg.inst_args_mut(splat)[0] = x;
        assert_eq!(fold_vector_constants(&mut func), 1, "only the zero splat");
        assert!(opcodes(&func).contains(&Opcode::Brif));
    }

    /// The lanes of the vector constant `v` defines, after folding.
    fn const_lanes(func: &Function, v: Value) -> Vec<u64> {
        let ir::ValueDef::Result(i, _) = func.dfg.value_def(v) else {
            panic!("{v} is no instruction result");
        };
        let ir::InstructionData::UnaryConst {
            opcode: Opcode::Vconst,
            constant_handle,
        } = func.dfg.insts[i]
        else {
            panic!("{v} was not folded: {:?}", func.dfg.insts[i]);
        };
        lanes_of(
            func.dfg.constants.get(constant_handle).as_slice(),
            func.dfg.value_type(v),
        )
        .unwrap()
    }

    #[test]
    fn packed_masks_fold_through_narrowing_and_widening() {
        // Four i32x4 mask chunks packed into i8x16 (two levels of `snarrow`), ANDed
        // with the complement of a constant, and unpacked again (`swiden_*`): each
        // step's lanes, and the `vany_true` of the packed mask, are constants.
        let mut sig = Signature::new(CallConv::SystemV);
        sig.returns.push(AbiParam::new(types::I32));
        let mut func = Function::with_name_signature(UserFuncName::user(0, 0), sig);
        let mut fctx = FunctionBuilderContext::new();
        let mut b = FunctionBuilder::new(&mut func, &mut fctx);
        let [entry, yes, no] = [(); 3].map(|_| b.create_block());
        b.switch_to_block(entry);
        let ones = 0xffff_ffffu64;
        let chunk_lanes = [
            [ones, 0, 0, 0],
            [0, 0, 0, 0],
            [0, ones, 0, 0],
            [0, 0, 0, ones],
        ];
        let chunks: Vec<Value> = chunk_lanes
            .iter()
            .map(|l| {
                let h = b
                    .func
                    .dfg
                    .constants
                    .insert(ConstantData::from(bytes_of(l, 32)));
                b.ins().vconst(types::I32X4, h)
            })
            .collect();
        let lo = b.ins().snarrow(chunks[0], chunks[1]);
        let hi = b.ins().snarrow(chunks[2], chunks[3]);
        let packed = b.ins().snarrow(lo, hi);
        let mut clear = [0u64; 16];
        clear[0] = 0xff;
        let h = b
            .func
            .dfg
            .constants
            .insert(ConstantData::from(bytes_of(&clear, 8)));
        let clear = b.ins().vconst(types::I8X16, h);
        let rest = b.ins().band_not(packed, clear);
        let rest_hi = b.ins().swiden_high(rest);
        let rest_c3 = b.ins().swiden_high(rest_hi);
        let any = b.ins().vany_true(rest);
        b.ins().brif(any, yes, &[], no, &[]);
        b.switch_to_block(yes);
        let one = b.ins().iconst(types::I32, 1);
        b.ins().return_(&[one]);
        b.switch_to_block(no);
        let zero = b.ins().iconst(types::I32, 0);
        b.ins().return_(&[zero]);
        let flags = finish(b);
        assert!(fold_vector_constants(&mut func) > 0);
        cranecl_verify(&func, &flags);
        let mut want = [0u64; 16];
        for (k, l) in chunk_lanes.iter().enumerate() {
            for (j, &x) in l.iter().enumerate() {
                want[4 * k + j] = x & 0xff;
            }
        }
        assert_eq!(const_lanes(&func, packed), want);
        want[0] = 0;
        assert_eq!(const_lanes(&func, rest), want);
        assert_eq!(
            const_lanes(&func, rest_hi),
            [0, 0xffff, 0, 0, 0, 0, 0, 0xffff][..]
        );
        assert_eq!(const_lanes(&func, rest_c3), [0, 0, 0, ones][..]);
        assert!(
            !opcodes(&func).contains(&Opcode::Brif),
            "the test is decided"
        );
    }

    fn cranecl_verify(func: &Function, flags: &cranelift_codegen::settings::Flags) {
        cranelift_codegen::verify_function(func, flags).expect("folded function verifies");
    }

    #[test]
    fn lanes_round_trip_and_compare_signed() {
        let b = bytes_of(&[1, 0xffff_ffff, 7, 0x8000_0000], 32);
        assert_eq!(
            lanes_of(&b, types::I32X4).unwrap(),
            [1, 0xffff_ffff, 7, 0x8000_0000]
        );
        assert!(compare(IntCC::SignedLessThan, 0xffff_ffff, 0, 32));
        assert!(!compare(IntCC::UnsignedLessThan, 0xffff_ffff, 0, 32));
        assert_eq!(binary(Opcode::Iadd, 0xffff_ffff, 2, 32), Some(1));
    }
}
