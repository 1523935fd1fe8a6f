//! The device: CUDA driver context, NVRTC compilation for the device's own architecture, PTX
//! modules loaded through the driver's JIT (cudarc with `dynamic-loading`). Kernel launches are
//! in [`super::launch`].

use std::rc::Rc;
use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaStream};
use cudarc::nvrtc::Ptx;

use super::GpuError;
use crate::sim::arch::Arch;

/// An open GPU: context, stream and what it is.
pub struct Gpu {
    /// The context on device 0.
    pub ctx: Arc<CudaContext>,
    /// Its default stream (every launch and copy of the suite goes through it, in order).
    pub stream: Arc<CudaStream>,
    /// Device name, e.g. `NVIDIA H200`.
    pub name: String,
    /// The device's architecture (its compute capability, which the simulator knows the limits
    /// of; [`Gpu::open`] refuses any other).
    pub arch: Arch,
    /// Driver version as reported by `cuDriverGetVersion` (e.g. 13000 for CUDA 13.0).
    pub driver_version: i32,
}

/// A kernel file compiled to a CUBIN for this device and loaded.
pub struct Compiled {
    /// The loaded module.
    pub module: Arc<CudaModule>,
    /// The CUBIN, for `cuobjdump -sass`.
    pub cubin: Vec<u8>,
}

/// A PTX module loaded through the driver (`cuModuleLoadData` on PTX text: the driver's JIT
/// compiles it for this device).
pub struct PtxModule {
    /// The loaded module.
    pub module: Arc<CudaModule>,
    /// What it was loaded from (for error messages).
    pub name: String,
}

/// What NVRTC is asked to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NvrtcOutput {
    /// A CUBIN for the device's architecture (`nvrtcGetCUBIN`).
    Cubin,
    /// PTX text (`nvrtcGetPTX`).
    Ptx,
}

fn derr(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> GpuError {
    move |e| GpuError::Driver(call, super::driver_text(&e))
}

/// A C string for the driver or NVRTC, or an error naming `what` (cudarc would panic on an
/// interior NUL byte).
fn c_string(what: &str, s: &str) -> Result<std::ffi::CString, GpuError> {
    std::ffi::CString::new(s).map_err(|e| {
        GpuError::BadName(format!(
            "{what} contains a NUL byte (byte {})",
            e.nul_position()
        ))
    })
}

impl Gpu {
    /// Opens device 0, checking first that the driver and NVRTC libraries can be loaded (cudarc
    /// would panic on a missing library) and that the simulator knows the device's architecture.
    ///
    /// # Errors
    /// [`GpuError::NoDriver`], [`GpuError::NoNvrtc`], [`GpuError::NoDevice`];
    /// [`GpuError::UnknownArch`] for a compute capability outside [`crate::sim::arch::ALL_ARCHES`]
    /// (never treated as another architecture).
    pub fn open() -> Result<Gpu, GpuError> {
        // SAFETY: only probes whether the shared library can be loaded.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(GpuError::NoDriver);
        }
        // SAFETY: as above.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(GpuError::NoNvrtc);
        }
        let n =
            CudaContext::device_count().map_err(|e| GpuError::NoDevice(super::driver_text(&e)))?;
        if n < 1 {
            return Err(GpuError::NoDevice("device count 0".into()));
        }
        let ctx = CudaContext::new(0).map_err(|e| GpuError::NoDevice(super::driver_text(&e)))?;
        let name = ctx.name().map_err(derr("cuDeviceGetName"))?;
        let (major, minor) = ctx
            .compute_capability()
            .map_err(derr("cuDeviceGetAttribute"))?;
        let arch = Arch::from_cc(major, minor).ok_or_else(|| GpuError::UnknownArch {
            name: name.clone(),
            major,
            minor,
        })?;
        let mut v = 0i32;
        // SAFETY: writes one int.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) };
        let stream = ctx.default_stream();
        Ok(Gpu {
            ctx,
            stream,
            name,
            arch,
            driver_version: v,
        })
    }

    /// The driver version as `major.minor` (13000 → `13.0`).
    pub fn driver_version_string(&self) -> String {
        format!(
            "{}.{}",
            self.driver_version / 1000,
            (self.driver_version % 1000) / 10
        )
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
        self.compile_for(name, src, &self.arch.to_string(), extra)
    }

    /// [`Self::compile_with`] for another NVRTC target than the device's own architecture:
    /// `arch` is what `--gpu-architecture=` takes, e.g. `sm_90a` (the architecture-specific
    /// target `wgmma` needs; its CUBIN runs only on sm_90 devices).
    ///
    /// # Errors
    /// As [`Self::compile`]; NVRTC's log says when it does not know `arch`.
    pub fn compile_for(
        &self,
        name: &str,
        src: &str,
        arch: &str,
        extra: &[&str],
    ) -> Result<Compiled, GpuError> {
        let cubin = self.nvrtc(name, src, arch, extra, NvrtcOutput::Cubin)?;
        let module = self
            .ctx
            .load_module(Ptx::from_binary(cubin.clone()))
            .map_err(derr("cuModuleLoadData"))?;
        Ok(Compiled { module, cubin })
    }

    /// Compiles CUDA C source with NVRTC to PTX text for this device's architecture (what
    /// `nvcc -ptx` would write), without loading it.
    ///
    /// # Errors
    /// [`GpuError::Compile`] with NVRTC's log.
    pub fn compile_to_ptx(&self, name: &str, src: &str) -> Result<String, GpuError> {
        let bytes = self.nvrtc(name, src, &self.arch.to_string(), &[], NvrtcOutput::Ptx)?;
        String::from_utf8(bytes)
            .map_err(|e| GpuError::Compile(name.to_string(), format!("PTX is not UTF-8: {e}")))
    }

    /// Loads PTX text as a module: the driver's JIT compiles it for this device
    /// (`cuModuleLoadData`). `name` only labels errors.
    ///
    /// # Errors
    /// [`GpuError::BadName`] for PTX with a NUL byte; [`GpuError::Driver`] when the JIT rejects
    /// it.
    pub fn load_ptx(&self, name: &str, ptx: &str) -> Result<PtxModule, GpuError> {
        c_string(&format!("the PTX of '{}'", name.escape_default()), ptx)?;
        let module = self
            .ctx
            .load_module(Ptx::from_src(ptx))
            .map_err(derr("cuModuleLoadData (PTX JIT)"))?;
        Ok(PtxModule {
            module,
            name: name.to_string(),
        })
    }

    /// JIT-compiles PTX text to a CUBIN for this device through the driver's linker
    /// (`cuLinkCreate`, `cuLinkAddData` with `CU_JIT_INPUT_PTX`, `cuLinkComplete`), with the
    /// driver's default options, plus `CU_JIT_GENERATE_LINE_INFO` when `line_info` (a line table
    /// from the PTX's `.loc` directives, for Nsight Compute's source view; the SASS is the same).
    /// Loaded with [`Gpu::load_cubin`], the CUBIN is what runs, and what `cuobjdump -sass` reads:
    /// the path the PTX fixtures of `tests/data/ptx/` were measured on. `name` labels errors.
    ///
    /// # Errors
    /// [`GpuError::BadName`] for PTX with a NUL byte; [`GpuError::Compile`] with the JIT's log
    /// when it rejects the PTX; [`GpuError::Driver`] for another failing call.
    pub fn jit_ptx(&self, name: &str, ptx: &str, line_info: bool) -> Result<Vec<u8>, GpuError> {
        use cudarc::driver::sys::{self, CUjit_option, CUjitInputType, CUresult};
        let src = c_string(&format!("the PTX of '{}'", name.escape_default()), ptx)?;
        let cname = c_string("a PTX module name", name)?;
        self.ctx.bind_to_thread().map_err(derr("cuCtxSetCurrent"))?;
        let mut log = vec![0u8; 1 << 16];
        let mut opts = vec![
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut vals: Vec<*mut std::ffi::c_void> = vec![
            log.as_mut_ptr().cast(),
            std::ptr::without_provenance_mut(log.len()),
        ];
        if line_info {
            opts.push(CUjit_option::CU_JIT_GENERATE_LINE_INFO);
            vals.push(std::ptr::without_provenance_mut(1));
        }
        let check = |r: CUresult, call: &'static str| {
            if r == CUresult::CUDA_SUCCESS {
                Ok(())
            } else {
                Err(GpuError::Driver(call, super::cu_name(r)))
            }
        };
        let mut state: sys::CUlinkState = std::ptr::null_mut();
        // SAFETY: `opts` and `vals` have the same length and live across the link; the log
        // buffer outlives the state, whose size is passed with it; option values that are
        // numbers are passed in the pointer, as the driver API specifies.
        check(
            unsafe {
                sys::cuLinkCreate_v2(
                    opts.len() as u32,
                    opts.as_mut_ptr(),
                    vals.as_mut_ptr(),
                    &mut state,
                )
            },
            "cuLinkCreate",
        )?;
        let log_text = |log: &[u8]| {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            String::from_utf8_lossy(&log[..end]).replace('\n', " ")
        };
        let bytes = src.as_bytes_with_nul();
        // SAFETY: `state` is a live link state; `bytes` is the NUL-terminated PTX, its length
        // given; `cname` is a C string.
        let added = unsafe {
            sys::cuLinkAddData_v2(
                state,
                CUjitInputType::CU_JIT_INPUT_PTX,
                bytes.as_ptr() as *mut std::ffi::c_void,
                bytes.len(),
                cname.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        let mut out: *mut std::ffi::c_void = std::ptr::null_mut();
        let mut size = 0usize;
        let result = if added != CUresult::CUDA_SUCCESS {
            Err(GpuError::Compile(
                name.to_string(),
                format!("{}: {}", super::cu_name(added), log_text(&log)),
            ))
        } else {
            // SAFETY: `state` is live; `out` and `size` receive the CUBIN the state owns.
            match unsafe { sys::cuLinkComplete(state, &mut out, &mut size) } {
                CUresult::CUDA_SUCCESS if !out.is_null() => {
                    // SAFETY: the driver returned `size` readable bytes at `out`, valid until
                    // cuLinkDestroy below; they are copied first.
                    Ok(unsafe { std::slice::from_raw_parts(out as *const u8, size) }.to_vec())
                }
                r => Err(GpuError::Compile(
                    name.to_string(),
                    format!("{}: {}", super::cu_name(r), log_text(&log)),
                )),
            }
        };
        // SAFETY: destroys the state once; the CUBIN was copied.
        let destroyed = unsafe { sys::cuLinkDestroy(state) };
        let cubin = result?;
        check(destroyed, "cuLinkDestroy")?;
        Ok(cubin)
    }

    /// Loads PTX text as a module with `cuModuleLoadDataEx` (the driver JIT-compiles it for this
    /// device inside the module load), with an error log and, when `line_info`,
    /// `CU_JIT_GENERATE_LINE_INFO` (a line table from the PTX's `.loc` directives, for Nsight
    /// Compute's source view). This is the path `verify --ptx` takes: kernels declaring
    /// `extern __shared__ __align__(1024)` (`kernels/fa3_fwd.cu`'s PTX) fault with
    /// `CUDA_ERROR_MISALIGNED_ADDRESS` (716) through [`Gpu::jit_ptx`] + [`Gpu::load_cubin`] and
    /// run through this one (measured on the H200, `docs/log/2026-12-01-hopper-fixtures.md`).
    /// `name` labels errors.
    ///
    /// # Errors
    /// [`GpuError::BadName`] for PTX with a NUL byte; [`GpuError::Compile`] with the JIT's log
    /// when it rejects the PTX.
    pub fn load_ptx_ex(
        &self,
        name: &str,
        ptx: &str,
        line_info: bool,
    ) -> Result<Rc<JitModule>, GpuError> {
        use cudarc::driver::sys::{self, CUjit_option, CUresult};
        let src = c_string(&format!("the PTX of '{}'", name.escape_default()), ptx)?;
        self.ctx.bind_to_thread().map_err(derr("cuCtxSetCurrent"))?;
        let mut log = vec![0u8; 1 << 16];
        let mut opts = vec![
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut vals: Vec<*mut std::ffi::c_void> = vec![
            log.as_mut_ptr().cast(),
            std::ptr::without_provenance_mut(log.len()),
        ];
        if line_info {
            opts.push(CUjit_option::CU_JIT_GENERATE_LINE_INFO);
            vals.push(std::ptr::without_provenance_mut(1));
        }
        let mut module: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: `src` is NUL-terminated PTX; `opts` and `vals` have the same length and live
        // across the call; the log buffer's size is passed with it; numeric option values are
        // passed in the pointer, as the driver API specifies.
        let r = unsafe {
            sys::cuModuleLoadDataEx(
                &mut module,
                src.as_ptr().cast(),
                opts.len() as u32,
                opts.as_mut_ptr(),
                vals.as_mut_ptr(),
            )
        };
        if r != CUresult::CUDA_SUCCESS || module.is_null() {
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            return Err(GpuError::Compile(
                name.to_string(),
                format!(
                    "cuModuleLoadDataEx: {}: {}",
                    super::cu_name(r),
                    String::from_utf8_lossy(&log[..end]).replace('\n', " ")
                ),
            ));
        }
        Ok(Rc::new(JitModule {
            module,
            ctx: self.ctx.clone(),
            name: name.to_string(),
        }))
    }

    /// Loads a CUBIN (e.g. from [`Gpu::jit_ptx`]) as a module (`cuModuleLoadData`). `name`
    /// labels errors.
    ///
    /// # Errors
    /// [`GpuError::Driver`] when the driver rejects it.
    pub fn load_cubin(&self, name: &str, cubin: Vec<u8>) -> Result<PtxModule, GpuError> {
        let module = self
            .ctx
            .load_module(Ptx::from_binary(cubin))
            .map_err(derr("cuModuleLoadData (CUBIN)"))?;
        Ok(PtxModule {
            module,
            name: name.to_string(),
        })
    }

    /// Looks up a kernel by name in a compiled module.
    ///
    /// # Errors
    /// [`GpuError::BadName`] for a name with a NUL byte; [`GpuError::Driver`] when the function
    /// is missing.
    pub fn function(&self, c: &Compiled, name: &str) -> Result<CudaFunction, GpuError> {
        load_function(&c.module, name)
    }

    /// Runs NVRTC on `src` for `arch` (`--gpu-architecture=`).
    fn nvrtc(
        &self,
        name: &str,
        src: &str,
        arch: &str,
        extra: &[&str],
        want: NvrtcOutput,
    ) -> Result<Vec<u8>, GpuError> {
        use cudarc::nvrtc::{result, sys};
        let cerr = |e: String| GpuError::Compile(name.to_string(), e);
        let csrc = c_string(&format!("the source of '{}'", name.escape_default()), src)?;
        let cname = c_string(
            &format!("kernel file name '{}'", name.escape_default()),
            name,
        )?;
        let prog =
            result::create_program(&csrc, Some(&cname)).map_err(|e| cerr(super::nvrtc_text(&e)))?;
        let mut opts = vec![
            format!("--gpu-architecture={arch}"),
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
            return Err(cerr(format!("{}: {log}", super::nvrtc_text(&e))));
        }
        let out = match want {
            NvrtcOutput::Cubin => {
                let mut size = 0usize;
                // SAFETY: prog compiled for a real architecture, so it has a CUBIN of `size` bytes.
                unsafe {
                    sys::nvrtcGetCUBINSize(prog, &mut size)
                        .result()
                        .map_err(|e| cerr(super::nvrtc_text(&e)))
                        .and_then(|()| {
                            let mut buf = vec![0u8; size];
                            sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut _)
                                .result()
                                .map_err(|e| cerr(super::nvrtc_text(&e)))
                                .map(|()| buf)
                        })
                }
            }
            // SAFETY: prog compiled, so it has PTX (a NUL-terminated string).
            NvrtcOutput::Ptx => unsafe { result::get_ptx(prog) }
                .map(|p| p.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect())
                .map_err(|e| cerr(super::nvrtc_text(&e))),
        };
        // SAFETY: destroys the program once.
        let _ = unsafe { result::destroy_program(prog) };
        out
    }
}

/// A PTX module loaded with `cuModuleLoadDataEx` ([`Gpu::load_ptx_ex`]); unloaded on drop.
pub struct JitModule {
    module: cudarc::driver::sys::CUmodule,
    ctx: Arc<CudaContext>,
    /// What it was loaded from (for error messages).
    pub name: String,
}

impl JitModule {
    /// The `CUfunction` of entry `name`.
    ///
    /// # Errors
    /// [`GpuError::BadName`] for a name with a NUL byte; [`GpuError::Driver`] when the module has
    /// no such entry.
    pub fn function(&self, name: &str) -> Result<cudarc::driver::sys::CUfunction, GpuError> {
        let c = c_string(&format!("kernel name '{}'", name.escape_default()), name)?;
        self.ctx.bind_to_thread().map_err(derr("cuCtxSetCurrent"))?;
        // SAFETY: `self.module` is loaded and unloaded only on drop.
        unsafe { cudarc::driver::result::module::get_function(self.module, c) }
            .map_err(derr("cuModuleGetFunction"))
    }
}

impl Drop for JitModule {
    fn drop(&mut self) {
        if self.ctx.bind_to_thread().is_ok() {
            // SAFETY: the module was loaded by `load_ptx_ex` and is unloaded once, here.
            let _ = unsafe { cudarc::driver::result::module::unload(self.module) };
        }
    }
}

impl PtxModule {
    /// Looks up a kernel (`.entry`) by name.
    ///
    /// # Errors
    /// [`GpuError::BadName`] for a name with a NUL byte; [`GpuError::Driver`] when the module has
    /// no such entry.
    pub fn function(&self, name: &str) -> Result<CudaFunction, GpuError> {
        load_function(&self.module, name)
    }
}

fn load_function(module: &Arc<CudaModule>, name: &str) -> Result<CudaFunction, GpuError> {
    c_string(&format!("kernel name '{}'", name.escape_default()), name)?;
    module
        .load_function(name)
        .map_err(derr("cuModuleGetFunction"))
}
