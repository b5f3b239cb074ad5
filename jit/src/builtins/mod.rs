//! Scalar implementations of the OpenCL.std extended instruction set.
//!
//! The code generator lowers an `OpExtInst` of the `OpenCL.std` set by looking up
//! [`opencl_std`] for the instruction's opcode and element type, and calling the returned
//! native function once per active lane (vectors are scalarised by the caller). Every
//! function here is an `extern "C"` Rust function; [`all_symbols`] lists them so the JIT
//! can register each by name (cranelift-jit would otherwise resolve unknown names with a
//! global `dlsym`).
//!
//! Calling convention, for the code generator:
//! - integers are passed and returned at their width (`I8`..`I64`); the Rust side declares
//!   8- and 16-bit parameters as *signed* (`signext`), so calls should mark `I8`/`I16`
//!   parameters and results with `.sext()`. Signedness of the operation comes from the
//!   opcode (`s_max` vs `u_max`), never from the parameter type;
//! - floats are `f32`/`f64`;
//! - [`Scalar::Ptr`] is an address (`i64`) of a private or global out-parameter, written
//!   once with the element type the OpenCL C signature gives (`int*` for frexp/remquo/
//!   lgamma_r, the float type for modf/fract/sincos).
//!
//! The vector forms of `length`/`distance`/`normalize`, which do not decompose into
//! per-component calls, are looked up with [`geometric`] and take their vectors by
//! address. Conversions to and from IEEE half (`vload_half`/`vstore_half*`, `OpFConvert`)
//! are looked up with [`half_from`] and [`half_to`], and numeric conversions with an
//! explicit rounding mode or saturation (which Cranelift lacks) with [`convert`].
//!
//! This module does not generate code and knows nothing of lanes or masks; other
//! vector-only instructions (`vloadn`, `shuffle`, `printf`, `prefetch`, `cross`, `select`,
//! ...) are the code generator's business and are absent from the tables.
//!
//! Accuracy: every function meets the OpenCL C 3.0 full-profile ulp limits (section 7.4)
//! and special values (7.5.1); the tests check this against 256-bit mpmath references
//! (`testdata/`), the host C library, and exact integer arithmetic.

#[cfg(test)]
mod abi_tests;
mod convert;
mod fast32;
mod float;
mod geometric;
mod half;
mod half_math;
mod int;
mod precise;
#[cfg(test)]
mod tests;
pub mod vmath;

use std::collections::HashMap;
use std::sync::OnceLock;

pub use rspirv::spirv::OpenclStd100Op as ClOp;

/// Element types of built-in parameters/results. `Ptr` is a private/global address (i64) for
/// out-parameters (frexp, modf, sincos, remquo, lgamma_r, fract).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
    Ptr,
}

impl Scalar {
    /// Size of a value of this type in bytes (8 for `Ptr`).
    pub fn bytes(self) -> u32 {
        match self {
            Scalar::I8 => 1,
            Scalar::I16 => 2,
            Scalar::I32 | Scalar::F32 => 4,
            Scalar::I64 | Scalar::F64 | Scalar::Ptr => 8,
        }
    }
}

/// A native scalar implementation, called once per active lane by generated code.
#[derive(Clone, Copy, Debug)]
pub struct NativeFn {
    /// Unique name to declare the function under in the JIT module (prefixed `cranecl_`).
    pub symbol: &'static str,
    /// Address of the `extern "C"` function.
    pub addr: *const u8,
    /// Parameter types, in call order.
    pub params: &'static [Scalar],
    /// Result type.
    pub ret: Scalar,
}

// SAFETY: `addr` is the address of a plain `extern "C"` function of this crate: immutable
// code that lives for the whole program, so sharing or sending it between threads is sound.
unsafe impl Send for NativeFn {}
// SAFETY: as above; `NativeFn` holds no interior mutability.
unsafe impl Sync for NativeFn {}

/// Scalar implementation of OpenCL.std ext-inst `opcode` (the numbering of the SPIR-V
/// OpenCL.std extended instruction set) for element type `ty` (the result's element type; for
/// integer ops signedness comes from the opcode, e.g. s_max vs u_max; ILogb/ldexp/pown/rootn/
/// frexp etc. take an i32 param; relational ops like isnan are not in OpenCL.std).
///
/// Keying details:
/// - `ilogb` returns `I32` for both float types, so it is keyed by its *operand* type
///   (`F32`/`F64`);
/// - `s_upsample`/`u_upsample` are keyed by their result (twice the operand width);
/// - `nan` takes `I32` for `F32` and `I64` for `F64`;
/// - `mad24`/`mul24` exist for `I32` only; `half_*`/`native_*` exist for `F32` and `F64`
///   (they share the full-precision implementations);
/// - geometric ops (`length`, `distance`, `normalize`, `fast_*`) here take scalar
///   operands; their vector forms are in [`geometric`];
/// - `bitselect` exists for every integer and float type; `select` is not provided
///   (its scalar and vector semantics differ: the code generator owns it).
pub fn opencl_std(opcode: u32, ty: Scalar) -> Option<NativeFn> {
    table().map.get(&(opcode, ty)).copied()
}

/// Vector form of a geometric OpenCL.std instruction (`length`, `distance`, `normalize`
/// and their `fast_` variants) for `width` components of float type `ty` (`F32`/`F64`),
/// `width` 2, 3 or 4; width 1 is the scalar entry of [`opencl_std`].
///
/// This is an addition to the scalar table, because these functions do not decompose into
/// per-component calls. Every vector operand is passed by address ([`Scalar::Ptr`]) of
/// its `width` components stored contiguously (no padding for 3 components):
/// - `length(p)`: `[Ptr] -> T`;
/// - `distance(p0, p1)`: `[Ptr, Ptr] -> T`;
/// - `normalize(p)`: `[Ptr, Ptr] -> T`, writes the result vector to the second address
///   (which may equal the first) and returns `length(p)` (callers may ignore it).
pub fn geometric(opcode: u32, ty: Scalar, width: u32) -> Option<NativeFn> {
    if width == 1 {
        return opencl_std(opcode, ty);
    }
    table().vector.get(&(opcode, ty, width)).copied()
}

/// Widening from IEEE binary16 to `ty` (`F32`/`F64`), exact: `[I16] -> ty`, the `I16`
/// holding the half's bits. For `vload_half*` and `OpFConvert` from 16-bit floats.
pub fn half_from(ty: Scalar) -> Option<NativeFn> {
    table().half_from.get(&ty).copied()
}

/// Narrowing from `ty` (`F32`/`F64`) to IEEE binary16 in rounding mode `mode`, rounding
/// once: `[ty] -> I16` returning the half's bits. For `vstore_half*` (RTE, or the mode of
/// the `_r` forms) and `OpFConvert` to 16-bit floats (`FPRoundingMode` decoration).
pub fn half_to(ty: Scalar, mode: rspirv::spirv::FPRoundingMode) -> Option<NativeFn> {
    table().half_to.get(&(ty, mode as u32)).copied()
}

/// OpenCL.std `opcode` on half values where computing in `f32` and rounding once is
/// not right (see `half_math`): `fma` and `nextafter` on half bits (`I16`), and
/// `modf`/`fract`/`sincos` as `[F32, Ptr] -> F32` with the pointer receiving half bits.
/// Every other half function is the `F32` entry of [`opencl_std`] plus one rounding.
pub fn half_std(opcode: u32) -> Option<NativeFn> {
    table().half_std.get(&opcode).copied()
}

/// A numeric conversion with an explicit rounding mode: `[from] -> to`.
///
/// - integer (`I8`..`I64`, read as signed if `from_signed`) to `F32`/`F64`, rounded in
///   `mode` (for `OpConvertSToF`/`OpConvertUToF` with an `FPRoundingMode` decoration);
/// - `F64` to `F32` rounded in `mode` (`OpFConvert` with a rounding mode);
/// - `F32`/`F64` to integer (`I8`..`I64`, produced as signed if `to_signed`), rounded in
///   `mode` and saturated, NaN giving 0 (`OpConvertFToS`/`FToU` with
///   `SaturatedConversion` and/or a rounding mode; without a rounding mode OpenCL rounds
///   toward zero; without saturation out-of-range results are undefined, so the saturating
///   function serves there too).
///
/// The signedness flags are ignored for float sides. Exact conversions (f32 to f64,
/// narrow integers to floats) are provided as well, for uniformity.
pub fn convert(
    from: Scalar,
    from_signed: bool,
    to: Scalar,
    to_signed: bool,
    mode: rspirv::spirv::FPRoundingMode,
) -> Option<NativeFn> {
    let is_float = |s: Scalar| matches!(s, Scalar::F32 | Scalar::F64);
    let key = (
        from,
        from_signed && !is_float(from),
        to,
        to_signed && !is_float(to),
        mode as u32,
    );
    table().convert.get(&key).copied()
}

/// Every symbol, to register with the JIT builder (cranelift_jit::JITBuilder::symbol).
pub fn all_symbols() -> Vec<(&'static str, *const u8)> {
    let mut v = table().symbols.clone();
    v.extend(vmath::symbols());
    v
}

/// The lookup table, built once.
struct Table {
    map: HashMap<(u32, Scalar), NativeFn>,
    /// Vector geometric functions by (opcode, element type, width).
    vector: HashMap<(u32, Scalar, u32), NativeFn>,
    /// Half widening by destination type.
    half_from: HashMap<Scalar, NativeFn>,
    /// Half narrowing by (source type, rounding mode).
    half_to: HashMap<(Scalar, u32), NativeFn>,
    /// Half-specific math by opcode.
    half_std: HashMap<u32, NativeFn>,
    /// Conversions by (from, from signed, to, to signed, rounding mode).
    convert: HashMap<ConvertKey, NativeFn>,
    /// Distinct symbols in registration order.
    symbols: Vec<(&'static str, *const u8)>,
}

// SAFETY: the raw pointers in `symbols` are addresses of `extern "C"` functions (see
// `NativeFn`); the table is immutable once built.
unsafe impl Send for Table {}
// SAFETY: as above.
unsafe impl Sync for Table {}

/// Key of a conversion: (from, from signed, to, to signed, rounding mode).
type ConvertKey = (Scalar, bool, Scalar, bool, u32);

/// Collects table entries; used by the submodules' `register` functions.
pub(crate) struct Registry {
    map: HashMap<(u32, Scalar), NativeFn>,
    vector: HashMap<(u32, Scalar, u32), NativeFn>,
    half_from: HashMap<Scalar, NativeFn>,
    half_to: HashMap<(Scalar, u32), NativeFn>,
    half_std: HashMap<u32, NativeFn>,
    convert: HashMap<ConvertKey, NativeFn>,
    symbols: Vec<(&'static str, *const u8)>,
    seen: HashMap<&'static str, *const u8>,
}

impl Registry {
    /// Registers `f` as the implementation of `op` for key type `key`.
    ///
    /// Panics (at first use of the table, in every test run) if the key is registered
    /// twice or a symbol names two different functions: both are bugs of this module.
    pub(crate) fn add(&mut self, op: ClOp, key: Scalar, f: NativeFn) {
        let previous = self.map.insert((op as u32, key), f);
        assert!(
            previous.is_none(),
            "builtin {op:?} for {key:?} registered twice"
        );
        self.add_symbol(f);
    }

    /// Registers `f` as the `width`-component vector form of `op` (see [`geometric`]).
    pub(crate) fn add_vector(&mut self, op: ClOp, key: Scalar, width: u32, f: NativeFn) {
        let previous = self.vector.insert((op as u32, key, width), f);
        assert!(
            previous.is_none(),
            "builtin {op:?} for {key:?}x{width} registered twice"
        );
        self.add_symbol(f);
    }

    /// Registers `f` as the widening from half to `ty` (see [`half_from`]).
    pub(crate) fn add_half_from(&mut self, ty: Scalar, f: NativeFn) {
        assert!(
            self.half_from.insert(ty, f).is_none(),
            "half -> {ty:?} registered twice"
        );
        self.add_symbol(f);
    }

    /// Registers `f` as the narrowing from `ty` to half in `mode` (see [`half_to`]).
    pub(crate) fn add_half_to(
        &mut self,
        ty: Scalar,
        mode: rspirv::spirv::FPRoundingMode,
        f: NativeFn,
    ) {
        let previous = self.half_to.insert((ty, mode as u32), f);
        assert!(
            previous.is_none(),
            "{ty:?} -> half {mode:?} registered twice"
        );
        self.add_symbol(f);
    }

    /// Registers `f` as the half-specific implementation of `op` (see [`half_std`]).
    pub(crate) fn add_half_std(&mut self, op: ClOp, f: NativeFn) {
        let previous = self.half_std.insert(op as u32, f);
        assert!(previous.is_none(), "half {op:?} registered twice");
        self.add_symbol(f);
    }

    /// Registers `f` as the conversion `key.0 -> key.2` in `mode` (see [`convert`]).
    pub(crate) fn add_convert(
        &mut self,
        key: (Scalar, bool, Scalar, bool),
        mode: rspirv::spirv::FPRoundingMode,
        f: NativeFn,
    ) {
        let full = (key.0, key.1, key.2, key.3, mode as u32);
        let previous = self.convert.insert(full, f);
        assert!(previous.is_none(), "conversion {full:?} registered twice");
        self.add_symbol(f);
    }

    /// Records `f`'s symbol once.
    fn add_symbol(&mut self, f: NativeFn) {
        match self.seen.get(f.symbol) {
            Some(&addr) => {
                assert!(addr == f.addr, "symbol {} names two functions", f.symbol);
            }
            None => {
                self.seen.insert(f.symbol, f.addr);
                self.symbols.push((f.symbol, f.addr));
            }
        }
    }
}

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut r = Registry {
            map: HashMap::new(),
            vector: HashMap::new(),
            half_from: HashMap::new(),
            half_to: HashMap::new(),
            half_std: HashMap::new(),
            convert: HashMap::new(),
            symbols: Vec::new(),
            seen: HashMap::new(),
        };
        int::register(&mut r);
        float::register(&mut r);
        geometric::register(&mut r);
        half::register(&mut r);
        half_math::register(&mut r);
        convert::register(&mut r);
        Table {
            map: r.map,
            vector: r.vector,
            half_from: r.half_from,
            half_to: r.half_to,
            half_std: r.half_std,
            convert: r.convert,
            symbols: r.symbols,
        }
    })
}

/// Builds a [`NativeFn`] for function path `$f` under symbol `cranecl_$name`.
macro_rules! native {
    ($name:expr, $f:path, [$($p:ident),*] -> $r:ident) => {
        $crate::builtins::NativeFn {
            symbol: concat!("cranecl_", $name),
            addr: $f as *const u8,
            params: &[$($crate::builtins::Scalar::$p),*],
            ret: $crate::builtins::Scalar::$r,
        }
    };
}
pub(crate) use native;
