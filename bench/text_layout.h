/* Widths and word wrapping for the human-readable tables (`attnvk bench`,
 * `attnvk devices`): 120 columns, or 80 with --compact or on a narrower terminal. */
#ifndef ATTNVK_TEXT_LAYOUT_H
#define ATTNVK_TEXT_LAYOUT_H

#include "report_buf.h"

enum { TEXT_WIDE = 120, TEXT_COMPACT = 80 };

/* COLUMNS when it holds a positive number, else the width of the terminal on fd, else 0 (unknown). */
int text_terminal_columns(int fd);
/* TEXT_COMPACT with compact or when stdout's terminal is known to be narrower than TEXT_WIDE; else TEXT_WIDE. */
int text_table_width(int compact);

/* Columns that UTF-8 text takes (one per code point: the tables use no wide characters). */
int text_columns(const char *s);
/* Appends s padded with spaces to width columns (left-aligned, or right-aligned). */
void text_pad(strbuf *b, const char *s, int width, int right);
/* Appends the words of s, the cursor being at column col, wrapping before width with
 * continuation lines indented by indent; a word longer than a line is cut. Ends the line. */
void text_wrap(strbuf *b, const char *s, int col, int indent, int width);

#endif
