//! Our typed view of a SPIR-V module: types, constants, global variables and functions
//! decoded once from the words (by [`decode`]) and validated there, so that analysis and
//! lowering never re-read raw words and never meet an instruction we do not know.
//!
//! This module does not generate code and does not know about lanes. [`link`] merges
//! modules for clLinkProgram.

pub mod const_addr;
mod decode;
pub mod link;
mod operands;
mod specialize;
mod validate;

pub use decode::{
    decode, GROUP_ASYNC_COPIES_SET, IMPLEMENTED_CAPABILITIES,
    IMPLEMENTED_EXTENDED_INSTRUCTION_SETS, IMPLEMENTED_EXTENSIONS,
};
pub use operands::{for_each_operand, for_each_operand_mut};
pub use specialize::{spec_constants, specialize, SpecConstant};

use std::collections::HashMap;

pub use rspirv::spirv::BuiltIn;

/// A SPIR-V result id.
pub type Id = u32;

/// Where a pointer points (SPIR-V storage classes an OpenCL kernel can use).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Storage {
    /// Per-work-item variables (`OpVariable Function`) and private globals.
    Function,
    /// `__global`.
    CrossWorkgroup,
    /// `__constant`.
    UniformConstant,
    /// `__local`.
    Workgroup,
    /// Built-in input variables.
    Input,
    /// The generic address space.
    Generic,
}

/// A SPIR-V type.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    Void,
    Bool,
    /// OpenCL SPIR-V integers carry no signedness; operations decide.
    Int {
        bits: u32,
    },
    Float {
        bits: u32,
    },
    Vector {
        elem: Id,
        count: u32,
    },
    Array {
        elem: Id,
        len: u64,
    },
    RuntimeArray {
        elem: Id,
    },
    Struct {
        members: Vec<Id>,
        packed: bool,
    },
    Pointer {
        storage: Storage,
        pointee: Id,
    },
    Function {
        ret: Id,
        params: Vec<Id>,
    },
    /// `event_t` and other opaque handles we pass around as 64-bit values
    /// (`reserve_id_t` too: see `crate::pipe` for its encoding).
    Event,
    /// `OpTypePipe`: a pipe kernel argument, the address of the pipe's storage
    /// (`crate::pipe`); `write` for `write_only`.
    Pipe {
        write: bool,
    },
    /// `queue_t` (`OpTypeQueue`): a 64-bit handle of a device queue; kept apart from
    /// [`Type::Event`] so that `clSetKernelArg` can tell a queue argument.
    Queue,
    /// `OpTypeOpaque`: a named type of unknown layout, usable only behind pointers.
    Opaque(String),
    /// Types we decode but cannot generate code for (images, samplers, pipes...): the
    /// name is used in error messages when a kernel actually uses one.
    Unsupported(&'static str),
}

/// Value of a constant.
#[derive(Clone, Debug, PartialEq)]
pub enum ConstValue {
    /// Integer or float bits (zero-extended), or a bool as 0/1.
    Scalar(u64),
    Composite(Vec<Id>),
    /// `OpConstantNull`: all zeros.
    Null,
    /// `OpUndef`: any value; we use zeros.
    Undef,
    /// An `OpSpecConstantOp` on addresses of module-scope variables: the operation
    /// (operands are constants or globals), evaluated where it is used.
    Expr(Box<Op>),
}

/// A constant (or `OpUndef`) of type `ty`.
#[derive(Clone, Debug)]
pub struct Constant {
    pub ty: Id,
    pub value: ConstValue,
}

/// A module-scope `OpVariable`.
#[derive(Clone, Debug)]
pub struct GlobalVar {
    /// The pointer type of the variable.
    pub ty: Id,
    pub storage: Storage,
    pub builtin: Option<BuiltIn>,
    pub init: Option<Id>,
    pub name: String,
}

/// Binary operations with two operands of the same shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    IAdd,
    ISub,
    IMul,
    UDiv,
    SDiv,
    UMod,
    SRem,
    SMod,
    FAdd,
    FSub,
    FMul,
    FDiv,
    FRem,
    FMod,
    Shl,
    LShr,
    AShr,
    And,
    Or,
    Xor,
    LogicalAnd,
    LogicalOr,
    LogicalEqual,
    LogicalNotEqual,
    IEqual,
    INotEqual,
    UGreaterThan,
    SGreaterThan,
    UGreaterThanEqual,
    SGreaterThanEqual,
    ULessThan,
    SLessThan,
    ULessThanEqual,
    SLessThanEqual,
    FOrdEqual,
    FUnordEqual,
    FOrdNotEqual,
    FUnordNotEqual,
    FOrdLessThan,
    FUnordLessThan,
    FOrdGreaterThan,
    FUnordGreaterThan,
    FOrdLessThanEqual,
    FUnordLessThanEqual,
    FOrdGreaterThanEqual,
    FUnordGreaterThanEqual,
    Ordered,
    Unordered,
    LessOrGreater,
}

impl BinOp {
    /// Integer add, subtract, multiply, shifts and bitwise logic: the operations
    /// of index and address arithmetic, cheap and exact on every width.
    pub fn is_index_arithmetic(self) -> bool {
        matches!(
            self,
            BinOp::IAdd
                | BinOp::ISub
                | BinOp::IMul
                | BinOp::Shl
                | BinOp::LShr
                | BinOp::AShr
                | BinOp::And
                | BinOp::Or
                | BinOp::Xor
        )
    }
}

/// Unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    SNegate,
    FNegate,
    Not,
    LogicalNot,
    IsNan,
    IsInf,
    IsFinite,
    IsNormal,
    SignBitSet,
    BitCount,
    BitReverse,
    /// `any(bvec)`: reduces a vector of bools.
    Any,
    /// `all(bvec)`.
    All,
}

/// Numeric conversions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConvOp {
    FToU,
    FToS,
    SToF,
    UToF,
    UConvert,
    SConvert,
    FConvert,
    SatSToU,
    SatUToS,
}

/// Rounding mode of a conversion (`FPRoundingMode` decoration).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rounding {
    Rte,
    Rtz,
    Rtp,
    Rtn,
}

/// Integer operations whose result is a two-member struct `{ low, high }` of the
/// operands' type (`OpIAddCarry`: sum and carry, `OpISubBorrow`: difference and
/// borrow, `OpUMulExtended` / `OpSMulExtended`: low and high halves of the product).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WideOp {
    IAddCarry,
    ISubBorrow,
    UMulExtended,
    SMulExtended,
}

/// Atomic read-modify-write operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomicOp {
    Load,
    Store,
    Exchange,
    CompareExchange,
    IIncrement,
    IDecrement,
    IAdd,
    ISub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    FAdd,
    FMin,
    FMax,
    /// `atomic_flag_test_and_set`: set the flag word to 1, result: whether it was set.
    FlagTestAndSet,
    /// `atomic_flag_clear`: store 0 to the flag word.
    FlagClear,
}

/// Group (sub-group / work-group) collective operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupOp {
    All,
    Any,
    Broadcast,
    IAdd,
    FAdd,
    FMin,
    UMin,
    SMin,
    FMax,
    UMax,
    SMax,
    IMul,
    FMul,
    And,
    Or,
    Xor,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
    /// `OpSubgroupShuffleINTEL` (data, invocation id).
    Shuffle,
    /// `OpSubgroupShuffleDownINTEL` (current, next, delta).
    ShuffleDown,
    /// `OpSubgroupShuffleUpINTEL` (previous, current, delta).
    ShuffleUp,
    /// `OpSubgroupShuffleXorINTEL` (data, mask).
    ShuffleXor,
    /// `OpSubgroupBlockReadINTEL` (ptr).
    BlockRead,
    /// `OpSubgroupBlockWriteINTEL` (ptr, data).
    BlockWrite,
    /// `OpGroupNonUniformElect`.
    Elect,
    /// `OpGroupNonUniformBroadcastFirst` (value): the first active lane's value.
    BroadcastFirst,
    /// `OpGroupNonUniformAllEqual` (value).
    AllEqual,
    /// `OpGroupNonUniformBallot` (predicate): a uint4 bit mask of the active lanes.
    Ballot,
    /// `OpGroupNonUniformInverseBallot` (uint4): this lane's bit.
    InverseBallot,
    /// `OpGroupNonUniformBallotBitExtract` (uint4, index).
    BallotBitExtract,
    /// `OpGroupNonUniformBallotBitCount` (uint4) with a reduce or scan mode.
    BallotBitCount,
    /// `OpGroupNonUniformBallotFindLSB` (uint4).
    BallotFindLsb,
    /// `OpGroupNonUniformBallotFindMSB` (uint4).
    BallotFindMsb,
    /// `OpGroupNonUniformShuffleUp` (value, delta): lane `l` reads lane `l - delta`.
    ShuffleUpKhr,
    /// `OpGroupNonUniformShuffleDown` (value, delta): lane `l` reads lane `l + delta`.
    ShuffleDownKhr,
    /// `OpGroupNonUniformRotateKHR` (value, delta[, cluster size]).
    Rotate,
}

impl GroupOp {
    /// The reductions and scans (add, mul, min, max, bitwise and logical): the ops
    /// that combine the lanes' values, as opposed to votes, broadcasts and shuffles.
    pub fn is_arithmetic(self) -> bool {
        matches!(
            self,
            GroupOp::IAdd
                | GroupOp::FAdd
                | GroupOp::FMin
                | GroupOp::UMin
                | GroupOp::SMin
                | GroupOp::FMax
                | GroupOp::UMax
                | GroupOp::SMax
                | GroupOp::IMul
                | GroupOp::FMul
                | GroupOp::And
                | GroupOp::Or
                | GroupOp::Xor
                | GroupOp::LogicalAnd
                | GroupOp::LogicalOr
                | GroupOp::LogicalXor
        )
    }
}

/// How a reduction-like group operation combines lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupMode {
    Reduce,
    InclusiveScan,
    ExclusiveScan,
    /// `ClusteredReduce`: the last operand is the (constant) cluster size.
    ClusteredReduce,
}

/// The scope of a group operation or barrier.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    CrossDevice,
    Device,
    Workgroup,
    Subgroup,
    Invocation,
}

/// The operation of a 2D block instruction (`SPV_INTEL_2d_block_io`,
/// `cl_intel_subgroup_2d_block_io`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Block2dKind {
    Load,
    /// Load, then pack 4 (8-bit) or 2 (16-bit) rows of a column into 32 bits (VNNI).
    LoadTransform,
    /// Load, then transpose before handing the block to the lanes.
    LoadTranspose,
    Store,
    Prefetch,
}

/// The compile-time shape of a 2D block instruction: element size in bytes, block
/// width (elements) and height (rows), block count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Block2dShape {
    pub kind: Block2dKind,
    pub esize: u32,
    pub width: u32,
    pub height: u32,
    pub count: u32,
}

impl Block2dShape {
    /// Whether the shape is one of the cl_intel_subgroup_2d_block_io table's (the
    /// block sizes the device supports; SPV_INTEL_2d_block_io leaves them to the
    /// client API).
    pub fn is_supported(&self) -> bool {
        let Block2dShape {
            kind,
            esize,
            width,
            height,
            count,
        } = *self;
        let h_all = matches!(height, 1 | 2 | 4 | 8 | 16 | 32);
        match kind {
            Block2dKind::Load => match (esize, width) {
                (1, 32) | (2, 16) | (4, 8) => h_all && matches!(count, 1 | 2),
                (1, 16) => matches!(height, 8 | 16 | 32) && count == 4,
                (4, 16) => h_all && count == 1,
                _ => false,
            },
            Block2dKind::LoadTransform => match (esize, width) {
                (1, 16) => height == 32 && matches!(count, 1 | 2 | 4),
                (2, 16) => matches!(height, 16 | 32) && matches!(count, 1 | 2),
                _ => false,
            },
            Block2dKind::LoadTranspose => {
                esize == 4 && width == 8 && matches!(height, 16 | 32) && count == 1
            }
            Block2dKind::Store => {
                matches!((esize, width), (1, 16) | (1, 32) | (2, 16) | (4, 16))
                    && matches!(height, 1 | 2 | 4 | 8)
                    && count == 1
            }
            Block2dKind::Prefetch => match (esize, width) {
                (1, 32) | (2, 16) | (4, 8) => h_all && matches!(count, 1 | 2),
                (1, 16) => {
                    (height == 32 && matches!(count, 1 | 2))
                        || (matches!(height, 8 | 16 | 32) && count == 4)
                }
                (4, 16) => h_all && count == 1,
                _ => false,
            },
        }
    }

    /// The shape as one integer, for the run-time helper.
    pub fn pack(&self) -> u64 {
        let kind = match self.kind {
            Block2dKind::Load => 0u64,
            Block2dKind::LoadTransform => 1,
            Block2dKind::LoadTranspose => 2,
            Block2dKind::Store => 3,
            Block2dKind::Prefetch => 4,
        };
        kind | u64::from(self.esize) << 8
            | u64::from(self.width) << 16
            | u64::from(self.height) << 32
            | u64::from(self.count) << 48
    }

    /// The inverse of [`Block2dShape::pack`].
    pub fn unpack(v: u64) -> Option<Block2dShape> {
        let kind = match v & 0xff {
            0 => Block2dKind::Load,
            1 => Block2dKind::LoadTransform,
            2 => Block2dKind::LoadTranspose,
            3 => Block2dKind::Store,
            4 => Block2dKind::Prefetch,
            _ => return None,
        };
        Some(Block2dShape {
            kind,
            esize: ((v >> 8) & 0xff) as u32,
            width: ((v >> 16) & 0xffff) as u32,
            height: ((v >> 32) & 0xffff) as u32,
            count: ((v >> 48) & 0xffff) as u32,
        })
    }
}

/// One non-terminator instruction.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    Binary(BinOp, Id, Id),
    Unary(UnOp, Id),
    Convert {
        op: ConvOp,
        value: Id,
        saturate: bool,
        rounding: Option<Rounding>,
    },
    /// [`WideOp`] on two integer scalars or vectors.
    Wide(WideOp, Id, Id),
    /// `OpVectorTimesScalar`: a float vector times a float scalar.
    VectorTimesScalar(Id, Id),
    /// `OpPtrDiff`: `(a - b) / sizeof(pointee)` as a signed integer.
    PtrDiff(Id, Id),
    /// `OpUndef` in a function body: any value of the result type (we use zeros).
    Undef,
    /// `OpSizeOf`: the size in bytes of the pointee of a pointer value.
    SizeOf(Id),
    Bitcast(Id),
    ConvertPtrToU(Id),
    ConvertUToPtr(Id),
    /// Pointer casts between address spaces (generic <-> named): no-ops on a CPU.
    PtrCast(Id),
    /// OpGenericCastToPtrExplicit (`to_global`/`to_local`/`to_private`): the pointer
    /// if it points into the result type's address space, else null.
    GenericCastToPtrExplicit(Id),
    /// OpGenericPtrMemSemantics (`get_fence`): the memory-semantics bits of the
    /// address space a generic pointer points into.
    GenericPtrMemSemantics(Id),
    Select {
        cond: Id,
        a: Id,
        b: Id,
    },
    Phi(Vec<(Id, Id)>),
    Load {
        ptr: Id,
        align: u32,
    },
    Store {
        ptr: Id,
        value: Id,
        align: u32,
    },
    CopyMemory {
        dst: Id,
        src: Id,
        size: Option<Id>,
    },
    /// `OpAccessChain` (element = None) and `OpPtrAccessChain` (element = Some).
    AccessChain {
        base: Id,
        element: Option<Id>,
        indices: Vec<Id>,
    },
    CompositeExtract {
        composite: Id,
        indices: Vec<u32>,
    },
    CompositeInsert {
        object: Id,
        composite: Id,
        indices: Vec<u32>,
    },
    CompositeConstruct(Vec<Id>),
    VectorExtractDynamic {
        vector: Id,
        index: Id,
    },
    VectorInsertDynamic {
        vector: Id,
        component: Id,
        index: Id,
    },
    VectorShuffle {
        a: Id,
        b: Id,
        components: Vec<u32>,
    },
    CopyObject(Id),
    /// `OpCopyLogical`: the same value in a logically matching type (same members,
    /// possibly other decorations).
    CopyLogical(Id),
    /// `OpDot`: dot product of two float vectors.
    Dot(Id, Id),
    /// `OpBitFieldInsert` (SPV_KHR_bit_instructions): `base` with its bits
    /// `[offset, offset + count)` replaced by the low `count` bits of `insert`.
    BitFieldInsert {
        base: Id,
        insert: Id,
        offset: Id,
        count: Id,
    },
    /// `OpBitFieldSExtract` / `OpBitFieldUExtract`: bits `[offset, offset + count)` of
    /// `base`, sign- or zero-extended.
    BitFieldExtract {
        signed: bool,
        base: Id,
        offset: Id,
        count: Id,
    },
    /// The integer dot products of SPV_KHR_integer_dot_product (`OpSDot`, `OpUDot`,
    /// `OpSUDot` and their `AccSat` forms): vectors of 8-bit components, or 32-bit
    /// scalars packing four of them (`packed`); `acc` is added with saturation.
    IntDot {
        a_signed: bool,
        b_signed: bool,
        a: Id,
        b: Id,
        acc: Option<Id>,
        packed: bool,
    },
    /// `OpVariable Function`: per-work-item storage.
    Variable {
        init: Option<Id>,
    },
    /// OpenCL.std extended instruction `opcode`.
    ExtInst {
        opcode: u32,
        args: Vec<Id>,
        /// Trailing literal operands (vloadn's n, vstore_half_r's rounding mode).
        lits: Vec<u32>,
    },
    Call {
        function: Id,
        args: Vec<Id>,
    },
    Atomic {
        op: AtomicOp,
        ptr: Id,
        scope: Id,
        /// Operands after pointer/scope/semantics (value; or value, comparator).
        args: Vec<Id>,
    },
    ControlBarrier {
        exec_scope: Id,
        mem_scope: Id,
    },
    MemoryBarrier,
    Group {
        op: GroupOp,
        scope: Id,
        mode: Option<GroupMode>,
        args: Vec<Id>,
    },
    /// A 2D block load, store or prefetch (`OpSubgroup2DBlock*INTEL`, or a call of a
    /// `intel_sub_group_2d_block_*` built-in): `base`, `width`, `height`, `pitch`,
    /// `coord`, and the per-work-item `private` data (none for a prefetch).
    Block2d {
        shape: Block2dShape,
        base: Id,
        width: Id,
        height: Id,
        pitch: Id,
        coord: Id,
        private: Option<Id>,
    },
    /// `OpGroupAsyncCopy`: copy `num` elements between local and global memory, one
    /// side strided; returns an event.
    AsyncCopy {
        dst: Id,
        src: Id,
        num: Id,
        stride: Id,
    },
    /// `GroupAsyncCopy2D2D` / `GroupAsyncCopy3D3D` of `NonSemantic.Codeplay.GroupAsyncCopies`
    /// (cl_khr_extended_async_copies): the operands after the result, in the
    /// instruction's order (destination, its offset, source, its offset, element size,
    /// elements per line, lines, [planes], source line length, [source plane area],
    /// destination line length, [destination plane area], event).
    AsyncCopyNd {
        three_d: bool,
        args: Vec<Id>,
    },
    /// A pipe instruction (`lower::pipe`): `args` are the id operands after the
    /// result, in the instruction's order (the scope first for the group forms).
    Pipe {
        op: PipeOp,
        args: Vec<Id>,
    },
    /// A device-side enqueue instruction (`lower::enqueue_spirv`): `args` are the id
    /// operands after the result in the instruction's order, without `Invoke`, which
    /// is `invoke` (an `OpFunction`, not a value).
    DeviceEnqueue {
        op: EnqueueOp,
        args: Vec<Id>,
        invoke: Option<Id>,
    },
    /// Instructions with no effect on code (OpLine, OpNop, OpName in a body...).
    Nop,
    /// No code either, but the listed values must be defined where the instruction
    /// is (`OpLifetimeStart/Stop`'s pointer, `OpAssumeTrueKHR`'s condition).
    Uses(Vec<Id>),
}

/// The pipe instructions (SPIR-V `Pipes` capability).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PipeOp {
    /// `OpReadPipe` / `OpWritePipe`: pipe, pointer, size, alignment.
    Read,
    Write,
    /// `OpReservedReadPipe` / `OpReservedWritePipe`: pipe, reserve id, index,
    /// pointer, size, alignment.
    ReservedRead,
    ReservedWrite,
    /// `OpReserveReadPipePackets` / `OpReserveWritePipePackets`: pipe, count, size,
    /// alignment.
    ReserveRead,
    ReserveWrite,
    /// `OpCommitReadPipe` / `OpCommitWritePipe`: pipe, reserve id, size, alignment.
    CommitRead,
    CommitWrite,
    /// `OpIsValidReserveId`: reserve id.
    IsValidReserveId,
    /// `OpGetNumPipePackets` / `OpGetMaxPipePackets`: pipe, size, alignment.
    NumPackets,
    MaxPackets,
    /// `OpGroupReserve{Read,Write}PipePackets`: scope, pipe, count, size, alignment.
    GroupReserveRead,
    GroupReserveWrite,
    /// `OpGroupCommit{Read,Write}Pipe`: scope, pipe, reserve id, size, alignment.
    GroupCommitRead,
    GroupCommitWrite,
}

impl PipeOp {
    /// The group forms (their first operand is the execution scope).
    pub fn is_group(self) -> bool {
        matches!(
            self,
            PipeOp::GroupReserveRead
                | PipeOp::GroupReserveWrite
                | PipeOp::GroupCommitRead
                | PipeOp::GroupCommitWrite
        )
    }

    /// Number of id operands.
    pub fn operand_count(self) -> usize {
        match self {
            PipeOp::Read | PipeOp::Write => 4,
            PipeOp::ReservedRead | PipeOp::ReservedWrite => 6,
            PipeOp::ReserveRead | PipeOp::ReserveWrite => 4,
            PipeOp::CommitRead | PipeOp::CommitWrite => 4,
            PipeOp::IsValidReserveId => 1,
            PipeOp::NumPackets | PipeOp::MaxPackets => 3,
            PipeOp::GroupReserveRead | PipeOp::GroupReserveWrite => 5,
            PipeOp::GroupCommitRead | PipeOp::GroupCommitWrite => 5,
        }
    }

    /// Whether the instruction has a result.
    pub fn has_result(self) -> bool {
        !matches!(
            self,
            PipeOp::CommitRead
                | PipeOp::CommitWrite
                | PipeOp::GroupCommitRead
                | PipeOp::GroupCommitWrite
        )
    }
}

/// The device-side enqueue instructions (SPIR-V `DeviceEnqueue` capability; the last
/// two need `SubgroupDispatch` too).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EnqueueOp {
    BuildNdRange,
    GetDefaultQueue,
    EnqueueKernel,
    EnqueueMarker,
    KernelWorkGroupSize,
    KernelPreferredMultiple,
    KernelNdRangeSubGroupCount,
    KernelNdRangeMaxSubGroupSize,
    KernelLocalSizeForSubgroupCount,
    KernelMaxNumSubgroups,
    CreateUserEvent,
    RetainEvent,
    ReleaseEvent,
    IsValidEvent,
    SetUserEventStatus,
    CaptureEventProfilingInfo,
}

/// One instruction with its result.
#[derive(Clone, Debug)]
pub struct Inst {
    pub result: Option<Id>,
    pub ty: Option<Id>,
    pub op: Op,
    /// `NoSignedWrap` / `NoUnsignedWrap` of the result (kept with the instruction so
    /// that inlined copies, which get fresh ids, keep them).
    pub wrap: NoWrap,
}

/// The no-wrap decorations of an integer instruction (SPIR-V 1.4 /
/// `SPV_KHR_no_integer_wrap_decoration`): the result is poison if it wraps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NoWrap {
    pub signed: bool,
    pub unsigned: bool,
}

/// How a block ends.
#[derive(Clone, Debug)]
pub enum Terminator {
    Branch(Id),
    BranchCond {
        cond: Id,
        t: Id,
        f: Id,
    },
    Switch {
        selector: Id,
        default: Id,
        targets: Vec<(u64, Id)>,
    },
    Return,
    ReturnValue(Id),
    Unreachable,
}

impl Terminator {
    /// Successor labels, in order (duplicates possible).
    pub fn successors(&self) -> Vec<Id> {
        match self {
            Terminator::Branch(b) => vec![*b],
            Terminator::BranchCond { t, f, .. } => vec![*t, *f],
            Terminator::Switch {
                default, targets, ..
            } => {
                let mut v = vec![*default];
                v.extend(targets.iter().map(|(_, b)| *b));
                v
            }
            _ => Vec::new(),
        }
    }
}

/// A basic block.
#[derive(Clone, Debug)]
pub struct Block {
    pub label: Id,
    pub insts: Vec<Inst>,
    pub term: Terminator,
}

/// A structured-control-flow declaration (`OpSelectionMerge` / `OpLoopMerge`) of a
/// block: only a hint for us (the CFG is analysed from the branches), kept so the
/// validator can check its targets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merge {
    /// The header block that declares it.
    pub block: Id,
    pub merge: Id,
    /// `OpLoopMerge`'s continue target.
    pub continue_target: Option<Id>,
}

/// A function (kernel or callee). Imported functions have no blocks.
#[derive(Clone, Debug)]
pub struct Function {
    pub id: Id,
    pub name: String,
    pub ret: Id,
    /// The `OpTypeFunction` the function declares.
    pub ty: Id,
    pub params: Vec<(Id, Id)>,
    pub merges: Vec<Merge>,
    pub blocks: Vec<Block>,
    /// `LinkageAttributes ... Import`: a declaration resolved to a built-in by name.
    pub import: Option<String>,
}

/// Execution modes of a kernel we care about.
#[derive(Clone, Debug, Default)]
pub struct ExecModes {
    pub local_size: Option<[u32; 3]>,
    pub local_size_hint: Option<[u32; 3]>,
    pub sub_group_size: Option<u32>,
    /// `SubgroupsPerWorkgroup` / `SubgroupsPerWorkgroupId`: the number of sub-groups
    /// every (full) work-group must have.
    pub sub_groups_per_work_group: Option<u32>,
    pub vec_type_hint: Option<u32>,
    pub contraction_off: bool,
}

/// An `OpEntryPoint Kernel`.
#[derive(Clone, Debug)]
pub struct EntryPoint {
    pub function: Id,
    pub name: String,
    /// The interface: the module-scope variables the kernel uses (all of them from
    /// SPIR-V 1.4, the Input ones before).
    pub interface: Vec<Id>,
    pub modes: ExecModes,
}

/// Decorations we use.
#[derive(Clone, Debug, Default)]
pub struct Decorations {
    pub alignment: Option<u32>,
    pub rounding: Option<Rounding>,
    pub saturated: bool,
    pub packed: bool,
    pub builtin: Option<BuiltIn>,
    /// `FuncParamAttr` values (`NoWrite` = const, `NoAlias` = restrict...).
    pub param_attrs: Vec<rspirv::spirv::FunctionParameterAttribute>,
    pub volatile: bool,
    pub import: Option<String>,
    pub no_wrap: NoWrap,
}

/// A decoded, validated module.
#[derive(Clone, Debug, Default)]
pub struct Module {
    /// One above the largest id (ids we create while decoding are added above the
    /// header's bound).
    pub bound: u32,
    /// The header's version word (`0x00010400` for SPIR-V 1.4).
    pub version: u32,
    /// Declared capabilities.
    pub capabilities: Vec<rspirv::spirv::Capability>,
    /// Every `(target, decoration, through a decoration group)`, for the validator.
    pub decoration_list: Vec<(Id, rspirv::spirv::Decoration, bool)>,
    pub types: HashMap<Id, Type>,
    pub constants: HashMap<Id, Constant>,
    pub globals: HashMap<Id, GlobalVar>,
    /// Global variables in declaration order (layout of `__local` and constant data).
    pub global_order: Vec<Id>,
    pub functions: HashMap<Id, Function>,
    pub entry_points: Vec<EntryPoint>,
    pub names: HashMap<Id, String>,
    pub decorations: HashMap<Id, Decorations>,
    /// `OpString` contents (clang's `kernel_arg_type.<kernel>.<types>` strings).
    pub strings: Vec<String>,
}

/// Size, alignment and scalar kind of a type in the OpenCL (C) memory layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub size: u64,
    pub align: u64,
}

impl Module {
    /// The type `id`, or a Malformed-module error naming it.
    pub fn ty(&self, id: Id) -> Result<&Type, crate::CompileError> {
        self.types
            .get(&id)
            .ok_or_else(|| crate::CompileError::malformed(format!("%{id} is not a type")))
    }

    /// The name given by `OpName`, or `%id`.
    pub fn name_of(&self, id: Id) -> String {
        self.names
            .get(&id)
            .cloned()
            .unwrap_or_else(|| format!("%{id}"))
    }

    /// Decorations of `id` (empty when none).
    pub fn decos(&self, id: Id) -> Option<&Decorations> {
        self.decorations.get(&id)
    }

    /// Memory layout of type `id` (natural alignment; 3-component vectors take 4).
    pub fn layout(&self, id: Id) -> Result<Layout, crate::CompileError> {
        Ok(match self.ty(id)? {
            Type::Void => Layout { size: 1, align: 1 },
            Type::Bool => Layout { size: 1, align: 1 },
            Type::Int { bits } | Type::Float { bits } => {
                let b = u64::from(*bits / 8).max(1);
                Layout { size: b, align: b }
            }
            Type::Vector { elem, count } => {
                let e = self.layout(*elem)?;
                // 3 components take the room of 4; clang's odd sizes (5-7, 9-15)
                // that of the next power of two, as in LLVM's data layout.
                let n = u64::from(count.next_power_of_two());
                Layout {
                    size: e.size * n,
                    align: e.size * n,
                }
            }
            Type::Array { elem, len } => {
                let e = self.layout(*elem)?;
                let stride = e.size.next_multiple_of(e.align);
                Layout {
                    size: stride.saturating_mul(*len),
                    align: e.align,
                }
            }
            Type::RuntimeArray { elem } => {
                let e = self.layout(*elem)?;
                Layout {
                    size: 0,
                    align: e.align,
                }
            }
            Type::Struct { members, packed } => {
                let mut off = 0u64;
                let mut align = 1u64;
                for m in members {
                    let l = self.layout(*m)?;
                    let a = if *packed { 1 } else { l.align };
                    off = off.next_multiple_of(a) + l.size;
                    align = align.max(a);
                }
                Layout {
                    size: off.next_multiple_of(align),
                    align,
                }
            }
            Type::Pointer { .. }
            | Type::Event
            | Type::Pipe { .. }
            | Type::Queue
            | Type::Function { .. } => Layout { size: 8, align: 8 },
            Type::Opaque(n) => {
                return Err(crate::CompileError::malformed(format!(
                    "opaque type {n} has no size: it can only be used behind a pointer"
                )))
            }
            Type::Unsupported(n) => {
                return Err(crate::CompileError::unsupported(format!(
                    "unsupported type {n}"
                )))
            }
        })
    }

    /// Byte offsets of the members of struct type `id`.
    pub fn member_offsets(&self, id: Id) -> Result<Vec<u64>, crate::CompileError> {
        let Type::Struct { members, packed } = self.ty(id)? else {
            return Err(crate::CompileError::malformed(format!(
                "%{id} is not a struct type"
            )));
        };
        let mut off = 0u64;
        let mut out = Vec::with_capacity(members.len());
        for m in members {
            let l = self.layout(*m)?;
            let a = if *packed { 1 } else { l.align };
            off = off.next_multiple_of(a);
            out.push(off);
            off += l.size;
        }
        Ok(out)
    }

    /// A constant integer, sign-extended from its width (`OpConstantNull`: 0).
    pub fn constant_int(&self, id: Id) -> Option<i64> {
        let c = self.constants.get(&id)?;
        match (&c.value, self.ty(c.ty).ok()?) {
            (ConstValue::Null, _) => Some(0),
            (ConstValue::Scalar(v), Type::Int { bits }) if *bits <= 64 => {
                let shift = 64 - bits;
                Some(((*v << shift) as i64) >> shift)
            }
            _ => None,
        }
    }

    /// The byte offset of an access chain with constant indices on a pointer of type
    /// `base_ty` (None when an index is not a constant or walks off the type).
    pub fn constant_chain_offset(
        &self,
        base_ty: Id,
        element: Option<Id>,
        indices: &[Id],
    ) -> Option<i64> {
        let (_, mut t) = self.pointee(base_ty).ok()?;
        let stride = |t: Id| {
            let l = self.layout(t).ok()?;
            Some(l.size.next_multiple_of(l.align.max(1)) as i64)
        };
        let mut at = 0i64;
        if let Some(e) = element {
            at = self.constant_int(e)?.wrapping_mul(stride(t)?);
        }
        for &i in indices {
            let k = self.constant_int(i)?;
            match self.ty(t).ok()? {
                Type::Array { elem, .. }
                | Type::RuntimeArray { elem }
                | Type::Vector { elem, .. } => {
                    let e = *elem;
                    at = at.wrapping_add(k.wrapping_mul(stride(e)?));
                    t = e;
                }
                Type::Struct { members, .. } => {
                    let mt = *members.get(usize::try_from(k).ok()?)?;
                    at = at.wrapping_add(*self.member_offsets(t).ok()?.get(k as usize)? as i64);
                    t = mt;
                }
                _ => return None,
            }
        }
        Some(at)
    }

    /// The type of value `id` (constant, global, or instruction result in `func`).
    pub fn pointee(&self, ptr_ty: Id) -> Result<(Storage, Id), crate::CompileError> {
        match self.ty(ptr_ty)? {
            Type::Pointer { storage, pointee } => Ok((*storage, *pointee)),
            _ => Err(crate::CompileError::malformed(format!(
                "%{ptr_ty} is not a pointer type"
            ))),
        }
    }
}
