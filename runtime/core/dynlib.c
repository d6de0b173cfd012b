#include "core/dynlib.h"
#include "core/error.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

struct avk_dynlib {
    void *handle;
    char name[128];
};

avk_dynlib *avk_dynlib_open(const char *const *names)
{
    char first_error[512] = "";
    for (int i = 0; names[i]; ++i) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (h) {
            avk_dynlib *lib = calloc(1, sizeof *lib);
            if (!lib) {
                dlclose(h);
                avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
                return NULL;
            }
            lib->handle = h;
            strncpy(lib->name, names[i], sizeof lib->name - 1);
            return lib;
        }
        if (i == 0) {
            const char *e = dlerror();
            strncpy(first_error, e ? e : "not found", sizeof first_error - 1);
        }
    }
    avk_fail(ATTNVK_ERROR_UNAVAILABLE, "cannot load %s: %s", names[0], first_error);
    return NULL;
}

void *avk_dynlib_sym(avk_dynlib *lib, const char *symbol)
{
    return lib ? dlsym(lib->handle, symbol) : NULL;
}

const char *avk_dynlib_name(const avk_dynlib *lib) { return lib ? lib->name : ""; }

void avk_dynlib_close(avk_dynlib *lib)
{
    if (!lib) return;
    dlclose(lib->handle);
    free(lib);
}

attnvk_status avk_dynlib_bind(avk_dynlib *lib, const avk_symbol *symbols, int count)
{
    for (int i = 0; i < count; ++i) {
        void *p = avk_dynlib_sym(lib, symbols[i].name);
        if (!p)
            return avk_fail(ATTNVK_ERROR_UNAVAILABLE, "%s lacks symbol %s", avk_dynlib_name(lib),
                            symbols[i].name);
        *symbols[i].slot = p;
    }
    return ATTNVK_OK;
}
