//! Typed launches of the suite's kernels. Each kernel signature has one type here, and its
//! `unsafe` launch (argument order and types must match the kernel's C signature, which the
//! compiler cannot check) is written once, beside that signature. Callers pass Rust values and
//! get the kernel's output back; nothing else in the crate launches a kernel.
//!
//! | type | kernel (file) |
//! | --- | --- |
//! | [`LdsmDump`] | `ldsm_dump` (`kernels/fragments.cu`) |
//! | [`MmaDump`] | `mma_dump` (`kernels/fragments.cu`) |
//! | [`SmemProbe`] | `smem_probe` (`kernels/smem_probe.cu`) |
//! | [`LessonKernel`] | `lesson_<name>` ([`super::source::lesson`]) |
//! | [`GemmTile`] | `gemm_tile` ([`super::source::gemm`]) |
//! | [`Fa2Fwd`] | `fa2_fwd` (`kernels/fa2_fwd.cu`) |
//! | [`BankTime`] | `bank_time` (`kernels/bank_time.cu`) |
//! | [`PtxKernel`] | any `.entry` of a PTX module, with [`ParamBuffer`] parameters |
//! | [`StsmProbe`] | `stsm_probe`, `stsm_count` (`kernels/hopper_probe.cu`, sm_90) |
//! | [`CpAsyncProbe`] | `cpasync_src_count` (`kernels/hopper_probe.cu`) |
//! | [`TmaProbe`] | `tma_probe` (`kernels/hopper_probe.cu`) and `cuTensorMapEncodeTiled` |
//! | [`WgmmaProbe`] | `wgmma_n<N>_<type>_<ss\|rs>_t<A><B>` (`kernels/wgmma_probe.cu`, sm_90a) |
//! | [`Fa3Fwd`] | `fa3_fwd` (`kernels/fa3_fwd.cu`, sm_90a) and its four tensor maps |

use std::ffi::c_void;
use std::rc::Rc;

pub use cudarc::driver::LaunchConfig;
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, CudaSlice, DevicePtr, PushKernelArg};

use super::GpuError;
use super::device::{Compiled, Gpu, JitModule, PtxModule};
use super::params::{Param, ParamBuffer, entry_param_sizes};
use crate::sim::instr::MatrixCount;
use crate::sim::mma::{MmaDtype, MmaShape};
use crate::sim::tma::TmaSwizzle;

fn derr(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> GpuError {
    move |e| GpuError::Driver(call, super::driver_text(&e))
}

/// Launch shape of the single-warp kernels: one block of 32 threads.
pub fn one_warp(shared_mem_bytes: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes,
    }
}

/// Registers per lane of a 32-lane dump (`out[lane*4 + r]`), as `[lane][r]`.
fn lanes4<T: Copy + Default>(flat: &[T]) -> [[T; 4]; 32] {
    std::array::from_fn(|l| {
        std::array::from_fn(|r| flat.get(l * 4 + r).copied().unwrap_or_default())
    })
}

/// Registers per thread the compiler gave a kernel (`CU_FUNC_ATTRIBUTE_NUM_REGS`).
///
/// # Errors
/// [`GpuError::Driver`].
pub fn num_regs(f: &CudaFunction) -> Result<u32, GpuError> {
    let r = f
        .get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)
        .map_err(derr("cuFuncGetAttribute"))?;
    Ok(r.max(0) as u32)
}

/// The driver's occupancy answer: resident blocks per SM of `f` with `threads` per block and
/// `smem_bytes` of dynamic shared memory (`cuOccupancyMaxActiveBlocksPerMultiprocessor`).
///
/// # Errors
/// [`GpuError::Driver`].
pub fn max_active_blocks(f: &CudaFunction, threads: u32, smem_bytes: u32) -> Result<u32, GpuError> {
    f.occupancy_max_active_blocks_per_multiprocessor(threads, smem_bytes as usize, None)
        .map_err(derr("cuOccupancyMaxActiveBlocksPerMultiprocessor"))
}

/// `ldsm_dump(const unsigned *offs, int kind, unsigned n_b16, unsigned *out)`: shared memory
/// filled with b16 indices, one `ldmatrix` at the lanes' row addresses, every lane's destination
/// registers dumped.
pub struct LdsmDump(CudaFunction);

impl LdsmDump {
    /// Finds the kernel in `kernels/fragments.cu`'s module.
    ///
    /// # Errors
    /// [`GpuError::Driver`] when it is missing.
    pub fn load(gpu: &Gpu, frags: &Compiled) -> Result<LdsmDump, GpuError> {
        Ok(LdsmDump(gpu.function(frags, "ldsm_dump")?))
    }

    /// The kernel's `kind`: 0 x1, 1 x2, 2 x4, 3 x1.trans, 4 x2.trans, 5 x4.trans.
    pub fn kind(num: MatrixCount, trans: bool) -> i32 {
        let k = match num {
            MatrixCount::X1 => 0,
            MatrixCount::X2 => 1,
            MatrixCount::X4 => 2,
        };
        k + if trans { 3 } else { 0 }
    }

    /// Runs `ldmatrix.x{num}[.trans]` with lane `l`'s row address `offs[l]` (bytes) into
    /// `smem_bytes` of dynamic shared memory; returns `[lane][register]` (registers past `num`
    /// are 0).
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn run(
        &self,
        gpu: &Gpu,
        num: MatrixCount,
        trans: bool,
        offs: &[u32; 32],
        smem_bytes: u32,
    ) -> Result<[[u32; 4]; 32], GpuError> {
        let s = &gpu.stream;
        let d_offs = s.clone_htod(offs).map_err(derr("cuMemcpyHtoD"))?;
        let mut d_out = s.alloc_zeros::<u32>(128).map_err(derr("cuMemAlloc"))?;
        let (k, n) = (Self::kind(num, trans), smem_bytes / 2);
        // SAFETY: arguments match ldsm_dump(const unsigned*, int, unsigned, unsigned*); `out`
        // holds 32 * 4 words; the kernel reads offs[0..32] and n_b16 halfwords of the dynamic
        // shared memory it is given.
        unsafe {
            s.launch_builder(&self.0)
                .arg(&d_offs)
                .arg(&k)
                .arg(&n)
                .arg(&mut d_out)
                .launch(one_warp(smem_bytes))
        }
        .map_err(derr("cuLaunchKernel ldsm_dump"))?;
        let out: Vec<u32> = s.clone_dtoh(&d_out).map_err(derr("cuMemcpyDtoH"))?;
        Ok(lanes4(&out))
    }

    /// The same dump through the path `verify --ptx` takes: `ldsm_dump` looked up by name in
    /// `module` (PTX `ptx` the driver's JIT compiled), its four parameters packed by
    /// [`ParamBuffer`] and checked against the PTX `.entry` declaration, launched raw.
    ///
    /// # Errors
    /// [`GpuError::Params`] when the declaration is not `(u64, u32, u32, u64)`;
    /// [`GpuError::Driver`].
    pub fn run_ptx(
        gpu: &Gpu,
        module: &PtxModule,
        ptx: &str,
        (num, trans): (MatrixCount, bool),
        offs: &[u32; 32],
        smem_bytes: u32,
    ) -> Result<[[u32; 4]; 32], GpuError> {
        let kernel = PtxKernel::load(module, "ldsm_dump")?;
        let offs_bytes: Vec<u8> = offs.iter().flat_map(|o| o.to_le_bytes()).collect();
        let d_offs = DeviceBuffer::from_host(gpu, &offs_bytes)?;
        let d_out = DeviceBuffer::zeroed(gpu, 128 * 4)?;
        let mut p = ParamBuffer::new();
        p.push(Param::U64(d_offs.addr(gpu)))
            .push(Param::S32(Self::kind(num, trans)))
            .push(Param::U32(smem_bytes / 2))
            .push(Param::U64(d_out.addr(gpu)));
        p.check_declared("ldsm_dump", &entry_param_sizes(ptx, "ldsm_dump")?)?;
        // SAFETY: the parameters match the declaration just checked; offs holds 32 words and out
        // 128, what ldsm_dump reads and writes; n_b16 halfwords fit the dynamic shared memory.
        unsafe { kernel.launch(gpu, one_warp(smem_bytes), &p) }?;
        let out = d_out.to_host(gpu)?;
        let words: Vec<u32> = out
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        Ok(lanes4(&words))
    }
}

/// `mma_dump(int kind, const unsigned *a, const unsigned *b, const float *c, float *d)`: each
/// lane loads its A (4 words), B (2 words) and C (4 floats) registers, the warp executes one
/// `mma.sync`, and every lane's D registers are dumped.
pub struct MmaDump(CudaFunction);

impl MmaDump {
    /// The (shape, dtype) pairs the kernel implements, in its `kind` order.
    pub const KINDS: [(MmaShape, MmaDtype); 3] = [
        (MmaShape::M16N8K16, MmaDtype::F16),
        (MmaShape::M16N8K16, MmaDtype::Bf16),
        (MmaShape::M16N8K8, MmaDtype::F16),
    ];

    /// Finds the kernel in `kernels/fragments.cu`'s module.
    ///
    /// # Errors
    /// [`GpuError::Driver`] when it is missing.
    pub fn load(gpu: &Gpu, frags: &Compiled) -> Result<MmaDump, GpuError> {
        Ok(MmaDump(gpu.function(frags, "mma_dump")?))
    }

    /// Runs one mma with per-lane registers `a` (`[lane][4]` words), `b` (`[lane][2]` words), `c`
    /// (`[lane][4]` f32); returns D as `[lane][register]`.
    ///
    /// # Errors
    /// [`GpuError::Unsupported`] for a (shape, dtype) outside [`Self::KINDS`];
    /// [`GpuError::Driver`].
    pub fn run(
        &self,
        gpu: &Gpu,
        shape: MmaShape,
        dtype: MmaDtype,
        a: &[[u32; 4]; 32],
        b: &[[u32; 2]; 32],
        c: &[[f32; 4]; 32],
    ) -> Result<[[f32; 4]; 32], GpuError> {
        let kind = Self::KINDS
            .iter()
            .position(|&k| k == (shape, dtype))
            .ok_or_else(|| GpuError::Unsupported(format!("mma_dump has no {}", shape.ptx(dtype))))?
            as i32;
        let s = &gpu.stream;
        let af: Vec<u32> = a.iter().flatten().copied().collect();
        let bf: Vec<u32> = b.iter().flatten().copied().collect();
        let cf: Vec<f32> = c.iter().flatten().copied().collect();
        let (da, db, dc) = (
            s.clone_htod(&af).map_err(derr("cuMemcpyHtoD"))?,
            s.clone_htod(&bf).map_err(derr("cuMemcpyHtoD"))?,
            s.clone_htod(&cf).map_err(derr("cuMemcpyHtoD"))?,
        );
        let mut dd = s.alloc_zeros::<f32>(128).map_err(derr("cuMemAlloc"))?;
        // SAFETY: arguments match mma_dump(int, const unsigned*, const unsigned*, const float*,
        // float*); a and c hold 32 * 4 values, b 32 * 2, d 32 * 4.
        unsafe {
            s.launch_builder(&self.0)
                .arg(&kind)
                .arg(&da)
                .arg(&db)
                .arg(&dc)
                .arg(&mut dd)
                .launch(one_warp(0))
        }
        .map_err(derr("cuLaunchKernel mma_dump"))?;
        let d: Vec<f32> = s.clone_dtoh(&dd).map_err(derr("cuMemcpyDtoH"))?;
        Ok(lanes4(&d))
    }
}

/// `smem_probe(const unsigned *offs, unsigned mask, int kind, unsigned *out)`: the active lanes
/// of one warp execute one shared-memory instruction (`kind`: the index into
/// [`super::fuzz::PROBE_KINDS`]) at their byte offsets.
pub struct SmemProbe {
    f: CudaFunction,
    /// Dynamic shared memory given to every launch, bytes.
    smem_bytes: u32,
}

impl SmemProbe {
    /// Finds the kernel in `kernels/smem_probe.cu`'s module; every launch gets `smem_bytes` of
    /// dynamic shared memory.
    ///
    /// # Errors
    /// [`GpuError::Driver`] when it is missing.
    pub fn load(gpu: &Gpu, probe: &Compiled, smem_bytes: u32) -> Result<SmemProbe, GpuError> {
        Ok(SmemProbe {
            f: gpu.function(probe, "smem_probe")?,
            smem_bytes,
        })
    }

    /// Launches the probe once and waits for it.
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn run(&self, gpu: &Gpu, offs: &[u32; 32], mask: u32, kind: usize) -> Result<(), GpuError> {
        let s = &gpu.stream;
        let d_offs = s.clone_htod(offs).map_err(derr("cuMemcpyHtoD"))?;
        let mut d_out = s.alloc_zeros::<u32>(32).map_err(derr("cuMemAlloc"))?;
        let k = kind as i32;
        // SAFETY: arguments match smem_probe(const unsigned*, unsigned, int, unsigned*); offs
        // and out hold 32 words; offsets were checked against the shared memory given.
        unsafe {
            s.launch_builder(&self.f)
                .arg(&d_offs)
                .arg(&mask)
                .arg(&k)
                .arg(&mut d_out)
                .launch(one_warp(self.smem_bytes))
        }
        .map_err(derr("cuLaunchKernel smem_probe"))?;
        s.synchronize().map_err(derr("cuStreamSynchronize"))
    }
}

/// `lesson_<name>(unsigned *out, int step, int layout, int variant)`: the kernel of one lesson
/// (contract: [`super::source::lesson`]).
pub struct LessonKernel(CudaFunction);

impl LessonKernel {
    /// Finds the lesson's kernel function `name` in its module.
    ///
    /// # Errors
    /// [`GpuError::Driver`] when it is missing.
    pub fn load(gpu: &Gpu, c: &Compiled, name: &str) -> Result<LessonKernel, GpuError> {
        Ok(LessonKernel(gpu.function(c, name)?))
    }

    /// Runs the steps of `variant` up to `step` under `layout` (indices into the lesson's
    /// lists); returns the registers of the last step as `[lane][register]`.
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn run(
        &self,
        gpu: &Gpu,
        step: i32,
        layout: i32,
        variant: i32,
    ) -> Result<[[u32; 4]; 32], GpuError> {
        let s = &gpu.stream;
        let mut d_out = s.alloc_zeros::<u32>(128).map_err(derr("cuMemAlloc"))?;
        // SAFETY: arguments match lesson_<name>(unsigned*, int, int, int); out holds 32 * 4
        // words; the kernel returns early for a layout outside its table.
        unsafe {
            s.launch_builder(&self.0)
                .arg(&mut d_out)
                .arg(&step)
                .arg(&layout)
                .arg(&variant)
                .launch(one_warp(0))
        }
        .map_err(derr("cuLaunchKernel lesson"))?;
        let out: Vec<u32> = s.clone_dtoh(&d_out).map_err(derr("cuMemcpyDtoH"))?;
        Ok(lanes4(&out))
    }
}

/// `gemm_tile(const unsigned short *A, const unsigned short *B, float *C)`: every CTA computes
/// the same `C = A·Bᵀ` tile (f16 in, f32 out) into its own slice of C.
pub struct GemmTile(pub CudaFunction);

impl GemmTile {
    /// Finds the kernel in a module built from [`super::source::gemm::source`].
    ///
    /// # Errors
    /// [`GpuError::Driver`] when it is missing.
    pub fn load(gpu: &Gpu, c: &Compiled) -> Result<GemmTile, GpuError> {
        Ok(GemmTile(gpu.function(c, "gemm_tile")?))
    }

    /// Launches `cfg` (a 1-D grid) on A (M×K f16 bits) and B (N×K f16 bits); returns C of
    /// every CTA (`grid · c_len` f32).
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn run(
        &self,
        gpu: &Gpu,
        a: &[u16],
        b: &[u16],
        c_len: usize,
        cfg: LaunchConfig,
    ) -> Result<Vec<f32>, GpuError> {
        let s = &gpu.stream;
        let (da, db) = (
            s.clone_htod(a).map_err(derr("cuMemcpyHtoD"))?,
            s.clone_htod(b).map_err(derr("cuMemcpyHtoD"))?,
        );
        let mut dc = s
            .alloc_zeros::<f32>(c_len * cfg.grid_dim.0 as usize)
            .map_err(derr("cuMemAlloc"))?;
        // SAFETY: arguments match gemm_tile(const unsigned short*, const unsigned short*,
        // float*); A and B hold the M×K and N×K tiles the kernel was specialised to, C one
        // M×N tile per CTA.
        unsafe {
            s.launch_builder(&self.0)
                .arg(&da)
                .arg(&db)
                .arg(&mut dc)
                .launch(cfg)
        }
        .map_err(derr("cuLaunchKernel gemm_tile"))?;
        s.clone_dtoh(&dc).map_err(derr("cuMemcpyDtoH"))
    }
}

/// `fa2_fwd(const u16 *q, const u16 *k, const u16 *v, u16 *o, int seq, float softmax_scale)`:
/// FlashAttention-2 forward on `[B, H, S, D]` f16 tensors (`kernels/fa2_fwd.cu`).
pub struct Fa2Fwd {
    f: CudaFunction,
    smem_bytes: u32,
}

impl Fa2Fwd {
    /// Finds the kernel and allows it `smem_bytes` of dynamic shared memory (the opt-in above
    /// 48 KB, `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`).
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn load(gpu: &Gpu, c: &Compiled, smem_bytes: u32) -> Result<Fa2Fwd, GpuError> {
        let f = gpu.function(c, "fa2_fwd")?;
        f.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            smem_bytes as i32,
        )
        .map_err(derr("cuFuncSetAttribute"))?;
        Ok(Fa2Fwd { f, smem_bytes })
    }

    /// Runs on q, k, v (f16 bits, `bh · seq · d` each, `bh` = batch · heads) with `grid` =
    /// (seq / bm, bh) CTAs of 128 threads; returns O (f16 bits, same shape).
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn run(
        &self,
        gpu: &Gpu,
        [q, k, v]: [&[u16]; 3],
        seq: i32,
        scale: f32,
        grid: (u32, u32),
    ) -> Result<Vec<u16>, GpuError> {
        let s = &gpu.stream;
        let (dq, dk, dv) = (
            s.clone_htod(q).map_err(derr("cuMemcpyHtoD"))?,
            s.clone_htod(k).map_err(derr("cuMemcpyHtoD"))?,
            s.clone_htod(v).map_err(derr("cuMemcpyHtoD"))?,
        );
        let mut dout = s.alloc_zeros::<u16>(q.len()).map_err(derr("cuMemAlloc"))?;
        let cfg = LaunchConfig {
            grid_dim: (grid.0, grid.1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: self.smem_bytes,
        };
        // SAFETY: arguments match fa2_fwd(const u16*, const u16*, const u16*, u16*, int,
        // float); q, k, v and o hold grid.1 heads of `seq` rows of the kernel's FA_D columns.
        unsafe {
            s.launch_builder(&self.f)
                .arg(&dq)
                .arg(&dk)
                .arg(&dv)
                .arg(&mut dout)
                .arg(&seq)
                .arg(&scale)
                .launch(cfg)
        }
        .map_err(derr("cuLaunchKernel fa2_fwd"))?;
        s.clone_dtoh(&dout).map_err(derr("cuMemcpyDtoH"))
    }
}

/// `bank_time(const unsigned *offs, int kind, int iters, unsigned long long *cycles, unsigned
/// *sink)`: 32 warps repeat one access pattern `iters` times; clock64 cycles of warp 0.
pub struct BankTime(CudaFunction);

impl BankTime {
    /// Finds the kernel in `kernels/bank_time.cu`'s module.
    ///
    /// # Errors
    /// [`GpuError::Driver`] when it is missing.
    pub fn load(gpu: &Gpu, c: &Compiled) -> Result<BankTime, GpuError> {
        Ok(BankTime(gpu.function(c, "bank_time")?))
    }

    /// Launches one block of 1024 threads with 48 KB of shared memory `repeats` times; returns
    /// the cycles each launch measured.
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn run(
        &self,
        gpu: &Gpu,
        offs: &[u32; 32],
        kind: i32,
        iters: i32,
        repeats: usize,
    ) -> Result<Vec<u64>, GpuError> {
        let s = &gpu.stream;
        let d_offs = s.clone_htod(offs).map_err(derr("cuMemcpyHtoD"))?;
        let mut d_cyc = s.alloc_zeros::<u64>(1).map_err(derr("cuMemAlloc"))?;
        let mut d_sink = s.alloc_zeros::<u32>(1024).map_err(derr("cuMemAlloc"))?;
        // 32 warps on one SM: the shared-memory pipe is the bottleneck.
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1024, 1, 1),
            shared_mem_bytes: 48 * 1024,
        };
        let mut out = Vec::with_capacity(repeats);
        for _ in 0..repeats {
            // SAFETY: arguments match bank_time(const unsigned*, int, int, unsigned long long*,
            // unsigned*); offs holds 32 words, cycles 1, sink 1024.
            unsafe {
                s.launch_builder(&self.0)
                    .arg(&d_offs)
                    .arg(&kind)
                    .arg(&iters)
                    .arg(&mut d_cyc)
                    .arg(&mut d_sink)
                    .launch(cfg)
            }
            .map_err(derr("cuLaunchKernel bank_time"))?;
            let cyc: Vec<u64> = s.clone_dtoh(&d_cyc).map_err(derr("cuMemcpyDtoH"))?;
            out.push(cyc[0]);
        }
        Ok(out)
    }
}

/// Device memory for [`PtxKernel`] launches: bytes, whose address goes into a parameter as a
/// `u64` ([`DeviceBuffer::addr`]).
pub struct DeviceBuffer(CudaSlice<u8>);

impl DeviceBuffer {
    /// Copies `bytes` to a new device allocation.
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn from_host(gpu: &Gpu, bytes: &[u8]) -> Result<DeviceBuffer, GpuError> {
        Ok(DeviceBuffer(
            gpu.stream.clone_htod(bytes).map_err(derr("cuMemcpyHtoD"))?,
        ))
    }

    /// `len` zero bytes on the device.
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn zeroed(gpu: &Gpu, len: usize) -> Result<DeviceBuffer, GpuError> {
        Ok(DeviceBuffer(
            gpu.stream
                .alloc_zeros::<u8>(len)
                .map_err(derr("cuMemAlloc"))?,
        ))
    }

    /// The device address (what a `.param .u64` pointer parameter holds).
    pub fn addr(&self, gpu: &Gpu) -> u64 {
        let (ptr, _sync) = self.0.device_ptr(&gpu.stream);
        ptr
    }

    /// Copies the buffer back (after every launch on the stream so far).
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn to_host(&self, gpu: &Gpu) -> Result<Vec<u8>, GpuError> {
        gpu.stream.clone_dtoh(&self.0).map_err(derr("cuMemcpyDtoH"))
    }
}

/// One `.entry` of a PTX module, launched with raw parameters (the parameters are not typed by
/// Rust: [`ParamBuffer::check_declared`] against the PTX declaration is the caller's check).
pub struct PtxKernel {
    f: KernelFn,
    name: String,
}

/// The function of a [`PtxKernel`] and what keeps its module loaded.
enum KernelFn {
    /// From a cudarc module ([`PtxModule`]).
    Cudarc(CudaFunction),
    /// From a [`JitModule`] (`cuModuleLoadDataEx`).
    Jit {
        /// The entry.
        f: cudarc::driver::sys::CUfunction,
        /// Held only to keep the module loaded while the function is used.
        _module: Rc<JitModule>,
    },
}

impl PtxKernel {
    /// Finds the entry `name` in `module`.
    ///
    /// # Errors
    /// [`GpuError::BadName`], [`GpuError::Driver`] when the module has no such entry.
    pub fn load(module: &PtxModule, name: &str) -> Result<PtxKernel, GpuError> {
        Ok(PtxKernel {
            f: KernelFn::Cudarc(module.function(name)?),
            name: name.to_string(),
        })
    }

    /// Finds the entry `name` in a module loaded with [`Gpu::load_ptx_ex`].
    ///
    /// # Errors
    /// [`GpuError::BadName`], [`GpuError::Driver`] when the module has no such entry.
    pub fn load_jit(module: &Rc<JitModule>, name: &str) -> Result<PtxKernel, GpuError> {
        Ok(PtxKernel {
            f: KernelFn::Jit {
                f: module.function(name)?,
                _module: module.clone(),
            },
            name: name.to_string(),
        })
    }

    fn cu(&self) -> cudarc::driver::sys::CUfunction {
        match &self.f {
            KernelFn::Cudarc(f) => f.cu_function(),
            KernelFn::Jit { f, .. } => *f,
        }
    }

    /// The entry's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Allows `bytes` of dynamic shared memory per block
    /// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`; needed above 48 KiB).
    ///
    /// # Errors
    /// [`GpuError::Driver`], e.g. above the device's per-block limit.
    pub fn set_max_dynamic_shared(&self, bytes: u32) -> Result<(), GpuError> {
        let b = i32::try_from(bytes).map_err(|_| {
            GpuError::Unsupported(format!("{bytes} bytes of dynamic shared memory"))
        })?;
        // SAFETY: the function belongs to a module this kernel keeps loaded.
        unsafe {
            cudarc::driver::result::function::set_function_attribute(
                self.cu(),
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                b,
            )
        }
        .map_err(derr("cuFuncSetAttribute"))
    }

    /// Registers per thread the JIT gave the entry.
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn num_regs(&self) -> Result<u32, GpuError> {
        // SAFETY: the function belongs to a module this kernel keeps loaded.
        let r = unsafe {
            cudarc::driver::result::function::get_function_attribute(
                self.cu(),
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS,
            )
        }
        .map_err(derr("cuFuncGetAttribute"))?;
        Ok(r.max(0) as u32)
    }

    /// Launches with `params` (one pointer per parameter into the packed buffer, as
    /// `cuLaunchKernel`'s `kernelParams` takes them) and waits for the kernel to finish.
    ///
    /// # Errors
    /// [`GpuError::Driver`], e.g. when the parameters do not match the kernel or it faults.
    ///
    /// # Safety
    /// The parameters must be what the kernel declares, and every pointer among them must
    /// address device memory (a live [`DeviceBuffer`]) large enough for what the kernel reads
    /// and writes with it: a wrong pointer corrupts device memory or faults the context.
    pub unsafe fn launch(
        &self,
        gpu: &Gpu,
        cfg: LaunchConfig,
        params: &ParamBuffer,
    ) -> Result<(), GpuError> {
        let base = params.as_bytes().as_ptr();
        let mut ptrs: Vec<*mut c_void> = params
            .offsets()
            .iter()
            // SAFETY: every offset lies inside the packed buffer.
            .map(|&o| unsafe { base.add(o) } as *mut c_void)
            .collect();
        gpu.ctx.bind_to_thread().map_err(derr("cuCtxSetCurrent"))?;
        // SAFETY: `ptrs` point at the values of the parameters, which the driver copies during
        // the call; the caller vouches for the parameters themselves (see # Safety).
        unsafe {
            cudarc::driver::result::launch_kernel(
                self.cu(),
                cfg.grid_dim,
                cfg.block_dim,
                cfg.shared_mem_bytes,
                gpu.stream.cu_stream(),
                &mut ptrs,
            )
        }
        .map_err(derr("cuLaunchKernel (PTX)"))?;
        gpu.stream
            .synchronize()
            .map_err(derr("cuStreamSynchronize"))
    }

    /// [`Self::launch`] as a cluster launch: `cuLaunchKernelEx` with
    /// `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION` = `cluster` (CTAs per cluster in x, y, z; the
    /// grid stays in CTAs and must be a multiple of it). `None` is a plain launch; `[1, 1, 1]`
    /// is a cluster launch of one CTA per cluster (`%is_explicit_cluster` true).
    ///
    /// # Errors
    /// [`GpuError::Driver`], e.g. a cluster the device or the kernel refuses.
    ///
    /// # Safety
    /// As [`Self::launch`].
    pub unsafe fn launch_cluster(
        &self,
        gpu: &Gpu,
        cfg: LaunchConfig,
        cluster: Option<[u32; 3]>,
        params: &ParamBuffer,
    ) -> Result<(), GpuError> {
        let Some(cluster) = cluster else {
            // SAFETY: the caller's promise, passed on.
            return unsafe { self.launch(gpu, cfg, params) };
        };
        use cudarc::driver::sys;
        let base = params.as_bytes().as_ptr();
        let mut ptrs: Vec<*mut c_void> = params
            .offsets()
            .iter()
            // SAFETY: every offset lies inside the packed buffer.
            .map(|&o| unsafe { base.add(o) } as *mut c_void)
            .collect();
        gpu.ctx.bind_to_thread().map_err(derr("cuCtxSetCurrent"))?;
        // SAFETY: a plain C struct and union; all zero is a valid value of each.
        let mut attr: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        attr.id = sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attr.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 {
            x: cluster[0],
            y: cluster[1],
            z: cluster[2],
        };
        let config = sys::CUlaunchConfig {
            gridDimX: cfg.grid_dim.0,
            gridDimY: cfg.grid_dim.1,
            gridDimZ: cfg.grid_dim.2,
            blockDimX: cfg.block_dim.0,
            blockDimY: cfg.block_dim.1,
            blockDimZ: cfg.block_dim.2,
            sharedMemBytes: cfg.shared_mem_bytes,
            hStream: gpu.stream.cu_stream(),
            attrs: &mut attr,
            numAttrs: 1,
        };
        // SAFETY: `config` and `attr` outlive the call; `ptrs` point at the parameters' values,
        // which the driver copies during the call; the caller vouches for the parameters.
        unsafe {
            sys::cuLaunchKernelEx(&config, self.cu(), ptrs.as_mut_ptr(), std::ptr::null_mut())
        }
        .result()
        .map_err(derr("cuLaunchKernelEx (PTX, cluster)"))?;
        gpu.stream
            .synchronize()
            .map_err(derr("cuStreamSynchronize"))
    }
}

/// `stsm_probe(const unsigned *offs, int kind, unsigned *dump)` and `stsm_count(const unsigned
/// *offs, int kind, unsigned *out)` (`kernels/hopper_probe.cu`): one warp, one
/// `stmatrix` (`kind`: the index into [`super::fuzz::STSM_KINDS`]) with lane `l`'s row address
/// `offs[l]` into [`Self::SMEM_BYTES`] of dynamic shared memory. The probe zeroes shared memory
/// first, gives lane `l`'s register `r` the halves `0x8000 | l<<3 | r<<1 | h`, and lists the
/// nonzero 16-bit words afterwards; the count kernel runs the instruction alone (for ncu).
pub struct StsmProbe {
    dump: CudaFunction,
    count: CudaFunction,
}

impl StsmProbe {
    /// Dynamic shared memory of every launch, bytes.
    pub const SMEM_BYTES: u32 = 48 * 1024;

    /// Finds both kernels in `kernels/hopper_probe.cu`'s module.
    ///
    /// # Errors
    /// [`GpuError::Driver`] when one is missing.
    pub fn load(gpu: &Gpu, c: &Compiled) -> Result<StsmProbe, GpuError> {
        Ok(StsmProbe {
            dump: gpu.function(c, "stsm_probe")?,
            count: gpu.function(c, "stsm_count")?,
        })
    }

    /// Runs the probe; returns how many 16-bit words are nonzero afterwards and the first 512 of
    /// them as (byte offset, value), in address order.
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn dump(
        &self,
        gpu: &Gpu,
        offs: &[u32; 32],
        kind: usize,
    ) -> Result<(u32, Vec<(u32, u16)>), GpuError> {
        let s = &gpu.stream;
        let d_offs = s.clone_htod(offs).map_err(derr("cuMemcpyHtoD"))?;
        let mut d_dump = s.alloc_zeros::<u32>(513).map_err(derr("cuMemAlloc"))?;
        let k = kind as i32;
        // SAFETY: arguments match stsm_probe(const unsigned*, int, unsigned*); offs holds 32
        // words, dump 513; row addresses were checked against the shared memory given.
        unsafe {
            s.launch_builder(&self.dump)
                .arg(&d_offs)
                .arg(&k)
                .arg(&mut d_dump)
                .launch(one_warp(Self::SMEM_BYTES))
        }
        .map_err(derr("cuLaunchKernel stsm_probe"))?;
        let d: Vec<u32> = s.clone_dtoh(&d_dump).map_err(derr("cuMemcpyDtoH"))?;
        let n = d[0];
        let words = d[1..=(n.min(512) as usize)]
            .iter()
            .map(|&w| (w >> 16, (w & 0xffff) as u16))
            .collect();
        Ok((n, words))
    }

    /// Runs the instruction alone and waits (one launch for ncu).
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn count(&self, gpu: &Gpu, offs: &[u32; 32], kind: usize) -> Result<(), GpuError> {
        let s = &gpu.stream;
        let d_offs = s.clone_htod(offs).map_err(derr("cuMemcpyHtoD"))?;
        let mut d_out = s.alloc_zeros::<u32>(32).map_err(derr("cuMemAlloc"))?;
        let k = kind as i32;
        // SAFETY: arguments match stsm_count(const unsigned*, int, unsigned*); offs and out
        // hold 32 words.
        unsafe {
            s.launch_builder(&self.count)
                .arg(&d_offs)
                .arg(&k)
                .arg(&mut d_out)
                .launch(one_warp(Self::SMEM_BYTES))
        }
        .map_err(derr("cuLaunchKernel stsm_count"))?;
        s.synchronize().map_err(derr("cuStreamSynchronize"))
    }
}

/// `cpasync_src_count(const unsigned char *src, const unsigned *src_offs, const unsigned *offs,
/// unsigned mask, int kind, unsigned *out)` (`kernels/hopper_probe.cu`): the active lanes of
/// one warp copy with one `cp.async` (`kind`: the index into [`super::fuzz::CP_ASYNC_KINDS`])
/// from `src + src_offs[l]` to shared offset `offs[l]`, then commit and wait.
pub struct CpAsyncProbe(CudaFunction);

impl CpAsyncProbe {
    /// Dynamic shared memory of every launch, bytes.
    pub const SMEM_BYTES: u32 = 48 * 1024;

    /// Finds the kernel in `kernels/hopper_probe.cu`'s module.
    ///
    /// # Errors
    /// [`GpuError::Driver`] when it is missing.
    pub fn load(gpu: &Gpu, c: &Compiled) -> Result<CpAsyncProbe, GpuError> {
        Ok(CpAsyncProbe(gpu.function(c, "cpasync_src_count")?))
    }

    /// Launches once and waits. `src` must hold every `src_offs[l] + size` bytes.
    ///
    /// # Errors
    /// [`GpuError::Unsupported`] for a source offset past `src`; [`GpuError::Driver`].
    pub fn run(
        &self,
        gpu: &Gpu,
        src: &DeviceBuffer,
        (src_offs, offs): (&[u32; 32], &[u32; 32]),
        mask: u32,
        kind: usize,
    ) -> Result<(), GpuError> {
        let len = src.0.len() as u64;
        if let Some(o) = src_offs.iter().find(|&&o| o as u64 + 16 > len) {
            return Err(GpuError::Unsupported(format!(
                "cp.async source offset {o} is outside the {len}-byte source buffer"
            )));
        }
        let s = &gpu.stream;
        let d_src_offs = s.clone_htod(src_offs).map_err(derr("cuMemcpyHtoD"))?;
        let d_offs = s.clone_htod(offs).map_err(derr("cuMemcpyHtoD"))?;
        let mut d_out = s.alloc_zeros::<u32>(32).map_err(derr("cuMemAlloc"))?;
        let k = kind as i32;
        // SAFETY: arguments match cpasync_src_count(const unsigned char*, const unsigned*,
        // const unsigned*, unsigned, int, unsigned*); every source offset + 16 lies in `src`
        // (checked above), shared offsets were checked against the shared memory given, out
        // holds 32 words.
        unsafe {
            s.launch_builder(&self.0)
                .arg(&src.0)
                .arg(&d_src_offs)
                .arg(&d_offs)
                .arg(&mask)
                .arg(&k)
                .arg(&mut d_out)
                .launch(one_warp(Self::SMEM_BYTES))
        }
        .map_err(derr("cuLaunchKernel cpasync_src_count"))?;
        s.synchronize().map_err(derr("cuStreamSynchronize"))
    }
}

/// A `CUtensorMap` as the kernel parameter takes it (128 bytes, by value).
pub type TensorMap = [u64; 16];

/// `tma_probe(const __grid_constant__ TmaMap map, int x0, int y0, unsigned dst_off, unsigned
/// nbytes, unsigned char *out, unsigned out_bytes)` (`kernels/hopper_probe.cu`): one CTA of 128
/// threads fills `out_bytes` of shared memory (from a 1024-byte aligned base) with `0xA5`, one
/// thread copies the box at element coordinates `(x0, y0)` to `base + dst_off` with
/// `cp.async.bulk.tensor.2d` (mbarrier, `nbytes` expected), and the block copies the
/// `out_bytes` back.
pub struct TmaProbe(CudaFunction);

impl TmaProbe {
    /// Dynamic shared memory of every launch, bytes (64 KiB and the alignment slack).
    pub const SMEM_BYTES: u32 = 64 * 1024 + 1024;

    /// Finds the kernel and allows it [`Self::SMEM_BYTES`] of dynamic shared memory.
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn load(gpu: &Gpu, c: &Compiled) -> Result<TmaProbe, GpuError> {
        let f = gpu.function(c, "tma_probe")?;
        f.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            Self::SMEM_BYTES as i32,
        )
        .map_err(derr("cuFuncSetAttribute"))?;
        Ok(TmaProbe(f))
    }

    /// `cuTensorMapEncodeTiled` of a 2-D tensor at `global` (row-major, `dims = [columns, rows]`
    /// in elements of `elem_bytes` = 1, 2 or 4 bytes, rows `row_stride` bytes apart), box `[box
    /// columns, box rows]`, `swizzle`; no interleave, no L2 promotion, zero fill. `Ok(Err(..))`
    /// names the driver's refusal (a result the checks compare with the model, not an error).
    ///
    /// # Errors
    /// [`GpuError::Unsupported`] for another element size.
    pub fn encode(
        gpu: &Gpu,
        global: &DeviceBuffer,
        elem_bytes: u32,
        dims: [u64; 2],
        row_stride: u64,
        box_dims: [u32; 2],
        swizzle: TmaSwizzle,
    ) -> Result<Result<TensorMap, String>, GpuError> {
        use cudarc::driver::sys::{
            self, CUresult, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
            CUtensorMapL2promotion, CUtensorMapSwizzle,
        };
        let dt = match elem_bytes {
            1 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
            2 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT16,
            4 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT32,
            e => {
                return Err(GpuError::Unsupported(format!(
                    "TMA element size {e} bytes; the probe takes 1, 2 or 4"
                )));
            }
        };
        let sw = match swizzle {
            TmaSwizzle::None => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            TmaSwizzle::B32 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            TmaSwizzle::B64 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            TmaSwizzle::B128 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        };
        gpu.ctx.bind_to_thread().map_err(derr("cuCtxSetCurrent"))?;
        // The driver wants the map 64-byte aligned: cudarc's CUtensorMap is (128 for CUDA 13).
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        let strides = [row_stride];
        let elem_strides = [1u32, 1];
        // SAFETY: `map` is a writable, aligned CUtensorMap; the dimension, stride, box and
        // element-stride arrays hold rank (2) or rank - 1 entries; `global` is a live device
        // allocation whose address the driver only records.
        let r = unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut map,
                dt,
                2,
                global.addr(gpu) as *mut std::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                box_dims.as_ptr(),
                elem_strides.as_ptr(),
                CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                sw,
                CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        };
        Ok(if r == CUresult::CUDA_SUCCESS {
            Ok(map.opaque)
        } else {
            Err(super::cu_name(r))
        })
    }

    /// Launches the probe with `map` (from [`Self::encode`], over memory that is still alive)
    /// and returns the `out_bytes` of shared memory from the aligned base.
    ///
    /// # Errors
    /// [`GpuError::Unsupported`] when `out_bytes` does not fit; [`GpuError::Driver`].
    pub fn run(
        &self,
        gpu: &Gpu,
        map: &TensorMap,
        (x0, y0): (i32, i32),
        dst_off: u32,
        nbytes: u32,
        out_bytes: u32,
    ) -> Result<Vec<u8>, GpuError> {
        if out_bytes > Self::SMEM_BYTES - 1024 {
            return Err(GpuError::Unsupported(format!(
                "{out_bytes} bytes of shared memory read back; the probe has {}",
                Self::SMEM_BYTES - 1024
            )));
        }
        let s = &gpu.stream;
        let mut d_out = s
            .alloc_zeros::<u8>(out_bytes as usize)
            .map_err(derr("cuMemAlloc"))?;
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: Self::SMEM_BYTES,
        };
        // SAFETY: arguments match tma_probe(TmaMap (128 bytes by value), int, int, unsigned,
        // unsigned, unsigned char*, unsigned); the map describes live device memory; out holds
        // out_bytes, which fit the shared memory given past the alignment slack.
        unsafe {
            s.launch_builder(&self.0)
                .arg(map)
                .arg(&x0)
                .arg(&y0)
                .arg(&dst_off)
                .arg(&nbytes)
                .arg(&mut d_out)
                .arg(&out_bytes)
                .launch(cfg)
        }
        .map_err(derr("cuLaunchKernel tma_probe"))?;
        s.clone_dtoh(&d_out).map_err(derr("cuMemcpyDtoH"))
    }
}

/// `fa3_fwd(Fa3Map mq, Fa3Map mk, Fa3Map mv, Fa3Map mo, int seq, int bh, float softmax_scale,
/// unsigned *sched)` (`kernels/fa3_fwd.cu`, sm_90a): the Hopper FlashAttention forward, 384
/// threads per CTA, a persistent grid whose CTAs claim tiles from `sched[0]` (two `u32` words,
/// zero before the first launch; the kernel zeroes them again as it ends, so one buffer serves
/// every launch). Q, K, V, O are `[bh, seq, d]` of 2-byte elements (f16 or bf16, as the
/// variant was compiled), each seen by its tensor map as `[bh·seq rows, d columns]`, box `{64,
/// 128}` (`{64, 64}` for O), 128-byte swizzle, as `scripts/bench_fa3.py` encodes them.
pub struct Fa3Fwd {
    f: CudaFunction,
    smem_bytes: u32,
    sched: DeviceBuffer,
}

impl Fa3Fwd {
    /// Finds `fa3_fwd` in `c` and allows it `smem_bytes` of dynamic shared memory
    /// (`FA3_SMEM_BYTES` + 1024 for the alignment).
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn load(gpu: &Gpu, c: &Compiled, smem_bytes: u32) -> Result<Fa3Fwd, GpuError> {
        let f = gpu.function(c, "fa3_fwd")?;
        f.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            smem_bytes as i32,
        )
        .map_err(derr("cuFuncSetAttribute"))?;
        let sched = DeviceBuffer::zeroed(gpu, 8)?;
        Ok(Fa3Fwd {
            f,
            smem_bytes,
            sched,
        })
    }

    /// The tile scheduler's two words (`sched[0]`: tiles claimed beyond the first `grid`,
    /// `sched[1]`: CTAs done) as they are now: `[0, 0]` after every complete launch.
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn sched_words(&self, gpu: &Gpu) -> Result<[u32; 2], GpuError> {
        let b = self.sched.to_host(gpu)?;
        Ok([
            u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        ])
    }

    /// The device's SM count (`CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`): the persistent
    /// grid is `min(tiles, SMs)`.
    ///
    /// # Errors
    /// [`GpuError::Driver`].
    pub fn sms(gpu: &Gpu) -> Result<u32, GpuError> {
        let n = gpu
            .ctx
            .attribute(
                cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            )
            .map_err(derr("cuDeviceGetAttribute"))?;
        Ok(n.max(1) as u32)
    }

    /// Runs the kernel on `[q, k, v]` (raw 2-byte values, `bh·seq·d` each) with `grid` CTAs;
    /// returns O's raw values.
    ///
    /// # Errors
    /// [`GpuError::Unsupported`] for inputs of the wrong length, a shape the kernel does not
    /// take (`seq` not a multiple of 128, `d` not 64 or 128) or a tensor map the driver refuses;
    /// [`GpuError::Driver`].
    pub fn run(
        &self,
        gpu: &Gpu,
        [q, k, v]: [&[u16]; 3],
        (bh, seq, d): (u32, u32, u32),
        scale: f32,
        grid: u32,
    ) -> Result<Vec<u16>, GpuError> {
        let n = (bh as usize) * (seq as usize) * (d as usize);
        if !seq.is_multiple_of(128) || seq == 0 || (d != 64 && d != 128) || grid == 0 {
            return Err(GpuError::Unsupported(format!(
                "fa3_fwd with seq {seq}, d {d}, grid {grid}: needs seq a multiple of 128, d 64 or 128"
            )));
        }
        if [q, k, v].iter().any(|x| x.len() != n) {
            return Err(GpuError::Unsupported(format!(
                "fa3_fwd inputs of {}, {}, {} values; bh·seq·d = {n}",
                q.len(),
                k.len(),
                v.len()
            )));
        }
        let bytes = |x: &[u16]| x.iter().flat_map(|w| w.to_le_bytes()).collect::<Vec<u8>>();
        let bufs = [
            DeviceBuffer::from_host(gpu, &bytes(q))?,
            DeviceBuffer::from_host(gpu, &bytes(k))?,
            DeviceBuffer::from_host(gpu, &bytes(v))?,
            DeviceBuffer::zeroed(gpu, 2 * n)?,
        ];
        let rows = u64::from(bh) * u64::from(seq);
        let mut maps = [[0u64; 16]; 4];
        for (i, (buf, box_rows)) in bufs.iter().zip([128u32, 128, 128, 64]).enumerate() {
            maps[i] = TmaProbe::encode(
                gpu,
                buf,
                2,
                [u64::from(d), rows],
                u64::from(d) * 2,
                [64, box_rows],
                TmaSwizzle::B128,
            )?
            .map_err(|why| {
                GpuError::Unsupported(format!("cuTensorMapEncodeTiled refused map {i}: {why}"))
            })?;
        }
        let (seq_i, bh_i) = (seq as i32, bh as i32);
        let cfg = LaunchConfig {
            grid_dim: (grid, 1, 1),
            block_dim: (384, 1, 1),
            shared_mem_bytes: self.smem_bytes,
        };
        let s = &gpu.stream;
        // SAFETY: arguments match fa3_fwd(Fa3Map x4 (128 bytes each, by value), int, int,
        // float, unsigned *: the 8-byte scheduler buffer of this Fa3Fwd); the maps describe the four live buffers of bh·seq·d 2-byte elements (O's
        // boxes of 64 rows stay inside it since seq is a multiple of 128); the dynamic shared
        // memory was allowed by load.
        unsafe {
            s.launch_builder(&self.f)
                .arg(&maps[0])
                .arg(&maps[1])
                .arg(&maps[2])
                .arg(&maps[3])
                .arg(&seq_i)
                .arg(&bh_i)
                .arg(&scale)
                .arg(&self.sched.0)
                .launch(cfg)
        }
        .map_err(derr("cuLaunchKernel fa3_fwd"))?;
        let out = bufs[3].to_host(gpu)?;
        Ok(out
            .chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect())
    }
}

/// The kernels of `kernels/wgmma_probe.cu` (`wgmma_n<N>_<f16|bf16>_<ss|rs>_t<A><B>`, sm_90a):
/// `(const uint4 *img, unsigned img_words16, const unsigned long long *desc, int kblocks, const
/// unsigned *aregs, float *out)`, one warpgroup (128 threads): the image is copied to dynamic
/// shared memory from a 1024-byte aligned base, then `kblocks` wgmma with descriptors
/// `desc[2kb]` (A) and `desc[2kb + 1]` (B) (start addresses relative to the base), A from
/// registers `aregs[(kb*128 + thread)*4 + j]` for `rs` kernels; `out[thread*(N/2) + i]` = the
/// accumulators.
pub struct WgmmaProbe;

impl WgmmaProbe {
    /// The kernel's name for N, input type, A from registers or not, and the transposes
    /// (`imm-trans-a`, `imm-trans-b`: 1 for MN-major; A's is 0 when it comes from registers).
    pub fn kernel_name(n: u32, dtype: MmaDtype, a_regs: bool, ta: u32, tb: u32) -> String {
        format!(
            "wgmma_n{n}_{}_{}_t{}{tb}",
            dtype.name(),
            if a_regs { "rs" } else { "ss" },
            if a_regs { 0 } else { ta }
        )
    }

    /// Runs kernel `name` of `c` on the shared-memory image `img` (a multiple of 16 bytes) with
    /// the descriptors `desc` (two per k block) and, for `rs` kernels, A registers `aregs` (`kb
    /// * 128 * 4` words); returns the 128 threads' `n / 2` accumulators, thread-major.
    ///
    /// # Errors
    /// [`GpuError::Unsupported`] for an image that is not whole 16-byte words or too large,
    /// descriptors or registers of the wrong count; [`GpuError::Driver`].
    pub fn run(
        gpu: &Gpu,
        c: &Compiled,
        name: &str,
        (img, desc, aregs): (&[u8], &[u64], Option<&[u32]>),
        n: u32,
    ) -> Result<Vec<f32>, GpuError> {
        let kblocks = desc.len() / 2;
        let bad = |what: String| Err(GpuError::Unsupported(what));
        if img.is_empty() || img.len() % 16 != 0 || img.len() > 200 * 1024 {
            return bad(format!("wgmma image of {} bytes", img.len()));
        }
        if desc.len() % 2 != 0 || kblocks == 0 {
            return bad(format!(
                "{} wgmma descriptors (two per k block)",
                desc.len()
            ));
        }
        if aregs.is_some_and(|a| a.len() != kblocks * 128 * 4) {
            return bad(format!("A registers for {kblocks} k blocks"));
        }
        let f = gpu.function(c, name)?;
        let dyn_smem = img.len() as u32 + 1024;
        f.set_attribute(
            CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            dyn_smem as i32,
        )
        .map_err(derr("cuFuncSetAttribute"))?;
        let s = &gpu.stream;
        let d_img = s.clone_htod(img).map_err(derr("cuMemcpyHtoD"))?;
        let d_desc = s.clone_htod(desc).map_err(derr("cuMemcpyHtoD"))?;
        let d_a = match aregs {
            Some(a) => Some(s.clone_htod(a).map_err(derr("cuMemcpyHtoD"))?),
            None => None,
        };
        let mut d_out = s
            .alloc_zeros::<f32>(128 * (n / 2) as usize)
            .map_err(derr("cuMemAlloc"))?;
        let (words, kb) = ((img.len() / 16) as u32, kblocks as i32);
        let null = 0u64;
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: dyn_smem,
        };
        let mut b = s.launch_builder(&f);
        b.arg(&d_img).arg(&words).arg(&d_desc).arg(&kb);
        match &d_a {
            Some(a) => b.arg(a),
            None => b.arg(&null),
        };
        b.arg(&mut d_out);
        // SAFETY: arguments match the kernels' (const uint4*, unsigned, const unsigned long
        // long*, int, const unsigned*, float*); img holds `words` 16-byte words (the dynamic
        // shared memory has them plus the alignment slack), desc two per k block, aregs (or
        // null for ss kernels, which do not read it) kblocks*128*4 words, out 128 * n/2 floats.
        unsafe { b.launch(cfg) }.map_err(derr("cuLaunchKernel wgmma"))?;
        s.clone_dtoh(&d_out).map_err(derr("cuMemcpyDtoH"))
    }
}

/// The arguments of `cuTensorMapEncodeTiled` (CUDA driver API, "Tensor Map Object Management")
/// for a [`crate::sim::tma::TensorMap`], as `verify --ptx` passes them: `tensorDataType`,
/// `tensorRank`, `globalDim` (elements, innermost first), `globalStrides` (bytes, dimensions
/// 1..rank), `boxDim` (elements), `elementStrides` (all 1), `swizzle`; interleave
/// `CU_TENSOR_MAP_INTERLEAVE_NONE`, L2 promotion `CU_TENSOR_MAP_L2_PROMOTION_NONE`, OOB fill
/// `CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE` (out-of-bounds elements read as zeros), as
/// `tilelab ptx` models them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorMapEncode {
    /// `tensorDataType`.
    pub dtype: cudarc::driver::sys::CUtensorMapDataType,
    /// `tensorRank`, 1..=5.
    pub rank: u32,
    /// `globalDim`, elements (`rank` entries).
    pub dims: Vec<u64>,
    /// `globalStrides`, bytes (`rank - 1` entries).
    pub strides: Vec<u64>,
    /// `boxDim`, elements (`rank` entries).
    pub box_dims: Vec<u32>,
    /// `elementStrides` (`rank` entries, all 1).
    pub elem_strides: Vec<u32>,
    /// `swizzle`.
    pub swizzle: cudarc::driver::sys::CUtensorMapSwizzle,
}

impl TensorMapEncode {
    /// The driver's arguments for `map` (already checked by `sim::tma::TensorMap::new`'s rules).
    pub fn of(map: &crate::sim::tma::TensorMap) -> TensorMapEncode {
        use crate::sim::tma::TmaDtype as D;
        use cudarc::driver::sys::{CUtensorMapDataType as T, CUtensorMapSwizzle as S};
        let dtype = match map.dtype {
            D::U8 => T::CU_TENSOR_MAP_DATA_TYPE_UINT8,
            D::U16 => T::CU_TENSOR_MAP_DATA_TYPE_UINT16,
            D::U32 => T::CU_TENSOR_MAP_DATA_TYPE_UINT32,
            D::S32 => T::CU_TENSOR_MAP_DATA_TYPE_INT32,
            D::U64 => T::CU_TENSOR_MAP_DATA_TYPE_UINT64,
            D::S64 => T::CU_TENSOR_MAP_DATA_TYPE_INT64,
            D::F16 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            D::F32 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            D::F64 => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
            D::Bf16 => T::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            D::F32Ftz => T::CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ,
            D::Tf32 => T::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
            D::Tf32Ftz => T::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ,
        };
        let swizzle = match map.swizzle {
            TmaSwizzle::None => S::CU_TENSOR_MAP_SWIZZLE_NONE,
            TmaSwizzle::B32 => S::CU_TENSOR_MAP_SWIZZLE_32B,
            TmaSwizzle::B64 => S::CU_TENSOR_MAP_SWIZZLE_64B,
            TmaSwizzle::B128 => S::CU_TENSOR_MAP_SWIZZLE_128B,
        };
        let r = map.rank;
        TensorMapEncode {
            dtype,
            rank: r as u32,
            dims: map.dims[..r].to_vec(),
            strides: map.strides[1..r].to_vec(),
            box_dims: map.box_dims[..r].to_vec(),
            elem_strides: vec![1; r],
            swizzle,
        }
    }

    /// Encodes the map over the tensor at device address `global` (`cuTensorMapEncodeTiled`):
    /// the 128 bytes of the `CUtensorMap`, to be placed in the kernel's parameter.
    ///
    /// # Errors
    /// [`GpuError::Driver`] naming the driver's refusal (`CUDA_ERROR_INVALID_VALUE`) and the
    /// arguments.
    pub fn encode(&self, gpu: &Gpu, global: u64) -> Result<[u8; 128], GpuError> {
        use cudarc::driver::sys::{
            self, CUresult, CUtensorMapFloatOOBfill, CUtensorMapInterleave, CUtensorMapL2promotion,
        };
        let r = self.rank as usize;
        if !(1..=5).contains(&r)
            || self.dims.len() != r
            || self.strides.len() + 1 != r
            || self.box_dims.len() != r
            || self.elem_strides.len() != r
        {
            return Err(GpuError::Unsupported(format!(
                "a tensor map of rank {r} with {} dims, {} strides, {} box dims; cuTensorMapEncodeTiled takes rank 1..=5, rank dims, rank - 1 strides",
                self.dims.len(),
                self.strides.len(),
                self.box_dims.len()
            )));
        }
        gpu.ctx.bind_to_thread().map_err(derr("cuCtxSetCurrent"))?;
        let mut map = sys::CUtensorMap { opaque: [0; 16] };
        // SAFETY: `map` is a writable, aligned CUtensorMap; the dimension, box and
        // element-stride arrays hold `rank` entries and the stride array `rank - 1` (checked
        // above); `global` is the address of a live device allocation, which the driver only
        // records.
        let res = unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut map,
                self.dtype,
                self.rank,
                global as *mut c_void,
                self.dims.as_ptr(),
                self.strides.as_ptr(),
                self.box_dims.as_ptr(),
                self.elem_strides.as_ptr(),
                CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                self.swizzle,
                CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
                CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        };
        if res != CUresult::CUDA_SUCCESS {
            return Err(GpuError::Driver(
                "cuTensorMapEncodeTiled",
                format!(
                    "{} (dims {:?}, strides {:?} bytes, box {:?}, {:?})",
                    super::cu_name(res),
                    self.dims,
                    self.strides,
                    self.box_dims,
                    self.swizzle
                ),
            ));
        }
        let mut out = [0u8; 128];
        for (k, q) in map.opaque.iter().enumerate() {
            out[8 * k..8 * k + 8].copy_from_slice(&q.to_le_bytes());
        }
        Ok(out)
    }
}
