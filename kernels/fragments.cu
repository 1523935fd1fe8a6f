// Fragment dumps for `tilelab verify`: what the hardware puts in each lane's registers.
//
// ldsm_dump: fills dynamic shared memory with b16 index values (the 16-bit word at byte 2i
// holds i, CuTe ldsm.cu style), then every lane gives the row address offs[lane] and the warp
// executes one ldmatrix; out[lane*4 + r] = destination register r.
//   kind: 0 x1, 1 x2, 2 x4, 3 x1.trans, 4 x2.trans, 5 x4.trans
//
// mma_dump: each lane loads its A/B/C registers as packed by the simulator's fragment tables,
// the warp executes one mma.sync, and d[lane*4 + r] = D register r.
//   kind: 0 m16n8k16 f16, 1 m16n8k16 bf16, 2 m16n8k8 f16
extern "C" __global__ void ldsm_dump(const unsigned *offs, int kind, unsigned n_b16, unsigned *out)
{
    extern __shared__ __align__(16) unsigned short sm16[];
    unsigned lane = threadIdx.x & 31;
    for (unsigned i = lane; i < n_b16; i += 32) sm16[i] = (unsigned short)i;
    __syncwarp();
    unsigned addr = (unsigned)__cvta_generic_to_shared(sm16) + offs[lane];
    unsigned r0 = 0, r1 = 0, r2 = 0, r3 = 0;
    switch (kind) {
    case 0: asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(addr)); break;
    case 1: asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr)); break;
    case 2: asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr)); break;
    case 3: asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r0) : "r"(addr)); break;
    case 4: asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];" : "=r"(r0), "=r"(r1) : "r"(addr)); break;
    case 5: asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];" : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3) : "r"(addr)); break;
    default: break;
    }
    out[lane * 4 + 0] = r0;
    out[lane * 4 + 1] = r1;
    out[lane * 4 + 2] = r2;
    out[lane * 4 + 3] = r3;
}

extern "C" __global__ void mma_dump(int kind, const unsigned *a, const unsigned *b, const float *c, float *d)
{
    unsigned lane = threadIdx.x & 31;
    const unsigned *ar = a + lane * 4;
    const unsigned *br = b + lane * 2;
    const float *cr = c + lane * 4;
    float d0 = 0.f, d1 = 0.f, d2 = 0.f, d3 = 0.f;
    switch (kind) {
    case 0:
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                     : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                     : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]),
                       "f"(cr[0]), "f"(cr[1]), "f"(cr[2]), "f"(cr[3]));
        break;
    case 1:
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};"
                     : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                     : "r"(ar[0]), "r"(ar[1]), "r"(ar[2]), "r"(ar[3]), "r"(br[0]), "r"(br[1]),
                       "f"(cr[0]), "f"(cr[1]), "f"(cr[2]), "f"(cr[3]));
        break;
    case 2:
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};"
                     : "=f"(d0), "=f"(d1), "=f"(d2), "=f"(d3)
                     : "r"(ar[0]), "r"(ar[1]), "r"(br[0]),
                       "f"(cr[0]), "f"(cr[1]), "f"(cr[2]), "f"(cr[3]));
        break;
    default: break;
    }
    d[lane * 4 + 0] = d0;
    d[lane * 4 + 1] = d1;
    d[lane * 4 + 2] = d2;
    d[lane * 4 + 3] = d3;
}
