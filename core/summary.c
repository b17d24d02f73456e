/* The summary: the aggregator's groups (core/aggregate.h) as `summary`'s
 * table and JSON, with the options that pick metrics and group keys. The
 * report, `top`, `advise` and the pipeline read the same groups, so every
 * surface shows one set of numbers. Quantiles come from the groups'
 * mergeable sketches (exact below a size, alpha-bounded past it), never
 * a quantile of quantiles. */
#include "core/summary.h"
#include "core/glossary.h"
#include "core/term.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/aggregate.h"
#include "core/buf.h"
#include "core/numfmt.h"
#include "core/quantile.h"

struct tl_summary {
    struct tl_summary_opts opts;
    struct tl_agg *agg;
};

void tl_summary_opts_default(struct tl_summary_opts *o)
{
    memset(o, 0, sizeof *o);
    struct tl_agg_opts ao;
    tl_agg_opts_default(&ao);
    o->by[0] = "category";
    o->nby = 1;
    const double q[] = TL_DEFAULT_QUANTILES;
    memcpy(o->q, q, sizeof q);
    o->nq = TL_DEFAULT_NQUANTILES;
    memcpy(o->metrics, ao.metrics, sizeof o->metrics);
    o->nmetrics = ao.nmetrics;
    o->exact_limit = 1000000;
    o->alpha = ao.sketch.alpha;
}

bool tl_summary_opts_set_metrics(struct tl_summary_opts *o, const char *list, char *err,
                                 size_t errlen)
{
    o->nmetrics = tl_metric_list(list, o->metrics, err, errlen);
    return o->nmetrics > 0;
}

struct tl_summary *tl_summary_new(const struct tl_summary_opts *opts)
{
    struct tl_summary *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->opts = *opts;
    struct tl_agg_opts ao;
    tl_agg_opts_default(&ao);
    memcpy(ao.by, opts->by, sizeof ao.by);
    ao.nby = opts->nby;
    memcpy(ao.metrics, opts->metrics, sizeof ao.metrics);
    ao.nmetrics = opts->nmetrics;
    ao.window_ns = 0; /* batch: cumulative only */
    ao.sketch.alpha = opts->alpha;
    ao.sketch.exact_limit = opts->approx ? 0 : opts->exact_limit;
    ao.max_keys = opts->max_groups ? opts->max_groups : 1000000;
    s->agg = tl_agg_new(&ao, NULL, NULL);
    if (!s->agg) {
        free(s);
        return NULL;
    }
    return s;
}

void tl_summary_free(struct tl_summary *s)
{
    if (!s) return;
    tl_agg_free(s->agg);
    free(s);
}

enum tl_err tl_summary_merge(struct tl_summary *dst, const struct tl_summary *src)
{
    return tl_agg_merge(dst->agg, src->agg);
}

enum tl_err tl_summary_add(struct tl_summary *s, const struct tl_record *r)
{
    return tl_agg_add(s->agg, r);
}

/* ---------------------------------------------------------------- output */

struct stats {
    size_t count;
    double sum, min, max, mean;
};

static struct stats sketch_stats(const struct tl_sketch *k)
{
    struct stats st = {k->count, 0, NAN, NAN, NAN};
    if (!k->count) return st;
    st.sum = tl_sketch_sum(k);
    st.min = k->min;
    st.max = k->max;
    st.mean = st.sum / (double)k->count;
    return st;
}

static int count_cmp(const void *a, const void *b)
{
    const struct tl_count *x = a, *y = b;
    if (x->n != y->n) return x->n < y->n ? 1 : -1;
    return strcmp(x->name, y->name);
}

static void sort_counts(struct tl_count *c, size_t n)
{
    if (n > 1) qsort(c, n, sizeof *c, count_cmp);
}

/* Group order: by key text, so output is stable whatever the input order. */
static int group_cmp(const void *a, const void *b)
{
    const struct tl_agg_group *x = *(const struct tl_agg_group *const *)a;
    const struct tl_agg_group *y = *(const struct tl_agg_group *const *)b;
    return strcmp(x->key, y->key);
}

static struct tl_agg_group **sorted_groups(struct tl_summary *s, size_t *n)
{
    *n = tl_agg_ngroups(s->agg);
    struct tl_agg_group **v = malloc((*n + 1) * sizeof *v);
    if (!v) return NULL;
    for (size_t i = 0; i < *n; i++) v[i] = tl_agg_group(s->agg, i);
    if (*n > 1) qsort(v, *n, sizeof *v, group_cmp);
    return v;
}

static void put_json_number(struct tl_buf *b, double v)
{
    if (isfinite(v)) tl_buf_put_double(b, v);
    else tl_buf_puts(b, "null");
}

/* ---------------------------------------------------------------- as data */

size_t tl_summary_groups(struct tl_summary *s, struct tl_agg_group ***out)
{
    size_t n = 0;
    *out = sorted_groups(s, &n);
    if (!*out) return 0;
    for (size_t i = 0; i < n; i++) { /* as the JSON lists them */
        sort_counts((*out)[i]->results, (*out)[i]->nresults);
        sort_counts((*out)[i]->exits, (*out)[i]->nexits);
    }
    return n;
}

const char *tl_summary_group_tag(const struct tl_summary *s, const struct tl_agg_group *g,
                                 const char *tag, struct tl_buf *scratch)
{
    for (int k = 0; k < s->opts.nby; k++)
        if (!strcmp(s->opts.by[k], tag)) return tl_agg_key_part(g->key, k, scratch);
    return NULL;
}

struct tl_sketch *tl_summary_sketch(const struct tl_summary *s, const struct tl_agg_group *g,
                                    enum tl_metric m)
{
    for (int mi = 0; mi < s->opts.nmetrics; mi++)
        if (s->opts.metrics[mi] == (int)m) return &g->cum[mi];
    return NULL;
}

double tl_summary_runtime_hours(const struct tl_agg_group *g)
{
    return (g->runtime_s + g->runtime_c) / 3600.0;
}

double tl_summary_core_hours(const struct tl_agg_group *g)
{
    return (g->core_s + g->core_c) / 3600.0;
}

/* "0.01" for the JSON key, "p001" for CSV columns. */
static void quantile_key(char *out, size_t cap, double q)
{
    tl_fmt_double(out, cap, q);
}

/* s right-aligned in a column of width w, after a space (as " %7s"). */
static void put_right(struct tl_buf *b, const char *s, int w)
{
    size_t n = strlen(s);
    tl_buf_putc(b, ' ');
    for (int i = (int)n; i < w; i++) tl_buf_putc(b, ' ');
    tl_buf_append(b, s, n);
}

static void quantile_column(char *out, size_t cap, double q)
{
    /* percent with binary noise rounded away: 0.07 -> 7.000000000000001 -> "p007" */
    char pct[48];
    snprintf(pct, sizeof pct, "%.6f", q * 100);
    char *dot = strchr(pct, '.');
    char *e = pct + strlen(pct);
    while (e > dot + 1 && e[-1] == '0') e--;
    if (e == dot + 1) e = dot;
    *e = '\0';
    *dot = '\0';
    snprintf(out, cap, "p%03d%s%s", atoi(pct), e > dot ? "." : "", e > dot ? dot + 1 : "");
}

/* The "inputs" of the JSON: what was read, rejected and counted per input. */
static void write_json_inputs(const struct tl_summary_input *in, size_t nin, struct tl_buf *b)
{
    tl_buf_puts(b, "{\"inputs\":[");
    for (size_t i = 0; i < nin; i++) {
        if (i) tl_buf_putc(b, ',');
        tl_buf_puts(b, "{\"path\":");
        tl_buf_put_json_string(b, in[i].path);
        tl_buf_puts(b, ",\"format\":");
        if (in[i].format) tl_buf_put_json_string(b, in[i].format);
        else tl_buf_puts(b, "null");
        tl_buf_printf(b, ",\"lines\":%llu,\"records\":%llu,\"rejected\":%llu",
                      (unsigned long long)in[i].lines, (unsigned long long)in[i].records,
                      (unsigned long long)in[i].rejected);
        if (in[i].codec) {
            tl_buf_puts(b, ",\"codec\":");
            tl_buf_put_json_string(b, in[i].codec);
        }
        tl_buf_puts(b, ",\"rejected_by\":{");
        bool first = true;
        for (int r = 0; r < TL_REJ_COUNT; r++) {
            if (!in[i].rejected_by[r]) continue;
            tl_buf_printf(b, "%s\"%s\":%llu", first ? "" : ",", tl_reject_key((enum tl_reject)r),
                          (unsigned long long)in[i].rejected_by[r]);
            first = false;
        }
        tl_buf_puts(b, "},\"line_kinds\":{");
        first = true;
        for (size_t c = 0; c < in[i].ncounters; c++) {
            if (!in[i].counters[c].value) continue;
            if (!first) tl_buf_putc(b, ',');
            tl_buf_put_json_string(b, in[i].counters[c].name);
            tl_buf_printf(b, ":%llu", (unsigned long long)in[i].counters[c].value);
            first = false;
        }
        tl_buf_putc(b, '}');
        if (in[i].error) {
            tl_buf_puts(b, ",\"error\":");
            tl_buf_put_json_string(b, in[i].error);
        }
        tl_buf_putc(b, '}');
    }
}

/* "name":n pairs of a result or exit-code count, most first. */
static void put_json_counts(struct tl_buf *b, struct tl_count *c, size_t n)
{
    sort_counts(c, n);
    for (size_t i = 0; i < n; i++) {
        if (i) tl_buf_putc(b, ',');
        tl_buf_put_json_string(b, c[i].name);
        tl_buf_printf(b, ":%llu", (unsigned long long)c[i].n);
    }
}

/* The failed attempts by cause, the causes that occurred, in their order. */
static void put_json_causes(struct tl_buf *b, const struct tl_agg_group *g)
{
    bool first = true;
    for (int c = TL_CAUSE_NONE + 1; c < TL_CAUSE_COUNT; c++) {
        if (!g->causes[c]) continue;
        tl_buf_printf(b, "%s\"%s\":%llu", first ? "" : ",", tl_cause_name((enum tl_cause)c),
                      (unsigned long long)g->causes[c]);
        first = false;
    }
}

/* One group of the JSON: its key, counts, results, exit codes and metrics. */
static void write_json_group(const struct tl_summary *s, struct tl_agg_group *g, struct tl_buf *b)
{
    char qk[48];
    struct tl_buf part = {0}; /* a name decoded from the key, whole */
    const char *key = g->key;
    tl_buf_puts(b, "{\"key\":{");
    for (int k = 0; k < s->opts.nby; k++) {
        if (k) tl_buf_putc(b, ',');
        tl_buf_put_json_string(b, s->opts.by[k]);
        tl_buf_putc(b, ':');
        const char *v = tl_agg_key_part(key, k, &part);
        if (v) tl_buf_put_json_string(b, v);
        else tl_buf_puts(b, "null");
    }
    tl_buf_printf(b,
                  "},\"tasks\":%llu,\"attempts\":%llu,\"open\":%llu,\"samples\":%llu,"
                  "\"results\":{",
                  (unsigned long long)g->tasks, (unsigned long long)g->attempts,
                  (unsigned long long)g->open, (unsigned long long)g->samples);
    put_json_counts(b, g->results, g->nresults);
    tl_buf_puts(b, "},\"exit_codes\":{");
    put_json_counts(b, g->exits, g->nexits);
    tl_buf_printf(b, "},\"failed\":%llu,\"failed_attempts\":%llu,\"causes\":{",
                  (unsigned long long)g->failed, (unsigned long long)g->failed_attempts);
    put_json_causes(b, g);
    tl_buf_puts(b, "},\"wall_hours\":");
    put_json_number(b, tl_summary_runtime_hours(g));
    tl_buf_puts(b, ",\"core_hours\":");
    if (g->core_s > 0) put_json_number(b, tl_summary_core_hours(g));
    else tl_buf_puts(b, "null");
    tl_buf_puts(b, ",\"cpu_hours\":");
    if (g->cpu_s > 0) put_json_number(b, (g->cpu_s + g->cpu_c) / 3600.0);
    else tl_buf_puts(b, "null");
    tl_buf_puts(b, ",\"metrics\":{");
    for (int mi = 0; mi < s->opts.nmetrics; mi++) {
        struct tl_sketch *k = &g->cum[mi];
        struct stats st = sketch_stats(k);
        if (mi) tl_buf_putc(b, ',');
        tl_buf_put_json_string(b, tl_metric_info[s->opts.metrics[mi]].name);
        tl_buf_puts(b, ":{\"count\":"); /* no printf: it cost more than the rest */
        tl_buf_put_i64(b, (int64_t)st.count);
        tl_buf_puts(b, ",\"sum\":");
        put_json_number(b, st.count ? st.sum : 0);
        tl_buf_puts(b, ",\"min\":");
        put_json_number(b, st.min);
        tl_buf_puts(b, ",\"max\":");
        put_json_number(b, st.max);
        tl_buf_puts(b, ",\"mean\":");
        put_json_number(b, st.mean);
        tl_buf_puts(b, tl_sketch_is_exact(k) ? ",\"approx\":false,\"alpha\":" : ",\"approx\":true,\"alpha\":");
        put_json_number(b, tl_sketch_alpha(k));
        tl_buf_puts(b, ",\"quantiles\":{");
        for (int qi = 0; qi < s->opts.nq; qi++) {
            quantile_key(qk, sizeof qk, s->opts.q[qi]);
            tl_buf_puts(b, qi ? ",\"" : "\"");
            tl_buf_puts(b, qk);
            tl_buf_puts(b, "\":");
            put_json_number(b, tl_sketch_quantile(k, s->opts.q[qi]));
        }
        tl_buf_puts(b, "}}");
    }
    tl_buf_puts(b, "}}");
    tl_buf_free(&part);
}

static void write_json(struct tl_summary *s, const struct tl_summary_input *in, size_t nin,
                       struct tl_buf *b, struct tl_agg_group **order, size_t ngroups)
{
    write_json_inputs(in, nin, b);
    uint64_t shared = tl_summary_counter(in, nin, "process_wide_rss");
    if (shared) tl_buf_printf(b, "],\"process_wide_rss_quanta\":%llu", (unsigned long long)shared);
    else tl_buf_putc(b, ']');
    struct tl_agg_counters ac = tl_agg_counters(s->agg);
    if (ac.overflow_records) /* groups past max_keys: in the group whose tags are all _other */
        tl_buf_printf(b, ",\"overflow_records\":%llu,\"max_groups\":%u", (unsigned long long)ac.overflow_records,
                      tl_agg_options(s->agg)->max_keys);
    tl_buf_puts(b, ",\"groups\":[");
    for (size_t gi = 0; gi < ngroups; gi++) {
        if (gi) tl_buf_putc(b, ',');
        write_json_group(s, order[gi], b);
    }
    tl_buf_puts(b, "]}\n");
}

static void csv_field(struct tl_buf *b, const char *v)
{
    if (!v) return;
    if (strpbrk(v, ",\"\n\r")) {
        tl_buf_putc(b, '"');
        for (; *v; v++) {
            if (*v == '"') tl_buf_putc(b, '"');
            tl_buf_putc(b, *v);
        }
        tl_buf_putc(b, '"');
    } else {
        tl_buf_puts(b, v);
    }
}

static void csv_number(struct tl_buf *b, double v)
{
    if (isfinite(v)) tl_buf_put_double(b, v);
}

static void write_csv(struct tl_summary *s, struct tl_buf *b, struct tl_agg_group **order, size_t ngroups)
{
    char col[64];
    struct tl_buf part = {0};
    for (int k = 0; k < s->opts.nby; k++) {
        csv_field(b, s->opts.by[k]);
        tl_buf_putc(b, ',');
    }
    tl_buf_puts(b, "tasks,attempts,open,samples,failed,results,wall_hours");
    for (int mi = 0; mi < s->opts.nmetrics; mi++) {
        const char *m = tl_metric_info[s->opts.metrics[mi]].name;
        tl_buf_printf(b, ",%s_count,%s_sum,%s_mean", m, m, m);
        for (int qi = 0; qi < s->opts.nq; qi++) {
            quantile_column(col, sizeof col, s->opts.q[qi]);
            tl_buf_printf(b, ",%s_%s", m, col);
        }
    }
    tl_buf_putc(b, '\n');
    for (size_t gi = 0; gi < ngroups; gi++) {
        struct tl_agg_group *g = order[gi];
        const char *key = g->key;
        for (int k = 0; k < s->opts.nby; k++) {
            csv_field(b, tl_agg_key_part(key, k, &part));
            tl_buf_putc(b, ',');
        }
        tl_buf_printf(b, "%llu,%llu,%llu,%llu,%llu,", (unsigned long long)g->tasks,
                      (unsigned long long)g->attempts, (unsigned long long)g->open,
                      (unsigned long long)g->samples, (unsigned long long)g->failed);
        sort_counts(g->results, g->nresults);
        struct tl_buf r = {0};
        for (size_t i = 0; i < g->nresults; i++)
            tl_buf_printf(&r, "%s%s=%llu", i ? " " : "", g->results[i].name,
                          (unsigned long long)g->results[i].n);
        csv_field(b, r.len ? tl_buf_cstr(&r) : "");
        tl_buf_free(&r);
        tl_buf_putc(b, ',');
        csv_number(b, (g->runtime_s + g->runtime_c) / 3600.0);
        for (int mi = 0; mi < s->opts.nmetrics; mi++) {
            struct tl_sketch *k = &g->cum[mi];
            struct stats st = sketch_stats(k);
            tl_buf_printf(b, ",%zu,", st.count);
            if (st.count) csv_number(b, st.sum);
            tl_buf_putc(b, ',');
            csv_number(b, st.mean);
            for (int qi = 0; qi < s->opts.nq; qi++) {
                tl_buf_putc(b, ',');
                if (st.count) csv_number(b, tl_sketch_quantile(k, s->opts.q[qi]));
            }
        }
        tl_buf_putc(b, '\n');
    }
    tl_buf_free(&part);
}

uint64_t tl_summary_counter(const struct tl_summary_input *in, size_t n, const char *name)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        for (size_t c = 0; c < in[i].ncounters; c++)
            if (!strcmp(in[i].counters[c].name, name)) sum += in[i].counters[c].value;
    return sum;
}

/* Human units in at most 7 characters: 6.01s 12.3min 1.5h 243ms 1.1GiB */
/* v in a unit; when it rounds to 60 of it (full), the next unit's 1 (next). */
/* v to sig significant digits (as %.<sig>g: tl_fmt_sig), then unit. */
static void sig_unit(char *out, size_t cap, double v, int sig, const char *unit)
{
    size_t n = tl_fmt_sig(out, cap, v, sig), u = strlen(unit);
    if (n + u >= cap) u = n < cap ? cap - 1 - n : 0;
    memcpy(out + n, unit, u); /* not snprintf: ~400 instructions a cell */
    out[n + u] = '\0';
}

static void roll_over(char *out, size_t cap, double v, const char *unit, const char *full, const char *next)
{
    sig_unit(out, cap, v, 3, unit);
    const char *digits = out[0] == '-' ? out + 1 : out;
    if (!strcmp(digits, full)) snprintf(out, cap, "%s%s", v < 0 ? "-" : "", next);
}

/* v with an SI prefix (n .. T) and its unit: 21.6J, 380ug, 1.2kW. */
static void si_prefixed(char *out, size_t cap, double v, const char *unit)
{
    static const char *const p[] = {"n", "u", "m", "", "k", "M", "G", "T"};
    double a = fabs(v);
    int i = 3;
    if (a == 0) {
        snprintf(out, cap, "0%s", unit);
        return;
    }
    while (a < 0.9995 && i > 0) a *= 1000, v *= 1000, i--;
    while (a >= 999.5 && i < 7) a /= 1000, v /= 1000, i++;
    char u[16];
    snprintf(u, sizeof u, "%s%s", p[i], unit);
    sig_unit(out, cap, v, 3, u);
}

void tl_summary_human(char *out, size_t cap, double v, enum tl_unit unit)
{
    if (!isfinite(v)) {
        snprintf(out, cap, "-");
        return;
    }
    double a = fabs(v);
    switch (unit) {
    case TL_UNIT_SECONDS:
        /* a unit while %.3g keeps it below 1000 in it: 999.7us would print
         * as 1e+03us */
        if (a == 0) snprintf(out, cap, "0s");
        else if (a < 999.5e-6) sig_unit(out, cap, v * 1e6, 3, "us");
        else if (a < 0.9995) sig_unit(out, cap, v * 1e3, 3, "ms");
        /* and a value that rounds up to 60 at three digits is the next
         * unit: 59.97 s is 1min, not 60s (nor 0.999min) */
        else if (a < 60) roll_over(out, cap, v, "s", "60s", "1min");
        else if (a < 3600) roll_over(out, cap, v / 60, "min", "60min", "1h");
        else if (a < 999.5 * 3600) sig_unit(out, cap, v / 3600, 3, "h");
        else snprintf(out, cap, "%.0fh", v / 3600);
        return;
    case TL_UNIT_BYTES: {
        static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        int i = 0;
        while (a >= 999.5 && i < 5) { /* never print 1.01e+03MiB */
            a /= 1024;
            v /= 1024;
            i++;
        }
        sig_unit(out, cap, v, v < 1 && i > 0 ? 2 : 3, u[i]); /* 0.98GiB */
        return;
    }
    case TL_UNIT_JOULES: case TL_UNIT_WATTS: case TL_UNIT_KG:
        si_prefixed(out, cap, unit == TL_UNIT_KG ? v * 1000 : v,
                    unit == TL_UNIT_JOULES ? "J" : unit == TL_UNIT_WATTS ? "W" : "g");
        return;
    case TL_UNIT_PERCENT:
        sig_unit(out, cap, v, 3, "%");
        return;
    default: {
        static const char *const u[] = {"", "k", "M", "G", "T"};
        int i = 0;
        while (a >= 999.5 && i < 4) {
            a /= 1000;
            v /= 1000;
            i++;
        }
        sig_unit(out, cap, v, 3, u[i]);
    }
    }
}

/* The exit codes, when a task's command failed: a task can succeed for the
 * workflow system (result SUCCESS) and still exit 1, and a table that
 * shows only results hides that. */
static void put_failed_exits(struct tl_buf *b, struct tl_agg_group *g)
{
    bool failed = false;
    for (size_t i = 0; i < g->nexits; i++) failed |= strcmp(g->exits[i].name, "0") != 0;
    if (!failed) return;
    sort_counts(g->exits, g->nexits);
    tl_buf_puts(b, "\n  exit codes");
    for (size_t i = 0; i < g->nexits; i++) {
        char n[32];
        tl_fmt_grouped(n, g->exits[i].n);
        tl_buf_putc(b, ' ');
        tl_vis_append(b, g->exits[i].name, strlen(g->exits[i].name), 0);
        tl_buf_printf(b, "=%s", n);
    }
}

/* Hours in three significant digits, never an exponent: 81.1, 0.000537. */
static void put_hours(struct tl_buf *b, double h)
{
    if (!(h > 0) || h >= 0.01) {
        tl_buf_printf(b, h >= 1000 ? "%.0f" : "%.3g", h);
        return;
    }
    int decimals = 2 - (int)floor(log10(h)); /* three significant digits */
    tl_buf_printf(b, "%.*f", decimals > 12 ? 12 : decimals, h);
}

/* The failed attempts by cause (the glossary's causes), when any failed. */
static void put_causes(struct tl_buf *b, const struct tl_agg_group *g)
{
    if (!g->failed_attempts) return;
    tl_buf_puts(b, "\n  failed attempts by cause");
    for (int c = TL_CAUSE_NONE + 1; c < TL_CAUSE_COUNT; c++) {
        if (!g->causes[c]) continue;
        char n[32];
        tl_fmt_grouped(n, g->causes[c]);
        tl_buf_printf(b, " %s=%s", tl_cause_name((enum tl_cause)c), n);
    }
}

/* A group's task counts, hours, results, failed exit codes and causes. */
static void put_task_counts(struct tl_buf *b, struct tl_agg_group *g)
{
    char t[32], a[32];
    tl_fmt_grouped(t, g->tasks);
    tl_fmt_grouped(a, g->attempts);
    tl_buf_printf(b, "\n  tasks %s  attempts %s", t, a);
    if (g->open) {
        tl_fmt_grouped(t, g->open);
        tl_buf_printf(b, "  open %s", t);
    }
    struct tl_agg_apart ap = tl_agg_group_apart(g);
    uint64_t cached = ap.cached, cancelled = ap.cancelled;
    if (cached) { /* an earlier run's: not in the hours */
        tl_fmt_grouped(t, cached);
        tl_buf_printf(b, "  cached %s", t);
    }
    if (cancelled) { /* neither failed nor succeeded */
        tl_fmt_grouped(t, cancelled);
        tl_buf_printf(b, "  cancelled %s", t);
    }
    tl_fmt_grouped(t, g->failed);
    tl_buf_printf(b, "  failed %s  wall-hours ", t);
    put_hours(b, tl_summary_runtime_hours(g));
    if (g->core_s > 0) {
        tl_buf_puts(b, "  core-hours ");
        put_hours(b, tl_summary_core_hours(g));
    }
    if (g->cpu_s > 0) {
        tl_buf_puts(b, "  CPU-hours ");
        put_hours(b, (g->cpu_s + g->cpu_c) / 3600.0);
    }
    sort_counts(g->results, g->nresults);
    tl_buf_puts(b, "\n  results");
    for (size_t i = 0; i < g->nresults; i++) {
        tl_fmt_grouped(t, g->results[i].n);
        tl_buf_putc(b, ' ');
        tl_vis_append(b, g->results[i].name, strlen(g->results[i].name), 0);
        tl_buf_printf(b, "=%s", t);
    }
    put_failed_exits(b, g);
    put_causes(b, g);
}

static void write_table(struct tl_summary *s, const struct tl_summary_input *in, size_t nin,
                        struct tl_buf *b, struct tl_agg_group **order, size_t ngroups)
{
    int name_width = 18;
    for (int mi = 0; mi < s->opts.nmetrics; mi++) {
        int n = (int)strlen(tl_metric_info[s->opts.metrics[mi]].name);
        if (n > name_width) name_width = n;
    }
    char cell[64];
    struct tl_buf part = {0}, head = {0}; /* the metric table's header, the same for every group */
    tl_buf_printf(&head, "  %-*s %6s", name_width, "metric", "n");
    for (int qi = 0; qi < s->opts.nq && qi < 9; qi++) {
        quantile_column(cell, sizeof cell, s->opts.q[qi]);
        put_right(&head, cell, 7);
    }
    tl_buf_putc(&head, '\n');
    for (size_t gi = 0; gi < ngroups; gi++) {
        struct tl_agg_group *g = order[gi];
        const char *key = g->key;
        if (gi) tl_buf_putc(b, '\n');
        for (int k = 0; k < s->opts.nby; k++) {
            const char *v = tl_agg_key_part(key, k, &part);
            tl_buf_printf(b, "%s%s=", k ? " " : "", s->opts.by[k]);
            if (v) tl_vis_append(b, v, strlen(v), 0); /* a name on a terminal */
            else tl_buf_puts(b, TL_ABSENT_NAME);
        }
        if (g->tasks || g->attempts || g->open || !g->samples) put_task_counts(b, g);
        if (g->samples) {
            char n[32];
            tl_fmt_grouped(n, g->samples);
            tl_buf_printf(b, "\n  samples %s", n);
        }
        tl_buf_putc(b, '\n');
        bool header = false;
        for (int mi = 0; mi < s->opts.nmetrics; mi++) {
            struct tl_sketch *k = &g->cum[mi];
            if (!k->count) continue;
            const struct tl_metric_info *info = &tl_metric_info[s->opts.metrics[mi]];
            struct stats st = sketch_stats(k);
            /* 2 + 18 + 1 + 6 + 9 x 8 = 99 columns: fits a 100-column terminal
             * with the default metrics; a longer name widens the column, never
             * cut (virtual_memory_bytes). The mean is in csv and json. */
            if (!header) {
                tl_buf_append(b, head.data, head.len);
                header = true;
            }
            /* the n column stays plain digits: 6 of them fit the 100-column table */
            tl_buf_printf(b, "  %-*s %6zu", name_width, info->name, st.count);
            for (int qi = 0; qi < s->opts.nq && qi < 9; qi++) {
                tl_summary_human(cell, sizeof cell, tl_sketch_quantile(k, s->opts.q[qi]), info->unit);
                put_right(b, cell, 7);
            }
            tl_buf_putc(b, '\n');
        }
    }
    if (!ngroups) tl_buf_puts(b, "no tasks\n");
    uint64_t lines = 0, rejected = 0;
    for (size_t i = 0; i < nin; i++) {
        lines += in[i].lines;
        rejected += in[i].rejected;
    }
    char nl[32], nr[32];
    tl_fmt_grouped(nl, lines);
    tl_fmt_grouped(nr, rejected);
    tl_buf_printf(b, "\n%zu input%s, %s lines, %s rejected\n", nin, nin == 1 ? "" : "s", nl, nr);
    uint64_t shared = tl_summary_counter(in, nin, "process_wide_rss");
    if (shared) {
        tl_buf_printf(b, "note: " TL_NOTE_PROCESS_RSS "\n", (unsigned long long)shared);
    }
    struct tl_agg_counters ac = tl_agg_counters(s->agg);
    if (ac.overflow_records)
        tl_buf_printf(b, "%llu records of groups past the first %u are in the group %s\n",
                      (unsigned long long)ac.overflow_records, tl_agg_options(s->agg)->max_keys,
                      TL_AGG_OTHER);
    tl_buf_free(&part);
    tl_buf_free(&head);
}

enum tl_err tl_summary_write(struct tl_summary *s, enum tl_summary_format fmt,
                             const struct tl_summary_input *inputs, size_t ninputs, FILE *out)
{
    size_t ngroups;
    struct tl_agg_group **order = sorted_groups(s, &ngroups);
    if (!order) return TL_ERR_NOMEM;
    struct tl_buf b = {0};
    switch (fmt) {
    case TL_SUMMARY_JSON: write_json(s, inputs, ninputs, &b, order, ngroups); break;
    case TL_SUMMARY_CSV: write_csv(s, &b, order, ngroups); break;
    case TL_SUMMARY_TABLE: write_table(s, inputs, ninputs, &b, order, ngroups); break;
    }
    free(order);
    enum tl_err rc = TL_OK;
    if (b.oom) rc = TL_ERR_NOMEM;
    else if (fwrite(b.data, 1, b.len, out) != b.len) rc = TL_ERR_IO;
    tl_buf_free(&b);
    return rc;
}
