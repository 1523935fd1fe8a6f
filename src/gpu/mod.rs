//! GPU side (cudarc, driver and NVRTC loaded at run time). Filled in by the verify work.
