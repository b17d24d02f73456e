/* tasklens advise | plan | energy: what the task records say about sizing,
 * capacity and energy, per category. The README's "Insights" section
 * documents every formula; this file is its implementation.
 *
 * All three read their inputs like `summary` and keep one compact row per
 * finished attempt (about 130 bytes), so every number is exact, not
 * sketched: these are batch questions over one run. */
#include <getopt.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cli.h"
#include "input.h"
#include "intern.h"
#include "lineproto.h"
#include "numfmt.h"
#include "quantile.h"
#include "summary.h"

#define MAX_SETTINGS 32
#define MAX_NODES 8
#define MAX_COUNTS 64
#define GIB 1073741824.0

/* ------------------------------------------------------------ the rows */

enum { V_WALL, V_CPU, V_CORES, V_MEM, V_DISK, V_REQ_CORES, V_REQ_MEM, V_REQ_DISK,
       V_ALLOC_CORES, V_ALLOC_MEM, V_ALLOC_DISK, V_LIM_CORES, V_LIM_MEM, V_LIM_DISK, NV };

static const enum tl_metric row_metric[NV] = {
    TL_M_WALL_TIME_S,     TL_M_CPU_TIME_S,    TL_M_CORES,          TL_M_MAX_RSS_BYTES,
    TL_M_DISK_BYTES,      TL_M_REQ_CORES,     TL_M_REQ_MEMORY_BYTES, TL_M_REQ_DISK_BYTES,
    TL_M_ALLOC_CORES,     TL_M_ALLOC_MEMORY_BYTES, TL_M_ALLOC_DISK_BYTES, TL_M_LIMIT_CORES,
    TL_M_LIMIT_MEMORY_BYTES, TL_M_LIMIT_DISK_BYTES};

struct row {
    double v[NV]; /* NAN when absent */
    int32_t cat, wf;
    bool exhausted, final;
};

/* Distinct names (categories, workflows): interned while reading, ids in
 * first-seen order; names_sort then renumbers them in byte order. */
struct names {
    struct tl_intern *in;
    const char **s; /* by id, after names_sort */
    size_t n;
};

struct rows {
    struct row *r;
    size_t n, cap;
    struct names cats, wfs;
    int64_t newest_ns;
    uint64_t process_wide_rss; /* LSST quanta whose max RSS is their process's (summary.h) */
    bool oom;
};

static int32_t name_id(struct names *nm, const char *s, bool *oom)
{
    if (!s || !*s) s = "default";
    if (!nm->in && !(nm->in = tl_intern_new((size_t)256 << 20))) {
        *oom = true;
        return 0;
    }
    int32_t id = tl_intern(nm->in, s, strlen(s));
    if (id < 0) *oom = true;
    return id < 0 ? 0 : id;
}

struct name_pos {
    const char *s;
    int32_t id;
};

static int cmp_name_pos(const void *a, const void *b)
{
    return strcmp(((const struct name_pos *)a)->s, ((const struct name_pos *)b)->s);
}

/* Renumbers the names in byte order (and the rows' ids with them), so
 * every output lists them in the same order whatever the input order. */
static bool names_sort(struct names *nm, struct row *r, size_t nrows, bool wf)
{
    nm->n = nm->in ? tl_intern_count(nm->in) : 0;
    if (!nm->n) return true;
    struct name_pos *pos = malloc(nm->n * sizeof *pos);
    int32_t *newid = malloc(nm->n * sizeof *newid);
    nm->s = malloc(nm->n * sizeof *nm->s);
    if (!pos || !newid || !nm->s) {
        free(pos);
        free(newid);
        return false;
    }
    for (size_t i = 0; i < nm->n; i++) pos[i] = (struct name_pos){tl_intern_str(nm->in, (int32_t)i), (int32_t)i};
    qsort(pos, nm->n, sizeof *pos, cmp_name_pos);
    for (size_t j = 0; j < nm->n; j++) {
        newid[pos[j].id] = (int32_t)j;
        nm->s[j] = pos[j].s;
    }
    for (size_t i = 0; i < nrows; i++) {
        int32_t *id = wf ? &r[i].wf : &r[i].cat;
        *id = newid[*id];
    }
    free(pos);
    free(newid);
    return true;
}

static void names_free(struct names *nm)
{
    free(nm->s);
    tl_intern_free(nm->in);
}

static void collect(void *ctx, const struct tl_record *r)
{
    struct rows *rs = ctx;
    if (r->kind != TL_REC_TASK || rs->oom) return;
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? rs->cap * 2 : 1024;
        struct row *p = realloc(rs->r, cap * sizeof *p);
        if (!p) {
            rs->oom = true;
            return;
        }
        rs->r = p;
        rs->cap = cap;
    }
    struct row *w = &rs->r[rs->n++];
    for (int i = 0; i < NV; i++) w->v[i] = tl_record_has(r, row_metric[i]) ? r->v[row_metric[i]] : NAN;
    w->cat = name_id(&rs->cats, r->category, &rs->oom);
    w->wf = name_id(&rs->wfs, r->workflow, &rs->oom);
    w->exhausted = r->result && !strcmp(r->result, "RESOURCE_EXHAUSTION");
    w->final = r->final;
    if (r->time_ns > rs->newest_ns) rs->newest_ns = r->time_ns;
}

/* ------------------------------------------------------------ helpers */

/* "512GiB", "1.5TB", "64G", "100MB", "4096": bytes. KiB/MiB/GiB/TiB and bare
 * K/M/G/T are powers of 1024, KB/MB/GB/TB powers of 1000. */
static bool parse_bytes(const char *s, double *out)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s || !(x >= 0) || !isfinite(x)) return false;
    static const char *const suf[] = {"KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB",
                                      "K",   "M",   "G",   "T",   "B", ""};
    static const double mul[] = {0x1p10, 0x1p20, 0x1p30, 0x1p40, 1e3, 1e6, 1e9, 1e12,
                                 0x1p10, 0x1p20, 0x1p30, 0x1p40, 1, 1};
    for (size_t i = 0; i < sizeof suf / sizeof *suf; i++)
        if (!strcmp(end, suf[i])) {
            *out = x * mul[i];
            return true;
        }
    return false;
}

static bool parse_num(const char *s, double lo, double hi, double *out)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s || *end || !(x >= lo && x <= hi)) return false;
    *out = x;
    return true;
}

/* Sorted finite values of column c for the rows of category cat (cat < 0:
 * all); returns the count. vals has room for every row. */
static size_t column(const struct rows *rs, int32_t cat, int c, double *vals)
{
    size_t n = 0;
    for (size_t i = 0; i < rs->n; i++)
        if ((cat < 0 || rs->r[i].cat == cat) && isfinite(rs->r[i].v[c])) vals[n++] = rs->r[i].v[c];
    tl_sort_doubles(vals, n);
    return n;
}

static double q_or_nan(const double *v, size_t n, double q)
{
    return n ? tl_quantile_sorted(v, n, q) : NAN;
}

/* A shortest round-trip number for JSON, null when not finite. */
static void json_num(struct tl_buf *b, double v)
{
    if (isfinite(v)) tl_buf_put_double(b, v);
    else tl_buf_puts(b, "null");
}

/* A number for the table: 3 significant digits, '-' when absent. */
static const char *cell(char *buf, size_t cap, double v)
{
    if (!isfinite(v)) snprintf(buf, cap, "-");
    else snprintf(buf, cap, "%.3g", v);
    return buf;
}

/* Line protocol: measurement, then tags (pairs, NULL value skipped). */
static bool lp_begin(struct tl_buf *b, const char *meas, const char *const *tags, int ntags)
{
    tl_buf_puts(b, meas);
    for (int i = 0; i < ntags; i++) {
        const char *v = tags[2 * i + 1];
        if (!v || !*v) continue;
        tl_buf_putc(b, ',');
        tl_buf_puts(b, tags[2 * i]);
        tl_buf_putc(b, '=');
        if (!tl_lp_put_escaped(b, v)) return false;
    }
    return true;
}

static void lp_field(struct tl_buf *b, bool *first, const char *k, double v)
{
    if (!isfinite(v)) return; /* line protocol has no NaN: the field is absent */
    tl_buf_putc(b, *first ? ' ' : ',');
    *first = false;
    tl_buf_puts(b, k);
    tl_buf_putc(b, '=');
    tl_buf_put_double(b, v);
}

static void lp_int(struct tl_buf *b, bool *first, const char *k, int64_t v)
{
    tl_buf_putc(b, *first ? ' ' : ',');
    *first = false;
    tl_buf_printf(b, "%s=%lldi", k, (long long)v);
}

static void lp_end(struct tl_buf *b, size_t start, bool first, int64_t ns, int *written)
{
    if (first) { /* no field: not a point */
        b->len = start;
        return;
    }
    tl_buf_printf(b, " %lld\n", (long long)ns);
    (*written)++;
}

/* ------------------------------------------------------------ shared CLI */

enum fmt { F_TABLE, F_JSON, F_LP };

struct common {
    struct tl_input_opts io;
    struct tl_parser_setting settings[MAX_SETTINGS];
    enum fmt fmt;
    const char *out_path;
};

/* The options every insight command shares; 1 handled, 0 not ours, -1 bad. */
static int common_option(int c, char *arg, struct common *co, const char *cmd)
{
    switch (c) {
    case 'f':
        if (!strcmp(arg, "table")) co->fmt = F_TABLE;
        else if (!strcmp(arg, "json")) co->fmt = F_JSON;
        else if (!strcmp(arg, "lp")) co->fmt = F_LP;
        else {
            fprintf(stderr, "%s: --format is table, json or lp\n", cmd);
            return -1;
        }
        return 1;
    case 'o': co->out_path = arg; return 1;
    default: return tl_input_option(c, arg, &co->io, co->settings, MAX_SETTINGS, cmd);
    }
}

#define COMMON_LONGOPTS                                                                            \
    {"format", required_argument, NULL, 'f'}, {"output", required_argument, NULL, 'o'},            \
        {"format-in", required_argument, NULL, 'i'}, {"max-errors", required_argument, NULL, 'e'}, \
        {"quiet", no_argument, NULL, 'q'}, {"help", no_argument, NULL, 'h'}

#define COMMON_HELP                                                                                \
    "  --format FMT        table (default), json, or lp (InfluxDB line protocol)\n"                \
    "  -o, --output FILE   write there instead of stdout\n"                                       \
    "  --format-in NAME    input format instead of auto-detection\n"                              \
    "  -O PARSER.KEY=VAL   parser option\n"                                                        \
    "  -q, --quiet         do not print rejected lines\n"

/* Reads every input into rs (a directory: the LSST metadata files under
 * it); the exit status so far. */
static int read_all(struct common *co, int n, char **args, struct rows *rs, const char *cmd)
{
    co->io.settings = co->settings;
    co->io.kinds = TL_KIND(TL_REC_TASK); /* collect() keeps finished attempts only */
    int status = TL_EXIT_OK;
    struct tl_file_list fl = {0};
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (!stat(args[i], &st) && S_ISDIR(st.st_mode)) {
            if (!tl_walk_metadata(&fl, args[i])) status = TL_EXIT_INPUT;
        } else if (!tl_file_list_add(&fl, args[i])) {
            rs->oom = true;
        }
    }
    for (size_t i = 0; i < fl.n; i++) {
        struct tl_summary_input info;
        memset(&info, 0, sizeof info);
        enum tl_err rc = tl_read_input(fl.paths[i], &co->io, collect, rs, &info);
        rs->process_wide_rss += tl_summary_counter(&info, 1, "process_wide_rss");
        if (rc == TL_ERR_USAGE) status = TL_EXIT_USAGE;
        else if (rc && status == TL_EXIT_OK) status = TL_EXIT_INPUT;
        tl_input_info_free(&info);
        free(fl.paths[i]);
    }
    free(fl.paths);
    if (!rs->oom && !(names_sort(&rs->cats, rs->r, rs->n, false) && names_sort(&rs->wfs, rs->r, rs->n, true)))
        rs->oom = true;
    if (rs->oom) {
        fprintf(stderr, "%s: out of memory\n", cmd);
        status = TL_EXIT_INPUT;
    }
    return status;
}

static int write_out(struct common *co, struct tl_buf *b, const char *cmd)
{
    FILE *f = co->out_path && strcmp(co->out_path, "-") ? fopen(co->out_path, "w") : stdout;
    if (!f) {
        perror(co->out_path);
        return TL_EXIT_INPUT;
    }
    bool ok = fwrite(b->data, 1, b->len, f) == b->len;
    ok = (f == stdout ? fflush(f) == 0 : fclose(f) == 0) && ok;
    if (!ok) {
        fprintf(stderr, "%s: writing the output failed\n", cmd);
        return TL_EXIT_INPUT;
    }
    return TL_EXIT_OK;
}

static void rows_free(struct rows *rs)
{
    free(rs->r);
    names_free(&rs->cats);
    names_free(&rs->wfs);
}

/* ------------------------------------------------------------ advise */

enum { RES_CORES, RES_MEM, RES_DISK, NRES };
static const char *const res_name[NRES] = {"cores", "memory", "disk"};
static const char *const res_waste_unit[NRES] = {"core-hours", "GiB-hours", "GiB-hours"};
static const int res_used[NRES] = {V_CORES, V_MEM, V_DISK};
static const int res_req[NRES] = {V_REQ_CORES, V_REQ_MEM, V_REQ_DISK};
static const int res_alloc[NRES] = {V_ALLOC_CORES, V_ALLOC_MEM, V_ALLOC_DISK};
static const int res_lim[NRES] = {V_LIM_CORES, V_LIM_MEM, V_LIM_DISK};

struct advice {
    size_t n_used, n_waste, exceed;
    double req, alloc, used_p50, used_q, used_max, rec;
    double waste, waste_rec; /* over the rows with allocation, use and wall time */
};

struct cat_advice {
    size_t attempts, tasks;
    struct advice a[NRES];
    size_t exhausted, avoided;
    double ex_core_h, ex_gib_h, ex_wall_h;
};

/* What occupied the allocation: average cores (cpu/wall) for cores, the
 * peak for memory and disk (so memory and disk waste are lower bounds). */
static double used_for_waste(const struct row *r, int res)
{
    if (res == RES_CORES && isfinite(r->v[V_CPU]) && r->v[V_WALL] > 0) return r->v[V_CPU] / r->v[V_WALL];
    return r->v[res_used[res]];
}

static double used_value(const struct row *r, int res)
{
    double u = r->v[res_used[res]];
    if (res == RES_CORES && !isfinite(u) && isfinite(r->v[V_CPU]) && r->v[V_WALL] > 0)
        u = r->v[V_CPU] / r->v[V_WALL];
    return u;
}

static double unit_scale(int res)
{
    return res == RES_CORES ? 1 : 1 / GIB;
}

static void advise_category(const struct rows *rs, int32_t cat, double q, double margin,
                            const double gran[NRES], double *tmp, struct cat_advice *ca)
{
    memset(ca, 0, sizeof *ca);
    for (size_t i = 0; i < rs->n; i++)
        if (rs->r[i].cat == cat) {
            ca->attempts++;
            ca->tasks += rs->r[i].final;
        }
    for (int res = 0; res < NRES; res++) {
        struct advice *a = &ca->a[res];
        size_t n = column(rs, cat, res_req[res], tmp);
        a->req = q_or_nan(tmp, n, 0.5);
        n = column(rs, cat, res_alloc[res], tmp);
        a->alloc = q_or_nan(tmp, n, 0.5);
        n = 0;
        for (size_t i = 0; i < rs->n; i++) {
            if (rs->r[i].cat != cat) continue;
            double u = used_value(&rs->r[i], res);
            if (isfinite(u)) tmp[n++] = u;
        }
        tl_sort_doubles(tmp, n);
        a->n_used = n;
        a->used_p50 = q_or_nan(tmp, n, 0.5);
        a->used_q = q_or_nan(tmp, n, q);
        a->used_max = n ? tmp[n - 1] : NAN;
        a->rec = NAN;
        if (n) {
            /* cores: a task over its cores is slowed, not killed -- no margin */
            double want = a->used_q * (res == RES_CORES ? 1 : margin);
            a->rec = ceil(want / gran[res] - 1e-9) * gran[res];
            if (a->rec < gran[res]) a->rec = gran[res];
        }
        for (size_t i = 0; i < rs->n; i++) {
            const struct row *r = &rs->r[i];
            if (r->cat != cat) continue;
            double u = used_value(r, res), uw = used_for_waste(r, res), al = r->v[res_alloc[res]];
            double wall = r->v[V_WALL];
            if (isfinite(u) && u > a->rec) a->exceed++;
            if (!isfinite(u) || !isfinite(uw) || !isfinite(al) || !(wall >= 0)) continue;
            a->n_waste++;
            double h = wall / 3600 * unit_scale(res);
            a->waste += fmax(0, al - uw) * h;
            if (u <= a->rec) a->waste_rec += (a->rec - uw) * h;
            else /* killed at the recommendation, then rerun as it ran */
                a->waste_rec += a->rec * h + fmax(0, fmax(al, u) - uw) * h;
        }
    }
    for (size_t i = 0; i < rs->n; i++) {
        const struct row *r = &rs->r[i];
        if (r->cat != cat || !r->exhausted) continue;
        ca->exhausted++;
        double wall = isfinite(r->v[V_WALL]) ? r->v[V_WALL] : 0;
        ca->ex_wall_h += wall / 3600;
        if (isfinite(r->v[V_ALLOC_CORES])) ca->ex_core_h += r->v[V_ALLOC_CORES] * wall / 3600;
        if (isfinite(r->v[V_ALLOC_MEM])) ca->ex_gib_h += r->v[V_ALLOC_MEM] / GIB * wall / 3600;
        /* avoided: every limit it broke (or, when none is named, every
         * resource it used) fits under the recommendation */
        bool named = false, fits = true;
        for (int res = 0; res < NRES; res++)
            if (isfinite(r->v[res_lim[res]])) {
                named = true;
                double u = used_value(r, res);
                if (!isfinite(u) || u > ca->a[res].rec) fits = false;
            }
        if (!named)
            for (int res = 0; res < NRES; res++) {
                double u = used_value(r, res);
                if (isfinite(u) && u > ca->a[res].rec) fits = false;
            }
        ca->avoided += fits;
    }
}

static void fmt_res(char *buf, size_t cap, double v, int res)
{
    if (res == RES_CORES) cell(buf, cap, v);
    else tl_summary_human(buf, cap, v, TL_UNIT_BYTES);
}

static void advise_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens advise [OPTIONS] INPUT...\n"
            "\n"
            "Right-sizing per category: requested, allocated and used cores, memory and\n"
            "disk; the waste (allocated minus used, times wall time) in core-hours and\n"
            "GiB-hours; a recommended first allocation (used quantile, x margin for\n"
            "memory and disk, rounded up to the worker granularity) with the share of attempts that would have\n"
            "exceeded it and the waste it would save; and what RESOURCE_EXHAUSTION\n"
            "attempts cost and whether the recommendation would have avoided them.\n"
            "\n"
            "  --quantile Q        used quantile the recommendation starts from (default 0.95)\n"
            "  --margin M          multiplied in for memory and disk (default 1.2)\n"
            "  --round RES=STEP    granularity: cores=1, memory=256MiB, disk=256MiB (defaults)\n" COMMON_HELP
            "\n"
            "The formulas are in the README (Insights).\n");
}

int tl_cmd_advise(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"quantile", required_argument, NULL, 'Q'}, {"margin", required_argument, NULL, 'M'},
        {"round", required_argument, NULL, 'R'}, COMMON_LONGOPTS, {0}};
    struct common co = {.io = {.max_reports = 10}};
    double q = 0.95, margin = 1.2, gran[NRES] = {1, 256 * 0x1p20, 256 * 0x1p20};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "O:qho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'Q':
            if (!parse_num(optarg, 0, 1, &q)) {
                fprintf(stderr, "tasklens advise: --quantile wants a number in [0,1]\n");
                return TL_EXIT_USAGE;
            }
            break;
        case 'M':
            if (!parse_num(optarg, 1, 100, &margin)) {
                fprintf(stderr, "tasklens advise: --margin wants a number in [1,100]\n");
                return TL_EXIT_USAGE;
            }
            break;
        case 'R': {
            char *eq = strchr(optarg, '=');
            int res = -1;
            if (eq) {
                *eq = '\0';
                for (int k = 0; k < NRES; k++)
                    if (!strcmp(optarg, res_name[k])) res = k;
            }
            double v = 0;
            bool ok = res >= 0 && (res == RES_CORES ? parse_num(eq + 1, 1e-3, 1e6, &v)
                                                    : parse_bytes(eq + 1, &v) && v >= 1);
            if (!ok) {
                fprintf(stderr, "tasklens advise: --round wants cores=N, memory=SIZE or disk=SIZE\n");
                return TL_EXIT_USAGE;
            }
            gran[res] = v;
            break;
        }
        case 'h': advise_usage(stdout); return TL_EXIT_OK;
        default: {
            int r = common_option(c, optarg, &co, "tasklens advise");
            if (r < 0) return TL_EXIT_USAGE;
            if (r == 0) {
                advise_usage(stderr);
                return TL_EXIT_USAGE;
            }
        }
        }
    }
    if (optind >= argc) {
        advise_usage(stderr);
        return TL_EXIT_USAGE;
    }
    struct rows rs = {0};
    int status = read_all(&co, argc - optind, argv + optind, &rs, "tasklens advise");
    if (rs.process_wide_rss) /* their memory recommendations rest on upper bounds */
        fprintf(stderr, "tasklens advise: note: " TL_NOTE_PROCESS_RSS "; memory advice for their "
                        "categories is from those bounds\n",
                (unsigned long long)rs.process_wide_rss);
    double *tmp = malloc((rs.n ? rs.n : 1) * sizeof *tmp);
    struct cat_advice *ca = calloc(rs.cats.n ? rs.cats.n : 1, sizeof *ca);
    if (!tmp || !ca) {
        fprintf(stderr, "tasklens advise: out of memory\n");
        status = TL_EXIT_INPUT;
    }
    struct tl_buf b = {0};
    if (status == TL_EXIT_OK) {
        for (size_t k = 0; k < rs.cats.n; k++) advise_category(&rs, (int32_t)k, q, margin, gran, tmp, &ca[k]);
        int written = 0;
        char pct[16];
        snprintf(pct, sizeof pct, "p%02.0f", q * 100);
        if (co.fmt == F_TABLE) {
            char g1[16], g2[16];
            tl_summary_human(g1, sizeof g1, gran[RES_MEM], TL_UNIT_BYTES);
            tl_summary_human(g2, sizeof g2, gran[RES_DISK], TL_UNIT_BYTES);
            tl_buf_printf(&b,
                          "recommendation = used %s (x %g for memory and disk), rounded up to cores %g, "
                          "memory %s, disk %s\n",
                          pct, margin, gran[RES_CORES], g1, g2);
            tl_buf_printf(&b, "waste = (allocated - used) x wall time; used cores = cpu/wall; memory and "
                              "disk use their peak\n");
        }
        if (co.fmt == F_JSON) {
            tl_buf_printf(&b, "{\"quantile\":");
            json_num(&b, q);
            tl_buf_puts(&b, ",\"margin\":");
            json_num(&b, margin);
            tl_buf_puts(&b, ",\"round\":{\"cores\":");
            json_num(&b, gran[RES_CORES]);
            tl_buf_puts(&b, ",\"memory_bytes\":");
            json_num(&b, gran[RES_MEM]);
            tl_buf_puts(&b, ",\"disk_bytes\":");
            json_num(&b, gran[RES_DISK]);
            tl_buf_puts(&b, "},\"categories\":[");
        }
        for (size_t k = 0; k < rs.cats.n; k++) {
            const struct cat_advice *x = &ca[k];
            const char *name = rs.cats.s[k];
            if (co.fmt == F_TABLE) {
                tl_buf_printf(&b, "\ncategory=%s  attempts %zu  tasks %zu\n", name, x->attempts, x->tasks);
                char usedq[24];
                snprintf(usedq, sizeof usedq, "used %s", pct);
                tl_buf_printf(&b, "  %-8s %9s %9s %9s %9s %9s %11s %9s %7s %11s\n", "resource", "requested",
                              "allocated", "used p50", usedq, "used max", "waste", "recommend", "exceed",
                              "saves");
                for (int res = 0; res < NRES; res++) {
                    const struct advice *a = &x->a[res];
                    char c1[24], c2[24], c3[24], c4[24], c5[24], c6[32], c7[24], c8[16], c9[32];
                    fmt_res(c1, sizeof c1, a->req, res);
                    fmt_res(c2, sizeof c2, a->alloc, res);
                    fmt_res(c3, sizeof c3, a->used_p50, res);
                    fmt_res(c4, sizeof c4, a->used_q, res);
                    fmt_res(c5, sizeof c5, a->used_max, res);
                    if (a->n_waste) snprintf(c6, sizeof c6, "%.3g %s", a->waste, res == RES_CORES ? "c-h" : "G-h");
                    else snprintf(c6, sizeof c6, "-");
                    fmt_res(c7, sizeof c7, a->rec, res);
                    if (a->n_used) snprintf(c8, sizeof c8, "%.1f%%", 100.0 * (double)a->exceed / (double)a->n_used);
                    else snprintf(c8, sizeof c8, "-");
                    if (a->n_waste) snprintf(c9, sizeof c9, "%.3g %s", a->waste - a->waste_rec, res == RES_CORES ? "c-h" : "G-h");
                    else snprintf(c9, sizeof c9, "-");
                    tl_buf_printf(&b, "  %-8s %9s %9s %9s %9s %9s %11s %9s %7s %11s\n", res_name[res], c1, c2,
                                  c3, c4, c5, c6, c7, c8, c9);
                }
                if (x->exhausted)
                    tl_buf_printf(&b,
                                  "  RESOURCE_EXHAUSTION: %zu attempts cost %.3g core-hours, %.3g GiB-hours "
                                  "(%.3g h wall); the recommendation covers %zu of them\n",
                                  x->exhausted, x->ex_core_h, x->ex_gib_h, x->ex_wall_h, x->avoided);
            } else if (co.fmt == F_JSON) {
                tl_buf_puts(&b, k ? ",{\"category\":" : "{\"category\":");
                tl_buf_put_json_string(&b, name);
                tl_buf_printf(&b, ",\"attempts\":%zu,\"tasks\":%zu,\"resources\":{", x->attempts, x->tasks);
                for (int res = 0; res < NRES; res++) {
                    const struct advice *a = &x->a[res];
                    tl_buf_printf(&b, "%s\"%s\":{\"unit\":\"%s\",\"requested_p50\":", res ? "," : "", res_name[res],
                                  res == RES_CORES ? "cores" : "bytes");
                    json_num(&b, a->req);
                    tl_buf_puts(&b, ",\"allocated_p50\":");
                    json_num(&b, a->alloc);
                    tl_buf_puts(&b, ",\"used_p50\":");
                    json_num(&b, a->used_p50);
                    tl_buf_printf(&b, ",\"used_%s\":", pct);
                    json_num(&b, a->used_q);
                    tl_buf_puts(&b, ",\"used_max\":");
                    json_num(&b, a->used_max);
                    tl_buf_puts(&b, ",\"recommend\":");
                    json_num(&b, a->rec);
                    tl_buf_printf(&b, ",\"measured\":%zu,\"exceed\":%zu,\"exceed_fraction\":", a->n_used, a->exceed);
                    json_num(&b, a->n_used ? (double)a->exceed / (double)a->n_used : NAN);
                    tl_buf_printf(&b, ",\"waste_unit\":\"%s\",\"waste\":", res_waste_unit[res]);
                    json_num(&b, a->n_waste ? a->waste : NAN);
                    tl_buf_puts(&b, ",\"waste_with_recommendation\":");
                    json_num(&b, a->n_waste ? a->waste_rec : NAN);
                    tl_buf_puts(&b, ",\"saves\":");
                    json_num(&b, a->n_waste ? a->waste - a->waste_rec : NAN);
                    tl_buf_putc(&b, '}');
                }
                tl_buf_printf(&b, "},\"resource_exhaustion\":{\"attempts\":%zu,\"core_hours\":", x->exhausted);
                json_num(&b, x->ex_core_h);
                tl_buf_puts(&b, ",\"gib_hours\":");
                json_num(&b, x->ex_gib_h);
                tl_buf_puts(&b, ",\"wall_hours\":");
                json_num(&b, x->ex_wall_h);
                tl_buf_printf(&b, ",\"avoided\":%zu}}", x->avoided);
            } else {
                for (int res = 0; res < NRES; res++) {
                    const struct advice *a = &x->a[res];
                    size_t start = b.len;
                    const char *tags[] = {"category", name, "resource", res_name[res]};
                    if (!lp_begin(&b, "task_advice", tags, 2)) {
                        b.len = start;
                        continue;
                    }
                    bool first = true;
                    /* bytes stay bytes, as in `task` points */
                    lp_field(&b, &first, "requested_p50", a->req);
                    lp_field(&b, &first, "allocated_p50", a->alloc);
                    lp_field(&b, &first, "used_p50", a->used_p50);
                    lp_field(&b, &first, "used_q", a->used_q);
                    lp_field(&b, &first, "used_max", a->used_max);
                    lp_field(&b, &first, "recommend", a->rec);
                    lp_field(&b, &first, "exceed_fraction",
                             a->n_used ? (double)a->exceed / (double)a->n_used : NAN);
                    if (a->n_waste) {
                        lp_field(&b, &first, "waste_hours", a->waste);
                        lp_field(&b, &first, "saves_hours", a->waste - a->waste_rec);
                    }
                    lp_field(&b, &first, "quantile", q);
                    lp_int(&b, &first, "attempts", (int64_t)x->attempts);
                    lp_int(&b, &first, "exhausted", (int64_t)x->exhausted);
                    lp_int(&b, &first, "exhausted_avoided", (int64_t)x->avoided);
                    lp_field(&b, &first, "exhausted_core_hours", x->ex_core_h);
                    lp_field(&b, &first, "exhausted_gib_hours", x->ex_gib_h);
                    lp_end(&b, start, first, rs.newest_ns, &written);
                }
            }
        }
        if (co.fmt == F_JSON) tl_buf_puts(&b, "]}\n");
        status = write_out(&co, &b, "tasklens advise");
    }
    tl_buf_free(&b);
    free(tmp);
    free(ca);
    rows_free(&rs);
    return status;
}

/* ------------------------------------------------------------ plan */

struct node {
    char spec[64];
    double cores, mem;
};

static bool parse_node(char *s, struct node *n)
{
    snprintf(n->spec, sizeof n->spec, "%s", s);
    n->cores = n->mem = 0;
    for (char *save = NULL, *kv = strtok_r(s, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) return false;
        *eq++ = '\0';
        if (!strcmp(kv, "cores")) {
            if (!parse_num(eq, 1, 1e6, &n->cores)) return false;
        } else if (!strcmp(kv, "mem") || !strcmp(kv, "memory")) {
            if (!parse_bytes(eq, &n->mem) || n->mem <= 0) return false;
        } else
            return false;
    }
    return n->cores > 0 && n->mem > 0;
}

struct cat_plan {
    double tasks, t_q, m_q, cpt;
    bool cpu_time; /* t_q is CPU time (else wall) */
};

static void plan_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens plan --node cores=N,mem=SIZE [--node ...] [OPTIONS] INPUT...\n"
            "\n"
            "Capacity planning the way the DESC DRP study sized Rubin processing: per\n"
            "category the quantile (default p95) of CPU time and of peak memory per task;\n"
            "jobs per node = min(node cores / cores per task, node memory / memory p95);\n"
            "node-hours = tasks x time p95 / 3600 / jobs per node. Prints which resource\n"
            "binds, per category and node type, and the totals.\n"
            "\n"
            "  --node SPEC         cores=128,mem=512GiB (repeatable: one plan per node type)\n"
            "  --scale N           the observed task counts times N (default 1)\n"
            "  --count CAT=N       this many tasks of CAT instead (repeatable)\n"
            "  --quantile Q        time and memory quantile (default 0.95)\n"
            "  --time cpu|wall     which time a task occupies its slot for (default cpu)\n"
            "  --cores-per-task N  instead of the observed allocation (else request, else 1)\n" COMMON_HELP);
}

int tl_cmd_plan(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"node", required_argument, NULL, 'N'},     {"scale", required_argument, NULL, 'S'},
        {"count", required_argument, NULL, 'C'},    {"quantile", required_argument, NULL, 'Q'},
        {"time", required_argument, NULL, 'T'},     {"cores-per-task", required_argument, NULL, 'P'},
        COMMON_LONGOPTS, {0}};
    struct common co = {.io = {.max_reports = 10}};
    struct node nodes[MAX_NODES];
    int nnodes = 0, ncounts = 0;
    const char *count_cat[MAX_COUNTS];
    double count_n[MAX_COUNTS];
    double scale = 1, q = 0.95, cpt_override = 0;
    bool use_cpu = true;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "O:qho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'N':
            if (nnodes == MAX_NODES || !parse_node(optarg, &nodes[nnodes])) {
                fprintf(stderr, "tasklens plan: --node wants cores=N,mem=SIZE (at most %d)\n", MAX_NODES);
                return TL_EXIT_USAGE;
            }
            nnodes++;
            break;
        case 'S':
            if (!parse_num(optarg, 0, 1e12, &scale)) {
                fprintf(stderr, "tasklens plan: --scale wants a number >= 0\n");
                return TL_EXIT_USAGE;
            }
            break;
        case 'C': {
            char *eq = strrchr(optarg, '=');
            if (!eq || eq == optarg || ncounts == MAX_COUNTS || !parse_num(eq + 1, 0, 1e15, &count_n[ncounts])) {
                fprintf(stderr, "tasklens plan: --count wants CATEGORY=N\n");
                return TL_EXIT_USAGE;
            }
            *eq = '\0';
            count_cat[ncounts++] = optarg;
            break;
        }
        case 'Q':
            if (!parse_num(optarg, 0, 1, &q)) {
                fprintf(stderr, "tasklens plan: --quantile wants a number in [0,1]\n");
                return TL_EXIT_USAGE;
            }
            break;
        case 'T':
            if (strcmp(optarg, "cpu") && strcmp(optarg, "wall")) {
                fprintf(stderr, "tasklens plan: --time is cpu or wall\n");
                return TL_EXIT_USAGE;
            }
            use_cpu = !strcmp(optarg, "cpu");
            break;
        case 'P':
            if (!parse_num(optarg, 1e-3, 1e6, &cpt_override)) {
                fprintf(stderr, "tasklens plan: --cores-per-task wants a number > 0\n");
                return TL_EXIT_USAGE;
            }
            break;
        case 'h': plan_usage(stdout); return TL_EXIT_OK;
        default: {
            int r = common_option(c, optarg, &co, "tasklens plan");
            if (r < 0) return TL_EXIT_USAGE;
            if (r == 0) {
                plan_usage(stderr);
                return TL_EXIT_USAGE;
            }
        }
        }
    }
    if (optind >= argc || !nnodes) {
        if (!nnodes) fprintf(stderr, "tasklens plan: at least one --node cores=N,mem=SIZE\n");
        plan_usage(stderr);
        return TL_EXIT_USAGE;
    }
    struct rows rs = {0};
    int status = read_all(&co, argc - optind, argv + optind, &rs, "tasklens plan");
    for (int i = 0; i < ncounts && status == TL_EXIT_OK; i++) {
        bool found = false;
        for (size_t k = 0; k < rs.cats.n; k++) found |= !strcmp(rs.cats.s[k], count_cat[i]);
        if (!found) {
            fprintf(stderr, "tasklens plan: --count %s: no such category in the input\n", count_cat[i]);
            status = TL_EXIT_USAGE;
        }
    }
    double *tmp = malloc((rs.n ? rs.n : 1) * sizeof *tmp);
    struct cat_plan *cp = calloc(rs.cats.n ? rs.cats.n : 1, sizeof *cp);
    if (!tmp || !cp) {
        fprintf(stderr, "tasklens plan: out of memory\n");
        status = TL_EXIT_INPUT;
    }
    struct tl_buf b = {0};
    if (status == TL_EXIT_OK) {
        for (size_t k = 0; k < rs.cats.n; k++) {
            struct cat_plan *p = &cp[k];
            size_t attempts = 0, finals = 0;
            for (size_t i = 0; i < rs.n; i++)
                if (rs.r[i].cat == (int32_t)k) {
                    attempts++;
                    finals += rs.r[i].final;
                }
            p->tasks = (double)(finals ? finals : attempts) * scale;
            for (int i = 0; i < ncounts; i++)
                if (!strcmp(rs.cats.s[k], count_cat[i])) p->tasks = count_n[i];
            size_t n = use_cpu ? column(&rs, (int32_t)k, V_CPU, tmp) : 0;
            p->cpu_time = n > 0;
            if (!n) n = column(&rs, (int32_t)k, V_WALL, tmp);
            p->t_q = q_or_nan(tmp, n, q);
            n = column(&rs, (int32_t)k, V_MEM, tmp);
            p->m_q = q_or_nan(tmp, n, q);
            p->cpt = cpt_override;
            if (!p->cpt) {
                n = column(&rs, (int32_t)k, V_ALLOC_CORES, tmp);
                if (!n) n = column(&rs, (int32_t)k, V_REQ_CORES, tmp);
                p->cpt = n ? tl_quantile_sorted(tmp, n, 0.5) : 1;
                if (!(p->cpt > 0)) p->cpt = 1;
            }
        }
        int written = 0;
        char pct[16];
        snprintf(pct, sizeof pct, "p%02.0f", q * 100);
        if (co.fmt == F_JSON) {
            tl_buf_puts(&b, "{\"quantile\":");
            json_num(&b, q);
            tl_buf_puts(&b, ",\"scale\":");
            json_num(&b, scale);
            tl_buf_printf(&b, ",\"time\":\"%s\",\"nodes\":[", use_cpu ? "cpu" : "wall");
        }
        for (int ni = 0; ni < nnodes; ni++) {
            const struct node *nd = &nodes[ni];
            double total_h = 0, total_tasks = 0;
            char memh[24];
            tl_summary_human(memh, sizeof memh, nd->mem, TL_UNIT_BYTES);
            if (co.fmt == F_TABLE) {
                tl_buf_printf(&b, "%snode cores=%g mem=%s; time = %s %s time, memory = %s peak RSS\n", ni ? "\n" : "",
                              nd->cores, memh, pct, use_cpu ? "CPU" : "wall", pct);
                tl_buf_printf(&b, "  %-20s %10s %9s %9s %6s %12s %8s %12s %10s\n", "category", "tasks", "time",
                              "memory", "cores", "jobs/node", "binds", "node-hours", "node-days");
            } else if (co.fmt == F_JSON) {
                tl_buf_printf(&b, "%s{\"node\":{\"cores\":", ni ? "," : "");
                json_num(&b, nd->cores);
                tl_buf_puts(&b, ",\"memory_bytes\":");
                json_num(&b, nd->mem);
                tl_buf_puts(&b, "},\"categories\":[");
            }
            for (size_t k = 0; k < rs.cats.n; k++) {
                const struct cat_plan *p = &cp[k];
                double by_cores = floor(nd->cores / p->cpt + 1e-9);
                double by_mem = p->m_q > 0 ? floor(nd->mem / p->m_q + 1e-9) : INFINITY;
                double jobs = fmin(by_cores, by_mem);
                const char *binds = by_cores < by_mem ? "cores" : by_mem < by_cores ? "memory" : "both";
                double hours = jobs >= 1 && isfinite(p->t_q) ? p->tasks * p->t_q / 3600 / jobs : NAN;
                if (isfinite(hours)) total_h += hours;
                total_tasks += p->tasks;
                const char *name = rs.cats.s[k];
                if (co.fmt == F_TABLE) {
                    char t[24], m[24], h[24], d[24], j[24];
                    tl_summary_human(t, sizeof t, p->t_q, TL_UNIT_SECONDS);
                    tl_summary_human(m, sizeof m, p->m_q, TL_UNIT_BYTES);
                    if (jobs < 1) snprintf(j, sizeof j, "does not fit");
                    else snprintf(j, sizeof j, "%.0f", jobs);
                    tl_buf_printf(&b, "  %-20s %10.0f %9s %9s %6g %12s %8s %12s %10s\n", name, p->tasks, t, m,
                                  p->cpt, j, !isfinite(p->t_q) ? "-" : jobs < 1 ? "memory" : binds,
                                  cell(h, sizeof h, hours),
                                  cell(d, sizeof d, hours / 24));
                } else if (co.fmt == F_JSON) {
                    tl_buf_puts(&b, k ? ",{\"category\":" : "{\"category\":");
                    tl_buf_put_json_string(&b, name);
                    tl_buf_puts(&b, ",\"tasks\":");
                    json_num(&b, p->tasks);
                    tl_buf_printf(&b, ",\"time_s\":");
                    json_num(&b, p->t_q);
                    tl_buf_printf(&b, ",\"time_is\":\"%s\",\"memory_bytes\":", p->cpu_time ? "cpu" : "wall");
                    json_num(&b, p->m_q);
                    tl_buf_puts(&b, ",\"cores_per_task\":");
                    json_num(&b, p->cpt);
                    tl_buf_puts(&b, ",\"jobs_by_cores\":");
                    json_num(&b, by_cores);
                    tl_buf_puts(&b, ",\"jobs_by_memory\":");
                    json_num(&b, by_mem);
                    tl_buf_puts(&b, ",\"jobs_per_node\":");
                    json_num(&b, jobs);
                    tl_buf_printf(&b, ",\"binds\":\"%s\",\"node_hours\":", jobs < 1 ? "memory" : binds);
                    json_num(&b, hours);
                    tl_buf_puts(&b, "}");
                } else {
                    size_t start = b.len;
                    const char *tags[] = {"binds", jobs < 1 ? "memory" : binds, "category", name, "node", nd->spec};
                    if (!lp_begin(&b, "task_plan", tags, 3)) {
                        b.len = start;
                        continue;
                    }
                    bool first = true;
                    lp_field(&b, &first, "tasks", p->tasks);
                    lp_field(&b, &first, "time_s", p->t_q);
                    lp_field(&b, &first, "memory_bytes", p->m_q);
                    lp_field(&b, &first, "cores_per_task", p->cpt);
                    lp_field(&b, &first, "jobs_per_node", jobs);
                    lp_field(&b, &first, "node_hours", hours);
                    lp_field(&b, &first, "node_days", hours / 24);
                    lp_end(&b, start, first, rs.newest_ns, &written);
                }
            }
            if (co.fmt == F_TABLE) {
                tl_buf_printf(&b, "  %-20s %10.0f %9s %9s %6s %12s %8s %12.4g %10.4g\n", "total", total_tasks, "",
                              "", "", "", "", total_h, total_h / 24);
            } else if (co.fmt == F_JSON) {
                tl_buf_puts(&b, "],\"node_hours\":");
                json_num(&b, total_h);
                tl_buf_puts(&b, ",\"node_days\":");
                json_num(&b, total_h / 24);
                tl_buf_putc(&b, '}');
            } else {
                size_t start = b.len;
                const char *tags[] = {"category", "total", "node", nd->spec};
                if (lp_begin(&b, "task_plan", tags, 2)) {
                    bool first = true;
                    lp_field(&b, &first, "tasks", total_tasks);
                    lp_field(&b, &first, "node_hours", total_h);
                    lp_field(&b, &first, "node_days", total_h / 24);
                    lp_end(&b, start, first, rs.newest_ns, &written);
                } else
                    b.len = start;
            }
        }
        if (co.fmt == F_JSON) tl_buf_puts(&b, "]}\n");
        status = write_out(&co, &b, "tasklens plan");
    }
    tl_buf_free(&b);
    free(tmp);
    free(cp);
    rows_free(&rs);
    return status;
}

/* ------------------------------------------------------------ energy */

struct power {
    double w_core, w_gib, pue, g_kwh;
};

struct energy {
    size_t attempts, no_cpu, no_mem;
    double cpu_kwh, mem_kwh; /* before PUE */
};

static void energy_add(struct energy *e, const struct row *r, const struct power *pw)
{
    e->attempts++;
    if (isfinite(r->v[V_CPU])) e->cpu_kwh += r->v[V_CPU] * pw->w_core / 3.6e6;
    else e->no_cpu++;
    if (isfinite(r->v[V_MEM]) && isfinite(r->v[V_WALL]))
        e->mem_kwh += r->v[V_MEM] / GIB * r->v[V_WALL] * pw->w_gib / 3.6e6;
    else e->no_mem++;
}

static void energy_emit(struct tl_buf *b, enum fmt fmt, const char *scope, const char *name,
                        const struct energy *e, const struct power *pw, int64_t ns, bool *first_json,
                        int *written)
{
    double kwh = (e->cpu_kwh + e->mem_kwh) * pw->pue;
    double kg = kwh * pw->g_kwh / 1000;
    if (fmt == F_TABLE) {
        tl_buf_printf(b, "  %-24s %9zu %12.4g %12.4g %12.4g %12.4g\n", name, e->attempts, e->cpu_kwh * pw->pue,
                      e->mem_kwh * pw->pue, kwh, kg);
    } else if (fmt == F_JSON) {
        tl_buf_puts(b, *first_json ? "{\"" : ",{\"");
        *first_json = false;
        tl_buf_puts(b, scope);
        tl_buf_puts(b, "\":");
        tl_buf_put_json_string(b, name);
        tl_buf_printf(b, ",\"attempts\":%zu,\"without_cpu_time\":%zu,\"without_memory_time\":%zu,\"kwh_cpu\":",
                      e->attempts, e->no_cpu, e->no_mem);
        json_num(b, e->cpu_kwh * pw->pue);
        tl_buf_puts(b, ",\"kwh_memory\":");
        json_num(b, e->mem_kwh * pw->pue);
        tl_buf_puts(b, ",\"kwh\":");
        json_num(b, kwh);
        tl_buf_puts(b, ",\"kg_co2eq\":");
        json_num(b, kg);
        tl_buf_putc(b, '}');
    } else {
        size_t start = b->len;
        const char *tags[] = {scope, name, "scope", scope};
        if (!lp_begin(b, "task_energy", tags, 2)) {
            b->len = start;
            return;
        }
        bool first = true;
        lp_field(b, &first, "kwh", kwh);
        lp_field(b, &first, "kwh_cpu", e->cpu_kwh * pw->pue);
        lp_field(b, &first, "kwh_memory", e->mem_kwh * pw->pue);
        lp_field(b, &first, "kg_co2eq", kg);
        lp_int(b, &first, "attempts", (int64_t)e->attempts);
        lp_field(b, &first, "w_per_core", pw->w_core);
        lp_field(b, &first, "w_per_gib", pw->w_gib);
        lp_field(b, &first, "pue", pw->pue);
        lp_field(b, &first, "g_co2eq_per_kwh", pw->g_kwh);
        lp_end(b, start, first, ns, written);
    }
}

static void energy_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens energy [OPTIONS] INPUT...\n"
            "\n"
            "Energy and emissions per category and per workflow, from CPU time and\n"
            "memory-time with a stated power model (in the spirit of codecarbon):\n"
            "  kWh = PUE x (sum cpu_time_s x W_core + sum peak_RSS_GiB x wall_s x W_GiB) / 3.6e6\n"
            "  kgCO2eq = kWh x intensity / 1000\n"
            "\n"
            "  --w-per-core W      watts per busy core (default 10)\n"
            "  --w-per-gib W       watts per GiB of memory held (default 0.375, codecarbon's)\n"
            "  --pue X             data-centre power usage effectiveness (default 1.0)\n"
            "  --intensity G       grid carbon intensity, gCO2eq/kWh (default 475, world average)\n" COMMON_HELP);
}

int tl_cmd_energy(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"w-per-core", required_argument, NULL, 'W'}, {"w-per-gib", required_argument, NULL, 'G'},
        {"pue", required_argument, NULL, 'P'},        {"intensity", required_argument, NULL, 'I'},
        COMMON_LONGOPTS, {0}};
    struct common co = {.io = {.max_reports = 10}};
    struct power pw = {10, 0.375, 1.0, 475};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "O:qho:", longopts, NULL)) != -1) {
        double *dst = c == 'W' ? &pw.w_core : c == 'G' ? &pw.w_gib : c == 'P' ? &pw.pue : c == 'I' ? &pw.g_kwh : NULL;
        if (dst) {
            if (!parse_num(optarg, c == 'P' ? 1 : 0, 1e6, dst)) {
                fprintf(stderr, "tasklens energy: bad number '%s'%s\n", optarg, c == 'P' ? " (PUE >= 1)" : "");
                return TL_EXIT_USAGE;
            }
            continue;
        }
        if (c == 'h') {
            energy_usage(stdout);
            return TL_EXIT_OK;
        }
        int r = common_option(c, optarg, &co, "tasklens energy");
        if (r < 0) return TL_EXIT_USAGE;
        if (r == 0) {
            energy_usage(stderr);
            return TL_EXIT_USAGE;
        }
    }
    if (optind >= argc) {
        energy_usage(stderr);
        return TL_EXIT_USAGE;
    }
    struct rows rs = {0};
    int status = read_all(&co, argc - optind, argv + optind, &rs, "tasklens energy");
    struct energy *ec = calloc(rs.cats.n + 1, sizeof *ec), *ew = calloc(rs.wfs.n + 1, sizeof *ew);
    if (!ec || !ew) {
        fprintf(stderr, "tasklens energy: out of memory\n");
        status = TL_EXIT_INPUT;
    }
    struct tl_buf b = {0};
    if (status == TL_EXIT_OK) {
        struct energy total = {0};
        for (size_t i = 0; i < rs.n; i++) {
            energy_add(&ec[rs.r[i].cat], &rs.r[i], &pw);
            energy_add(&ew[rs.r[i].wf], &rs.r[i], &pw);
            energy_add(&total, &rs.r[i], &pw);
        }
        int written = 0;
        bool first = true;
        if (co.fmt == F_TABLE) {
            tl_buf_printf(&b,
                          "assumptions: %g W per busy core, %g W per GiB held, PUE %g, %g gCO2eq/kWh\n"
                          "kWh = PUE x (sum cpu_time_s x W_core + sum peak_RSS_GiB x wall_s x W_GiB) / 3.6e6; "
                          "kgCO2eq = kWh x intensity / 1000\n",
                          pw.w_core, pw.w_gib, pw.pue, pw.g_kwh);
            if (total.no_cpu || total.no_mem)
                tl_buf_printf(&b, "coverage: %zu of %zu attempts without CPU time, %zu without memory and wall time "
                                  "(counted as zero)\n",
                              total.no_cpu, total.attempts, total.no_mem);
            tl_buf_printf(&b, "\n  %-24s %9s %12s %12s %12s %12s\n", "category", "attempts", "kWh cpu", "kWh memory",
                          "kWh", "kgCO2eq");
        } else if (co.fmt == F_JSON) {
            tl_buf_puts(&b, "{\"assumptions\":{\"w_per_core\":");
            json_num(&b, pw.w_core);
            tl_buf_puts(&b, ",\"w_per_gib\":");
            json_num(&b, pw.w_gib);
            tl_buf_puts(&b, ",\"pue\":");
            json_num(&b, pw.pue);
            tl_buf_puts(&b, ",\"g_co2eq_per_kwh\":");
            json_num(&b, pw.g_kwh);
            tl_buf_puts(&b, "},\"categories\":[");
        }
        for (size_t k = 0; k < rs.cats.n; k++)
            energy_emit(&b, co.fmt, "category", rs.cats.s[k], &ec[k], &pw, rs.newest_ns, &first, &written);
        if (co.fmt == F_TABLE)
            tl_buf_printf(&b, "\n  %-24s %9s %12s %12s %12s %12s\n", "workflow", "attempts", "kWh cpu", "kWh memory",
                          "kWh", "kgCO2eq");
        else if (co.fmt == F_JSON) {
            tl_buf_puts(&b, "],\"workflows\":[");
            first = true;
        }
        for (size_t k = 0; k < rs.wfs.n; k++)
            energy_emit(&b, co.fmt, "workflow", rs.wfs.s[k], &ew[k], &pw, rs.newest_ns, &first, &written);
        if (co.fmt == F_TABLE) {
            tl_buf_puts(&b, "\n");
            energy_emit(&b, co.fmt, "total", "total", &total, &pw, rs.newest_ns, &first, &written);
        } else if (co.fmt == F_JSON) {
            tl_buf_puts(&b, "],\"total\":");
            first = true;
            energy_emit(&b, co.fmt, "total", "total", &total, &pw, rs.newest_ns, &first, &written);
            tl_buf_puts(&b, "}\n");
        }
        status = write_out(&co, &b, "tasklens energy");
    }
    tl_buf_free(&b);
    free(ec);
    free(ew);
    rows_free(&rs);
    return status;
}
