/* Where the user's tuning files live, and the process-wide view of them: each
 * device's file is read once, checked against the device, and either served
 * to the kernel prepare path or ignored with one warning (core/user_tuning.h). */
#include "core/user_tuning.h"
#include "core/cache.h"

#include "core/error.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int avk_tuning_dir(char *out, size_t n)
{
    const char *explicit_dir = getenv("ATTNVK_TUNING_DIR"), *xdg = getenv("XDG_DATA_HOME"), *home = getenv("HOME");
    if (explicit_dir && *explicit_dir) snprintf(out, n, "%s", explicit_dir);
    else if (xdg && *xdg == '/') snprintf(out, n, "%s/attnvk/tuning", xdg); /* XDG: absolute paths only */
    else if (home && *home) snprintf(out, n, "%s/.local/share/attnvk/tuning", home);
    else return 0;
    return 1;
}

/* "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3": a file name on any filesystem */
static void slug(const char *name, char *out, size_t n)
{
    size_t len = 0;
    for (const char *c = name; *c && len + 1 < n && len < 80; ++c) {
        if (isalnum((unsigned char)*c)) out[len++] = (char)tolower((unsigned char)*c);
        else if (len && out[len - 1] != '-') out[len++] = '-';
    }
    while (len && out[len - 1] == '-') --len;
    out[len] = '\0';
}

int avk_tuning_path(const attnvk_device_info *info, char *out, size_t n)
{
    char dir[768], name[96];
    if (!avk_tuning_dir(dir, sizeof dir)) return 0;
    avk_tuning_file id;
    memset(&id, 0, sizeof id);
    avk_tuning_file_identity(info, &id);
    slug(info->name, name, sizeof name);
    snprintf(out, n, "%s/%s-%s-%s.json", dir, id.api, name[0] ? name : "device", id.uuid[0] ? id.uuid : "no-uuid");
    return 1;
}

static int tuning_off(void)
{
    const char *v = getenv("ATTNVK_NO_TUNING");
    return v && *v && strcmp(v, "0") != 0;
}

/* ---- the files this process has read ---- */

typedef struct loaded_file {
    char path[1024];
    avk_tuning_file file; /* count 0 when ignored */
    char why[1200];       /* "" when usable */
} loaded_file;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static loaded_file *files;
static int nfiles;

/* The file of info's device, read (and warned about) on first use; call under lock. */
static const loaded_file *device_file(const attnvk_device_info *info)
{
    char path[1024];
    if (!avk_tuning_path(info, path, sizeof path)) return NULL;
    for (int i = 0; i < nfiles; ++i)
        if (strcmp(files[i].path, path) == 0) return &files[i];
    loaded_file *grown = realloc(files, sizeof *grown * (size_t)(nfiles + 1));
    if (!grown) return NULL;
    files = grown;
    loaded_file *f = &files[nfiles++];
    memset(f, 0, sizeof *f);
    snprintf(f->path, sizeof f->path, "%s", path);
    struct stat st;
    if (stat(path, &st) != 0) return f; /* no file: nothing tuned, nothing to warn about */
    char saved[2048];
    snprintf(saved, sizeof saved, "%s", attnvk_last_error()); /* a prepare's own error stays its own */
    if (avk_tuning_file_read(path, &f->file) != ATTNVK_OK) {
        snprintf(f->why, sizeof f->why, "%s", attnvk_last_error());
    } else {
        char buf[320];
        const char *mismatch = avk_tuning_file_mismatch(&f->file, info, buf, sizeof buf);
        if (mismatch) {
            snprintf(f->why, sizeof f->why, "%.800s: %.380s", path, mismatch);
            avk_tuning_file_free(&f->file);
        }
    }
    if (f->why[0]) fprintf(stderr, "attnvk: warning: tuning file ignored: %s\n", f->why);
    if (saved[0]) avk_fail(ATTNVK_ERROR_BACKEND, "%s", saved);
    else avk_clear_error();
    return f;
}

int avk_user_tuning_find(const attnvk_device_info *info, const attnvk_problem *p, avk_tuned_entry *out)
{
    if (tuning_off()) return 0;
    avk_tuned_entry want;
    memset(&want, 0, sizeof want);
    avk_tuned_set_class(&want, p);
    int found = 0;
    pthread_mutex_lock(&lock);
    const loaded_file *f = device_file(info);
    for (int i = 0; f && i < f->file.count && !found; ++i)
        if (avk_tuned_same_class(&f->file.entries[i], &want)) {
            *out = f->file.entries[i]; /* a copy: tune may rewrite the file meanwhile */
            found = 1;
        }
    pthread_mutex_unlock(&lock);
    return found;
}

void avk_user_tuning_status(const attnvk_device_info *info, char *out, size_t n, int *count)
{
    *count = 0;
    if (tuning_off()) {
        snprintf(out, n, "off (ATTNVK_NO_TUNING)");
        return;
    }
    pthread_mutex_lock(&lock);
    const loaded_file *f = device_file(info);
    if (!f) snprintf(out, n, "none (no tuning folder: set XDG_DATA_HOME or HOME)");
    else if (f->why[0]) snprintf(out, n, "ignored: %s", f->why);
    else if (!f->file.count) snprintf(out, n, "none (%s)", f->path);
    else snprintf(out, n, "%s (%d entr%s)", f->path, f->file.count, f->file.count == 1 ? "y" : "ies");
    if (f) *count = f->file.count;
    pthread_mutex_unlock(&lock);
}

attnvk_status avk_user_tuning_save(const attnvk_device_info *info, const avk_tuned_entry *entries, int n, char *path,
                                   size_t path_size)
{
    char dir[768];
    if (!avk_tuning_dir(dir, sizeof dir) || !avk_tuning_path(info, path, path_size))
        return avk_fail(ATTNVK_ERROR_IO, "no folder for tuning files: set ATTNVK_TUNING_DIR, XDG_DATA_HOME or HOME");
    if (avk_make_dirs(dir) != 0) return avk_fail(ATTNVK_ERROR_IO, "%s: %s", dir, strerror(errno));
    /* keep the other classes of a valid file of this device, driver and version */
    avk_tuning_file merged;
    char buf[320];
    if (avk_tuning_file_read(path, &merged) != ATTNVK_OK || avk_tuning_file_mismatch(&merged, info, buf, sizeof buf)) {
        avk_tuning_file_free(&merged);
        memset(&merged, 0, sizeof merged);
    }
    avk_clear_error();
    avk_tuning_file_identity(info, &merged);
    for (int i = 0; i < n; ++i) {
        int slot = merged.count;
        for (int j = 0; j < merged.count; ++j)
            if (avk_tuned_same_class(&merged.entries[j], &entries[i])) slot = j;
        if (slot == merged.count) {
            avk_tuned_entry *grown = realloc(merged.entries, sizeof *grown * (size_t)(merged.count + 1));
            if (!grown) {
                avk_tuning_file_free(&merged);
                return avk_fail(ATTNVK_ERROR_OUT_OF_MEMORY, "out of host memory");
            }
            merged.entries = grown;
            ++merged.count;
        }
        merged.entries[slot] = entries[i];
    }
    attnvk_status s = avk_tuning_file_write(path, &merged);
    avk_tuning_file_free(&merged);
    /* this process reads the new file on its next prepare */
    pthread_mutex_lock(&lock);
    for (int i = 0; i < nfiles; ++i)
        if (strcmp(files[i].path, path) == 0) {
            avk_tuning_file_free(&files[i].file);
            files[i] = files[--nfiles];
            break;
        }
    pthread_mutex_unlock(&lock);
    return s;
}
