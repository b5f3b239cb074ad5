//! The per-device side of a program: the devices it is for (`CL_PROGRAM_DEVICES`),
//! the binary each was loaded with, one [`BuildState`] per device, and which devices
//! a build, compile or link applies to.
//!
//! A call naming a device also applies to the sub-devices partitioned from it that
//! the program is for (sub-devices run their parent's code, as on Intel's CPU
//! runtime), never the other way round; a call naming no device applies to all.

use std::sync::Arc;

use crate::sync::Mutex;
use opencl_sys::*;

use super::BuildState;
use crate::platform::Device;
use crate::CLResult;

/// A binary given to `clCreateProgramWithBinary` for one device.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadedBinary {
    /// The SPIR-V it carries.
    pub spirv: Arc<Vec<u32>>,
    /// The options it was built with (used again when rebuilt without options).
    pub options: String,
    /// Executable, compiled object or library.
    pub binary_type: cl_program_binary_type,
    /// Built for uniform work-groups (kept when rebuilt with its own options).
    pub uniform_work_groups: bool,
}

/// Build states of a program's devices.
pub(super) struct DeviceBuilds {
    devices: Vec<Arc<Device>>,
    /// Per device: the binary it was created from (binary programs only).
    loaded: Vec<Option<LoadedBinary>>,
    states: Mutex<Vec<BuildState>>,
}

impl DeviceBuilds {
    /// `devices` (non-empty), each with its loaded binary (or none), not built yet.
    pub fn new(devices: Vec<Arc<Device>>, loaded: Vec<Option<LoadedBinary>>) -> DeviceBuilds {
        let states = loaded
            .iter()
            .map(|l| BuildState {
                status: CL_BUILD_NONE,
                options: String::new(),
                log: String::new(),
                binary_type: l
                    .as_ref()
                    .map_or(CL_PROGRAM_BINARY_TYPE_NONE, |l| l.binary_type),
                spirv: l.as_ref().map(|l| Arc::clone(&l.spirv)),
                compiled: None,
                uniform_work_groups: true,
                source_info: None,
            })
            .collect();
        DeviceBuilds {
            devices,
            loaded,
            states: Mutex::new(states),
        }
    }

    /// The program's devices.
    pub fn devices(&self) -> &[Arc<Device>] {
        &self.devices
    }

    /// The binary device `i` was created from.
    pub fn loaded(&self, i: usize) -> Option<&LoadedBinary> {
        self.loaded[i].as_ref()
    }

    /// The position of `device` among the program's devices.
    pub fn index_of(&self, device: &Device) -> Option<usize> {
        self.devices.iter().position(|d| std::ptr::eq(&**d, device))
    }

    /// The devices (indices) a call naming `list` applies to: every device for `None`,
    /// else each listed device and the program's devices partitioned from it.
    pub fn targets(&self, list: Option<&[Arc<Device>]>) -> Vec<usize> {
        (0..self.devices.len())
            .filter(|&i| list.is_none_or(|l| l.iter().any(|d| self.devices[i].is_within(d))))
            .collect()
    }

    /// Starts a build, compile or link of `targets` with `options`:
    /// `CL_INVALID_OPERATION` if one of them is already in progress.
    pub fn begin(&self, targets: &[usize], options: &str) -> CLResult<()> {
        let mut states = self.states.lock();
        if targets
            .iter()
            .any(|&i| states[i].status == CL_BUILD_IN_PROGRESS)
        {
            return Err(CL_INVALID_OPERATION);
        }
        for &i in targets {
            let st = &mut states[i];
            st.status = CL_BUILD_IN_PROGRESS;
            st.options = options.to_string();
            st.log.clear();
        }
        Ok(())
    }

    /// Applies `update` to the states of `targets`.
    pub fn finish(&self, targets: &[usize], mut update: impl FnMut(&mut BuildState)) {
        let mut states = self.states.lock();
        for &i in targets {
            update(&mut states[i]);
        }
    }

    /// A snapshot of device `i`'s state.
    pub fn state(&self, i: usize) -> BuildState {
        self.states.lock()[i].clone()
    }

    /// A snapshot of every device's state, in device order.
    pub fn all(&self) -> Vec<BuildState> {
        self.states.lock().clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::Platform;

    #[test]
    fn a_call_applies_to_the_listed_devices_and_their_sub_devices() {
        let root = Platform::get().device().clone();
        let eq = opencl_sys::CL_DEVICE_PARTITION_EQUALLY;
        let a = Device::sub_device(&root, vec![0], vec![eq, 1, 0]);
        let b = Device::sub_device(&root, vec![0], vec![eq, 1, 0]);
        let nested = Device::sub_device(&a, vec![0], vec![eq, 1, 0]);
        let devices = vec![a.clone(), b.clone(), root.clone(), nested.clone()];
        let builds = DeviceBuilds::new(devices, vec![None; 4]);
        assert_eq!(builds.targets(None), [0, 1, 2, 3]);
        assert_eq!(
            builds.targets(Some(std::slice::from_ref(&root))),
            [0, 1, 2, 3]
        );
        assert_eq!(builds.targets(Some(std::slice::from_ref(&a))), [0, 3]);
        assert_eq!(builds.targets(Some(&[nested.clone(), b.clone()])), [1, 3]);
        assert_eq!(builds.index_of(&nested), Some(3));
        let stranger = Device::sub_device(&root, vec![0], vec![eq, 1, 0]);
        assert_eq!(builds.index_of(&stranger), None);
        assert!(builds.targets(Some(&[stranger])).is_empty());
    }

    #[test]
    fn a_build_in_progress_blocks_only_its_devices() {
        let root = Platform::get().device().clone();
        let eq = opencl_sys::CL_DEVICE_PARTITION_EQUALLY;
        let a = Device::sub_device(&root, vec![0], vec![eq, 1, 0]);
        let b = Device::sub_device(&root, vec![0], vec![eq, 1, 0]);
        let builds = DeviceBuilds::new(vec![a, b], vec![None; 2]);
        builds.begin(&[0], "-DA").expect("first build");
        assert_eq!(builds.begin(&[0, 1], "-DB"), Err(CL_INVALID_OPERATION));
        assert_eq!(builds.state(1).status, CL_BUILD_NONE, "untouched");
        builds.begin(&[1], "-DB").expect("the other device");
        builds.finish(&[0], |st| st.status = CL_BUILD_ERROR);
        let all = builds.all();
        assert_eq!(all[0].status, CL_BUILD_ERROR);
        assert_eq!(all[0].options, "-DA");
        assert_eq!(all[1].status, CL_BUILD_IN_PROGRESS);
        assert_eq!(all[1].options, "-DB");
    }
}
