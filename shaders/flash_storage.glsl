// Storage type of Q/K/V/O for the shaders whose arithmetic is f32: tensors
// are read and written four elements at a time as vec4. ELEM_F32 uses f32
// buffers; ELEM_F16 and ELEM_BF16 read packed 16-bit pairs from uint words,
// so neither needs 16-bit storage support on the device.
#ifndef FLASH_STORAGE_GLSL
#define FLASH_STORAGE_GLSL

#if defined(ELEM_F32)
#define ELEM4 vec4
vec4 elem_to_vec4(vec4 v) { return v; }
vec4 vec4_to_elem(vec4 v) { return v; }
#elif defined(ELEM_F16)
#define ELEM4 uvec2
vec4 elem_to_vec4(uvec2 u) { return vec4(unpackHalf2x16(u.x), unpackHalf2x16(u.y)); }
uvec2 vec4_to_elem(vec4 v) { return uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw)); }
#elif defined(ELEM_BF16)
#define ELEM4 uvec2
vec2 bf16x2_to_vec2(uint u) { return vec2(uintBitsToFloat(u << 16), uintBitsToFloat(u & 0xffff0000u)); }
uint bf16_round(float f)
{
    uint b = floatBitsToUint(f);
    if ((b & 0x7f800000u) == 0x7f800000u) return (b >> 16) | ((b & 0xffffu) != 0u ? 0x40u : 0u); // inf/NaN
    return (b + 0x7fffu + ((b >> 16) & 1u)) >> 16; // round to nearest even
}
vec4 elem_to_vec4(uvec2 u) { return vec4(bf16x2_to_vec2(u.x), bf16x2_to_vec2(u.y)); }
uvec2 vec4_to_elem(vec4 v)
{
    return uvec2(bf16_round(v.x) | (bf16_round(v.y) << 16), bf16_round(v.z) | (bf16_round(v.w) << 16));
}
#else
#error "define ELEM_F32, ELEM_F16 or ELEM_BF16"
#endif

#endif
