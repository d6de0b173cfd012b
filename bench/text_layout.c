#include "text_layout.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

int text_terminal_columns(int fd)
{
    const char *env = getenv("COLUMNS");
    if (env && *env) {
        char *end;
        long v = strtol(env, &end, 10);
        if (*end == '\0' && v > 0 && v < 100000) return (int)v;
    }
    struct winsize ws;
    if (isatty(fd) && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    return 0;
}

int text_table_width(int compact)
{
    int cols = text_terminal_columns(STDOUT_FILENO);
    return compact || (cols > 0 && cols < TEXT_WIDE) ? TEXT_COMPACT : TEXT_WIDE;
}

int text_columns(const char *s)
{
    int n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; ++p)
        if ((*p & 0xc0) != 0x80) ++n; /* continuation bytes take no column */
    return n;
}

void text_pad(strbuf *b, const char *s, int width, int right)
{
    int gap = width - text_columns(s);
    if (right)
        for (int i = 0; i < gap; ++i) sb_puts(b, " ");
    sb_puts(b, s);
    if (!right)
        for (int i = 0; i < gap; ++i) sb_puts(b, " ");
}

/* Appends n bytes of s. */
static void put_bytes(strbuf *b, const char *s, size_t n)
{
    char piece[256];
    while (n > 0) {
        size_t m = n < sizeof piece - 1 ? n : sizeof piece - 1;
        memcpy(piece, s, m);
        piece[m] = '\0';
        sb_puts(b, piece);
        s += m, n -= m;
    }
}

/* Bytes of the first `columns` code points of s (at most len bytes). */
static size_t bytes_for_columns(const char *s, size_t len, int columns)
{
    size_t i = 0;
    for (int c = 0; i < len; ++c) {
        if (c == columns) break;
        ++i;
        while (i < len && ((unsigned char)s[i] & 0xc0) == 0x80) ++i;
    }
    return i;
}

void text_wrap(strbuf *b, const char *s, int col, int indent, int width)
{
    int room = width - 1 - col; /* the last column stays free: no terminal wraps on its own */
    int line_room = width - 1 - indent;
    if (line_room < 8) line_room = 8;
    int at_line_start = 1;
    static const char spaces[] = " \t\r\n"; /* a reason may carry a compiler log's line breaks */
    while (*s) {
        s += strspn(s, spaces);
        if (!*s) break;
        size_t len = strcspn(s, spaces);
        char word[1024];
        size_t wl = len < sizeof word - 1 ? len : sizeof word - 1;
        memcpy(word, s, wl);
        word[wl] = '\0';
        int cols = text_columns(word);
        int need = cols + (at_line_start ? 0 : 1);
        if (need > room && !at_line_start) { /* next line */
            sb_puts(b, "\n");
            for (int i = 0; i < indent; ++i) sb_puts(b, " ");
            room = line_room;
            at_line_start = 1;
            continue;
        }
        if (!at_line_start) sb_puts(b, " "), --room;
        if (cols > room) { /* longer than a whole line: cut it */
            size_t cut = bytes_for_columns(s, len, room > 1 ? room : 1);
            put_bytes(b, s, cut);
            s += cut;
            room = 0;
            at_line_start = 0;
            continue;
        }
        put_bytes(b, s, len);
        room -= cols;
        at_line_start = 0;
        s += len;
    }
    sb_puts(b, "\n");
}
