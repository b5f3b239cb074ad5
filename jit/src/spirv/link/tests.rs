//! Linker rules on small hand-built modules: LinkOnceODR, Export beating
//! LinkOnceODR, variables (shared, cast, ordered before their users), mismatched
//! declarations, memory models. Calls across clang-built modules are in
//! `jit/tests/link.rs`.

use rspirv::binary::Assemble;
use rspirv::dr::{self, Builder, Operand};
use rspirv::spirv::{
    AddressingModel, Capability, Decoration, FunctionControl, LinkageType, MemoryModel, Op,
    StorageClass, Word,
};

use super::*;

fn module_builder() -> Builder {
    let mut b = Builder::new();
    b.set_version(1, 0);
    b.capability(Capability::Addresses);
    b.capability(Capability::Linkage);
    b.capability(Capability::Kernel);
    b.memory_model(AddressingModel::Physical64, MemoryModel::OpenCL);
    b
}

fn linkage(b: &mut Builder, id: Word, name: &str, ty: LinkageType) {
    b.decorate(
        id,
        Decoration::LinkageAttributes,
        [
            Operand::LiteralString(name.into()),
            Operand::LinkageType(ty),
        ],
    );
}

/// `uint name(uint x) { return x + add; }` with `ty` linkage.
fn add_function(b: &mut Builder, name: &str, add: u32, ty: LinkageType) -> Word {
    let uint = b.type_int(32, 0);
    let fn_ty = b.type_function(uint, [uint]);
    let k = b.constant_bit32(uint, add);
    let f = b
        .begin_function(uint, None, FunctionControl::NONE, fn_ty)
        .unwrap();
    let x = b.function_parameter(uint).unwrap();
    b.begin_block(None).unwrap();
    let r = b.i_add(uint, None, x, k).unwrap();
    b.ret_value(r).unwrap();
    b.end_function().unwrap();
    b.name(f, name);
    linkage(b, f, name, ty);
    f
}

/// A declaration `uint name(uint)` imported.
fn import_function(b: &mut Builder, name: &str) -> Word {
    let uint = b.type_int(32, 0);
    let fn_ty = b.type_function(uint, [uint]);
    let f = b
        .begin_function(uint, None, FunctionControl::NONE, fn_ty)
        .unwrap();
    b.function_parameter(uint).unwrap();
    b.end_function().unwrap();
    linkage(b, f, name, LinkageType::Import);
    f
}

/// `kernel void k(global uint* p) { *p = callee_1(*p) + callee_2(*p) ...; }`
fn kernel_calling(b: &mut Builder, callees: &[Word]) {
    let uint = b.type_int(32, 0);
    let void = b.type_void();
    let ptr = b.type_pointer(None, StorageClass::CrossWorkgroup, uint);
    let fn_ty = b.type_function(void, [ptr]);
    let k = b
        .begin_function(void, None, FunctionControl::NONE, fn_ty)
        .unwrap();
    let p = b.function_parameter(ptr).unwrap();
    b.begin_block(None).unwrap();
    let v = b.load(uint, None, p, None, []).unwrap();
    let mut sum = b.constant_bit32(uint, 0);
    for &c in callees {
        let r = b.function_call(uint, None, c, [v]).unwrap();
        sum = b.i_add(uint, None, sum, r).unwrap();
    }
    b.store(p, sum, None, []).unwrap();
    b.ret().unwrap();
    b.end_function().unwrap();
    b.entry_point(rspirv::spirv::ExecutionModel::Kernel, k, "k", []);
}

fn words(b: Builder) -> Vec<u32> {
    b.module().assemble()
}

fn load(words: &[u32]) -> dr::Module {
    rspirv::dr::load_words(words).expect("linked output loads")
}

fn functions_named(m: &dr::Module, name: &str) -> Vec<Word> {
    let ids: Vec<Word> = m
        .debug_names
        .iter()
        .filter(|i| matches!(i.operands.get(1), Some(Operand::LiteralString(n)) if n == name))
        .filter_map(|i| i.operands[0].id_ref_any())
        .collect();
    m.functions
        .iter()
        .filter_map(|f| f.def_id())
        .filter(|id| ids.contains(id))
        .collect()
}

fn linkage_types(m: &dr::Module) -> Vec<(String, LinkageType)> {
    let mut out: Vec<(String, LinkageType)> = m
        .annotations
        .iter()
        .filter_map(symbols::linkage_attributes)
        .map(|(_, n, t)| (n, t))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The constant the function `f` adds (its body is `x + constant`).
fn added_constant(m: &dr::Module, f: Word) -> u32 {
    let func = m.functions.iter().find(|x| x.def_id() == Some(f)).unwrap();
    let add = &func.blocks[0].instructions[0];
    assert_eq!(add.class.opcode, Op::IAdd);
    let k = add.operands[1].id_ref_any().unwrap();
    let c = m
        .types_global_values
        .iter()
        .find(|i| i.result_id == Some(k))
        .unwrap();
    match c.operands[0] {
        Operand::LiteralBit32(v) => v,
        ref o => panic!("{o:?}"),
    }
}

#[test]
fn link_once_odr_definitions_become_one() {
    // The CTS's linkage_linkonce_odr: both modules define `a` LinkOnceODR, the
    // object exports `b`, the main module imports it.
    let mut obj = module_builder();
    obj.extension("SPV_KHR_linkonce_odr");
    add_function(&mut obj, "a", 5, LinkageType::LinkOnceODR);
    add_function(&mut obj, "b", 7, LinkageType::Export);
    let mut main = module_builder();
    main.extension("SPV_KHR_linkonce_odr");
    let a = add_function(&mut main, "a", 5, LinkageType::LinkOnceODR);
    let b = import_function(&mut main, "b");
    kernel_calling(&mut main, &[a, b]);
    let (obj, main) = (words(obj), words(main));

    let exe = load(&link(&[&obj, &main], LinkOutput::Executable).unwrap());
    assert_eq!(functions_named(&exe, "a").len(), 1, "one definition of a");
    assert_eq!(functions_named(&exe, "b").len(), 1);
    assert!(
        linkage_types(&exe).is_empty(),
        "an executable exports nothing"
    );
    assert!(
        exe.functions.iter().all(|f| !f.blocks.is_empty()),
        "no declaration left"
    );
    assert_eq!(
        exe.types_global_values
            .iter()
            .filter(|i| i.class.opcode == Op::TypeInt)
            .count(),
        1,
        "the uint types of both modules are one"
    );
    let lib = load(&link(&[&obj, &main], LinkOutput::Library).unwrap());
    assert_eq!(
        linkage_types(&lib),
        [
            ("a".to_string(), LinkageType::LinkOnceODR),
            ("b".to_string(), LinkageType::Export)
        ]
    );
    // The main module without its own `a` (the CTS's noa_main) gets the object's.
    let mut noa = module_builder();
    let a = import_function(&mut noa, "a");
    let b = import_function(&mut noa, "b");
    kernel_calling(&mut noa, &[a, b]);
    let exe = load(&link(&[&obj, &words(noa)], LinkOutput::Executable).unwrap());
    assert_eq!(functions_named(&exe, "a").len(), 1);
    assert!(exe.functions.iter().all(|f| !f.blocks.is_empty()));
}

#[test]
fn an_export_beats_link_once_odr() {
    let mut weak = module_builder();
    add_function(&mut weak, "f", 2, LinkageType::LinkOnceODR);
    let mut strong = module_builder();
    add_function(&mut strong, "f", 1, LinkageType::Export);
    let mut user = module_builder();
    let f = import_function(&mut user, "f");
    kernel_calling(&mut user, &[f]);
    let (weak, strong, user) = (words(weak), words(strong), words(user));
    for order in [[&weak, &strong, &user], [&user, &strong, &weak]] {
        let order: Vec<&[u32]> = order.iter().map(|w| w.as_slice()).collect();
        let exe = load(&link(&order, LinkOutput::Executable).unwrap());
        let defs = functions_named(&exe, "f");
        assert_eq!(defs.len(), 1);
        assert_eq!(added_constant(&exe, defs[0]), 1, "the Export's body");
    }
}

#[test]
fn mismatched_declaration_is_refused() {
    let mut def = module_builder();
    add_function(&mut def, "f", 1, LinkageType::Export);
    let mut user = module_builder();
    let float = user.type_float(32, None);
    let fn_ty = user.type_function(float, [float]);
    let f = user
        .begin_function(float, None, FunctionControl::NONE, fn_ty)
        .unwrap();
    user.function_parameter(float).unwrap();
    user.end_function().unwrap();
    linkage(&mut user, f, "f", LinkageType::Import);
    let err = link(&[&words(def), &words(user)], LinkOutput::Executable).unwrap_err();
    assert_eq!(err.kind, crate::CompileErrorKind::Link);
    assert!(err.message.contains("function f"), "{}", err.message);
}

#[test]
fn memory_models_must_agree() {
    let a = words(module_builder());
    let mut b = Builder::new();
    b.capability(Capability::Addresses);
    b.capability(Capability::Kernel);
    b.memory_model(AddressingModel::Physical32, MemoryModel::OpenCL);
    let err = link(&[&a, &words(b)], LinkOutput::Library).unwrap_err();
    assert!(err.message.contains("memory model"), "{}", err.message);
}

/// A module defining `global uint g = 42;` (Export).
fn defines_g() -> Vec<u32> {
    let mut b = module_builder();
    let uint = b.type_int(32, 0);
    let ptr = b.type_pointer(None, StorageClass::CrossWorkgroup, uint);
    let init = b.constant_bit32(uint, 42);
    let g = b.variable(ptr, None, StorageClass::CrossWorkgroup, Some(init));
    b.name(g, "g");
    linkage(&mut b, g, "g", LinkageType::Export);
    words(b)
}

#[test]
fn variable_import_resolves_and_globals_stay_ordered() {
    // `extern global uint g; global uint* global p = &g;` and a kernel storing
    // through `p`'s value: after linking, `g` (from the later input) is defined
    // before `p`'s initializer uses it.
    let mut user = module_builder();
    let uint = user.type_int(32, 0);
    let ptr = user.type_pointer(None, StorageClass::CrossWorkgroup, uint);
    let ptr_ptr = user.type_pointer(None, StorageClass::CrossWorkgroup, ptr);
    let g = user.variable(ptr, None, StorageClass::CrossWorkgroup, None);
    linkage(&mut user, g, "g", LinkageType::Import);
    let p = user.variable(ptr_ptr, None, StorageClass::CrossWorkgroup, Some(g));
    user.name(p, "p");
    let user = words(user);
    let exe = load(&link(&[&user, &defines_g()], LinkOutput::Executable).unwrap());
    let vars: Vec<&dr::Instruction> = exe
        .types_global_values
        .iter()
        .filter(|i| i.class.opcode == Op::Variable)
        .collect();
    assert_eq!(vars.len(), 2, "the import is gone");
    let g_pos = exe
        .types_global_values
        .iter()
        .position(|i| {
            i.class.opcode == Op::Variable
                && i.operands.len() == 2
                && i.operands[1].id_ref_any().is_some_and(|c| {
                    exe.types_global_values
                        .iter()
                        .any(|k| k.result_id == Some(c) && k.class.opcode == Op::Constant)
                })
        })
        .expect("g with its initializer");
    let g_id = exe.types_global_values[g_pos].result_id.unwrap();
    let p_pos = exe
        .types_global_values
        .iter()
        .position(|i| {
            i.class.opcode == Op::Variable
                && i.operands.get(1).and_then(|o| o.id_ref_any()) == Some(g_id)
        })
        .expect("p initialised with g itself");
    assert!(g_pos < p_pos, "g defined before p uses it");
}

#[test]
fn variable_declared_with_another_pointee_is_cast() {
    // `extern global uchar g;` used by a kernel: the definition is a `uint`, so the
    // kernel starts with a cast of the definition to `uchar*`.
    let mut user = module_builder();
    let uchar = user.type_int(8, 0);
    let void = user.type_void();
    let ptr = user.type_pointer(None, StorageClass::CrossWorkgroup, uchar);
    let g = user.variable(ptr, None, StorageClass::CrossWorkgroup, None);
    linkage(&mut user, g, "g", LinkageType::Import);
    let fn_ty = user.type_function(void, []);
    let k = user
        .begin_function(void, None, FunctionControl::NONE, fn_ty)
        .unwrap();
    user.begin_block(None).unwrap();
    let zero = user.constant_bit32(uchar, 0);
    user.store(g, zero, None, []).unwrap();
    user.ret().unwrap();
    user.end_function().unwrap();
    user.entry_point(rspirv::spirv::ExecutionModel::Kernel, k, "k", []);
    let exe = load(&link(&[&defines_g(), &words(user)], LinkOutput::Executable).unwrap());
    let kernel = exe.functions.iter().find(|f| f.def_id().is_some()).unwrap();
    let first = &kernel.blocks[0].instructions[0];
    assert_eq!(first.class.opcode, Op::Bitcast);
    let store = &kernel.blocks[0].instructions[1];
    assert_eq!(store.class.opcode, Op::Store);
    assert_eq!(
        store.operands[0].id_ref_any(),
        first.result_id,
        "the store uses the cast"
    );
}

#[test]
fn two_definitions_of_a_variable_are_an_error() {
    let g = defines_g();
    let err = link(&[&g, &g], LinkOutput::Library).unwrap_err();
    assert!(err.message.contains("variable g"), "{}", err.message);
}
