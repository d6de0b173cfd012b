/* Stand-ins for the OpenCL C builtins the kernels call, so clang's
 * nvptx64-nvidia-nvcl target (which ships no builtin library) can lower
 * them to PTX for ptxas: a local check of inline PTX and register use
 * before a kernel goes to NVIDIA's own OpenCL compiler. Not for running. */
#define OVL __attribute__((overloadable))
OVL size_t get_local_id(uint d) { return d == 0 ? __nvvm_read_ptx_sreg_tid_x() : d == 1 ? __nvvm_read_ptx_sreg_tid_y() : __nvvm_read_ptx_sreg_tid_z(); }
OVL size_t get_group_id(uint d) { return d == 0 ? __nvvm_read_ptx_sreg_ctaid_x() : d == 1 ? __nvvm_read_ptx_sreg_ctaid_y() : __nvvm_read_ptx_sreg_ctaid_z(); }
OVL size_t get_num_groups(uint d) { return d == 0 ? __nvvm_read_ptx_sreg_nctaid_x() : d == 1 ? __nvvm_read_ptx_sreg_nctaid_y() : __nvvm_read_ptx_sreg_nctaid_z(); }
OVL size_t get_local_size(uint d) { return d == 0 ? __nvvm_read_ptx_sreg_ntid_x() : d == 1 ? __nvvm_read_ptx_sreg_ntid_y() : __nvvm_read_ptx_sreg_ntid_z(); }
OVL size_t get_global_id(uint d) { return get_group_id(d) * get_local_size(d) + get_local_id(d); }
OVL size_t get_global_size(uint d) { return get_num_groups(d) * get_local_size(d); }
OVL void barrier(cl_mem_fence_flags f) { (void)f; __syncthreads(); }
OVL float exp2(float x) { return __nvvm_ex2_approx_f(x); }
OVL float native_exp2(float x) { return __nvvm_ex2_approx_f(x); }
OVL float exp(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
OVL float log2(float x) { return __nvvm_lg2_approx_f(x); }
OVL float log(float x) { return __nvvm_lg2_approx_f(x) * 0.6931471805599453f; }
OVL float fmax(float a, float b) { return __builtin_fmaxf(a, b); }
OVL float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
OVL float4 fma(float4 a, float4 b, float4 c) { return (float4)(fma(a.x, b.x, c.x), fma(a.y, b.y, c.y), fma(a.z, b.z, c.z), fma(a.w, b.w, c.w)); }
OVL int min(int a, int b) { return a < b ? a : b; }
OVL int clamp(int x, int a, int b) { return x < a ? a : (x > b ? b : x); }
OVL void vstore4(float4 v, size_t i, __global float *p) { *(__global float4 *)(p + 4 * i) = v; }
OVL void vstore2(float2 v, size_t i, __global float *p) { p[2 * i] = v.x; p[2 * i + 1] = v.y; }
/* the contract's K/V decoders (contract.cl) */
OVL ushort2 vload2(size_t i, __global const ushort *p) { return (ushort2)(p[2 * i], p[2 * i + 1]); }
OVL uchar4 vload4(size_t i, __global const uchar *p) { return (uchar4)(p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]); }
OVL float vload_half(size_t i, __global const half *p)
{
    float r;
    __asm__("{ .reg .b16 h; ld.global.b16 h, [%1]; cvt.f32.f16 %0, h; }" : "=f"(r) : "l"((__global const ushort *)p + i));
    return r;
}
OVL float4 convert_float4(char4 v) { return (float4)((float)v.x, (float)v.y, (float)v.z, (float)v.w); }
OVL float4 convert_float4(uchar4 v) { return (float4)((float)v.x, (float)v.y, (float)v.z, (float)v.w); }
OVL ushort2 vload2(size_t i, __local const ushort *p) { return (ushort2)(p[2 * i], p[2 * i + 1]); }
OVL uchar4 vload4(size_t i, __local const uchar *p) { return (uchar4)(p[4 * i], p[4 * i + 1], p[4 * i + 2], p[4 * i + 3]); }
OVL float vload_half(size_t i, __local const half *p)
{
    float r;
    __asm__("{ .reg .b16 h; ld.shared.b16 h, [%1]; cvt.f32.f16 %0, h; }" : "=f"(r) : "r"((uint)(size_t)((__local const ushort *)p + i)));
    return r;
}
OVL float2 vload_half2(size_t i, __global const half *p)
{
    float x, y;
    __asm__("{ .reg .b16 l, h; ld.global.v2.b16 {l, h}, [%2]; cvt.f32.f16 %0, l; cvt.f32.f16 %1, h; }"
            : "=f"(x), "=f"(y) : "l"((__global const ushort *)p + 2 * i));
    return (float2)(x, y);
}
OVL float4 vload_half4(size_t i, __global const half *p)
{
    return (float4)(vload_half(4 * i, p), vload_half(4 * i + 1, p), vload_half(4 * i + 2, p), vload_half(4 * i + 3, p));
}
OVL void vstore_half_rte(float v, size_t i, __global half *p)
{
    __asm__ volatile("{ .reg .b16 h; cvt.rn.f16.f32 h, %0; st.global.b16 [%1], h; }" ::"f"(v), "l"((__global ushort *)p + i));
}
OVL int max(int a, int b) { return a > b ? a : b; }
OVL uint popcount(uint x) { return (uint)__builtin_popcount(x); }
