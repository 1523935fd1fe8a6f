// Single-warp shared-memory probe: every lane executes (at most) one shared-memory
// instruction at its own byte offset, so Nsight Compute's wavefront counters for one
// launch describe exactly one warp request. Used by `tilelab verify` (wavefront checks).
//
// kind: 0 ld.shared.u8, 1 ld.shared.u16, 2 ld.shared.b32, 3 ld.shared.v2.b32, 4 ld.shared.v4.b32,
//       5 st.shared.u8, 6 st.shared.u16, 7 st.shared.b32, 8 st.shared.v2.b32, 9 st.shared.v4.b32,
//       10 ldmatrix.x1, 11 ldmatrix.x2, 12 ldmatrix.x4, 13 ldmatrix.x1.trans, 14 ldmatrix.x2.trans,
//       15 ldmatrix.x4.trans
// offs: 32 byte offsets into dynamic shared memory; mask: active lanes (bit i = lane i).
extern "C" __global__ void smem_probe(const unsigned *offs, unsigned mask, int kind, unsigned *out)
{
    extern __shared__ __align__(16) unsigned char smem[];
    unsigned lane = threadIdx.x & 31;
    unsigned addr = (unsigned)__cvta_generic_to_shared(smem) + offs[lane];
    unsigned r0 = 0, r1 = 0, r2 = 0, r3 = 0;
    unsigned v = lane * 0x01010101u + 1u;
    if (kind >= 10) {
        // ldmatrix is .sync.aligned: the whole warp executes it.
        switch (kind) {
        case 10: asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(addr) : "memory"); break;
        case 11: asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr) : "memory"); break;
        case 12: asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory"); break;
        case 13: asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(addr) : "memory"); break;
        case 14: asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr) : "memory"); break;
        case 15: asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory"); break;
        default: break;
        }
    } else if ((mask >> lane) & 1u) {
        switch (kind) {
        case 0: asm volatile("ld.shared.u8 %0, [%1];" : "=r"(r0) : "r"(addr) : "memory"); break;
        case 1: asm volatile("ld.shared.u16 %0, [%1];" : "=r"(r0) : "r"(addr) : "memory"); break;
        case 2: asm volatile("ld.shared.b32 %0, [%1];" : "=r"(r0) : "r"(addr) : "memory"); break;
        case 3: asm volatile("ld.shared.v2.b32 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr) : "memory"); break;
        case 4: asm volatile("ld.shared.v4.b32 {%0,%1,%2,%3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr) : "memory"); break;
        case 5: asm volatile("st.shared.u8 [%0], %1;" :: "r"(addr), "r"(v) : "memory"); break;
        case 6: asm volatile("st.shared.u16 [%0], %1;" :: "r"(addr), "r"(v) : "memory"); break;
        case 7: asm volatile("st.shared.b32 [%0], %1;" :: "r"(addr), "r"(v) : "memory"); break;
        case 8: asm volatile("st.shared.v2.b32 [%0], {%1,%2};" :: "r"(addr), "r"(v), "r"(v + 1u) : "memory"); break;
        case 9: asm volatile("st.shared.v4.b32 [%0], {%1,%2,%3,%4};" :: "r"(addr), "r"(v), "r"(v + 1u), "r"(v + 2u), "r"(v + 3u) : "memory"); break;
        default: break;
        }
    }
    out[lane] = r0 ^ r1 ^ r2 ^ r3;
}
