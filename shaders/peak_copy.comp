#version 450
// `attnvk peak` copy bandwidth: dst = src in 16-byte vectors, a grid stride
// (GPUs) or, with SLICE_LANES > 0 (CPU devices such as lavapipe, which run
// one SIMD group's whole loop before the next), one contiguous slice per
// group of SLICE_LANES invocations (as read_bandwidth.comp). Bindings follow
// the backend's set layout: 0 the source, 1 the destination.
layout(local_size_x = 256) in;
layout(constant_id = 0) const uint SLICE_LANES = 0u;

layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uvec4 dst[]; };
layout(push_constant) uniform Params { uint vectors; } pc;

void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    uint i = gl_GlobalInvocationID.x;
    if (SLICE_LANES != 0u) {
        uint slices = stride / SLICE_LANES, slice = i / SLICE_LANES;
        uint per = (pc.vectors + slices - 1u) / slices;
        per = (per + SLICE_LANES - 1u) / SLICE_LANES * SLICE_LANES;
        uint end = min(slice * per + per, pc.vectors);
        for (uint j = slice * per + i % SLICE_LANES; j < end; j += SLICE_LANES) dst[j] = src[j];
        return;
    }
    for (; i + stride < pc.vectors; i += 2u * stride) { // two copies in flight per invocation
        uvec4 a = src[i], b = src[i + stride];
        dst[i] = a;
        dst[i + stride] = b;
    }
    if (i < pc.vectors) dst[i] = src[i];
}
