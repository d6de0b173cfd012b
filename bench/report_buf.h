/* A growable text buffer for the report, with HTML escaping. */
#ifndef ATTNVK_REPORT_BUF_H
#define ATTNVK_REPORT_BUF_H

#include <stdbool.h>
#include <stddef.h>

typedef struct strbuf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed: the text is incomplete */
} strbuf;

void sb_free(strbuf *b);
void sb_puts(strbuf *b, const char *s);
void sb_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Text from a results file, escaped for HTML text and attribute values
 * (& < > " ' become entities; control characters are dropped). */
void sb_html(strbuf *b, const char *text);
/* sb_printf, then sb_html of the formatted text. */
void sb_htmlf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
