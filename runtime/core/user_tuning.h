/* The user's tuning files: what `attnvk tune` measured on this machine, read
 * before the built-in tables (core/tuning.h). One JSON file per device in
 * $ATTNVK_TUNING_DIR, else $XDG_DATA_HOME/attnvk/tuning, else
 * ~/.local/share/attnvk/tuning; named by API, device name and UUID, and valid
 * for one driver version and attnvk version. The first line holds an XXH64 of
 * the rest (core/checksum.h); a file that does not verify, parse or match the
 * device is ignored with a warning, never trusted. ATTNVK_NO_TUNING=1 ignores
 * every file. */
#ifndef ATTNVK_USER_TUNING_H
#define ATTNVK_USER_TUNING_H

#include "attnvk/attnvk.h"
#include "core/tuning.h"

#include <stddef.h>

/* One tuned configuration and the shape class it serves: what the tables key on
 * (dtype, decode or prefill, the head dims) plus the kv format. */
typedef struct avk_tuned_entry {
    attnvk_dtype dtype;
    int decode;
    int head_dim, head_dim_v;
    attnvk_kv_format kv_format;
    char variant[32];
    int tile_br, tile_bc, workgroup_size;
    int extra[4];
    int split_kv;                  /* 0: the backend plans the splits */
    double median_ms, baseline_ms; /* this configuration and the table's pick, on case_name */
    char case_name[96];
} avk_tuned_entry;

typedef struct avk_tuning_file {
    char api[16];
    char device[256];
    char uuid[40];                 /* 32 hex digits, or "" */
    char driver_version[64];
    char attnvk_version[64];
    avk_tuned_entry *entries;      /* malloc'd */
    int count;
} avk_tuning_file;

/* The class fields of e from p (the configuration fields are left alone). */
void avk_tuned_set_class(avk_tuned_entry *e, const attnvk_problem *p);
int avk_tuned_same_class(const avk_tuned_entry *a, const avk_tuned_entry *b);
/* "f16 prefill D=64" (+ "/Dv", + kv format where not the dtype) */
void avk_tuned_class_text(const avk_tuned_entry *e, char *out, size_t n);
/* The table-shaped view a backend's chooser takes; out->variant points into e. */
void avk_tuned_as_tuning(const avk_tuned_entry *e, avk_tuning *out);
/* The configuration fields of e from t. */
void avk_tuned_set_config(avk_tuned_entry *e, const avk_tuning *t);

/* user_tuning_file.c: the format. read: ATTNVK_OK, or an error whose message says
 * why the file cannot be trusted (missing, checksum, syntax). */
attnvk_status avk_tuning_file_read(const char *path, avk_tuning_file *out);
attnvk_status avk_tuning_file_write(const char *path, const avk_tuning_file *f); /* temp file + rename */
void avk_tuning_file_free(avk_tuning_file *f);
/* The identity fields for a device, as this build writes them. */
void avk_tuning_file_identity(const attnvk_device_info *info, avk_tuning_file *f);
/* NULL when f was made for this device, driver and attnvk version, else why not. */
const char *avk_tuning_file_mismatch(const avk_tuning_file *f, const attnvk_device_info *info, char *buf, size_t n);

/* user_tuning.c: the folder (0 when neither the override, XDG_DATA_HOME nor HOME is set)
 * and a device's file in it. */
int avk_tuning_dir(char *out, size_t n);
int avk_tuning_path(const attnvk_device_info *info, char *out, size_t n);
/* 1 with the tuned entry of p's class on the device in *out; 0 when there is none,
 * ATTNVK_NO_TUNING=1, or the file was ignored (a one-line warning on stderr, once per
 * file and process). */
int avk_user_tuning_find(const attnvk_device_info *info, const attnvk_problem *p, avk_tuned_entry *out);
/* For `attnvk devices`: "<path> (N entries)", "none", "off (ATTNVK_NO_TUNING=1)" or
 * "ignored: <why>"; *count gets the usable entries. */
void avk_user_tuning_status(const attnvk_device_info *info, char *out, size_t n, int *count);
/* `attnvk tune`: replaces the entries of the same classes in the device's file (a valid
 * one is kept otherwise; an invalid one is replaced whole) and writes it atomically. */
attnvk_status avk_user_tuning_save(const attnvk_device_info *info, const avk_tuned_entry *entries, int n, char *path,
                                   size_t path_size);

#endif
