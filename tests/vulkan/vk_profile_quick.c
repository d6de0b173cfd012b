/* test_vulkan --profile-quick: the Vulkan backend under ATTNVK_VK_PROFILE (CI runs
 * each profile under the validation layer), in seconds rather than minutes. Nothing
 * is named: every case runs what the profile picks. Each (dtype, prefill or decode,
 * D) pick is checked against the profile (shared memory within its clamped limit;
 * no variant that needs subgroup ops or f16 storage where the profile has none;
 * never a matrix variant) and run; then the feature cases, the cache features and
 * the score features once, on the picks' head dims so their pipelines serve (a
 * pipeline is about a second on a cold lavapipe: about 12 a profile). */
#include "core/score_cases.h"
#include "core/split_plan.h" /* avk_is_decode */
#include "vk_profile_quick.h"

#include <stdlib.h>
#include <string.h>

/* What each profile allows (runtime/vulkan/vk_profile.c). */
typedef struct profile_rules {
    const char *name;
    int subgroup_ops, f16;
} profile_rules;

static const profile_rules rules[] = {
    {"intel-gen12", 1, 1}, {"arm-mali", 1, 0}, {"adreno", 1, 1}, {"apple-moltenvk", 1, 1}, {"small", 0, 0},
};

static const profile_rules *active_rules(void)
{
    const char *name = getenv("ATTNVK_VK_PROFILE");
    for (size_t i = 0; name && i < sizeof rules / sizeof *rules; ++i)
        if (!strcmp(rules[i].name, name)) return &rules[i];
    return NULL;
}

static unsigned param(const char *params, const char *key)
{
    const char *at = strstr(params, key);
    return at ? (unsigned)strtoul(at + strlen(key), NULL, 10) : 0;
}

/* Why a pick breaks the profile ("" when it does not). */
static const char *pick_breaks(const profile_rules *r, const attnvk_kernel_info *k, uint64_t shared_limit)
{
    if (param(k->params, "shared=") > shared_limit) return "shared memory over the limit";
    if (!strncmp(k->variant, "coopmat", 7) || strstr(k->variant, "-rs")) return "a matrix variant";
    if (!r->subgroup_ops && (!strcmp(k->variant, "decode") || param(k->params, "sg_reduce=")))
        return "subgroup ops on a profile without them";
    if (!r->f16 && !strcmp(k->variant, "f16")) return "f16 storage on a profile without it";
    return "";
}

/* One pick: prepared by default selection, checked against the profile, run. */
static void pick_case(vk_tally *t, attnvk_device *dev, const profile_rules *r, attnvk_dtype dtype, int decode, int d)
{
    attnvk_problem p = {.batch = 1, .heads = decode ? 8 : 2, .kv_heads = 2, .seq_q = decode ? 1 : 70,
                        .seq_kv = decode ? 300 : 90, .head_dim = d, .causal = !decode, .dtype = dtype};
    attnvk_kernel_options o = {.write_lse = 1};
    attnvk_kernel *k = NULL;
    attnvk_kernel_info ki;
    memset(&ki, 0, sizeof ki);
    attnvk_status s = attnvk_kernel_prepare(dev, &p, &o, &k, &ki);
    attnvk_kernel_destroy(k);
    char label[64];
    snprintf(label, sizeof label, "pick %s %s D=%d", attnvk_dtype_name(dtype), decode ? "decode" : "prefill", d);
    if (s != ATTNVK_OK) {
        printf("FAIL %s: %s\n", label, attnvk_last_error());
        ++t->failed;
        return;
    }
    const char *why = pick_breaks(r, &ki, attnvk_device_info_of(dev)->shared_memory_per_group);
    printf("%s %s: %s %dx%d workgroup %d (%s)%s%s\n", *why ? "FAIL" : "ok  ", label, ki.variant, ki.tile_br,
           ki.tile_bc, ki.workgroup_size, ki.params, *why ? ": " : "", why);
    *why ? ++t->failed : ++t->passed;
    vk_case(t, dev, &p, &o, label, 1, 1);
}

/* Every dtype's prefill pick (D=128, the default), the decode picks (D=64; bf16 differs from
 * f16 in storage only and decode from prefill in the body, both run already) and the wide rows'
 * (D=256 f16: the tiles that must fit the smallest shared memory). Each pipeline costs about a
 * second on a cold lavapipe: test_vk_selection checks every head dim's pick on described
 * devices of each profile, with no device. */
static void pick_cases(vk_tally *t, attnvk_device *dev, const profile_rules *r)
{
    pick_case(t, dev, r, ATTNVK_F32, 0, 128);
    pick_case(t, dev, r, ATTNVK_F32, 1, 64);
    pick_case(t, dev, r, ATTNVK_F16, 0, 128);
    pick_case(t, dev, r, ATTNVK_F16, 1, 64);
    pick_case(t, dev, r, ATTNVK_BF16, 0, 128);
    pick_case(t, dev, r, ATTNVK_F16, 0, 256);
}

/* The feature cases at the picks' head dims and dtypes (their pipelines), the dtypes in turn;
 * the cache features once: paged, ragged, quantized (q4_0: the formats share the body and its
 * sizes, and test_vulkan runs each on lavapipe's own limits). */
static void feature_and_cache_cases(vk_tally *t, attnvk_device *dev)
{
    const attnvk_dtype dtypes[] = {ATTNVK_F32, ATTNVK_F16, ATTNVK_BF16};
    attnvk_problem cases[64];
    const char *labels[64];
    int n = avk_test_feature_cases(ATTNVK_F32, cases, labels, 64), run = 0;
    attnvk_kernel_options plain = {0};
    for (int i = 0; i < n; ++i) {
        if (cases[i].head_dim != (avk_is_decode(&cases[i]) ? 64 : 128)) continue;
        cases[i].dtype = dtypes[run++ % (avk_is_decode(&cases[i]) ? 2 : 3)];
        char label[80];
        snprintf(label, sizeof label, "%s %s", attnvk_dtype_name(cases[i].dtype), labels[i]);
        vk_case(t, dev, &cases[i], &plain, label, 0, 1);
    }
    avk_cache_case cc[32];
    n = avk_test_cache_cases(ATTNVK_F16, cc, 32);
    static const char *const kinds[] = {"paged 16 ragged", "ragged contiguous", "q4_0 gqa 5 Nq4 causal"};
    for (int i = 0; i < n; ++i)
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; ++k)
            if (!strcmp(cc[i].label, kinds[k])) {
                avk_test_run_cache_case(dev, &cc[i], &plain, t->seed + 7000 + (uint64_t)i, 0) ? ++t->passed : ++t->failed;
            }
}

/* Every score feature through the prefill and the decode pick: the case with all of
 * them, top-left with a window, and decode with a window, sinks and softcap. */
static void score_cases_once(vk_tally *t, attnvk_device *dev)
{
    static const char *const kept[] = {"all of them", "top-left Nq<Nk window", "decode window sinks"};
    avk_score_case sc[AVK_SCORE_CASES_MAX];
    int n = avk_score_cases(ATTNVK_F16, sc, AVK_SCORE_CASES_MAX);
    attnvk_kernel_options plain = {0};
    for (int i = 0; i < n; ++i) {
        int wanted = 0;
        for (size_t k = 0; k < sizeof kept / sizeof *kept; ++k) wanted |= !strcmp(sc[i].label, kept[k]);
        if (!wanted) continue;
        avk_score_result r;
        attnvk_status s = avk_score_case_run(dev, &sc[i], &plain, t->seed + 9000 + (uint64_t)i, &r);
        int ok = s == ATTNVK_OK && r.check.passed;
        if (s == ATTNVK_OK)
            printf("%s %s scores %s: rel_l2 %.2e\n", ok ? "ok  " : "FAIL", r.info.variant, r.shape, r.check.rel_l2);
        else printf("FAIL scores %s: %s\n", r.shape, r.message);
        ok ? ++t->passed : ++t->failed;
    }
}

void vk_profile_quick(vk_tally *t, attnvk_device *dev)
{
    const profile_rules *r = active_rules();
    if (!r) {
        printf("FAIL --profile-quick: ATTNVK_VK_PROFILE names no profile this test knows\n");
        ++t->failed;
        return;
    }
    const attnvk_device_info *info = attnvk_device_info_of(dev);
    int marked = strstr(info->name, "[profile ") != NULL;
    printf("%s profile %s: %s, %s\n", marked ? "ok  " : "FAIL", r->name, info->name, info->architecture);
    marked ? ++t->passed : ++t->failed;
    pick_cases(t, dev, r);
    feature_and_cache_cases(t, dev);
    score_cases_once(t, dev);
}
