// Achievable read bandwidth: a grid-stride stream of 16-byte loads; each
// work-group's XOR of what it read is written out so no load is dropped.
// Work-groups are at most 256 items (the host picks the size). CPU devices
// build with -DAVK_CONTIGUOUS: there each item runs its whole loop before the
// next, so a grid stride would make every item jump through memory; each item
// streams one contiguous slice instead.
__kernel void avk_read_bandwidth(__global const uint4 *restrict src, ulong n, __global uint *restrict out)
{
    __local uint partial[256];
    ulong stride = get_global_size(0);
    ulong i = get_global_id(0);
    uint4 acc = (uint4)(0u);
#ifdef AVK_CONTIGUOUS
    ulong per = (n + stride - 1ul) / stride, end = min(i * per + per, n);
    for (ulong j = i * per; j < end; ++j) acc ^= src[j];
#else
    for (; i + 3ul * stride < n; i += 4ul * stride) // four loads in flight per item
        acc ^= src[i] ^ src[i + stride] ^ src[i + 2ul * stride] ^ src[i + 3ul * stride];
    for (; i < n; i += stride) acc ^= src[i];
#endif
    uint lid = get_local_id(0), size = get_local_size(0);
    partial[lid] = acc.x ^ acc.y ^ acc.z ^ acc.w;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0u) {
        uint r = 0u;
        for (uint j = 0u; j < size; ++j) r ^= partial[j];
        out[get_group_id(0)] = r;
    }
}
