/* What `advise`, `plan` and `energy` share on the command line: the input
 * and output options, reading the inputs into task rows (insights/), and
 * writing tables, JSON and line protocol. */
#ifndef TL_CLI_INSIGHTS_CLI_H
#define TL_CLI_INSIGHTS_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli/input.h"
#include "core/buf.h"
#include "core/requests.h"
#include "insights/insights.h"
#include "core/point.h"

#define MAX_SETTINGS 32

enum fmt { F_TABLE, F_JSON, F_LP };

typedef void (*tl_record_cb)(void *ctx, const struct tl_record *r);

struct common {
    struct tl_input_opts io;
    struct tl_parser_setting settings[MAX_SETTINGS];
    enum fmt fmt;
    const char *out_path;
    const char *requests_path;       /* --requests: a BPS submit YAML */
    struct tl_requests *requests;    /* its requests, the allocation of LSST quanta */
    uint64_t process_wide_rss;       /* LSST quanta whose max RSS is their process's (summary.h) */
    bool edges;                      /* the command reads dependencies stated apart (TL_REC_EDGE) */
};

#define COMMON_LONGOPTS                                                                            \
    {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},            \
        TL_INPUT_LONGOPTS, {"help", no_argument, NULL, 'h'},                                     \
        {"requests", required_argument, NULL, 'r'}

#define COMMON_HELP                                                                                \
    "  --format FMT        table (default), json, or lp (InfluxDB line protocol)\n"                \
    "  -o, --output FILE   write there instead of stdout\n"                                       \
    "  --format-in NAME    input format instead of auto-detection\n"                              \
    "  -O PARSER.KEY=VAL   parser option\n"                                                        \
    "  -q, --quiet         do not print rejected lines\n"                                          \
    TL_THREADS_HELP                                                                                \
    "  --requests BPS.yaml LSST quanta were allocated what this BPS submit YAML requests\n"        \
    "                      (pipetask: LABEL: requestMemory MB / requestCpus; else its defaults)\n"

/* The options every insight command shares; 1 handled, 0 not ours, -1 bad. */
int tl_cli_common_option(int c, char *arg, struct common *co, const char *cmd);
/* Reads every input into rs (a directory: the LSST metadata files under
 * it); the exit status so far. */
int tl_cli_read_records(struct common *co, int n, char **args, tl_record_cb add, void *ctx, const char *cmd);
/* tl_cli_read_records into task rows, done. */
int tl_cli_read_all(struct common *co, int n, char **args, struct tl_task_rows *rs, const char *cmd);
/* A point as line protocol (--format lp): the encoder the file sink uses;
 * *written counts it. */
void tl_cli_put_point(struct tl_buf *b, const struct tl_point *p, int *written);
/* b to --output (or stdout); the exit status. */
int tl_cli_write_out(struct common *co, struct tl_buf *b, const char *cmd);

/* "512GiB", "1.5TB", "64G", "100MB", "4096": bytes. KiB/MiB/GiB/TiB and bare
 * K/M/G/T are powers of 1024, KB/MB/GB/TB powers of 1000. */
bool tl_cli_parse_bytes(const char *s, double *out);
bool tl_cli_parse_num(const char *s, double lo, double hi, double *out);
/* A shortest round-trip number for JSON, null when not finite. */
void tl_cli_json_num(struct tl_buf *b, double v);
/* A number for the table: 3 significant digits, '-' when absent. */
const char *tl_cli_cell(char *buf, size_t cap, double v);
/* A number for the table without an exponent: 4 significant digits from
 * 0.001 up to 1e7, "<0.001" below (the exact value is in --format json). */
const char *tl_cli_plain(char *buf, size_t cap, double v);

/* The width of a table's name column: the longest of names (in characters,
 * not bytes), at least min and at most TL_NAME_MAX. */
#define TL_NAME_MAX 40
int tl_cli_name_width(const char *const *names, size_t n, int min);
/* "  name" padded to width; a longer name on a line of its own, the row's
 * numbers on the next, under the column. */
void tl_cli_name_cell(struct tl_buf *b, const char *name, int width);

#endif
