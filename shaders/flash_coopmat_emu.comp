#version 450
// Test-only: the cooperative-matrix algorithm (flash_coopmat_body.glsl) on any
// device, with each "matrix" an 8x8 array held whole by every invocation of
// the subgroup (so its layout is known and nothing is shared). Slow; it lets
// lavapipe check the tiling, staging, masking and split logic that the
// tensor-core variants share. Run with MM = MN = MK = 8.
#extension GL_GOOGLE_include_directive : require

const uint EMU = 8u;
struct emu_h { float v[64]; }; // f16 operand (A, B)
struct emu_f { float v[64]; }; // f32 accumulator

#define CM_A emu_h
#define CM_B emu_h
#define CM_C emu_f
#define CM_C_ZERO emu_zero()
#define CM_LOAD_ROW(m, buf, off, stride) emu_load(m, off, stride, false)
#define CM_LOAD_COL(m, buf, off, stride) emu_load(m, off, stride, true)
#define CM_STORE_ROW(m, buf, off, stride) emu_store(m, off, stride)
#define CM_MAD(a, b, c) emu_mad(a, b, c)
#define CM_ADD(a, b) emu_add(a, b)

emu_f emu_zero();
void emu_load(out emu_h m, uint off, uint stride, bool col_major);
void emu_load(out emu_f m, uint off, uint stride, bool col_major);
void emu_store(emu_f m, uint off, uint stride);
emu_f emu_mad(emu_h a, emu_h b, emu_f c);
emu_f emu_add(emu_f a, emu_f b);

#include "flash_coopmat_body.glsl"

#include "flash_coopmat_emu_ops.glsl"

// f32 matrices (accumulators): 4 floats per uvec4
void emu_load(out emu_f m, uint off, uint stride, bool col_major)
{
    for (uint r = 0u; r < EMU; ++r)
        for (uint c = 0u; c < EMU; ++c) {
            uint f = col_major ? (off + c * stride) * 4u + r : (off + r * stride) * 4u + c;
            m.v[r * EMU + c] = uintBitsToFloat(tile_sh[f / 4u][f % 4u]);
        }
}

emu_f emu_add(emu_f a, emu_f b)
{
    for (uint i = 0u; i < 64u; ++i) a.v[i] += b.v[i];
    return a;
}
