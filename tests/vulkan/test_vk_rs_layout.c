/* The host half of coopmat-nv-rs's layout probe: what the probe shader would
 * write on a device with the assumed NVIDIA layout passes; a moved element, a
 * transposed layout, another element count or a conversion that moves P's
 * elements each fail with a reason. No device needed. */
#include "test_util.h"
#include "vulkan/vk_rs_layout.h"

#include <string.h>

static float probe[VK_RS_PROBE_FLOATS];

/* What coopmat_nv_layout_probe.comp recorded on an H100 80GB HBM3 (driver
 * 580.159.04, Vulkan 1.4.312): r*16 + c of each lane's 8 elements. */
static const unsigned char h100_elements[32][8] = {
    {  0,   1,   8,   9, 128, 129, 136, 137},
    {  2,   3,  10,  11, 130, 131, 138, 139},
    {  4,   5,  12,  13, 132, 133, 140, 141},
    {  6,   7,  14,  15, 134, 135, 142, 143},
    { 16,  17,  24,  25, 144, 145, 152, 153},
    { 18,  19,  26,  27, 146, 147, 154, 155},
    { 20,  21,  28,  29, 148, 149, 156, 157},
    { 22,  23,  30,  31, 150, 151, 158, 159},
    { 32,  33,  40,  41, 160, 161, 168, 169},
    { 34,  35,  42,  43, 162, 163, 170, 171},
    { 36,  37,  44,  45, 164, 165, 172, 173},
    { 38,  39,  46,  47, 166, 167, 174, 175},
    { 48,  49,  56,  57, 176, 177, 184, 185},
    { 50,  51,  58,  59, 178, 179, 186, 187},
    { 52,  53,  60,  61, 180, 181, 188, 189},
    { 54,  55,  62,  63, 182, 183, 190, 191},
    { 64,  65,  72,  73, 192, 193, 200, 201},
    { 66,  67,  74,  75, 194, 195, 202, 203},
    { 68,  69,  76,  77, 196, 197, 204, 205},
    { 70,  71,  78,  79, 198, 199, 206, 207},
    { 80,  81,  88,  89, 208, 209, 216, 217},
    { 82,  83,  90,  91, 210, 211, 218, 219},
    { 84,  85,  92,  93, 212, 213, 220, 221},
    { 86,  87,  94,  95, 214, 215, 222, 223},
    { 96,  97, 104, 105, 224, 225, 232, 233},
    { 98,  99, 106, 107, 226, 227, 234, 235},
    {100, 101, 108, 109, 228, 229, 236, 237},
    {102, 103, 110, 111, 230, 231, 238, 239},
    {112, 113, 120, 121, 240, 241, 248, 249},
    {114, 115, 122, 123, 242, 243, 250, 251},
    {116, 117, 124, 125, 244, 245, 252, 253},
    {118, 119, 126, 127, 246, 247, 254, 255}
};
static char why[256];

static int check(void) { return vk_rs_layout_check(probe, why, sizeof why); }

int main(void)
{
    int passed = 0;

    vk_rs_layout_expected(probe);
    EXPECT(check() && why[0] == '\0', "the assumed layout passes: %s", why);
    ++passed;

    /* each (row, column) appears once over the 32 lanes x 8 elements */
    int seen[256] = {0};
    for (unsigned lane = 0; lane < VK_RS_LANES; ++lane)
        for (unsigned e = 0; e < VK_RS_LEN; ++e) {
            unsigned r, c;
            vk_rs_layout_position(lane, e, &r, &c);
            if (r < 16 && c < 16) ++seen[r * 16 + c];
        }
    int once = 1;
    for (int i = 0; i < 256; ++i) once &= seen[i] == 1;
    EXPECT(once, "the layout covers the 16x16 matrix exactly once");
    ++passed;

    /* the H100's recorded layout passes; with element bits 1 and 2 exchanged it does not */
    vk_rs_layout_expected(probe);
    for (int lane = 0; lane < 32; ++lane)
        for (int e = 0; e < 8; ++e) probe[VK_RS_PROBE_ELEMS + lane * VK_RS_PROBE_CAP + e] = h100_elements[lane][e];
    EXPECT(check(), "the layout recorded on an H100 passes: %s", why);
    for (int lane = 0; lane < 32; ++lane)
        for (int e = 0; e < 8; ++e)
            probe[VK_RS_PROBE_ELEMS + lane * VK_RS_PROBE_CAP + e] = h100_elements[lane][(e & 1) | ((e >> 1) & 1) << 2 | ((e >> 2) & 1) << 1];
    EXPECT(!check() && strstr(why, "lane 0 element 2 holds (8, 0), assumed (0, 8)"), "bits 1 and 2 exchanged fail: %s",
           why);
    passed += 2;

    /* two lanes' elements swapped */
    vk_rs_layout_expected(probe);
    float t = probe[VK_RS_PROBE_ELEMS + 5 * VK_RS_PROBE_CAP + 2];
    probe[VK_RS_PROBE_ELEMS + 5 * VK_RS_PROBE_CAP + 2] = probe[VK_RS_PROBE_ELEMS + 9 * VK_RS_PROBE_CAP + 2];
    probe[VK_RS_PROBE_ELEMS + 9 * VK_RS_PROBE_CAP + 2] = t;
    EXPECT(!check() && strstr(why, "accumulator layout differs from the one assumed") && strstr(why, "lane 5 element 2"),
           "a moved element fails: %s", why);
    ++passed;

    /* the transposed layout (rows and columns exchanged) */
    vk_rs_layout_expected(probe);
    for (unsigned lane = 0; lane < VK_RS_LANES; ++lane)
        for (unsigned e = 0; e < VK_RS_LEN; ++e) {
            unsigned r, c;
            vk_rs_layout_position(lane, e, &r, &c);
            probe[VK_RS_PROBE_ELEMS + lane * VK_RS_PROBE_CAP + e] = (float)(c * 16 + r);
        }
    EXPECT(!check() && strstr(why, "differs"), "a transposed layout fails: %s", why);
    ++passed;

    /* another element count per lane */
    vk_rs_layout_expected(probe);
    probe[VK_RS_PROBE_LENGTH] = 16;
    EXPECT(!check() && strstr(why, "16 elements per lane"), "16 elements per lane fail: %s", why);
    ++passed;

    /* an unwritten probe (NaN poison) fails */
    memset(probe, 0xff, sizeof probe);
    EXPECT(!check(), "an unwritten probe fails");
    ++passed;

    /* the f16 conversion feeding P.V moves an element */
    vk_rs_layout_expected(probe);
    probe[VK_RS_PROBE_PRODUCT + 17] = 18;
    EXPECT(!check() && strstr(why, "A operand") && strstr(why, "(1, 1)"), "a moved P element fails: %s", why);
    ++passed;

    /* the KHR probe's verdict names the KHR builds: there the product checks the
     * element moves that turn S into the A operand (tools/spirv_nv2khr --acc-to-a);
     * the loaded A's region is shown by the dump, never checked */
    const char *khr = "coopmat-khr-rs/decode-khr-rs";
    EXPECT(!vk_rs_layout_check_for(khr, probe, why, sizeof why) && !strncmp(why, khr, strlen(khr)), "KHR reason: %s", why);
    ++passed;
    vk_rs_layout_expected(probe);
    probe[VK_RS_PROBE_A_ELEMS + 3] = 1000;
    probe[VK_RS_PROBE_A_PRODUCT + 5] = 1000;
    EXPECT(vk_rs_layout_check_for(khr, probe, why, sizeof why), "the loaded A's region is not checked: %s", why);
    ++passed;

    /* the B operand built in registers (decode-nv-rs's direct K/V): mma's B fragment, each (k, n)
     * once; an exchanged pair of elements or an unwritten product fails */
    vk_rs_layout_expected(probe);
    EXPECT(vk_rs_layout_check_b(probe, why, sizeof why) && why[0] == '\0', "the assumed B layout passes: %s", why);
    unsigned k0, n0, k1, n1;
    vk_rs_layout_b_position(5, 0, &k0, &n0);
    vk_rs_layout_b_position(5, 1, &k1, &n1);
    EXPECT(k0 == 2 && n0 == 1 && k1 == 3 && n1 == 1, "lane 5 element 0/1 at (%u, %u), (%u, %u)", k0, n0, k1, n1);
    float held = probe[VK_RS_PROBE_B_PRODUCT + k0 * 16 + n0];
    probe[VK_RS_PROBE_B_PRODUCT + k0 * 16 + n0] = probe[VK_RS_PROBE_B_PRODUCT + k1 * 16 + n1];
    probe[VK_RS_PROBE_B_PRODUCT + k1 * 16 + n1] = held;
    EXPECT(!vk_rs_layout_check_b(probe, why, sizeof why) && strstr(why, "lane 5"), "an exchanged B pair fails: %s", why);
    memset(probe, 0xff, sizeof probe);
    EXPECT(!vk_rs_layout_check_b(probe, why, sizeof why), "an unwritten B product fails");
    ++passed;

    return avk_test_finish(passed, 0);
}
