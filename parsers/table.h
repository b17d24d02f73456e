/* Header-keyed delimited tables, read a line at a time, for the parsers of
 * formats that are one: Nextflow traces (TAB or `trace.sep`), Snakemake
 * benchmarks (TAB), codecarbon's CSV (pandas, so "quoted, with "" inside"
 * when a value holds a comma or a quote).
 *
 * Bytes come in any split; complete lines go to the caller's callback
 * (a trailing CR dropped, a line over max_line counted and skipped). The
 * With CSV quoting a line break inside a quoted cell belongs to the cell
 * (RFC 4180, as pandas writes a project name with a newline): the record
 * goes on to the line that closes it, and is numbered by its first line.
 * The
 * first line is the header: its names are kept, so a parser finds its
 * columns by name in any order and subset, as the producers' own docs ask
 * (they add, drop and reorder columns across versions). Each later line
 * is split into cells, pointers into the line (quoted cells unquoted into
 * a scratch copy). The state saves and restores for checkpoints. */
#ifndef TL_PARSERS_TABLE_H
#define TL_PARSERS_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"

#define TL_TABLE_MAX_COLS 128

struct tl_table {
    char sep;     /* '\t' or ','; 0: the header's (a TAB if it has one, else a comma) */
    bool quotes;  /* CSV quoting */
    size_t max_line;
    uint64_t lines;        /* lines seen, the header included */
    struct tl_buf partial; /* a line not complete yet */
    bool skipping;         /* inside a line over max_line */
    uint8_t qstate;        /* CSV quoting: where the record being read is (table.c) */
    uint32_t record_lines; /* line breaks inside the record being read (quoted cells) */
    struct tl_buf header;  /* the header line as read */
    int ncols;
    const char *col[TL_TABLE_MAX_COLS]; /* names, NUL-terminated, in header's copy */
    struct tl_buf names;                /* the names' storage */
    /* the row just split */
    int ncells;
    const char *cell[TL_TABLE_MAX_COLS];
    size_t cell_len[TL_TABLE_MAX_COLS];
    struct tl_buf unquoted;
};

/* What the table tells its parser. `header`: the header was read (or
 * restored), columns may be looked up. `row`: a data line, split into
 * cells (line: its number). `raw`: optional; a line handed over whole
 * before any splitting, true when the parser took it (JSON lines). */
struct tl_table_cb {
    void (*header)(void *ctx);
    void (*row)(void *ctx, uint64_t line);
    void (*too_long)(void *ctx, uint64_t line);
    bool (*raw)(void *ctx, const char *line, size_t n, uint64_t no);
    /* optional: the input ended inside a quoted cell (else a row) */
    void (*unterminated)(void *ctx, uint64_t line);
    void *ctx;
};

void tl_table_init(struct tl_table *t, char sep, bool quotes, size_t max_line);
void tl_table_free(struct tl_table *t);

/* The column's index, or -1. */
int tl_table_col(const struct tl_table *t, const char *name);
/* The cell of column c in the current row as a string (NULL when c < 0 or
 * the row is short). */
static inline const char *tl_table_cell(const struct tl_table *t, int c, size_t *n)
{
    if (c < 0 || c >= t->ncells) return NULL;
    *n = t->cell_len[c];
    return t->cell[c];
}

enum tl_err tl_table_feed(struct tl_table *t, const char *buf, size_t len, const struct tl_table_cb *cb);
/* A last line without a newline is read as complete. */
void tl_table_finish(struct tl_table *t, const struct tl_table_cb *cb);

/* Rows with more cells than the header, from a separator written inside a
 * value (Nextflow writes values as they are): the cells from column c on
 * are glued back into c while the row has too many. */
void tl_table_glue(struct tl_table *t, int c);

void tl_table_save(const struct tl_table *t, struct tl_buf *b);
/* Restores into a table just initialized; calls cb->header when a header
 * was saved. */
bool tl_table_restore(struct tl_table *t, const uint8_t **p, const uint8_t *end,
                      const struct tl_table_cb *cb);

/* A table parser's checkpoint: a 4-byte magic, its stats and counters,
 * then the table (header, a line in progress). Restore leaves *p after it,
 * for what the parser saves beyond; false when damaged. */
struct tl_parse_stats;
void tl_table_state_save(struct tl_buf *b, const char *magic, const struct tl_parse_stats *st,
                         const uint64_t *counters, size_t n, const struct tl_table *t);
bool tl_table_state_restore(const uint8_t **p, const uint8_t *end, const char *magic,
                            struct tl_parse_stats *st, uint64_t *counters, size_t n,
                            struct tl_table *t, const struct tl_table_cb *cb);

/* "1.5", " 2 ", "1e3" as a number: false for an empty cell, "-", "NA" and
 * anything not wholly a number. */
bool tl_cell_number(const char *s, size_t n, double *out);

#endif
