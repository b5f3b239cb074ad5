//! One function-body instruction (not a terminator) into an [`Op`]; an instruction we
//! do not implement is an `Unsupported` error naming it.

use rspirv::dr::{self, Operand};
use rspirv::spirv::{self, Op as SOp};

use super::operands::*;
use super::{malformed, unsupported, Decoder};
use crate::spirv::*;
use crate::CompileError;

impl Decoder {
    pub(super) fn inst(&self, inst: &dr::Instruction) -> Result<Op, CompileError> {
        use SOp as S;
        let o = inst.class.opcode;
        let bin = |b: BinOp| -> Result<Op, CompileError> {
            Ok(Op::Binary(b, id_at(inst, 0)?, id_at(inst, 1)?))
        };
        let un = |u: UnOp| -> Result<Op, CompileError> { Ok(Op::Unary(u, id_at(inst, 0)?)) };
        let decos = inst.result_id.and_then(|r| self.m.decorations.get(&r));
        let conv = |c: ConvOp| -> Result<Op, CompileError> {
            Ok(Op::Convert {
                op: c,
                value: id_at(inst, 0)?,
                saturate: decos.is_some_and(|d| d.saturated)
                    || matches!(c, ConvOp::SatSToU | ConvOp::SatUToS),
                rounding: decos.and_then(|d| d.rounding),
            })
        };
        let align_of = |i: usize| -> Result<u32, CompileError> { memory_operands(inst, i) };
        let group = |g: GroupOp, with_mode: bool| -> Result<Op, CompileError> {
            let scope = id_at(inst, 0)?;
            if with_mode {
                let mode = match inst.operands.get(1) {
                    Some(Operand::GroupOperation(spirv::GroupOperation::Reduce)) => {
                        GroupMode::Reduce
                    }
                    Some(Operand::GroupOperation(spirv::GroupOperation::InclusiveScan)) => {
                        GroupMode::InclusiveScan
                    }
                    Some(Operand::GroupOperation(spirv::GroupOperation::ExclusiveScan)) => {
                        GroupMode::ExclusiveScan
                    }
                    Some(Operand::GroupOperation(spirv::GroupOperation::ClusteredReduce))
                        if !matches!(g, GroupOp::BallotBitCount) =>
                    {
                        GroupMode::ClusteredReduce
                    }
                    other => {
                        return Err(unsupported(format!(
                            "unsupported group operation {other:?}"
                        )))
                    }
                };
                Ok(Op::Group {
                    op: g,
                    scope,
                    mode: Some(mode),
                    args: ids_from(inst, 2)?,
                })
            } else {
                Ok(Op::Group {
                    op: g,
                    scope,
                    mode: None,
                    args: ids_from(inst, 1)?,
                })
            }
        };
        let intel = |g: GroupOp| -> Result<Op, CompileError> {
            Ok(Op::Group {
                op: g,
                scope: 0,
                mode: None,
                args: ids_from(inst, 0)?,
            })
        };
        let atomic = |a: AtomicOp, nargs_skip: usize| -> Result<Op, CompileError> {
            // Memory semantics: operand 2 (and 3 for compare-exchange).
            for i in 2..nargs_skip {
                self.semantics(id_at(inst, i)?)?;
            }
            Ok(Op::Atomic {
                op: a,
                ptr: id_at(inst, 0)?,
                scope: id_at(inst, 1)?,
                args: ids_from(inst, nargs_skip)?,
            })
        };
        Ok(match o {
            S::Nop | S::Line | S::NoLine => Op::Nop,
            S::LifetimeStart | S::LifetimeStop | S::AssumeTrueKHR => {
                Op::Uses(vec![id_at(inst, 0)?])
            }
            S::Undef => Op::Undef,
            // The expected value is only a hint.
            S::ExpectKHR => Op::CopyObject(id_at(inst, 0)?),
            S::IAddCarry => Op::Wide(WideOp::IAddCarry, id_at(inst, 0)?, id_at(inst, 1)?),
            S::ISubBorrow => Op::Wide(WideOp::ISubBorrow, id_at(inst, 0)?, id_at(inst, 1)?),
            S::UMulExtended => Op::Wide(WideOp::UMulExtended, id_at(inst, 0)?, id_at(inst, 1)?),
            S::SMulExtended => Op::Wide(WideOp::SMulExtended, id_at(inst, 0)?, id_at(inst, 1)?),
            S::VectorTimesScalar => Op::VectorTimesScalar(id_at(inst, 0)?, id_at(inst, 1)?),
            S::PtrDiff => Op::PtrDiff(id_at(inst, 0)?, id_at(inst, 1)?),
            S::SizeOf => Op::SizeOf(id_at(inst, 0)?),
            S::CopyLogical => Op::CopyLogical(id_at(inst, 0)?),
            S::IAdd => bin(BinOp::IAdd)?,
            S::ISub => bin(BinOp::ISub)?,
            S::IMul => bin(BinOp::IMul)?,
            S::UDiv => bin(BinOp::UDiv)?,
            S::SDiv => bin(BinOp::SDiv)?,
            S::UMod => bin(BinOp::UMod)?,
            S::SRem => bin(BinOp::SRem)?,
            S::SMod => bin(BinOp::SMod)?,
            S::FAdd => bin(BinOp::FAdd)?,
            S::FSub => bin(BinOp::FSub)?,
            S::FMul => bin(BinOp::FMul)?,
            S::FDiv => bin(BinOp::FDiv)?,
            S::FRem => bin(BinOp::FRem)?,
            S::FMod => bin(BinOp::FMod)?,
            S::ShiftLeftLogical => bin(BinOp::Shl)?,
            S::ShiftRightLogical => bin(BinOp::LShr)?,
            S::ShiftRightArithmetic => bin(BinOp::AShr)?,
            S::BitwiseAnd => bin(BinOp::And)?,
            S::BitwiseOr => bin(BinOp::Or)?,
            S::BitwiseXor => bin(BinOp::Xor)?,
            S::LogicalAnd => bin(BinOp::LogicalAnd)?,
            S::LogicalOr => bin(BinOp::LogicalOr)?,
            S::LogicalEqual => bin(BinOp::LogicalEqual)?,
            S::LogicalNotEqual => bin(BinOp::LogicalNotEqual)?,
            S::IEqual => bin(BinOp::IEqual)?,
            // Pointers are 64-bit addresses in every storage class we support.
            S::PtrEqual => bin(BinOp::IEqual)?,
            S::PtrNotEqual => bin(BinOp::INotEqual)?,
            S::INotEqual => bin(BinOp::INotEqual)?,
            S::UGreaterThan => bin(BinOp::UGreaterThan)?,
            S::SGreaterThan => bin(BinOp::SGreaterThan)?,
            S::UGreaterThanEqual => bin(BinOp::UGreaterThanEqual)?,
            S::SGreaterThanEqual => bin(BinOp::SGreaterThanEqual)?,
            S::ULessThan => bin(BinOp::ULessThan)?,
            S::SLessThan => bin(BinOp::SLessThan)?,
            S::ULessThanEqual => bin(BinOp::ULessThanEqual)?,
            S::SLessThanEqual => bin(BinOp::SLessThanEqual)?,
            S::FOrdEqual => bin(BinOp::FOrdEqual)?,
            S::FUnordEqual => bin(BinOp::FUnordEqual)?,
            S::FOrdNotEqual => bin(BinOp::FOrdNotEqual)?,
            S::FUnordNotEqual => bin(BinOp::FUnordNotEqual)?,
            S::FOrdLessThan => bin(BinOp::FOrdLessThan)?,
            S::FUnordLessThan => bin(BinOp::FUnordLessThan)?,
            S::FOrdGreaterThan => bin(BinOp::FOrdGreaterThan)?,
            S::FUnordGreaterThan => bin(BinOp::FUnordGreaterThan)?,
            S::FOrdLessThanEqual => bin(BinOp::FOrdLessThanEqual)?,
            S::FUnordLessThanEqual => bin(BinOp::FUnordLessThanEqual)?,
            S::FOrdGreaterThanEqual => bin(BinOp::FOrdGreaterThanEqual)?,
            S::FUnordGreaterThanEqual => bin(BinOp::FUnordGreaterThanEqual)?,
            S::Ordered => bin(BinOp::Ordered)?,
            S::Unordered => bin(BinOp::Unordered)?,
            S::LessOrGreater => bin(BinOp::LessOrGreater)?,
            S::SNegate => un(UnOp::SNegate)?,
            S::FNegate => un(UnOp::FNegate)?,
            S::Not => un(UnOp::Not)?,
            S::LogicalNot => un(UnOp::LogicalNot)?,
            S::IsNan => un(UnOp::IsNan)?,
            S::IsInf => un(UnOp::IsInf)?,
            S::IsFinite => un(UnOp::IsFinite)?,
            S::IsNormal => un(UnOp::IsNormal)?,
            S::SignBitSet => un(UnOp::SignBitSet)?,
            S::BitCount => un(UnOp::BitCount)?,
            S::BitReverse => un(UnOp::BitReverse)?,
            S::Any => un(UnOp::Any)?,
            S::All => un(UnOp::All)?,
            S::ConvertFToU => conv(ConvOp::FToU)?,
            S::ConvertFToS => conv(ConvOp::FToS)?,
            S::ConvertSToF => conv(ConvOp::SToF)?,
            S::ConvertUToF => conv(ConvOp::UToF)?,
            S::UConvert => conv(ConvOp::UConvert)?,
            S::SConvert => conv(ConvOp::SConvert)?,
            S::FConvert => conv(ConvOp::FConvert)?,
            S::SatConvertSToU => conv(ConvOp::SatSToU)?,
            S::SatConvertUToS => conv(ConvOp::SatUToS)?,
            S::Bitcast => Op::Bitcast(id_at(inst, 0)?),
            S::ConvertPtrToU => Op::ConvertPtrToU(id_at(inst, 0)?),
            S::ConvertUToPtr => Op::ConvertUToPtr(id_at(inst, 0)?),
            S::PtrCastToGeneric | S::GenericCastToPtr => Op::PtrCast(id_at(inst, 0)?),
            S::GenericCastToPtrExplicit => Op::GenericCastToPtrExplicit(id_at(inst, 0)?),
            S::GenericPtrMemSemantics => Op::GenericPtrMemSemantics(id_at(inst, 0)?),
            S::Select => Op::Select {
                cond: id_at(inst, 0)?,
                a: id_at(inst, 1)?,
                b: id_at(inst, 2)?,
            },
            S::Phi => {
                let ids = ids_from(inst, 0)?;
                if ids.len() % 2 != 0 {
                    return Err(malformed("OpPhi with an odd number of operands"));
                }
                Op::Phi(ids.chunks(2).map(|c| (c[0], c[1])).collect())
            }
            S::Load => Op::Load {
                ptr: id_at(inst, 0)?,
                align: align_of(1)?,
            },
            S::Store => Op::Store {
                ptr: id_at(inst, 0)?,
                value: id_at(inst, 1)?,
                align: align_of(2)?,
            },
            // (The memory operands are checked; the copy needs no alignment.)
            S::CopyMemory => {
                memory_operands(inst, 2)?;
                Op::CopyMemory {
                    dst: id_at(inst, 0)?,
                    src: id_at(inst, 1)?,
                    size: None,
                }
            }
            S::CopyMemorySized => {
                memory_operands(inst, 3)?;
                Op::CopyMemory {
                    dst: id_at(inst, 0)?,
                    src: id_at(inst, 1)?,
                    size: Some(id_at(inst, 2)?),
                }
            }
            S::AccessChain | S::InBoundsAccessChain => Op::AccessChain {
                base: id_at(inst, 0)?,
                element: None,
                indices: ids_from(inst, 1)?,
            },
            S::PtrAccessChain | S::InBoundsPtrAccessChain => Op::AccessChain {
                base: id_at(inst, 0)?,
                element: Some(id_at(inst, 1)?),
                indices: ids_from(inst, 2)?,
            },
            S::CompositeExtract => Op::CompositeExtract {
                composite: id_at(inst, 0)?,
                indices: lits_from(inst, 1)?,
            },
            S::CompositeInsert => Op::CompositeInsert {
                object: id_at(inst, 0)?,
                composite: id_at(inst, 1)?,
                indices: lits_from(inst, 2)?,
            },
            S::CompositeConstruct => Op::CompositeConstruct(ids_from(inst, 0)?),
            S::VectorExtractDynamic => Op::VectorExtractDynamic {
                vector: id_at(inst, 0)?,
                index: id_at(inst, 1)?,
            },
            S::VectorInsertDynamic => Op::VectorInsertDynamic {
                vector: id_at(inst, 0)?,
                component: id_at(inst, 1)?,
                index: id_at(inst, 2)?,
            },
            S::VectorShuffle => Op::VectorShuffle {
                a: id_at(inst, 0)?,
                b: id_at(inst, 1)?,
                components: lits_from(inst, 2)?,
            },
            S::CopyObject => Op::CopyObject(id_at(inst, 0)?),
            S::Dot => Op::Dot(id_at(inst, 0)?, id_at(inst, 1)?),
            S::BitFieldInsert => Op::BitFieldInsert {
                base: id_at(inst, 0)?,
                insert: id_at(inst, 1)?,
                offset: id_at(inst, 2)?,
                count: id_at(inst, 3)?,
            },
            S::BitFieldSExtract | S::BitFieldUExtract => Op::BitFieldExtract {
                signed: o == S::BitFieldSExtract,
                base: id_at(inst, 0)?,
                offset: id_at(inst, 1)?,
                count: id_at(inst, 2)?,
            },
            S::SDot | S::UDot | S::SUDot | S::SDotAccSat | S::UDotAccSat | S::SUDotAccSat => {
                int_dot(inst)?
            }
            S::Variable => Op::Variable {
                init: match inst.operands.get(1) {
                    Some(Operand::IdRef(i)) => Some(*i),
                    _ => None,
                },
            },
            S::ExtInst => {
                let set = id_at(inst, 0)?;
                let opcode = lit_at(inst, 1)?;
                match self.ext_sets.get(&set).map(String::as_str) {
                    Some("OpenCL.std") => {
                        if rspirv::spirv::OpenclStd100Op::from_u32(opcode).is_none() {
                            return Err(unsupported(format!(
                                "unknown OpenCL.std extended instruction {opcode}"
                            )));
                        }
                        // vloadn (171), vload_halfn (174) and vloada_halfn (179) end with
                        // the literal n; vstore_half_r (176), vstore_halfn_r (178),
                        // vstorea_halfn_r (181) with a rounding mode.
                        let n_lits =
                            usize::from(matches!(opcode, 171 | 174 | 176 | 178 | 179 | 181));
                        let total = inst.operands.len();
                        let split = total.saturating_sub(n_lits).max(2);
                        let lits = inst.operands[split..]
                            .iter()
                            .map(|o| match o {
                                Operand::IdRef(v)
                                | Operand::LiteralBit32(v)
                                | Operand::LiteralExtInstInteger(v) => Ok(*v),
                                other => {
                                    Err(malformed(format!("OpenCL.std literal operand {other:?}")))
                                }
                            })
                            .collect::<Result<Vec<u32>, _>>()?;
                        Op::ExtInst {
                            opcode,
                            args: (2..split)
                                .map(|i| id_at(inst, i))
                                .collect::<Result<_, _>>()?,
                            lits,
                        }
                    }
                    // GroupAsyncCopy2D2D (1) and GroupAsyncCopy3D3D (2): every operand
                    // is an id; their count and types are the validator's.
                    Some(super::GROUP_ASYNC_COPIES_SET) => {
                        let three_d = match opcode {
                            1 => false,
                            2 => true,
                            _ => {
                                return Err(unsupported(format!(
                                    "unknown NonSemantic.Codeplay.GroupAsyncCopies \
                                     instruction {opcode}"
                                )))
                            }
                        };
                        let args = inst.operands[2..]
                            .iter()
                            .map(|o| match o {
                                Operand::IdRef(v)
                                | Operand::LiteralBit32(v)
                                | Operand::LiteralExtInstInteger(v) => Ok(*v),
                                other => {
                                    Err(malformed(format!("GroupAsyncCopies operand {other:?}")))
                                }
                            })
                            .collect::<Result<Vec<u32>, _>>()?;
                        Op::AsyncCopyNd { three_d, args }
                    }
                    Some(s) if s.starts_with("NonSemantic.") => Op::Nop,
                    _ => return Err(malformed(format!("OpExtInst of unknown set %{set}"))),
                }
            }
            S::FunctionCall => Op::Call {
                function: id_at(inst, 0)?,
                args: ids_from(inst, 1)?,
            },
            S::AtomicLoad => atomic(AtomicOp::Load, 3)?,
            S::AtomicStore => atomic(AtomicOp::Store, 3)?,
            S::AtomicExchange => atomic(AtomicOp::Exchange, 3)?,
            // pointer, scope, equal semantics, unequal semantics, value, comparator
            S::AtomicCompareExchange | S::AtomicCompareExchangeWeak => {
                atomic(AtomicOp::CompareExchange, 4)?
            }
            S::AtomicIIncrement => atomic(AtomicOp::IIncrement, 3)?,
            S::AtomicIDecrement => atomic(AtomicOp::IDecrement, 3)?,
            S::AtomicIAdd => atomic(AtomicOp::IAdd, 3)?,
            S::AtomicISub => atomic(AtomicOp::ISub, 3)?,
            S::AtomicSMin => atomic(AtomicOp::SMin, 3)?,
            S::AtomicUMin => atomic(AtomicOp::UMin, 3)?,
            S::AtomicSMax => atomic(AtomicOp::SMax, 3)?,
            S::AtomicUMax => atomic(AtomicOp::UMax, 3)?,
            S::AtomicAnd => atomic(AtomicOp::And, 3)?,
            S::AtomicOr => atomic(AtomicOp::Or, 3)?,
            S::AtomicXor => atomic(AtomicOp::Xor, 3)?,
            S::AtomicFAddEXT => atomic(AtomicOp::FAdd, 3)?,
            S::AtomicFMinEXT => atomic(AtomicOp::FMin, 3)?,
            S::AtomicFMaxEXT => atomic(AtomicOp::FMax, 3)?,
            S::AtomicFlagTestAndSet => atomic(AtomicOp::FlagTestAndSet, 3)?,
            S::AtomicFlagClear => atomic(AtomicOp::FlagClear, 3)?,
            S::ControlBarrier => {
                self.semantics(id_at(inst, 2)?)?;
                Op::ControlBarrier {
                    exec_scope: id_at(inst, 0)?,
                    mem_scope: id_at(inst, 1)?,
                }
            }
            S::MemoryBarrier => {
                self.scope_constant(id_at(inst, 0)?)?;
                self.semantics(id_at(inst, 1)?)?;
                Op::MemoryBarrier
            }
            // scope, dst, src, num elements, stride, event
            S::GroupAsyncCopy => {
                self.scope_constant(id_at(inst, 0)?)?;
                Op::AsyncCopy {
                    dst: id_at(inst, 1)?,
                    src: id_at(inst, 2)?,
                    num: id_at(inst, 3)?,
                    stride: id_at(inst, 4)?,
                }
            }
            // The copy is complete when OpGroupAsyncCopy returns.
            S::GroupWaitEvents => {
                self.scope_constant(id_at(inst, 0)?)?;
                Op::MemoryBarrier
            }
            S::ReadPipe => self.pipe(inst, PipeOp::Read)?,
            S::WritePipe => self.pipe(inst, PipeOp::Write)?,
            S::ReservedReadPipe => self.pipe(inst, PipeOp::ReservedRead)?,
            S::ReservedWritePipe => self.pipe(inst, PipeOp::ReservedWrite)?,
            S::ReserveReadPipePackets => self.pipe(inst, PipeOp::ReserveRead)?,
            S::ReserveWritePipePackets => self.pipe(inst, PipeOp::ReserveWrite)?,
            S::CommitReadPipe => self.pipe(inst, PipeOp::CommitRead)?,
            S::CommitWritePipe => self.pipe(inst, PipeOp::CommitWrite)?,
            S::IsValidReserveId => self.pipe(inst, PipeOp::IsValidReserveId)?,
            S::GetNumPipePackets => self.pipe(inst, PipeOp::NumPackets)?,
            S::GetMaxPipePackets => self.pipe(inst, PipeOp::MaxPackets)?,
            S::GroupReserveReadPipePackets => self.pipe(inst, PipeOp::GroupReserveRead)?,
            S::GroupReserveWritePipePackets => self.pipe(inst, PipeOp::GroupReserveWrite)?,
            S::GroupCommitReadPipe => self.pipe(inst, PipeOp::GroupCommitRead)?,
            S::GroupCommitWritePipe => self.pipe(inst, PipeOp::GroupCommitWrite)?,
            S::BuildNDRange => self.enqueue(inst, EnqueueOp::BuildNdRange)?,
            S::GetDefaultQueue => self.enqueue(inst, EnqueueOp::GetDefaultQueue)?,
            S::EnqueueKernel => self.enqueue(inst, EnqueueOp::EnqueueKernel)?,
            S::EnqueueMarker => self.enqueue(inst, EnqueueOp::EnqueueMarker)?,
            S::GetKernelWorkGroupSize => self.enqueue(inst, EnqueueOp::KernelWorkGroupSize)?,
            S::GetKernelPreferredWorkGroupSizeMultiple => {
                self.enqueue(inst, EnqueueOp::KernelPreferredMultiple)?
            }
            S::GetKernelNDrangeSubGroupCount => {
                self.enqueue(inst, EnqueueOp::KernelNdRangeSubGroupCount)?
            }
            S::GetKernelNDrangeMaxSubGroupSize => {
                self.enqueue(inst, EnqueueOp::KernelNdRangeMaxSubGroupSize)?
            }
            S::GetKernelLocalSizeForSubgroupCount => {
                self.enqueue(inst, EnqueueOp::KernelLocalSizeForSubgroupCount)?
            }
            S::GetKernelMaxNumSubgroups => self.enqueue(inst, EnqueueOp::KernelMaxNumSubgroups)?,
            S::CreateUserEvent => self.enqueue(inst, EnqueueOp::CreateUserEvent)?,
            S::RetainEvent => self.enqueue(inst, EnqueueOp::RetainEvent)?,
            S::ReleaseEvent => self.enqueue(inst, EnqueueOp::ReleaseEvent)?,
            S::IsValidEvent => self.enqueue(inst, EnqueueOp::IsValidEvent)?,
            S::SetUserEventStatus => self.enqueue(inst, EnqueueOp::SetUserEventStatus)?,
            S::CaptureEventProfilingInfo => {
                self.enqueue(inst, EnqueueOp::CaptureEventProfilingInfo)?
            }
            S::GroupAll
            | S::GroupAny
            | S::GroupBroadcast
            | S::GroupIAdd
            | S::GroupFAdd
            | S::GroupFMin
            | S::GroupUMin
            | S::GroupSMin
            | S::GroupFMax
            | S::GroupUMax
            | S::GroupSMax
                if !self.m.capabilities.contains(&spirv::Capability::Groups) =>
            {
                return Err(malformed(format!("Op{o:?} needs OpCapability Groups")))
            }
            S::GroupAll => group(GroupOp::All, false)?,
            S::GroupAny => group(GroupOp::Any, false)?,
            S::GroupBroadcast => group(GroupOp::Broadcast, false)?,
            S::GroupIAdd => group(GroupOp::IAdd, true)?,
            S::GroupFAdd => group(GroupOp::FAdd, true)?,
            S::GroupFMin => group(GroupOp::FMin, true)?,
            S::GroupUMin => group(GroupOp::UMin, true)?,
            S::GroupSMin => group(GroupOp::SMin, true)?,
            S::GroupFMax => group(GroupOp::FMax, true)?,
            S::GroupUMax => group(GroupOp::UMax, true)?,
            S::GroupSMax => group(GroupOp::SMax, true)?,
            S::GroupIMulKHR => group(GroupOp::IMul, true)?,
            S::GroupFMulKHR => group(GroupOp::FMul, true)?,
            S::GroupBitwiseAndKHR => group(GroupOp::And, true)?,
            S::GroupBitwiseOrKHR => group(GroupOp::Or, true)?,
            S::GroupBitwiseXorKHR => group(GroupOp::Xor, true)?,
            S::GroupLogicalAndKHR => group(GroupOp::LogicalAnd, true)?,
            S::GroupLogicalOrKHR => group(GroupOp::LogicalOr, true)?,
            S::GroupLogicalXorKHR => group(GroupOp::LogicalXor, true)?,
            S::GroupNonUniformElect => group(GroupOp::Elect, false)?,
            S::GroupNonUniformBroadcastFirst => group(GroupOp::BroadcastFirst, false)?,
            S::GroupNonUniformAllEqual => group(GroupOp::AllEqual, false)?,
            S::GroupNonUniformBallot => group(GroupOp::Ballot, false)?,
            S::GroupNonUniformInverseBallot => group(GroupOp::InverseBallot, false)?,
            S::GroupNonUniformBallotBitExtract => group(GroupOp::BallotBitExtract, false)?,
            S::GroupNonUniformBallotBitCount => group(GroupOp::BallotBitCount, true)?,
            S::GroupNonUniformBallotFindLSB => group(GroupOp::BallotFindLsb, false)?,
            S::GroupNonUniformBallotFindMSB => group(GroupOp::BallotFindMsb, false)?,
            S::GroupNonUniformShuffleUp => group(GroupOp::ShuffleUpKhr, false)?,
            S::GroupNonUniformShuffleDown => group(GroupOp::ShuffleDownKhr, false)?,
            S::GroupNonUniformRotateKHR => group(GroupOp::Rotate, false)?,
            S::GroupNonUniformAll => group(GroupOp::All, false)?,
            S::GroupNonUniformAny => group(GroupOp::Any, false)?,
            S::GroupNonUniformBroadcast => group(GroupOp::Broadcast, false)?,
            S::GroupNonUniformShuffle => group(GroupOp::Shuffle, false)?,
            S::GroupNonUniformShuffleXor => group(GroupOp::ShuffleXor, false)?,
            S::GroupNonUniformIAdd => group(GroupOp::IAdd, true)?,
            S::GroupNonUniformFAdd => group(GroupOp::FAdd, true)?,
            S::GroupNonUniformIMul => group(GroupOp::IMul, true)?,
            S::GroupNonUniformFMul => group(GroupOp::FMul, true)?,
            S::GroupNonUniformSMin => group(GroupOp::SMin, true)?,
            S::GroupNonUniformUMin => group(GroupOp::UMin, true)?,
            S::GroupNonUniformFMin => group(GroupOp::FMin, true)?,
            S::GroupNonUniformSMax => group(GroupOp::SMax, true)?,
            S::GroupNonUniformUMax => group(GroupOp::UMax, true)?,
            S::GroupNonUniformFMax => group(GroupOp::FMax, true)?,
            S::GroupNonUniformBitwiseAnd => group(GroupOp::And, true)?,
            S::GroupNonUniformBitwiseOr => group(GroupOp::Or, true)?,
            S::GroupNonUniformBitwiseXor => group(GroupOp::Xor, true)?,
            S::GroupNonUniformLogicalAnd => group(GroupOp::LogicalAnd, true)?,
            S::GroupNonUniformLogicalOr => group(GroupOp::LogicalOr, true)?,
            S::GroupNonUniformLogicalXor => group(GroupOp::LogicalXor, true)?,
            S::SubgroupShuffleINTEL
            | S::SubgroupShuffleDownINTEL
            | S::SubgroupShuffleUpINTEL
            | S::SubgroupShuffleXorINTEL
                if !self
                    .m
                    .capabilities
                    .contains(&spirv::Capability::SubgroupShuffleINTEL) =>
            {
                return Err(malformed(format!(
                    "Op{o:?} needs OpCapability SubgroupShuffleINTEL"
                )))
            }
            S::SubgroupBlockReadINTEL | S::SubgroupBlockWriteINTEL
                if !self
                    .m
                    .capabilities
                    .contains(&spirv::Capability::SubgroupBufferBlockIOINTEL) =>
            {
                return Err(malformed(format!(
                    "Op{o:?} needs OpCapability SubgroupBufferBlockIOINTEL"
                )))
            }
            S::SubgroupShuffleINTEL => intel(GroupOp::Shuffle)?,
            S::SubgroupShuffleDownINTEL => intel(GroupOp::ShuffleDown)?,
            S::SubgroupShuffleUpINTEL => intel(GroupOp::ShuffleUp)?,
            S::SubgroupShuffleXorINTEL => intel(GroupOp::ShuffleXor)?,
            S::SubgroupBlockReadINTEL => intel(GroupOp::BlockRead)?,
            S::SubgroupBlockWriteINTEL => intel(GroupOp::BlockWrite)?,
            S::Subgroup2DBlockLoadINTEL
            | S::Subgroup2DBlockLoadTransformINTEL
            | S::Subgroup2DBlockLoadTransposeINTEL
            | S::Subgroup2DBlockStoreINTEL
            | S::Subgroup2DBlockPrefetchINTEL => self.block2d(inst)?,
            other => {
                return Err(unsupported(format!(
                    "unsupported SPIR-V instruction Op{other:?}"
                )))
            }
        })
    }

    /// `OpSubgroup2DBlock{Load,LoadTransform,LoadTranspose,Store,Prefetch}INTEL`:
    /// the capability, the constant shape (one the device supports) and the operands
    /// in a common order.
    fn block2d(&self, inst: &dr::Instruction) -> Result<Op, CompileError> {
        use spirv::Capability as C;
        use SOp as S;
        let o = inst.class.opcode;
        let (kind, cap) = match o {
            S::Subgroup2DBlockLoadINTEL => (Block2dKind::Load, C::Subgroup2DBlockIOINTEL),
            S::Subgroup2DBlockLoadTransformINTEL => {
                (Block2dKind::LoadTransform, C::Subgroup2DBlockTransformINTEL)
            }
            S::Subgroup2DBlockLoadTransposeINTEL => {
                (Block2dKind::LoadTranspose, C::Subgroup2DBlockTransposeINTEL)
            }
            S::Subgroup2DBlockStoreINTEL => (Block2dKind::Store, C::Subgroup2DBlockIOINTEL),
            _ => (Block2dKind::Prefetch, C::Subgroup2DBlockIOINTEL),
        };
        // The transform and transpose capabilities implicitly declare the base one.
        let caps = &self.m.capabilities;
        let declared = caps.contains(&cap)
            || (cap == C::Subgroup2DBlockIOINTEL
                && (caps.contains(&C::Subgroup2DBlockTransformINTEL)
                    || caps.contains(&C::Subgroup2DBlockTransposeINTEL)));
        if !declared {
            return Err(malformed(format!("Op{o:?} needs OpCapability {cap:?}")));
        }
        let n = if kind == Block2dKind::Prefetch { 9 } else { 10 };
        if inst.operands.len() != n || inst.result_id.is_some() {
            return Err(malformed(format!(
                "Op{o:?} has {} operands, not {n}",
                inst.operands.len()
            )));
        }
        let what = format!("the block size of Op{o:?}");
        let shape = Block2dShape {
            kind,
            esize: self.constant_u32(id_at(inst, 0)?, &what)?,
            width: self.constant_u32(id_at(inst, 1)?, &what)?,
            height: self.constant_u32(id_at(inst, 2)?, &what)?,
            count: self.constant_u32(id_at(inst, 3)?, &what)?,
        };
        if !shape.is_supported() {
            return Err(unsupported(format!(
                "Op{o:?} with element size {}, block width {}, height {} and count {}: \
                 not a block size of cl_intel_subgroup_2d_block_io",
                shape.esize, shape.width, shape.height, shape.count
            )));
        }
        // Store: Src Pointer (private) comes before Dst Base Pointer.
        let (first, private) = match kind {
            Block2dKind::Store => (5, Some(id_at(inst, 4)?)),
            Block2dKind::Prefetch => (4, None),
            _ => (4, Some(id_at(inst, 9)?)),
        };
        Ok(Op::Block2d {
            shape,
            base: id_at(inst, first)?,
            width: id_at(inst, first + 1)?,
            height: id_at(inst, first + 2)?,
            pitch: id_at(inst, first + 3)?,
            coord: id_at(inst, first + 4)?,
            private,
        })
    }

    /// A 32-bit integer constant operand (scopes, memory semantics): its value.
    fn constant_u32(&self, id: Id, what: &str) -> Result<u32, CompileError> {
        let int32 = |ty: &Id| matches!(self.m.types.get(ty), Some(Type::Int { bits: 32 }));
        match self.m.constants.get(&id) {
            Some(Constant {
                ty,
                value: ConstValue::Scalar(v),
            }) if int32(ty) => Ok(*v as u32),
            Some(Constant {
                ty,
                value: ConstValue::Null,
            }) if int32(ty) => Ok(0),
            _ => Err(malformed(format!(
                "{what} %{id} must be a 32-bit integer constant"
            ))),
        }
    }

    /// A memory-semantics operand: at most one ordering (Acquire, Release,
    /// AcquireRelease, SequentiallyConsistent) and the storage bits OpenCL has
    /// (Subgroup, Workgroup, CrossWorkgroup, Image memory).
    pub(super) fn semantics(&self, id: Id) -> Result<(), CompileError> {
        let v = self.constant_u32(id, "memory semantics")?;
        const ORDERING: u32 = 0x2 | 0x4 | 0x8 | 0x10;
        const STORAGE: u32 = 0x80 | 0x100 | 0x200 | 0x800;
        // Bit 0 (no meaning today, "relaxed" in early headers) is what clang-22
        // writes for memory_order_acquire loads; spirv-val accepts it too.
        const RELAXED: u32 = 0x1;
        if v & !(ORDERING | STORAGE | RELAXED) != 0 || (v & ORDERING).count_ones() > 1 {
            return Err(malformed(format!(
                "memory semantics %{id} = {v:#x} is not valid in the OpenCL environment"
            )));
        }
        Ok(())
    }

    /// A scope operand: a constant naming one of the OpenCL scopes (CrossDevice,
    /// Device, Workgroup, Subgroup, Invocation).
    /// A pipe instruction: every operand an id, the group forms' scope a constant
    /// Workgroup (2) or Subgroup (3).
    fn pipe(&self, inst: &dr::Instruction, op: PipeOp) -> Result<Op, CompileError> {
        if !self.m.capabilities.contains(&spirv::Capability::Pipes) {
            return Err(malformed(format!(
                "Op{:?} needs OpCapability Pipes",
                inst.class.opcode
            )));
        }
        let args = ids_from(inst, 0)?;
        if args.len() != op.operand_count() {
            return Err(malformed(format!(
                "Op{:?} with {} operands (expected {})",
                inst.class.opcode,
                args.len(),
                op.operand_count()
            )));
        }
        if op.is_group() {
            let s = self.constant_u32(args[0], "scope")?;
            if s != 2 && s != 3 {
                return Err(malformed(format!(
                    "Op{:?}: execution scope {s} is neither Workgroup nor Subgroup",
                    inst.class.opcode
                )));
            }
        }
        Ok(Op::Pipe { op, args })
    }

    /// A device-side enqueue instruction: every operand an id; the capabilities it
    /// needs declared; `Invoke` (of the kernel launches and queries) kept apart.
    fn enqueue(&self, inst: &dr::Instruction, op: EnqueueOp) -> Result<Op, CompileError> {
        let caps = &self.m.capabilities;
        let dispatch = matches!(
            op,
            EnqueueOp::KernelLocalSizeForSubgroupCount | EnqueueOp::KernelMaxNumSubgroups
        );
        if !caps.contains(&spirv::Capability::DeviceEnqueue)
            || (dispatch && !caps.contains(&spirv::Capability::SubgroupDispatch))
        {
            return Err(malformed(format!(
                "Op{:?} needs OpCapability DeviceEnqueue{}",
                inst.class.opcode,
                if dispatch {
                    " and SubgroupDispatch"
                } else {
                    ""
                }
            )));
        }
        let mut args = ids_from(inst, 0)?;
        // Where `Invoke` is among the operands after the result.
        let at = match op {
            EnqueueOp::EnqueueKernel => Some(6),
            EnqueueOp::KernelWorkGroupSize
            | EnqueueOp::KernelPreferredMultiple
            | EnqueueOp::KernelMaxNumSubgroups => Some(0),
            EnqueueOp::KernelNdRangeSubGroupCount
            | EnqueueOp::KernelNdRangeMaxSubGroupSize
            | EnqueueOp::KernelLocalSizeForSubgroupCount => Some(1),
            _ => None,
        };
        let invoke = match at {
            Some(i) if i < args.len() => Some(args.remove(i)),
            Some(_) => {
                return Err(malformed(format!(
                    "Op{:?} without an Invoke operand",
                    inst.class.opcode
                )))
            }
            None => None,
        };
        Ok(Op::DeviceEnqueue { op, args, invoke })
    }

    pub(super) fn scope_constant(&self, id: Id) -> Result<(), CompileError> {
        let v = self.constant_u32(id, "scope")?;
        if v > 4 {
            return Err(malformed(format!("scope %{id} has the invalid value {v}")));
        }
        Ok(())
    }
}

/// `OpSDot`, `OpUDot`, `OpSUDot` and their `AccSat` forms: two vectors (or packed
/// scalars), the accumulator of the `AccSat` forms, then the optional packed-vector
/// format (only `PackedVectorFormat4x8Bit` exists).
fn int_dot(inst: &dr::Instruction) -> Result<Op, CompileError> {
    use SOp as S;
    let o = inst.class.opcode;
    let acc_sat = matches!(o, S::SDotAccSat | S::UDotAccSat | S::SUDotAccSat);
    let nids = if acc_sat { 3 } else { 2 };
    let packed = match inst.operands.get(nids) {
        None => false,
        Some(Operand::PackedVectorFormat(spirv::PackedVectorFormat::PackedVectorFormat4x8Bit)) => {
            true
        }
        Some(other) => {
            return Err(malformed(format!(
                "Op{o:?}: operand {nids} should be a packed vector format, found {other:?}"
            )))
        }
    };
    if inst.operands.len() > nids + 1 {
        return Err(malformed(format!("Op{o:?} has too many operands")));
    }
    Ok(Op::IntDot {
        a_signed: matches!(o, S::SDot | S::SDotAccSat | S::SUDot | S::SUDotAccSat),
        b_signed: matches!(o, S::SDot | S::SDotAccSat),
        a: id_at(inst, 0)?,
        b: id_at(inst, 1)?,
        acc: if acc_sat { Some(id_at(inst, 2)?) } else { None },
        packed,
    })
}

/// The memory operands of a load or store starting at operand `i`: only Volatile,
/// Aligned (with a power-of-two literal) and Nontemporal exist without the Vulkan
/// memory model. Returns the alignment (0 when not given).
fn memory_operands(inst: &dr::Instruction, i: usize) -> Result<u32, CompileError> {
    use spirv::MemoryAccess as M;
    let Some(op) = inst.operands.get(i) else {
        return Ok(0);
    };
    let Operand::MemoryAccess(m) = op else {
        return Err(malformed(format!(
            "Op{:?}: operand {i} should be memory operands, found {op:?}",
            inst.class.opcode
        )));
    };
    if !(M::VOLATILE | M::ALIGNED | M::NONTEMPORAL).contains(*m) {
        return Err(malformed(format!(
            "Op{:?}: memory operands {m:?} need the Vulkan memory model",
            inst.class.opcode
        )));
    }
    if !m.contains(M::ALIGNED) {
        return Ok(0);
    }
    match inst.operands.get(i + 1) {
        Some(Operand::LiteralBit32(a)) if a.is_power_of_two() => Ok(*a),
        other => Err(malformed(format!(
            "Op{:?}: Aligned needs a power-of-two literal, found {other:?}",
            inst.class.opcode
        ))),
    }
}
