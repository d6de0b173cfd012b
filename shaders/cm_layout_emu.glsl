// Test-only emulated layout for the register-softmax bodies (CM_* macros, see
// flash_coopmat_rs_body.glsl): each "matrix" an 8x8 (EMU_MS: 16x16) array held whole by every
// invocation, so every lane owns all 8 rows, no cross-lane reduction, lane 0
// writes. The including file adds flash_coopmat_emu_ops.glsl after its body.
// Included first, never compiled alone.
#ifndef EMU_MS
#define EMU_MS 8u // the direct K/V operands' emulation takes NVIDIA's 16 (flash_decode_direct_emu.comp)
#endif
#define CM_EMULATED 1
#ifndef EMU_INNER_UNROLL
#define EMU_INNER_UNROLL // flash_coopmat_emu_ops.glsl says when an includer unrolls
#endif
const uint EMU = EMU_MS;
struct emu_h { float v[EMU_MS * EMU_MS]; }; // f16 operand (A, B): values rounded to f16
struct emu_f { float v[EMU_MS * EMU_MS]; }; // f32 accumulator

#define CM_A emu_h
#define CM_B emu_h
#define CM_C emu_f
#define CM_C_ZERO emu_zero()
#define CM_LOAD_ROW(m, buf, off, stride) emu_load(m, off, stride, false)
#define CM_LOAD_COL(m, buf, off, stride) emu_load(m, off, stride, true)
#define CM_MAD(a, b, c) emu_mad(a, b, c)
#define CM_A_FROM_C(c) emu_to_f16(c)
#define CM_AT(m, e) (m).v[e]

// element loops stay loops: unrolling 64 elements per matrix takes lavapipe minutes to compile
#define CM_ELEM_LOOP [[dont_unroll]]
#define CM_LEN (EMU_MS * EMU_MS)
#define CM_SLOTS EMU_MS
#define CM_SLOT(e) ((e) / EMU_MS)
#define CM_SLOT_ROW(lane, s) (s)
#define CM_COL(lane, e) ((e) % EMU_MS)
#define CM_ROW_MAX(x) (x)
#define CM_ROW_SUM(x) (x)
#define CM_ROW_LEADER(lane) ((lane) == 0u)
#define CM_WRITES(lane) ((lane) == 0u)

emu_f emu_zero();
void emu_load(out emu_h m, uint off, uint stride, bool col_major);
emu_f emu_mad(emu_h a, emu_h b, emu_f c);

emu_h emu_to_f16(emu_f c)
{
    emu_h m;
    EMU_INNER_UNROLL for (uint i = 0u; i < EMU * EMU; ++i) m.v[i] = unpackHalf2x16(packHalf2x16(vec2(c.v[i], 0.0))).x;
    return m;
}

