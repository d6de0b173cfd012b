#include "cuda/nccl_loader.h"
#include "core/dynlib.h"
#include "core/error.h"

#include <stdio.h>
#include <string.h>

#define AVK_CCL_SYMBOL(ret, fn, params) {#fn, (void **)&table.fn},

/* The soname first; the toolkit's folder for installs that ldconfig does not list. */
static const char *const nccl_default_names[] = {"libnccl.so.2", "/usr/local/cuda/lib64/libnccl.so.2", NULL};

static const char *const *nccl_names = nccl_default_names;
static avk_ccl nccl_table;
static avk_dynlib *nccl_lib;
static int nccl_tried;
static char nccl_why[512];

static attnvk_status bind(avk_dynlib *lib, const char *label, avk_ccl *out)
{
    avk_ccl table;
    memset(&table, 0, sizeof table);
    const avk_symbol symbols[] = {AVK_CCL_FUNCTIONS(AVK_CCL_SYMBOL)};
    attnvk_status s = avk_dynlib_bind(lib, symbols, (int)(sizeof symbols / sizeof *symbols));
    if (s != ATTNVK_OK) return s;
    table.label = label;
    snprintf(table.library, sizeof table.library, "%s", avk_dynlib_name(lib));
    if (table.ncclGetVersion(&table.version) != AVK_CCL_SUCCESS) table.version = 0;
    *out = table;
    return ATTNVK_OK;
}

const avk_ccl *avk_nccl_load(void)
{
    if (nccl_lib) return &nccl_table;
    if (!nccl_tried) {
        nccl_tried = 1;
        avk_dynlib *lib = avk_dynlib_open(nccl_names);
        if (lib && bind(lib, "nccl", &nccl_table) != ATTNVK_OK) {
            avk_dynlib_close(lib);
            lib = NULL;
        }
        if (lib) {
            nccl_lib = lib;
            return &nccl_table;
        }
        snprintf(nccl_why, sizeof nccl_why, "nccl: %s", attnvk_last_error());
    }
    avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s", nccl_why);
    return NULL;
}

void avk_nccl_unload(void)
{
    avk_dynlib_close(nccl_lib);
    nccl_lib = NULL;
    nccl_tried = 0;
    nccl_why[0] = '\0';
    memset(&nccl_table, 0, sizeof nccl_table);
}

void avk_nccl_test_library_names(const char *const *names)
{
    avk_nccl_unload();
    nccl_names = names ? names : nccl_default_names;
}
