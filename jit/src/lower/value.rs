//! The lane model's value representation and the helpers every lowering uses.
//!
//! A scalar SPIR-V value of a sub-group is one of:
//! - [`Lv::U`]: uniform, one Cranelift scalar;
//! - [`Lv::A`]: affine in the lane index, `base + lane * stride` (work-item ids and
//!   addresses derived from them), kept symbolic so contiguous accesses are found
//!   statically and never materialised unless needed;
//! - [`Lv::V`]: varying, W lanes in 128-bit Cranelift vectors ("chunks"; W = 8 f32 is
//!   two f32x4). Booleans are i32 lanes (all ones = true) so they double as masks.
//!
//! Composite values (OpenCL vectors, structs, arrays) are lists of such leaves.
//! Per-lane scalar fallback code (extract, scalar op, insert) lives only in
//! [`Tr::per_lane`] and [`Tr::lanes_of`]/[`Tr::from_lanes`].

use std::collections::HashMap;

use cranelift_codegen::ir::{self, condcodes::IntCC, types, InstBuilder, Type, Value};

use super::Tr;

/// Element type of a leaf.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    Bool,
    I8,
    I16,
    I32,
    I64,
    /// IEEE binary16, carried as its 16 bits (`I16`, `I16X8` chunks): data movement
    /// treats it like `I16`; arithmetic goes through `f32` in [`super::half`].
    F16,
    F32,
    F64,
}

impl Elem {
    /// The Cranelift scalar type (bools are i8 0/1 when uniform).
    pub fn scalar(self) -> Type {
        match self {
            Elem::Bool | Elem::I8 => types::I8,
            Elem::I16 | Elem::F16 => types::I16,
            Elem::I32 => types::I32,
            Elem::I64 => types::I64,
            Elem::F32 => types::F32,
            Elem::F64 => types::F64,
        }
    }

    /// The 128-bit vector type of a chunk and its lane count.
    pub fn chunk(self) -> (Type, u32) {
        match self {
            Elem::Bool | Elem::I32 => (types::I32X4, 4),
            Elem::I8 => (types::I8X16, 16),
            Elem::I16 | Elem::F16 => (types::I16X8, 8),
            Elem::I64 => (types::I64X2, 2),
            Elem::F32 => (types::F32X4, 4),
            Elem::F64 => (types::F64X2, 2),
        }
    }

    /// Size in memory in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            Elem::Bool | Elem::I8 => 1,
            Elem::I16 | Elem::F16 => 2,
            Elem::I32 | Elem::F32 => 4,
            Elem::I64 | Elem::F64 => 8,
        }
    }

    /// A floating-point type (half included: check for [`Elem::F16`] before using
    /// Cranelift float instructions, which half values never meet).
    pub fn is_float(self) -> bool {
        matches!(self, Elem::F16 | Elem::F32 | Elem::F64)
    }

    pub fn is_int(self) -> bool {
        matches!(self, Elem::I8 | Elem::I16 | Elem::I32 | Elem::I64)
    }

    pub fn bits(self) -> u32 {
        self.bytes() * 8
    }
}

/// One leaf value of a sub-group.
#[derive(Clone, Debug)]
pub enum Lv {
    U(Value),
    V(Vec<Value>),
    /// `base + lane * stride` (integers and pointers only; stride in elements of the
    /// value's own type, wrapping at its width).
    A(Value, i64),
}

impl Lv {
    pub fn is_uniform(&self) -> bool {
        matches!(self, Lv::U(_))
    }
}

/// A whole SPIR-V value: its leaves and their element types.
#[derive(Clone, Debug)]
pub struct Val {
    pub leaves: Vec<Lv>,
    pub elems: std::rc::Rc<Vec<Elem>>,
}

/// Whether `v` is a `vconst` whose every byte is `byte` (all-ones or all-zero masks).
pub(crate) fn vconst_of_byte(func: &ir::Function, v: Value, byte: u8) -> bool {
    let dfg = &func.dfg;
    let Some(inst) = dfg.value_def(v).inst() else {
        return false;
    };
    match dfg.insts[inst] {
        ir::InstructionData::UnaryConst {
            opcode: ir::Opcode::Vconst,
            constant_handle,
        } => dfg
            .constants
            .get(constant_handle)
            .as_slice()
            .iter()
            .all(|b| *b == byte),
        _ => false,
    }
}

/// Little-endian memory flags, which `bitcast` between vector types needs.
pub(crate) fn little() -> ir::MemFlagsData {
    ir::MemFlagsData::new().with_endianness(ir::Endianness::Little)
}

impl Tr<'_, '_> {
    /// Number of chunks of a varying value of `e`.
    pub fn nchunks(&self, e: Elem) -> usize {
        let (_, lpc) = e.chunk();
        self.w.div_ceil(lpc) as usize
    }

    /// A vector constant of type `ty` from little-endian bytes.
    pub fn vconst_bytes(&mut self, ty: Type, bytes: Vec<u8>) -> Value {
        let c = self.b.func.dfg.constants.insert(bytes.into());
        self.b.ins().vconst(ty, c)
    }

    /// Chunk `c` of the lane-index vector scaled by `stride`, for element `e`.
    pub fn iota_chunk(&mut self, e: Elem, c: usize, stride: i64) -> Value {
        let (ty, lpc) = e.chunk();
        let mut bytes = Vec::with_capacity(16);
        for j in 0..lpc as i64 {
            let v = (c as i64 * lpc as i64 + j).wrapping_mul(stride);
            match e.bytes() {
                1 => bytes.extend_from_slice(&(v as i8).to_le_bytes()),
                2 => bytes.extend_from_slice(&(v as i16).to_le_bytes()),
                4 => bytes.extend_from_slice(&(v as i32).to_le_bytes()),
                _ => bytes.extend_from_slice(&v.to_le_bytes()),
            }
        }
        self.vconst_bytes(ty, bytes)
    }

    /// A zero chunk list (all lanes false for bools).
    pub fn zero_vec(&mut self, e: Elem) -> Vec<Value> {
        let (ty, _) = e.chunk();
        (0..self.nchunks(e))
            .map(|_| self.vconst_bytes(ty, vec![0; 16]))
            .collect()
    }

    /// Converts a uniform bool (i8 0/1) to an all-ones/zero i32.
    pub fn bool_to_i32_mask(&mut self, v: Value) -> Value {
        self.b.ins().bmask(types::I32, v)
    }

    /// Splat of a uniform scalar into chunks.
    pub fn splat(&mut self, e: Elem, v: Value) -> Vec<Value> {
        let (ty, _) = e.chunk();
        let s = if e == Elem::Bool {
            self.bool_to_i32_mask(v)
        } else {
            v
        };
        let x = self
            .splat_of_lane(ty, s)
            .unwrap_or_else(|| self.b.ins().splat(ty, s));
        vec![x; self.nchunks(e)]
    }

    /// `splat(extractlane(x, j))` of a vector `x` of the chunk type `ty` as one lane
    /// shuffle of `x` (x86 `pshufd`), where extracting and splatting take two or three
    /// instructions: a `sub_group_broadcast` of an unrolled index, used by every chunk
    /// of a varying multiply-add.
    fn splat_of_lane(&mut self, ty: Type, s: Value) -> Option<Value> {
        let dfg = &self.b.func.dfg;
        let inst = dfg.value_def(s).inst()?;
        let ir::InstructionData::BinaryImm8 {
            opcode: ir::Opcode::Extractlane,
            arg,
            imm,
        } = dfg.insts[inst]
        else {
            return None;
        };
        if dfg.value_type(arg) != ty || ty.bits() != 128 {
            return None;
        }
        let lane_bytes = (ty.lane_bits() / 8) as usize;
        let mut mask = [0u8; 16];
        for (i, m) in mask.iter_mut().enumerate() {
            *m = (usize::from(imm) * lane_bytes + i % lane_bytes) as u8;
        }
        let imm = self.shuffle_imm(mask);
        let fl = little();
        let bytes = if ty == types::I8X16 {
            arg
        } else {
            self.b.ins().bitcast(types::I8X16, fl, arg)
        };
        let r = self.b.ins().shuffle(bytes, bytes, imm);
        Some(if ty == types::I8X16 {
            r
        } else {
            self.b.ins().bitcast(ty, fl, r)
        })
    }

    /// The immediate of byte shuffle `mask`, shared by every shuffle with that mask.
    pub fn shuffle_imm(&mut self, mask: [u8; 16]) -> ir::Immediate {
        if let Some(i) = self.shuffle_imms.get(&mask) {
            return *i;
        }
        let i = self.b.func.dfg.immediates.push(mask.to_vec().into());
        self.shuffle_imms.insert(mask, i);
        i
    }

    /// `i64x2` chunks truncated to `i32x4` chunks: the low halves of each pair of chunks
    /// in one shuffle, instead of extracting and re-inserting every lane.
    pub fn narrow_i64_chunks(&mut self, ch: &[Value]) -> Vec<Value> {
        let fl = little();
        let mut mask = [0u8; 16];
        for (j, m) in mask.iter_mut().enumerate() {
            // Lane j / 4 of a || b is the low half of i64 lane j / 4: bytes 8 (j / 4) ...
            *m = (8 * (j / 4) + j % 4) as u8;
        }
        let imm = self.shuffle_imm(mask);
        ch.chunks(2)
            .map(|p| {
                if let Some(h) = p.get(1).and_then(|y| self.known_halves(p[0], *y)) {
                    return h.lo;
                }
                let a = self.b.ins().bitcast(types::I8X16, fl, p[0]);
                let b = match p.get(1) {
                    Some(h) => self.b.ins().bitcast(types::I8X16, fl, *h),
                    None => a,
                };
                let r = self.b.ins().shuffle(a, b, imm);
                self.b.ins().bitcast(types::I32X4, fl, r)
            })
            .collect()
    }

    /// The chunk types of leaves of elements `elems`, in order: the result types of a
    /// `branch_merge` that carries several leaves as one flat list.
    pub(super) fn chunk_types(&self, elems: &[Elem]) -> Vec<Type> {
        elems
            .iter()
            .flat_map(|e| vec![e.chunk().0; self.nchunks(*e)])
            .collect()
    }

    /// The chunks of leaves `l` (elements `elems`), in order: the inverse of
    /// [`Self::leaves_of_chunks`].
    pub(super) fn flat_chunks(&mut self, l: &[Lv], elems: &[Elem]) -> Vec<Value> {
        l.iter()
            .zip(elems)
            .flat_map(|(l, e)| self.chunks_of(*e, l))
            .collect()
    }

    /// Leaves of elements `elems` cut from a flat chunk list made by
    /// [`Self::flat_chunks`].
    pub(super) fn leaves_of_chunks(&self, flat: &[Value], elems: &[Elem]) -> Vec<Lv> {
        let mut out = Vec::with_capacity(elems.len());
        let mut rest = flat;
        for e in elems {
            let (now, later) = rest.split_at(self.nchunks(*e));
            out.push(Lv::V(now.to_vec()));
            rest = later;
        }
        out
    }

    /// The chunks of `lv` (materialising uniform and affine values).
    pub fn chunks_of(&mut self, e: Elem, lv: &Lv) -> Vec<Value> {
        match lv {
            Lv::V(v) => v.clone(),
            Lv::U(u) => self.splat(e, *u),
            Lv::A(base, stride) => {
                let (ty, _) = e.chunk();
                let s = self.b.ins().splat(ty, *base);
                (0..self.nchunks(e))
                    .map(|c| {
                        let io = self.iota_chunk(e, c, *stride);
                        self.b.ins().iadd(s, io)
                    })
                    .collect()
            }
        }
    }

    /// The W scalar lane values of `lv` (bools as i8 0/1).
    pub fn lanes_of(&mut self, e: Elem, lv: &Lv) -> Vec<Value> {
        if let Lv::U(u) = lv {
            return vec![*u; self.w as usize];
        }
        (0..self.w as usize)
            .map(|l| self.lane_of(e, lv, l))
            .collect()
    }

    /// The scalar value of lane `l` of `lv` (a bool as i8 0/1): one lane of
    /// [`Self::lanes_of`], emitted where it is used (huge kernels: a value extracted
    /// only when needed is not live across the rest of a wide access).
    pub fn lane_of(&mut self, e: Elem, lv: &Lv, l: usize) -> Value {
        match lv {
            Lv::U(u) => *u,
            Lv::A(base, _) if l == 0 => *base,
            Lv::A(base, stride) => self
                .b
                .ins()
                .iadd_imm_s(*base, stride.wrapping_mul(l as i64)),
            Lv::V(chunks) => {
                let (_, lpc) = e.chunk();
                let c = chunks[l / lpc as usize];
                let x = self.lane_scalar(c, (l % lpc as usize) as u8);
                if e == Elem::Bool {
                    self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0)
                } else {
                    x
                }
            }
        }
    }

    /// Packs W scalar lane values (bools as i8) into a varying value.
    pub fn pack_lanes(&mut self, e: Elem, lanes: &[Value]) -> Lv {
        let (_, lpc) = e.chunk();
        let lpc = lpc as usize;
        let chunks = (0..self.nchunks(e))
            .map(|c| {
                let from = (c * lpc).min(lanes.len());
                let to = (from + lpc).min(lanes.len());
                self.pack_chunk(e, &lanes[from..to])
            })
            .collect();
        Lv::V(chunks)
    }

    /// Packs the scalar values (bools as i8) of the lanes of one chunk of element
    /// `e`, lowest first (zeros when there are none).
    pub fn pack_chunk(&mut self, e: Elem, lanes: &[Value]) -> Value {
        let (ty, _) = e.chunk();
        let mut v: Option<Value> = None;
        for (j, x) in lanes.iter().enumerate() {
            let x = if e == Elem::Bool {
                self.bool_to_i32_mask(*x)
            } else {
                *x
            };
            v = Some(match v {
                None => self.b.ins().splat(ty, x),
                Some(vv) => self.b.ins().insertlane(vv, x, j as u8),
            });
        }
        match v {
            Some(v) => v,
            None => self.vconst_bytes(ty, vec![0; 16]),
        }
    }

    /// Applies a scalar operation lane by lane: uniform if every input is uniform,
    /// else extracted, computed per lane and packed. The single place of per-lane
    /// fallback code.
    pub fn per_lane(
        &mut self,
        args: &[(Elem, &Lv)],
        out: Elem,
        mut f: impl FnMut(&mut Tr<'_, '_>, &[Value]) -> Value,
    ) -> Lv {
        if args.iter().all(|(_, a)| a.is_uniform()) {
            let scalars: Vec<Value> = args
                .iter()
                .map(|(_, a)| match a {
                    Lv::U(u) => *u,
                    _ => unreachable!("checked uniform"),
                })
                .collect();
            return Lv::U(f(self, &scalars));
        }
        let lanes: Vec<Vec<Value>> = args.iter().map(|(e, a)| self.lanes_of(*e, a)).collect();
        let res: Vec<Value> = (0..self.w as usize)
            .map(|l| {
                let xs: Vec<Value> = lanes.iter().map(|v| v[l]).collect();
                f(self, &xs)
            })
            .collect();
        self.pack_lanes(out, &res)
    }

    /// Chunk-wise operation on varying operands of the same element type (uniform
    /// operands are splatted); uniform inputs give a uniform scalar result via `scalar`.
    pub fn vec_op2(
        &mut self,
        e: Elem,
        a: &Lv,
        b: &Lv,
        scalar: impl Fn(&mut Tr<'_, '_>, Value, Value) -> Value,
        vector: impl Fn(&mut Tr<'_, '_>, Value, Value) -> Value,
    ) -> Lv {
        if let (Lv::U(x), Lv::U(y)) = (a, b) {
            return Lv::U(scalar(self, *x, *y));
        }
        let va = self.chunks_of(e, a);
        let vb = self.chunks_of(e, b);
        Lv::V(
            va.iter()
                .zip(&vb)
                .map(|(x, y)| vector(self, *x, *y))
                .collect(),
        )
    }

    /// Chunk-wise unary operation.
    pub fn vec_op1(&mut self, e: Elem, a: &Lv, f: impl Fn(&mut Tr<'_, '_>, Value) -> Value) -> Lv {
        match a {
            Lv::U(x) => Lv::U(f(self, *x)),
            _ => {
                let va = self.chunks_of(e, a);
                Lv::V(va.iter().map(|x| f(self, *x)).collect())
            }
        }
    }

    // ---- masks: W/4 chunks of i32x4 (worked on packed when an operand came from a
    // packed mask: `mask_pack`) ----

    /// Lane-wise AND of two masks.
    pub fn mask_and(&mut self, a: &[Value], b: &[Value]) -> Vec<Value> {
        if self.is_full_const(a) {
            return b.to_vec();
        }
        if self.is_full_const(b) {
            return a.to_vec();
        }
        if let Some(r) = self.packed_mask_op(a, b, |t, x, y| t.b.ins().band(x, y)) {
            return r;
        }
        a.iter()
            .zip(b)
            .map(|(x, y)| self.b.ins().band(*x, *y))
            .collect()
    }

    /// `a & !b`.
    pub fn mask_and_not(&mut self, a: &[Value], b: &[Value]) -> Vec<Value> {
        if self.is_full_const(a) {
            return b.iter().map(|x| self.b.ins().bnot(*x)).collect();
        }
        if let Some(r) = self.packed_mask_op(a, b, |t, x, y| t.b.ins().band_not(x, y)) {
            return r;
        }
        a.iter()
            .zip(b)
            .map(|(x, y)| self.b.ins().band_not(*x, *y))
            .collect()
    }

    pub fn mask_or(&mut self, a: &[Value], b: &[Value]) -> Vec<Value> {
        if let Some(r) = self.packed_mask_op(a, b, |t, x, y| t.b.ins().bor(x, y)) {
            return r;
        }
        a.iter()
            .zip(b)
            .map(|(x, y)| self.b.ins().bor(*x, *y))
            .collect()
    }

    /// Whether every chunk of `m` is the all-ones vector constant (a full mask known
    /// when the code is emitted).
    pub fn is_full_const(&self, m: &[Value]) -> bool {
        m.iter().all(|v| vconst_of_byte(self.b.func, *v, 0xff))
    }

    /// Whether `v` is an all-zero vector constant (a mask known empty).
    pub(crate) fn is_zero_mask_const(&self, v: Value) -> bool {
        vconst_of_byte(self.b.func, v, 0)
    }

    /// i8: some lane of `m` is set.
    pub fn mask_any(&mut self, m: &[Value]) -> Value {
        if self.is_full_const(m) {
            return self.b.ins().iconst(types::I8, 1);
        }
        if let Some(p) = self.packed_form(m) {
            return self.b.ins().vany_true(p);
        }
        let mut acc = m[0];
        for x in &m[1..] {
            acc = self.b.ins().bor(acc, *x);
        }
        self.b.ins().vany_true(acc)
    }

    /// i8: every lane of `m` is set.
    pub fn mask_all(&mut self, m: &[Value]) -> Value {
        if self.is_full_const(m) {
            return self.b.ins().iconst(types::I8, 1);
        }
        if let Some(p) = self.packed_form(m) {
            return self.b.ins().vall_true(p);
        }
        let mut acc = m[0];
        for x in &m[1..] {
            acc = self.b.ins().band(acc, *x);
        }
        self.b.ins().vall_true(acc)
    }

    /// A bool leaf as a mask (W/4 i32x4 chunks).
    pub fn bool_mask(&mut self, lv: &Lv) -> Vec<Value> {
        self.chunks_of(Elem::Bool, lv)
    }

    /// `mask ? a : b` lane-wise on leaves of element `e`: a bitselect per chunk with
    /// the mask in `e`'s lane layout (narrowed for 16- and 8-bit elements, widened for
    /// 64-bit ones).
    pub fn select_vec(&mut self, e: Elem, mask: &[Value], a: &Lv, b: &Lv) -> Lv {
        match e {
            Elem::I32 | Elem::F32 | Elem::Bool => {
                let (ty, _) = e.chunk();
                let va = self.chunks_of(e, a);
                let vb = self.chunks_of(e, b);
                Lv::V(
                    mask.iter()
                        .zip(va.iter().zip(&vb))
                        .map(|(m, (x, y))| {
                            let m = if ty == types::I32X4 {
                                *m
                            } else {
                                self.b.ins().bitcast(ty, little(), *m)
                            };
                            self.b.ins().bitselect(m, *x, *y)
                        })
                        .collect(),
                )
            }
            Elem::I16 | Elem::F16 | Elem::I8 => {
                // Narrow the i32 masks (all ones / zero) to the element's lanes: pairs
                // of chunks saturate into one (twice for bytes); a lone chunk pairs
                // with itself, its upper copy landing in lanes past W.
                let mut m: Vec<Value> = mask.to_vec();
                for _ in 0..if e == Elem::I8 { 2 } else { 1 } {
                    m = m
                        .chunks(2)
                        .map(|p| {
                            let hi = p.get(1).copied().unwrap_or(p[0]);
                            self.b.ins().snarrow(p[0], hi)
                        })
                        .collect();
                }
                let va = self.chunks_of(e, a);
                let vb = self.chunks_of(e, b);
                Lv::V(
                    m.iter()
                        .zip(va.iter().zip(&vb))
                        .map(|(m, (x, y))| self.b.ins().bitselect(*m, *x, *y))
                        .collect(),
                )
            }
            Elem::I64 | Elem::F64 => {
                // Each i32 mask chunk (4 lanes) sign-extends to the masks of two
                // 2-lane chunks (all ones / zero stay so).
                let (ty, _) = e.chunk();
                let va = self.chunks_of(e, a);
                let vb = self.chunks_of(e, b);
                let mut out = Vec::with_capacity(va.len());
                for (k, (x, y)) in va.iter().zip(&vb).enumerate() {
                    let m4 = mask[k / 2];
                    let m = if k % 2 == 0 {
                        self.b.ins().swiden_low(m4)
                    } else {
                        self.b.ins().swiden_high(m4)
                    };
                    let m = if ty == types::I64X2 {
                        m
                    } else {
                        self.b.ins().bitcast(ty, little(), m)
                    };
                    out.push(self.b.ins().bitselect(m, *x, *y));
                }
                Lv::V(out)
            }
        }
    }

    /// An integer constant of element `e`.
    pub fn iconst(&mut self, e: Elem, v: i64) -> Value {
        self.b.ins().iconst(e.scalar(), v)
    }

    /// A scalar lane-active test: lane `l` of `mask` (i8).
    pub fn lane_active(&mut self, mask: &[Value], l: usize) -> Value {
        // Computed once per Cranelift block (a value from another block might not
        // dominate this use).
        let here = self.b.current_block();
        if self.lane_cache.0 != here {
            self.lane_cache = (here, HashMap::new());
        }
        let key = (mask[l / 4], (l % 4) as u8);
        if let Some(v) = self.lane_cache.1.get(&key) {
            return *v;
        }
        let x = self.lane_flag(mask, l);
        let v = self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0);
        self.lane_cache.1.insert(key, v);
        v
    }

    /// Lane `l` of `mask` as its i32 lane (all ones or zero): a `select` condition
    /// without the comparison [`Self::lane_active`] adds.
    pub fn lane_flag(&mut self, mask: &[Value], l: usize) -> Value {
        let here = self.b.current_block();
        if self.lane_cache.0 != here {
            self.lane_cache = (here, HashMap::new());
        }
        // Keys of lanes 4..8 of a chunk (which has 4) are the raw flags.
        let key = (mask[l / 4], (l % 4) as u8 + 4);
        if let Some(v) = self.lane_cache.1.get(&key) {
            return *v;
        }
        let v = self.b.ins().extractlane(key.0, key.1 - 4);
        self.lane_cache.1.insert(key, v);
        v
    }
}
