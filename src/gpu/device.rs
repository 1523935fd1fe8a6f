//! The device: CUDA driver context, NVRTC compilation to CUBIN for the device's own
//! architecture, launches and copies (cudarc with `dynamic-loading`).

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::Ptx;

use super::GpuError;

/// An open GPU: context, stream and what it is.
pub struct Gpu {
    /// The context on device 0.
    pub ctx: Arc<CudaContext>,
    /// Its default stream.
    pub stream: Arc<CudaStream>,
    /// Device name, e.g. `NVIDIA H200`.
    pub name: String,
    /// Compute capability (major, minor).
    pub cc: (i32, i32),
    /// Driver version as reported by `cuDriverGetVersion` (e.g. 13000).
    pub driver_version: i32,
}

/// A kernel file compiled for this device.
pub struct Compiled {
    /// The loaded module.
    pub module: Arc<CudaModule>,
    /// The CUBIN, for `cuobjdump -sass`.
    pub cubin: Vec<u8>,
}

fn derr(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> GpuError {
    move |e| GpuError::Driver(call, format!("{e:?}"))
}

impl Gpu {
    /// Opens device 0, checking first that the driver and NVRTC libraries can be loaded (cudarc
    /// would panic on a missing library).
    ///
    /// # Errors
    /// [`GpuError::NoDriver`], [`GpuError::NoNvrtc`], [`GpuError::NoDevice`].
    pub fn open() -> Result<Gpu, GpuError> {
        // SAFETY: only probes whether the shared library can be loaded.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GpuError::NoDriver);
        }
        // SAFETY: as above.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(GpuError::NoNvrtc);
        }
        let n = CudaContext::device_count().map_err(|e| GpuError::NoDevice(format!("{e:?}")))?;
        if n < 1 {
            return Err(GpuError::NoDevice("device count 0".into()));
        }
        let ctx = CudaContext::new(0).map_err(|e| GpuError::NoDevice(format!("{e:?}")))?;
        let name = ctx.name().map_err(derr("cuDeviceGetName"))?;
        let cc = ctx
            .compute_capability()
            .map_err(derr("cuDeviceGetAttribute"))?;
        let mut v = 0i32;
        // SAFETY: writes one int.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) };
        let stream = ctx.default_stream();
        Ok(Gpu {
            ctx,
            stream,
            name,
            cc,
            driver_version: v,
        })
    }

    /// `sm_XY` of this device.
    pub fn arch(&self) -> String {
        format!("sm_{}{}", self.cc.0, self.cc.1)
    }

    /// Compiles CUDA C source with NVRTC to a CUBIN for this device (`-arch=sm_XY`, `-O3`
    /// default) and loads it.
    ///
    /// # Errors
    /// [`GpuError::Compile`] with NVRTC's log; [`GpuError::Driver`] if loading fails.
    pub fn compile(&self, name: &str, src: &str) -> Result<Compiled, GpuError> {
        self.compile_with(name, src, &[])
    }

    /// [`Self::compile`] with extra NVRTC options (e.g. `-use_fast_math`).
    ///
    /// # Errors
    /// As [`Self::compile`].
    pub fn compile_with(
        &self,
        name: &str,
        src: &str,
        extra: &[&str],
    ) -> Result<Compiled, GpuError> {
        use cudarc::nvrtc::{result, sys};
        let cerr = |e: String| GpuError::Compile(name.to_string(), e);
        let csrc = std::ffi::CString::new(src).map_err(|e| cerr(e.to_string()))?;
        let cname = std::ffi::CString::new(name).map_err(|e| cerr(e.to_string()))?;
        let prog =
            result::create_program(&csrc, Some(&cname)).map_err(|e| cerr(format!("{e:?}")))?;
        let mut opts = vec![
            format!("--gpu-architecture={}", self.arch()),
            "-default-device".to_string(),
        ];
        opts.extend(extra.iter().map(|s| s.to_string()));
        // SAFETY: prog is a valid program; options are valid C strings.
        let compiled = unsafe { result::compile_program(prog, &opts) };
        if let Err(e) = compiled {
            // SAFETY: prog is valid.
            let log = unsafe { result::get_program_log(prog) }
                .map(|l| {
                    let bytes: Vec<u8> =
                        l.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect();
                    String::from_utf8_lossy(&bytes).replace('\n', " ")
                })
                .unwrap_or_default();
            // SAFETY: destroys the program once.
            let _ = unsafe { result::destroy_program(prog) };
            return Err(cerr(format!("{e:?}: {log}")));
        }
        let mut size = 0usize;
        // SAFETY: prog compiled for a real architecture, so it has a CUBIN.
        let cubin = unsafe {
            sys::nvrtcGetCUBINSize(prog, &mut size)
                .result()
                .map_err(|e| cerr(format!("{e:?}")))?;
            let mut buf = vec![0u8; size];
            sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut _)
                .result()
                .map_err(|e| cerr(format!("{e:?}")))?;
            buf
        };
        // SAFETY: destroys the program once.
        let _ = unsafe { result::destroy_program(prog) };
        let module = self
            .ctx
            .load_module(Ptx::from_binary(cubin.clone()))
            .map_err(derr("cuModuleLoadData"))?;
        Ok(Compiled { module, cubin })
    }

    /// Looks up a kernel by a run-time name.
    ///
    /// # Errors
    /// [`GpuError::Driver`] when the function is missing.
    pub fn function_named(&self, c: &Compiled, name: &str) -> Result<CudaFunction, GpuError> {
        c.module
            .load_function(name)
            .map_err(derr("cuModuleGetFunction"))
    }

    /// Looks up a kernel in a compiled module.
    ///
    /// # Errors
    /// [`GpuError::Driver`] when the function is missing.
    pub fn function(&self, c: &Compiled, name: &'static str) -> Result<CudaFunction, GpuError> {
        c.module
            .load_function(name)
            .map_err(derr("cuModuleGetFunction"))
    }
}
