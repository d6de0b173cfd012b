#version 450
// `attnvk peak` FMA throughput: 8 independent vec4 chains x = fma(x, m, c)
// per invocation (m < 1, so the values settle and never reach denormals or
// infinities), 4 steps per loop trip: 128 FMAs of 4-wide vectors per trip.
// FMA_F16: the same in f16vec4 (packed halves where the hardware packs them).
// Binding 3 gets one value per invocation so no chain is dropped.
#ifdef FMA_F16
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define T f16vec4
#define S float16_t
#else
#define T vec4
#define S float
#endif
layout(local_size_x = 256) in;
layout(std430, binding = 3) writeonly buffer Out { float result[]; };
layout(push_constant) uniform Params { uint iters; float m; float c; } pc;

#define STEP                  \
    x0 = fma(x0, m, c);       \
    x1 = fma(x1, m, c);       \
    x2 = fma(x2, m, c);       \
    x3 = fma(x3, m, c);       \
    x4 = fma(x4, m, c);       \
    x5 = fma(x5, m, c);       \
    x6 = fma(x6, m, c);       \
    x7 = fma(x7, m, c);

void main()
{
    T m = T(S(pc.m)), c = T(S(pc.c));
    S s = S(gl_LocalInvocationID.x & 15u) * S(0.0625);
    T x0 = T(s), x1 = x0 + T(S(0.1)), x2 = x0 + T(S(0.2)), x3 = x0 + T(S(0.3));
    T x4 = x0 + T(S(0.4)), x5 = x0 + T(S(0.5)), x6 = x0 + T(S(0.6)), x7 = x0 + T(S(0.7));
    for (uint i = 0u; i < pc.iters; ++i) {
        STEP STEP STEP STEP
    }
    T r = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7));
    result[gl_GlobalInvocationID.x] = float(r.x + r.y + r.z + r.w);
}
