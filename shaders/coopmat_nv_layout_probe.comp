#version 450
// Which element of a 16x16 f32 NV cooperative matrix each lane holds, for the
// host to compare with the layout flash_coopmat_nv_rs.comp assumes
// (runtime/vulkan/vk_rs_layout.c). Input (binding 0): the matrix with (r, c) =
// r*16 + c; binding 1: the 16x16 f16 identity. Output (binding 3), offsets of
// runtime/vulkan/vk_rs_layout.h:
//   [r*16 + c]: f16(m) used as the A operand times the identity, so the
//   f32 -> f16 conversion feeding P.V is checked too (first: coopMatStoreNV
//   needs a 16-byte aligned offset);
//   [LENGTH] m.length(); [ELEMS + lane*64 + i] element i of lane (i < 64);
//   [A_ELEMS + lane*64 + i] element i (i < 8) of lane of an f16 A operand loaded
//   from binding 2 ((r, c) = r*16 + c), and [A_PRODUCT ..] that A times the
//   identity: what a KHR build's P = f16(S) element moves must agree with
//   (docs/spirv-nv2khr.md). The same module, rewritten, probes KHR matrices.
//   [B_PRODUCT + k*16 + n] (NV only): the identity times an f16 B operand whose
//   element i of lane is set to lane*8 + i, so the host sees which (k, n) each
//   element written by a lane lands on (the matrix decode body's register
//   operands, AVK_DIRECT_KV).
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require

layout(local_size_x = 32) in;
layout(binding = 0) readonly buffer In { float in_f[]; };
layout(binding = 1) readonly buffer Ident { uvec4 ident[]; };
layout(binding = 2) readonly buffer Index16 { uvec4 index16[]; };
layout(binding = 3) writeonly buffer Out { float out_f[]; };

const uint CAP = 64u;
const uint LENGTH = 256u;
const uint ELEMS = 260u;
const uint A_PRODUCT = 2320u;
const uint A_ELEMS = 2576u;
const uint B_PRODUCT = 4624u;
const uint A_LEN = 8u; // not asked: the f16 type serves A and B, whose KHR lengths may differ

void main()
{
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> m;
    coopMatLoadNV(m, in_f, 0u, 16u, false);
    uint lane = gl_SubgroupInvocationID;
#ifdef AVK_PROBE_KHR
    // The KHR rewrite's source: glslang makes m.length() a spec-constant op, whose KHR form
    // crashed NVIDIA's compiler (580.159, session 16; spirv_nv2khr refuses it). It reports the
    // length the register-softmax bodies assume and reads that many; the element checks
    // then tell a different layout.
    const int len = 8;
#else
    const int len = m.length();
#endif
    if (lane == 0u) out_f[LENGTH] = float(len);
    for (int i = 0; i < len && i < int(CAP); ++i) out_f[ELEMS + lane * CAP + uint(i)] = m[i];

    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> a = fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(m);
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> b;
    coopMatLoadNV(b, ident, 0u, 2u, false);
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> c = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
    c = coopMatMulAddNV(a, b, c);
    coopMatStoreNV(c, out_f, 0u, 16u, false);

    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> qa;
    coopMatLoadNV(qa, index16, 0u, 2u, false);
    for (uint i = 0u; i < A_LEN; ++i) out_f[A_ELEMS + lane * CAP + i] = float(qa[i]);
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> qc = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
    qc = coopMatMulAddNV(qa, b, qc); // qa is an A operand (its Use in KHR)
    coopMatStoreNV(qc, out_f, A_PRODUCT, 16u, false);
#ifndef AVK_PROBE_KHR
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> bt;
    for (uint i = 0u; i < A_LEN; ++i) bt[i] = float16_t(float(lane * A_LEN + i));
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ia;
    coopMatLoadNV(ia, ident, 0u, 2u, false);
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> bc = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
    bc = coopMatMulAddNV(ia, bt, bc); // bt is a B operand
    coopMatStoreNV(bc, out_f, B_PRODUCT, 16u, false);
#endif
}
