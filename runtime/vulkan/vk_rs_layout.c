/* coopmat-nv-rs keeps S and P in NV cooperative-matrix accumulators and works
 * on the elements each lane holds, which the extension leaves to the
 * implementation. Before the variant is used on a device, a probe shader
 * records which (row, column) every lane's element holds; this file compares
 * that with the layout the shader assumes and runs the probe (once per
 * device, the verdict kept in vk_caps). The KHR builds (coopmat-khr-rs,
 * decode-khr-rs) get their own run of the probe rewritten to KHR: the layout,
 * and the element moves that turn P into an A operand there, are the KHR
 * implementation's own. */
#include "vulkan/vk_rs_layout.h"
#include "vulkan/vk_internal.h"
#include "vulkan/vk_shaders.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Mirrors CM_SLOT_ROW / CM_COL of shaders/flash_coopmat_nv_rs.comp: what the probe
 * found on an H100 (driver 580.159): element pairs walk the two 8-column halves
 * of row l/4, then of row l/4 + 8. */
void vk_rs_layout_position(unsigned lane, unsigned e, unsigned *row, unsigned *col)
{
    *row = lane / 4 + 8 * (e >> 2);
    *col = (lane % 4) * 2 + (e & 1) + 8 * ((e >> 1) & 1);
}

void vk_rs_layout_b_position(unsigned lane, unsigned e, unsigned *k, unsigned *n)
{
    vk_rs_layout_position(lane, e, n, k); /* mma's B fragment: the accumulator's pattern, transposed */
}

void vk_rs_layout_expected(float *probe)
{
    memset(probe, 0, VK_RS_PROBE_FLOATS * sizeof *probe);
    probe[VK_RS_PROBE_LENGTH] = VK_RS_LEN;
    for (unsigned lane = 0; lane < VK_RS_LANES; ++lane)
        for (unsigned e = 0; e < VK_RS_LEN; ++e) {
            unsigned r, c;
            vk_rs_layout_position(lane, e, &r, &c);
            probe[VK_RS_PROBE_ELEMS + lane * VK_RS_PROBE_CAP + e] = (float)(r * 16 + c);
        }
    for (unsigned i = 0; i < 256; ++i) probe[VK_RS_PROBE_PRODUCT + i] = probe[VK_RS_PROBE_A_PRODUCT + i] = (float)i;
    for (unsigned lane = 0; lane < VK_RS_LANES; ++lane) /* A in the accumulator's order, as the KHR moves assume */
        for (unsigned e = 0; e < VK_RS_LEN; ++e)
            probe[VK_RS_PROBE_A_ELEMS + lane * VK_RS_PROBE_CAP + e] = probe[VK_RS_PROBE_ELEMS + lane * VK_RS_PROBE_CAP + e];
    for (unsigned lane = 0; lane < VK_RS_LANES; ++lane)
        for (unsigned e = 0; e < VK_RS_LEN; ++e) {
            unsigned k, n;
            vk_rs_layout_b_position(lane, e, &k, &n);
            probe[VK_RS_PROBE_B_PRODUCT + k * 16 + n] = (float)(lane * VK_RS_LEN + e);
        }
}

int vk_rs_layout_check_b(const float *probe, char *why, size_t why_size)
{
    for (unsigned lane = 0; lane < VK_RS_LANES; ++lane)
        for (unsigned e = 0; e < VK_RS_LEN; ++e) {
            unsigned k, n;
            vk_rs_layout_b_position(lane, e, &k, &n);
            float got = probe[VK_RS_PROBE_B_PRODUCT + k * 16 + n];
            if (got != (float)(lane * VK_RS_LEN + e)) {
                snprintf(why, why_size,
                         "decode-nv-rs register operands: B element %u of lane %u does not land on (%u, %u) (found %g there)", e,
                         lane, k, n, (double)got);
                return 0;
            }
        }
    if (why_size) why[0] = '\0';
    return 1;
}

int vk_rs_layout_check(const float *probe, char *why, size_t why_size)
{
    return vk_rs_layout_check_for("coopmat-nv-rs", probe, why, why_size);
}

int vk_rs_layout_check_for(const char *variants, const float *probe, char *why, size_t why_size)
{
    char head[96];
    snprintf(head, sizeof head, "%s: accumulator layout differs from the one assumed", variants);
    if (probe[VK_RS_PROBE_LENGTH] != VK_RS_LEN) {
        snprintf(why, why_size, "%s (%g elements per lane, assumed %d)", head, (double)probe[VK_RS_PROBE_LENGTH],
                 VK_RS_LEN);
        return 0;
    }
    for (unsigned lane = 0; lane < VK_RS_LANES; ++lane)
        for (unsigned e = 0; e < VK_RS_LEN; ++e) {
            unsigned r, c;
            vk_rs_layout_position(lane, e, &r, &c);
            float got = probe[VK_RS_PROBE_ELEMS + lane * VK_RS_PROBE_CAP + e];
            if (got != (float)(r * 16 + c)) {
                if (got >= 0 && got < 256 && got == (float)(int)got)
                    snprintf(why, why_size, "%s (lane %u element %u holds (%d, %d), assumed (%u, %u))", head, lane, e,
                             (int)got / 16, (int)got % 16, r, c);
                else
                    snprintf(why, why_size, "%s (lane %u element %u holds %g, assumed (%u, %u))", head, lane, e,
                             (double)got, r, c);
                return 0;
            }
        }
    /* f16(S) as the A operand of P.V: the conversion must keep every element in place */
    for (unsigned i = 0; i < 256; ++i)
        if (probe[VK_RS_PROBE_PRODUCT + i] != (float)i) {
            snprintf(why, why_size,
                     "%s: an accumulator converted to f16 and used as the A operand gives %g at (%u, %u), not %u",
                     variants, (double)probe[VK_RS_PROBE_PRODUCT + i], i / 16, i % 16, i);
            return 0;
        }
    if (why_size) why[0] = '\0';
    return 1;
}

int vk_rs_layout_applies(const vk_caps *c)
{
    return c->nv_coopmat && c->nv_m == 16 && c->nv_n == 16 && c->nv_k == 16 && c->subgroup_size == VK_RS_LANES &&
           c->subgroup_shuffle && c->subgroup_vote;
}

int vk_rs_layout_applies_khr(const vk_caps *c)
{
    return c->khr_coopmat && c->khr_m == 16 && c->khr_n == 16 && c->khr_k == 16 && c->subgroup_size == VK_RS_LANES &&
           c->subgroup_shuffle && c->subgroup_vote;
}

static attnvk_status bind_probe_buffers(avk_bdev *dev, avk_bbuf *in, avk_bbuf *ident, avk_bbuf *index16, avk_bbuf *out,
                                        VkDescriptorSet *set)
{
    avk_bbuf *bufs[VK_BINDINGS];
    for (int i = 0; i < VK_BINDINGS; ++i) bufs[i] = dev->dummy; /* every binding valid, only 0..3 used */
    bufs[0] = in, bufs[1] = ident, bufs[2] = index16, bufs[3] = out;
    return vk_bind_storage_buffers(dev, bufs, set);
}

/* f16 of the integer i < 2048 (exact). */
static uint16_t f16_of_int(unsigned i)
{
    if (!i) return 0;
    unsigned e = 0;
    while ((i >> e) > 1) ++e;
    return (uint16_t)(((e + 15) << 10) | (((i << 10) >> e) & 0x3ff));
}

/* Runs the probe module (NV, or its KHR rewrite) once; the output lands in probe[VK_RS_PROBE_FLOATS]. */
static attnvk_status run_probe(avk_bdev *dev, const unsigned char *module, size_t size, const char *name, float *probe)
{
    avk_bbuf *in = NULL, *ident = NULL, *index16 = NULL, *out = NULL;
    VkPipeline pipeline;
    VkDescriptorSet set;
    uint32_t *words = malloc(size);
    if (!words) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    memcpy(words, module, size);
    uint32_t no_spec = 0;
    attnvk_status s = vk_pipeline_get(dev, words, size, name, &no_spec, 0, 0, &pipeline);
    free(words);
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, 256 * sizeof(float), 1, &in);
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, 256 * sizeof(uint16_t), 1, &ident);
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, 256 * sizeof(uint16_t), 1, &index16);
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, VK_RS_PROBE_FLOATS * sizeof(float), 1, &out);
    if (s == ATTNVK_OK) {
        float *m = in->mapped;
        uint16_t *id = ident->mapped, *ix = index16->mapped;
        for (unsigned i = 0; i < 256; ++i) {
            m[i] = (float)i;
            id[i] = i / 16 == i % 16 ? 0x3c00 : 0; /* f16 1.0 on the diagonal */
            ix[i] = f16_of_int(i);
        }
        memset(out->mapped, 0xff, VK_RS_PROBE_FLOATS * sizeof(float)); /* NaN: unwritten stays wrong */
        s = bind_probe_buffers(dev, in, ident, index16, out, &set);
    }
    if (s == ATTNVK_OK) s = vk_begin(dev);
    if (s == ATTNVK_OK) {
        VkCommandBuffer cmd = dev->cmd;
        dev->vk.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, dev->pipeline_layout, 0, 1, &set, 0, NULL);
        dev->vk.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        dev->vk.vkCmdDispatch(cmd, 1, 1, 1);
        VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                              .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
        dev->vk.vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0,
                                     NULL, 0, NULL);
        s = vk_submit_wait(dev);
    }
    if (s == ATTNVK_OK) memcpy(probe, out->mapped, VK_RS_PROBE_FLOATS * sizeof(float));
    vk_buffer_free(dev, in);
    vk_buffer_free(dev, ident);
    vk_buffer_free(dev, index16);
    vk_buffer_free(dev, out);
    return s;
}

static void dump_elements(const float *probe, int at, int len)
{
    for (int lane = 0; lane < VK_RS_LANES; ++lane) {
        fprintf(stderr, "  lane %2d:", lane);
        for (int e = 0; e < len; ++e) fprintf(stderr, " %g", (double)probe[at + lane * VK_RS_PROBE_CAP + e]);
        fputc('\n', stderr);
    }
}

static void dump_probe(const vk_caps *caps, const char *ext, int verdict, const float *probe)
{
    fprintf(stderr, "attnvk: vulkan: %s: %s 16x16 f32 accumulator, %g elements per lane (layout %s)\n", caps->info.name,
            ext, (double)probe[VK_RS_PROBE_LENGTH], verdict > 0 ? "as assumed" : "differs");
    float length = probe[VK_RS_PROBE_LENGTH];
    int len = length >= 1 && length <= VK_RS_PROBE_CAP ? (int)length : 0, moved = 0, a_moved = 0;
    for (int i = 0; i < 256; ++i) {
        moved += probe[VK_RS_PROBE_PRODUCT + i] != (float)i;
        a_moved += probe[VK_RS_PROBE_A_PRODUCT + i] != (float)i;
    }
    fprintf(stderr, "  f16(m) x I as A operand: %d of 256 elements moved (a loaded A x I: %d)\n", moved, a_moved);
    dump_elements(probe, VK_RS_PROBE_ELEMS, len);
    fprintf(stderr, "  f16 A operand, (r, c) = r*16 + c, first %d elements per lane:\n", VK_RS_LEN);
    dump_elements(probe, VK_RS_PROBE_A_ELEMS, VK_RS_LEN);
    fprintf(stderr, "  I x B, B's element i of lane l set to 8l + i (NV), by row k:\n");
    for (int k = 0; k < 16; ++k) {
        fprintf(stderr, "  k %2d:", k);
        for (int n = 0; n < 16; ++n) fprintf(stderr, " %g", (double)probe[VK_RS_PROBE_B_PRODUCT + k * 16 + n]);
        fputc('\n', stderr);
    }
}

/* One probe run: *verdict 1 or -1 and why[] (the variants named in it). */
static void probe_once(avk_bdev *dev, const vk_caps *caps, const char *ext, const char *variants, const unsigned char *module,
                       size_t size, const char *name, int *verdict, char *why, size_t why_size, int *b_verdict, char *b_why,
                       size_t b_why_size)
{
    float *probe = malloc(VK_RS_PROBE_FLOATS * sizeof *probe);
    attnvk_status s = probe ? run_probe(dev, module, size, name, probe) : ATTNVK_ERROR_OUT_OF_MEMORY;
    if (s != ATTNVK_OK) {
        snprintf(why, why_size, "%s: the layout probe did not run: %s", variants, probe ? attnvk_last_error() : "out of host memory");
        *verdict = -1;
    } else {
        *verdict = vk_rs_layout_check_for(variants, probe, why, why_size) ? 1 : -1;
        if (b_verdict) *b_verdict = vk_rs_layout_check_b(probe, b_why, b_why_size) ? 1 : -1;
        if (getenv("ATTNVK_VK_RS_PROBE_DUMP")) dump_probe(caps, ext, *verdict, probe); /* what a new layout looks like */
    }
    free(probe);
    avk_clear_error();
    const char *force = getenv("ATTNVK_VK_RS_FORCE"); /* debugging aid: outputs are still checked by the tests */
    if (*verdict < 0 && force && !strcmp(force, "1")) {
        fprintf(stderr, "attnvk: vulkan: %s: ATTNVK_VK_RS_FORCE=1 overrides: %s\n", caps->info.name, why);
        *verdict = 1;
    }
    /* a driver that moved the layout is worth one line: the table falls back to the shared-memory bodies */
    if (*verdict < 0) fprintf(stderr, "attnvk: vulkan: %s: %s\n", caps->info.name, why);
}

void vk_rs_layout_probe(avk_bdev *dev, vk_caps *caps)
{
    if (!caps->rs_layout && vk_rs_layout_applies(caps))
        probe_once(dev, caps, "NV", "coopmat-nv-rs", avk_spv_coopmat_nv_layout_probe, avk_spv_coopmat_nv_layout_probe_size,
                   "coopmat_nv_layout_probe", &caps->rs_layout, caps->rs_layout_why, sizeof caps->rs_layout_why,
                   &caps->rs_b_layout, caps->rs_b_layout_why, sizeof caps->rs_b_layout_why);
    if (!caps->rs_layout_khr && vk_rs_layout_applies_khr(caps))
        probe_once(dev, caps, "KHR", "coopmat-khr-rs/decode-khr-rs", avk_spv_coopmat_khr_layout_probe,
                   avk_spv_coopmat_khr_layout_probe_size, "coopmat_khr_layout_probe", &caps->rs_layout_khr,
                   caps->rs_layout_khr_why, sizeof caps->rs_layout_khr_why, NULL, NULL, 0);
}
