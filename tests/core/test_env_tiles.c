/* The backward's tile overrides' parser (core/tuning.c avk_env_tiles, behind
 * ATTNVK_CUDA_BWD_TILES, ATTNVK_OPENCL_BWD_TILES and ATTNVK_VK_BWD_TILES):
 * named keys set, the rest untouched, unset or empty accepted, bad tokens refused. */
#include "core/tuning.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static const char *const keys[3] = {"nsg", "stream", "dq_nsg"};

/* $ATTNVK_VK_BWD_TILES (a real knob; the parser is the same for all three) = text (NULL: unset)
 * parses as want (1/0) into {w0, w1, w2} from {4, 16, 8} */
static int case_of(const char *text, int want, int w0, int w1, int w2)
{
    if (text) setenv("ATTNVK_VK_BWD_TILES", text, 1);
    else unsetenv("ATTNVK_VK_BWD_TILES");
    int v[3] = {4, 16, 8};
    const int got = avk_env_tiles("ATTNVK_VK_BWD_TILES", keys, 3, v);
    const int ok = got == want && (!want || (v[0] == w0 && v[1] == w1 && v[2] == w2));
    EXPECT(ok, "'%s': %d {%d, %d, %d} (want %d {%d, %d, %d})", text ? text : "(unset)", got, v[0], v[1], v[2], want, w0, w1, w2);
    return ok;
}

int main(void)
{
    int passed = 0, failed = 0;
    const int results[] = {
        case_of(NULL, 1, 4, 16, 8),
        case_of("", 1, 4, 16, 8),
        case_of("stream=32", 1, 4, 32, 8),
        case_of("dq_nsg=2,nsg=8", 1, 8, 16, 2),
        case_of("nsg=256,stream=1", 1, 256, 1, 8),
        case_of("nsg=0", 0, 0, 0, 0),
        case_of("nsg=257", 0, 0, 0, 0),
        case_of("nsg=-4", 0, 0, 0, 0),
        case_of("rows=4", 0, 0, 0, 0),
        case_of("nsg", 0, 0, 0, 0),
        case_of("nsg=4,,stream=x", 0, 0, 0, 0),
        case_of("NSG=4", 0, 0, 0, 0),
    };
    for (size_t i = 0; i < sizeof results / sizeof *results; ++i) results[i] ? ++passed : ++failed;
    return avk_test_finish(passed, failed);
}
