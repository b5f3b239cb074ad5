//! What the runtime may ask of code generation: sub-group widths and the build
//! options that change generated code.

/// Sub-group widths the code generator supports; reported as
/// `CL_DEVICE_SUB_GROUP_SIZES_INTEL`.
pub const SUPPORTED_SUB_GROUP_WIDTHS: [u32; 4] = [4, 8, 16, 32];

/// Width used when neither the kernel (`SubgroupSize` / `intel_reqd_sub_group_size`) nor
/// the build options ask for one.
pub const DEFAULT_SUB_GROUP_WIDTH: u32 = 8;

/// Options that change generated code, parsed by the runtime from the build options.
#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// `-cl-fast-relaxed-math` / `-cl-unsafe-math-optimizations`: allow fused and
    /// approximate math.
    pub fast_relaxed_math: bool,
    /// `-cl-mad-enable`: `mad` may be fused.
    pub mad_enable: bool,
    /// `-cl-denorms-are-zero`.
    pub denorms_are_zero: bool,
    /// `-cl-opt-disable`: trade code quality for compile time.
    pub opt_disable: bool,
    /// Overrides [`DEFAULT_SUB_GROUP_WIDTH`] for kernels without a required size
    /// (`CRANECL_SUBGROUP_WIDTH`, tests).
    pub default_sub_group_width: Option<u32>,
    /// The runtime refuses ragged work-groups for this program (OpenCL C 1.x,
    /// `-cl-uniform-work-group-size`): with a `reqd_work_group_size` that is a
    /// multiple of the sub-group width, every sub-group is then full and the code for
    /// partial sub-groups is not generated.
    pub uniform_work_groups: bool,
}

/// The largest program-scope `global` variable a program may declare
/// (`CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE`).
pub const MAX_GLOBAL_VARIABLE_SIZE: usize = 64 << 20;
