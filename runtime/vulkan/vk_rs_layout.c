/* coopmat-nv-rs keeps S and P in NV cooperative-matrix accumulators and works
 * on the elements each lane holds, which the extension leaves to the
 * implementation. Before the variant is used on a device, a probe shader
 * records which (row, column) every lane's element holds; this file compares
 * that with the layout the shader assumes and runs the probe (once per
 * device, the verdict kept in vk_caps). */
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
    for (unsigned i = 0; i < 256; ++i) probe[VK_RS_PROBE_PRODUCT + i] = (float)i;
}

int vk_rs_layout_check(const float *probe, char *why, size_t why_size)
{
    const char *head = "coopmat-nv-rs: accumulator layout differs from the one assumed";
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
                     "coopmat-nv-rs: an accumulator converted to f16 and used as the A operand gives %g at (%u, %u), "
                     "not %u",
                     (double)probe[VK_RS_PROBE_PRODUCT + i], i / 16, i % 16, i);
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

static attnvk_status bind_probe_buffers(avk_bdev *dev, avk_bbuf *in, avk_bbuf *ident, avk_bbuf *out, VkDescriptorSet *set)
{
    avk_bbuf *bufs[VK_BINDINGS];
    for (int i = 0; i < VK_BINDINGS; ++i) bufs[i] = dev->dummy; /* every binding valid, only 0, 1 and 3 used */
    bufs[0] = in, bufs[1] = ident, bufs[3] = out;
    return vk_bind_storage_buffers(dev, bufs, set);
}

/* Runs the probe once; the output lands in probe[VK_RS_PROBE_FLOATS]. */
static attnvk_status run_probe(avk_bdev *dev, float *probe)
{
    avk_bbuf *in = NULL, *ident = NULL, *out = NULL;
    VkPipeline pipeline;
    VkDescriptorSet set;
    uint32_t *words = malloc(avk_spv_coopmat_nv_layout_probe_size);
    if (!words) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    memcpy(words, avk_spv_coopmat_nv_layout_probe, avk_spv_coopmat_nv_layout_probe_size);
    uint32_t no_spec = 0;
    attnvk_status s = vk_pipeline_get(dev, words, avk_spv_coopmat_nv_layout_probe_size, "coopmat_nv_layout_probe",
                                      &no_spec, 0, 0, &pipeline);
    free(words);
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, 256 * sizeof(float), 1, &in);
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, 256 * sizeof(uint16_t), 1, &ident);
    if (s == ATTNVK_OK) s = vk_buffer_new(dev, VK_RS_PROBE_FLOATS * sizeof(float), 1, &out);
    if (s == ATTNVK_OK) {
        float *m = in->mapped;
        uint16_t *id = ident->mapped;
        for (int i = 0; i < 256; ++i) {
            m[i] = (float)i;
            id[i] = i / 16 == i % 16 ? 0x3c00 : 0; /* f16 1.0 on the diagonal */
        }
        memset(out->mapped, 0xff, VK_RS_PROBE_FLOATS * sizeof(float)); /* NaN: unwritten stays wrong */
        s = bind_probe_buffers(dev, in, ident, out, &set);
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
    vk_buffer_free(dev, out);
    return s;
}

static void dump_probe(const vk_caps *caps, const float *probe)
{
    fprintf(stderr, "attnvk: vulkan: %s: NV 16x16 f32 accumulator, %g elements per lane (layout %s)\n", caps->info.name,
            (double)probe[VK_RS_PROBE_LENGTH], caps->rs_layout > 0 ? "as assumed" : "differs");
    float length = probe[VK_RS_PROBE_LENGTH];
    int len = length >= 1 && length <= VK_RS_PROBE_CAP ? (int)length : 0, moved = 0;
    for (int i = 0; i < 256; ++i) moved += probe[VK_RS_PROBE_PRODUCT + i] != (float)i;
    fprintf(stderr, "  f16(m) x I as A operand: %d of 256 elements moved\n", moved);
    for (int lane = 0; lane < VK_RS_LANES; ++lane) {
        fprintf(stderr, "  lane %2d:", lane);
        for (int e = 0; e < len; ++e)
            fprintf(stderr, " %g", (double)probe[VK_RS_PROBE_ELEMS + lane * VK_RS_PROBE_CAP + e]);
        fputc('\n', stderr);
    }
}

void vk_rs_layout_probe(avk_bdev *dev, vk_caps *caps)
{
    if (caps->rs_layout || !vk_rs_layout_applies(caps)) return;
    float *probe = malloc(VK_RS_PROBE_FLOATS * sizeof *probe);
    attnvk_status s = probe ? run_probe(dev, probe) : ATTNVK_ERROR_OUT_OF_MEMORY;
    if (s != ATTNVK_OK) {
        snprintf(caps->rs_layout_why, sizeof caps->rs_layout_why, "coopmat-nv-rs: the layout probe did not run: %s",
                 probe ? attnvk_last_error() : "out of host memory");
        caps->rs_layout = -1;
    } else {
        caps->rs_layout = vk_rs_layout_check(probe, caps->rs_layout_why, sizeof caps->rs_layout_why) ? 1 : -1;
        if (getenv("ATTNVK_VK_RS_PROBE_DUMP")) dump_probe(caps, probe); /* what a new layout looks like */
    }
    free(probe);
    avk_clear_error();
    const char *force = getenv("ATTNVK_VK_RS_FORCE"); /* debugging aid: outputs are still checked by the tests */
    if (caps->rs_layout < 0 && force && !strcmp(force, "1")) {
        fprintf(stderr, "attnvk: vulkan: %s: ATTNVK_VK_RS_FORCE=1 overrides: %s\n", caps->info.name, caps->rs_layout_why);
        caps->rs_layout = 1;
    }
    /* a driver that moved the layout is worth one line: the table falls back to coopmat-nv */
    if (caps->rs_layout < 0) fprintf(stderr, "attnvk: vulkan: %s: %s\n", caps->info.name, caps->rs_layout_why);
}
