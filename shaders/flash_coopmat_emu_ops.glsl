// Test-only emulated matrices shared by flash_coopmat_emu.comp and
// flash_coopmat_rs_emu.comp: EMU x EMU arrays held whole by every invocation
// (struct emu_h for f16 operands, emu_f for f32 accumulators, both declared by
// the including file). Included after the flash body, whose tile_sh they read.
// EMU_INNER_UNROLL (the backward's build: [[unroll]]) unrolls their inner loops:
// lavapipe ends every loop of an invocation after 65535 iterations in all (its
// infinite-loop guard), and the backward's dQ by atomics, rolled, spent that on a
// few tiles (a multiply per key step of every dQ matrix of every tile). The
// forward builds keep them rolled (the same SPIR-V, compile times and caches).
// EMU_OUTER_UNROLL (the backward's build too) unrolls the row loops as well: the
// guard still cut dK/dV's 16th tile at D=128 (the test's MQA with dQ by atomics)
// with 8 trips a row loop per multiply and load.
#ifndef FLASH_COOPMAT_EMU_OPS_GLSL
#define FLASH_COOPMAT_EMU_OPS_GLSL

#ifndef EMU_INNER_UNROLL
#define EMU_INNER_UNROLL
#endif
#ifndef EMU_OUTER_UNROLL
#define EMU_OUTER_UNROLL
#endif

emu_f emu_zero()
{
    emu_f m;
    EMU_INNER_UNROLL for (uint i = 0u; i < EMU * EMU; ++i) m.v[i] = 0.0;
    return m;
}

float half_at(uint h) // h-th f16 of tile_sh
{
    uint word = tile_sh[h / 8u][(h % 8u) / 2u];
    return unpackHalf2x16(word)[h % 2u];
}

// f16 matrices (A, B) from uvec4 memory: offset and stride in uvec4 units
void emu_load(out emu_h m, uint off, uint stride, bool col_major)
{
    EMU_OUTER_UNROLL for (uint r = 0u; r < EMU; ++r)
        EMU_INNER_UNROLL for (uint c = 0u; c < EMU; ++c)
            m.v[r * EMU + c] = col_major ? half_at((off + c * stride) * 8u + r) : half_at((off + r * stride) * 8u + c);
}

emu_f emu_mad(emu_h a, emu_h b, emu_f c)
{
    EMU_OUTER_UNROLL for (uint r = 0u; r < EMU; ++r)
        EMU_INNER_UNROLL for (uint n = 0u; n < EMU; ++n) {
            float acc = c.v[r * EMU + n];
            EMU_INNER_UNROLL for (uint k = 0u; k < EMU; ++k) acc += a.v[r * EMU + k] * b.v[k * EMU + n];
            c.v[r * EMU + n] = acc;
        }
    return c;
}

// f32 matrices into uvec4 memory, offset and stride in uvec4 units (4 floats); every lane
// writes the same values
void emu_store(emu_f m, uint off, uint stride)
{
    EMU_OUTER_UNROLL for (uint r = 0u; r < EMU; ++r)
        EMU_INNER_UNROLL for (uint c = 0u; c < EMU; ++c) {
            uint f = (off + r * stride) * 4u + c;
            tile_sh[f / 4u][f % 4u] = floatBitsToUint(m.v[r * EMU + c]);
        }
}

#endif
