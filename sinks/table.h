/* The per-task table: one row per finished task attempt, the same columns
 * for every input format, for a notebook (`pd.read_csv`, `pl.read_csv`,
 * `pd.read_json(lines=True)`) and for `tasklens records`.
 *
 * Columns, in order: source, workflow, category, task_id, task_key,
 * attempt, final, result, exit_code, host, worker, start, end (ISO 8601
 * UTC), start_epoch_s, end_epoch_s, the data id (all extra tags as
 * "key=value ..." in one `data_id` column, or one column per tag asked
 * for), then every metric asked for, named with its unit (wall_time_s,
 * max_rss_bytes; bandwidth in bit/s). An absent value is an empty cell
 * (a missing key in NDJSON), never 0. */
#ifndef TL_SINKS_TABLE_H
#define TL_SINKS_TABLE_H

#include <stdint.h>

#include "core/buf.h"
#include "core/record.h"

enum tl_table_format { TL_TABLE_CSV, TL_TABLE_TSV, TL_TABLE_NDJSON };

#define TL_TABLE_MAX_TAGS 16

struct tl_table {
    enum tl_table_format format;
    int nmetrics;
    int metrics[TL_M_COUNT];
    int ntags;                           /* 0: one data_id column */
    const char *tags[TL_TABLE_MAX_TAGS]; /* tag columns asked for */
    uint64_t cells_not_utf8;             /* names written with U+FFFD for bad bytes */
};

/* csv, tsv, ndjson (or jsonl); false when the name is none of them. */
bool tl_table_format_named(const char *name, enum tl_table_format *out);

/* The default columns: every metric a task attempt can have (not a
 * sample's value, not the workflow's state), so that tables of any two
 * inputs concatenate. */
void tl_table_default_metrics(struct tl_table *t);

/* The header line (CSV and TSV; nothing for NDJSON). */
void tl_table_header(const struct tl_table *t, struct tl_buf *out);

/* r's row, when r is a finished task attempt; false (nothing written)
 * otherwise. */
bool tl_table_row(struct tl_table *t, const struct tl_record *r, struct tl_buf *out);

#endif
