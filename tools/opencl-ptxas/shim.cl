/* The OpenCL builtins attnvk's programs call, defined for tools/opencl-ptxas/regs.sh's clang NVPTX build
 * (Debian 12 has no libclc for NVPTX). Good enough for ptxas to allocate registers: exp, log and the
 * half conversions are approximate or inline PTX, and nothing built here is meant to run. */
#define OV __attribute__((overloadable))
typedef unsigned long size_t_;
OV size_t_ get_local_id(uint d) { return d == 0 ? __nvvm_read_ptx_sreg_tid_x() : d == 1 ? __nvvm_read_ptx_sreg_tid_y() : __nvvm_read_ptx_sreg_tid_z(); }
OV size_t_ get_group_id(uint d) { return d == 0 ? __nvvm_read_ptx_sreg_ctaid_x() : d == 1 ? __nvvm_read_ptx_sreg_ctaid_y() : __nvvm_read_ptx_sreg_ctaid_z(); }
OV size_t_ get_global_id(uint d) { return get_group_id(d) * (d == 0 ? __nvvm_read_ptx_sreg_ntid_x() : d == 1 ? __nvvm_read_ptx_sreg_ntid_y() : __nvvm_read_ptx_sreg_ntid_z()) + get_local_id(d); }
OV void barrier(uint f) { __asm__ volatile("bar.sync 0;" ::: "memory"); }
OV float native_exp2(float x) { return __nvvm_ex2_approx_f(x); }
OV float exp(float x) { return __nvvm_ex2_approx_f(x * 1.4426950408889634f); }
OV float log2(float x) { return __nvvm_lg2_approx_f(x); }
OV float log(float x) { return __nvvm_lg2_approx_f(x) * 0.6931471805599453f; }
OV float fma(float a, float b, float c) { return __builtin_fmaf(a, b, c); }
OV float fmax(float a, float b) { return __builtin_fmaxf(a, b); }
OV int max(int a, int b) { return a > b ? a : b; }
OV int min(int a, int b) { return a < b ? a : b; }
OV long min(long a, long b) { return a < b ? a : b; }
OV int clamp(int x, int a, int b) { return min(max(x, a), b); }
OV long clamp(long x, long a, long b) { return x < a ? a : x > b ? b : x; }
OV uint clz(uint x) { return __builtin_clz(x); }
OV uint popcount(uint x) { return __builtin_popcount(x); }
OV uint atomic_or(volatile __local uint *p, uint v) { uint r; __asm__ volatile("atom.shared.or.b32 %0, [%1], %2;" : "=r"(r) : "r"((uint)(size_t_)p), "r"(v) : "memory"); return r; }
OV float vload_half(size_t_ i, const __global half *p) { ushort h = ((const __global ushort *)p)[i]; float f; __asm__("{.reg .b16 t; mov.b16 t, %1; cvt.f32.f16 %0, t;}" : "=f"(f) : "h"(h)); return f; }
OV float2 vload_half2(size_t_ i, const __global half *p) { return (float2)(vload_half(2 * i, p), vload_half(2 * i + 1, p)); }
OV void vstore_half_rte(float f, size_t_ i, __global half *p) { ushort h; __asm__("{.reg .b16 t; cvt.rn.f16.f32 t, %1; mov.b16 %0, t;}" : "=h"(h) : "f"(f)); ((__global ushort *)p)[i] = h; }
OV void vstore2(float2 v, size_t_ i, __global float *p) { p[2 * i] = v.x; p[2 * i + 1] = v.y; }
OV uint atomic_min(volatile __local uint *p, uint v) { uint r; __asm__ volatile("atom.shared.min.u32 %0, [%1], %2;" : "=r"(r) : "r"((uint)(size_t_)p), "r"(v) : "memory"); return r; }
OV float4 vload_half4(size_t_ i, const __global half *p) { return (float4)(vload_half(4 * i, p), vload_half(4 * i + 1, p), vload_half(4 * i + 2, p), vload_half(4 * i + 3, p)); }
OV float exp2(float x) { return __nvvm_ex2_approx_f(x); }
OV float tanh(float x) { float r; __asm__("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x)); return r; }
OV float native_recip(float x) { return 1.0f / x; }
OV float fmin(float a, float b) { return __builtin_fminf(a, b); }
OV uint min(uint a, uint b) { return a < b ? a : b; }
OV uint max(uint a, uint b) { return a > b ? a : b; }
OV size_t_ get_num_groups(uint d) { return d == 0 ? __nvvm_read_ptx_sreg_nctaid_x() : d == 1 ? __nvvm_read_ptx_sreg_nctaid_y() : __nvvm_read_ptx_sreg_nctaid_z(); }
OV float2 vload_half2(size_t_ i, const half *p) { const ushort *u = (const ushort *)p; float2 f; ushort a = u[2 * i], b = u[2 * i + 1]; __asm__("{.reg .b16 t; mov.b16 t, %1; cvt.f32.f16 %0, t;}" : "=f"(f.x) : "h"(a)); __asm__("{.reg .b16 t; mov.b16 t, %1; cvt.f32.f16 %0, t;}" : "=f"(f.y) : "h"(b)); return f; }
OV void vstore_half2_rte(float2 v, size_t_ i, half *p) { ushort *u = (ushort *)p; ushort a, b; __asm__("{.reg .b16 t; cvt.rn.f16.f32 t, %1; mov.b16 %0, t;}" : "=h"(a) : "f"(v.x)); __asm__("{.reg .b16 t; cvt.rn.f16.f32 t, %1; mov.b16 %0, t;}" : "=h"(b) : "f"(v.y)); u[2 * i] = a; u[2 * i + 1] = b; }
OV ushort2 vload2(size_t_ i, const __global ushort *p) { return (ushort2)(p[2 * i], p[2 * i + 1]); }
OV float4 convert_float4(uchar4 v) { return (float4)((float)v.x, (float)v.y, (float)v.z, (float)v.w); }
OV float4 convert_float4(char4 v) { return (float4)((float)v.x, (float)v.y, (float)v.z, (float)v.w); }
OV ushort2 vload2(size_t_ i, const __local ushort *p) { return (ushort2)(p[2 * i], p[2 * i + 1]); }
OV float vload_half(size_t_ i, const __local half *p) { ushort h = ((const __local ushort *)p)[i]; float f; __asm__("{.reg .b16 t; mov.b16 t, %1; cvt.f32.f16 %0, t;}" : "=f"(f) : "h"(h)); return f; }
