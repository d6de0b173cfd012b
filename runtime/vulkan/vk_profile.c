/* ATTNVK_VK_PROFILE: limit profiles of integrated and mobile GPUs, applied to
 * the probed vk_caps so selection and pipelines follow them (a profile only
 * ever lowers a limit), and the architecture names of real devices that the
 * tuning table's family rows match. */
#include "vulkan/vk_profile.h"
#include "core/tuning.h" /* avk_contains_nocase */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* None of these GPUs exposes cooperative matrices to Vulkan (Intel's Arc and
 * Xe2 do, the gen12 iGPU does not), so every profile turns them off. */
static const vk_profile profiles[] = {
    {"intel-gen12", "Intel", "xe-lp", 64 * 1024, 8, 32, 1, 1, 1,
     "Intel gen12 (Xe-LP) iGPU: 64 KiB shared memory, subgroups 8-32, subgroup ops, fp16, no matrix units"},
    {"arm-mali", "ARM", "mali", 32 * 1024, 16, 16, 1, 0, 1,
     "ARM Mali (Valhall): 32 KiB shared memory, subgroups of 16, subgroup ops, no fp16 storage, no matrix units"},
    {"adreno", "Qualcomm", "adreno", 32 * 1024, 64, 128, 1, 1, 1,
     "Qualcomm Adreno: 32 KiB shared memory, subgroups 64-128, subgroup ops, fp16, no matrix units"},
    {"apple-moltenvk", "Apple", "apple", 32 * 1024, 32, 32, 1, 1, 0,
     "Apple GPU through MoltenVK: 32 KiB shared memory, subgroups of 32, subgroup ops, fp16, no 64-bit atomics, "
     "no matrix units"},
    {"small", "", "generic", 16 * 1024, 1, 128, 0, 0, 1,
     "small: 16 KiB shared memory, no subgroup ops, no fp16, no matrix units"},
};
enum { PROFILE_COUNT = sizeof profiles / sizeof *profiles };

const vk_profile *vk_profile_find(const char *name)
{
    for (int i = 0; name && i < PROFILE_COUNT; ++i)
        if (strcmp(profiles[i].name, name) == 0) return &profiles[i];
    return NULL;
}

attnvk_status vk_profile_selected(const vk_profile **out)
{
    const char *name = getenv("ATTNVK_VK_PROFILE");
    *out = NULL;
    if (!name || !*name) return ATTNVK_OK;
    *out = vk_profile_find(name);
    if (*out) return ATTNVK_OK;
    char known[160] = "";
    for (int i = 0; i < PROFILE_COUNT; ++i)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", profiles[i].name);
    return avk_fail(ATTNVK_ERROR_INVALID_ARGUMENT, "vulkan: ATTNVK_VK_PROFILE '%s' is not a profile (%s)", name, known);
}

/* The sizes both allow; where none, the device's size nearest the profile's
 * (hardware cannot run wider or narrower subgroups than it has). */
static void clamp_subgroups(vk_caps *c, const vk_profile *p)
{
    uint32_t lo = c->min_subgroup > p->min_subgroup ? c->min_subgroup : p->min_subgroup;
    uint32_t hi = c->max_subgroup < p->max_subgroup ? c->max_subgroup : p->max_subgroup;
    if (lo > hi) {
        uint32_t keep = p->min_subgroup > c->max_subgroup ? c->max_subgroup : c->min_subgroup;
        snprintf(c->profile_note, sizeof c->profile_note, "subgroup %u kept", keep);
        lo = hi = keep;
    }
    c->min_subgroup = lo;
    c->max_subgroup = hi;
    if (c->subgroup_size < lo) c->subgroup_size = lo;
    if (c->subgroup_size > hi) c->subgroup_size = hi;
}

void vk_profile_clamp(vk_caps *c, const vk_profile *p)
{
    c->profile = p;
    c->profile_note[0] = '\0';
    if (!p) return;
    VkPhysicalDeviceLimits *lim = &c->props.limits;
    if (lim->maxComputeSharedMemorySize > p->shared_bytes) lim->maxComputeSharedMemorySize = p->shared_bytes;
    clamp_subgroups(c, p);
    if (!p->subgroup_ops) c->subgroup_shuffle = c->subgroup_vote = c->subgroup_arith = 0;
    if (!p->f16) c->shader_f16 = c->storage_16bit = c->ext_f16_int8 = c->ext_16bit_storage = 0;
    /* no matrix units: neither extension is enabled on the device, no layout probe runs */
    c->nv_coopmat = c->khr_coopmat = 0;
    snprintf(c->khr_coopmat_why, sizeof c->khr_coopmat_why, "profile %s: no cooperative matrices", p->name);
    c->rs_layout = -1;
    snprintf(c->rs_layout_why, sizeof c->rs_layout_why, "profile %s: no cooperative matrices", p->name);
}

/* Device-name tokens of the families the table has rows for (RADV and AMDVLK,
 * ANV and Intel's Windows driver, the mobile vendors' own names). */
static const struct {
    const char *vendor, *token, *architecture;
} families[] = {
    {"AMD", "NAVI3", "rdna3"},     {"AMD", "GFX11", "rdna3"},      {"AMD", "RX 7", "rdna3"},
    {"AMD", "780M", "rdna3"},      {"AMD", "NAVI2", "rdna2"},      {"AMD", "GFX103", "rdna2"},
    {"AMD", "RX 6", "rdna2"},      {"AMD", "REMBRANDT", "rdna2"},  {"AMD", "VANGOGH", "rdna2"},
    {"AMD", "680M", "rdna2"},      {"Intel", "(BMG", "xe2"},       {"Intel", "(LNL", "xe2"},
    {"Intel", "Arc(TM) B", "xe2"}, {"Intel", "(DG2", "xe-hpg"},    {"Intel", "Arc(TM) A", "xe-hpg"},
    {"Intel", "(TGL", "xe-lp"},    {"Intel", "(ADL", "xe-lp"},     {"Intel", "(RPL", "xe-lp"},
    {"Intel", "(RKL", "xe-lp"},    {"Intel", "(DG1", "xe-lp"},     {"Intel", "Iris(R) Xe", "xe-lp"},
    {"ARM", "Mali", "mali"},       {"Qualcomm", "Adreno", "adreno"}, {"Apple", "Apple", "apple"},
};

void vk_profile_identify(vk_caps *c)
{
    attnvk_device_info *d = &c->info;
    snprintf(c->real_name, sizeof c->real_name, "%s", d->name);
    snprintf(c->real_vendor, sizeof c->real_vendor, "%s", d->vendor);
    if (!d->architecture[0])
        for (size_t i = 0; i < sizeof families / sizeof *families; ++i)
            if (avk_contains_nocase(d->vendor, families[i].vendor) && avk_contains_nocase(d->name, families[i].token)) {
                snprintf(d->architecture, sizeof d->architecture, "%s", families[i].architecture);
                break;
            }
    snprintf(c->real_architecture, sizeof c->real_architecture, "%s", d->architecture);
    const vk_profile *p = c->profile;
    if (!p) return;
    /* the real name would match the real device's rows (llvmpipe's): the table sees the profile only */
    snprintf(d->vendor, sizeof d->vendor, "%s", p->vendor);
    snprintf(d->architecture, sizeof d->architecture, "%s", p->architecture);
    snprintf(d->name, sizeof d->name, "%s profile", p->name);
}

void vk_profile_display(const vk_caps *c, attnvk_device_info *info)
{
    if (!c->profile) return;
    snprintf(info->name, sizeof info->name, "%.200s [profile %s]", c->real_name, c->profile->name);
    snprintf(info->vendor, sizeof info->vendor, "%s", c->real_vendor);
    snprintf(info->architecture, sizeof info->architecture, "%.12s (profile %.16s%s%.20s)", c->profile->architecture,
             c->profile->name, c->profile_note[0] ? ", " : "", c->profile_note);
}
