/* Ring attention's merge on a HIP device: native/ring_merge.cu (shared with
 * CUDA), its code object embedded per gfx target at build time or compiled
 * by hipRTC (cached on disk) for others, loaded once per device and launched
 * on the device's own stream after the runs before it, never synchronised
 * here: later launches and copies on that stream, and backend.wait
 * (hipStreamSynchronize), come after it. */
#include "hip/hip_merge.h"
#include "core/embedded.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

AVK_EMBEDDED(avk_hip_merge_source_text)

/* A block: MERGE_ROWS_PER_GROUP rows of MERGE_ROW_LANES threads each; the embedded objects are built
 * with ring_merge.cu's defaults, which these match (hipRTC is given them as -D options). */
#define MERGE_ROW_LANES 32
#define MERGE_ROWS_PER_GROUP 4
#define MERGE_STRING(x) #x
#define MERGE_DEFINE(name, value) "-D" name "=" MERGE_STRING(value)
#define MERGE_DEFINES MERGE_DEFINE("AVK_MERGE_LANES", MERGE_ROW_LANES) " " MERGE_DEFINE("AVK_MERGE_ROWS", MERGE_ROWS_PER_GROUP)

const char *const avk_hip_merge_kernels[3] = {"avk_ring_merge_f32", "avk_ring_merge_f16", "avk_ring_merge_bf16"};

typedef struct avk_hip_merge_module {
    hipModule_t module;
    hipFunction_t fn[3];
} avk_hip_merge_module;

attnvk_status avk_hip_merge_source(avk_hip_source *src, char **text)
{
    *text = malloc(avk_hip_merge_source_text_size + 1); /* hipRTC takes a NUL-terminated source */
    if (!*text) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    memcpy(*text, avk_hip_merge_source_text, avk_hip_merge_source_text_size);
    (*text)[avk_hip_merge_source_text_size] = '\0';
    *src = (avk_hip_source){.name = "ring_merge.hip", .text = *text, .defines = MERGE_DEFINES};
    return ATTNVK_OK;
}

static attnvk_status merge_module(avk_hip_device *dev, avk_hip_merge_module **out)
{
    if (dev->merge) {
        *out = dev->merge;
        return ATTNVK_OK;
    }
    avk_hip_merge_module *m = calloc(1, sizeof *m);
    if (!m) return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
    avk_hip_source src;
    char *text = NULL, origin[64];
    attnvk_status s = avk_hip_merge_source(&src, &text);
    if (s == ATTNVK_OK) s = avk_hip_load_module(dev, AVK_HIP_MERGE_OBJECT, &src, &m->module, origin, sizeof origin);
    free(text);
    for (int i = 0; i < 3 && s == ATTNVK_OK; ++i) s = avk_hip_get_function(dev, m->module, avk_hip_merge_kernels[i], &m->fn[i]);
    if (s != ATTNVK_OK) {
        if (m->module && !dev->lost) dev->hip->hipModuleUnload(m->module);
        free(m);
        return s;
    }
    dev->merge = m;
    *out = m;
    return ATTNVK_OK;
}

void avk_hip_merge_release(avk_hip_device *dev)
{
    if (!dev->merge) return;
    if (!dev->lost) dev->hip->hipModuleUnload(dev->merge->module);
    free(dev->merge);
    dev->merge = NULL;
}

attnvk_status avk_hip_merge(avk_bdev *dev, const avk_merge_args *a)
{
    const unsigned long long rows = (unsigned long long)a->batch * a->heads * a->rows_per_head;
    if (rows == 0) return ATTNVK_OK;
    if (rows > UINT32_MAX)
        return avk_fail(ATTNVK_ERROR_UNSUPPORTED, "hip: a merge of %llu rows exceeds 32-bit row indexing", rows);
    attnvk_status s = avk_hip_use(dev);
    avk_hip_merge_module *m = NULL;
    if (s == ATTNVK_OK) s = merge_module(dev, &m);
    if (s != ATTNVK_OK) return s;
    void *o_part = a->o_part->ptr, *lse_part = a->lse_part->ptr, *o_acc = a->o_acc->ptr, *lse_acc = a->lse_acc->ptr;
    void *o_out = a->o_out ? a->o_out->ptr : NULL;
    unsigned n_rows = (unsigned)rows, dv = (unsigned)a->dv, first = a->first != 0;
    void *params[] = {&o_part, &lse_part, &o_acc, &lse_acc, &o_out, &n_rows, &dv, &first};
    const int slot = a->dtype == ATTNVK_F16 ? 1 : a->dtype == ATTNVK_BF16 ? 2 : 0;
    const unsigned blocks = (unsigned)((rows + MERGE_ROWS_PER_GROUP - 1) / MERGE_ROWS_PER_GROUP);
    return avk_hip_check(dev,
                         dev->hip->hipModuleLaunchKernel(m->fn[slot], blocks, 1, 1, MERGE_ROW_LANES * MERGE_ROWS_PER_GROUP,
                                                         1, 1, 0, dev->stream, params, NULL),
                         "hipModuleLaunchKernel(ring merge)");
}
