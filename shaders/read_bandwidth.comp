#version 450
// Achievable read bandwidth: a grid-stride stream of 16-byte loads; each
// workgroup's XOR of what it read is written out so no load is dropped.
// Bindings follow the backend's set layout (7 storage buffers): 0 the
// source, 1 one uint per workgroup; the rest are unused.
// SLICE_LANES > 0 (CPU devices: lavapipe runs one SIMD group's whole loop
// before the next, where a grid stride would jump through memory): each group
// of SLICE_LANES invocations streams one contiguous slice, lanes side by side.
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint SLICE_LANES = 0u;

layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 1) writeonly buffer Out { uint partial[]; };
layout(push_constant) uniform Params { uint vectors; } pc;

shared uint group_acc[256];

void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint i = gl_GlobalInvocationID.x;
    uvec4 acc = uvec4(0u);
    if (SLICE_LANES != 0u) {
        uint slices = stride / SLICE_LANES, slice = i / SLICE_LANES;
        uint per = (pc.vectors + slices - 1u) / slices;
        per = (per + SLICE_LANES - 1u) / SLICE_LANES * SLICE_LANES;
        uint end = min(slice * per + per, pc.vectors);
        for (uint j = slice * per + i % SLICE_LANES; j < end; j += SLICE_LANES) acc ^= src[j];
        i = pc.vectors; // skips the strided loops
    }
    // four loads in flight per invocation; i + 3 * stride cannot wrap (vectors < 2^30)
    for (; i + 3u * stride < pc.vectors; i += 4u * stride)
        acc ^= src[i] ^ src[i + stride] ^ src[i + 2u * stride] ^ src[i + 3u * stride];
    for (; i < pc.vectors; i += stride) acc ^= src[i];
    group_acc[gl_LocalInvocationID.x] = acc.x ^ acc.y ^ acc.z ^ acc.w;
    barrier();
    for (uint half_size = 128u; half_size > 0u; half_size >>= 1) {
        if (gl_LocalInvocationID.x < half_size)
            group_acc[gl_LocalInvocationID.x] ^= group_acc[gl_LocalInvocationID.x + half_size];
        barrier();
    }
    if (gl_LocalInvocationID.x == 0u) partial[gl_WorkGroupID.x] = group_acc[0];
}
