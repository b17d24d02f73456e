/* Summary tables.
 *
 * Groups live in an array indexed by the interned group key (the tag values
 * joined by \x1f), so adding a record costs one hash lookup plus one append
 * per present metric. Values are kept in growable arrays and sorted once at
 * output time; exact quantiles are then simple index arithmetic. */
#include "summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "intern.h"
#include "numfmt.h"
#include "quantile.h"

struct dvec {
    double *v;
    size_t n, cap;
};

struct count {
    char *name;
    uint64_t n;
};

struct group {
    uint64_t tasks, attempts, open;
    double runtime_s;
    struct count *results;
    size_t nresults;
    struct count *exits;
    size_t nexits;
    struct dvec *values; /* one per selected metric */
};

struct tl_summary {
    struct tl_summary_opts opts;
    struct tl_intern *keys;
    struct group *groups;
    size_t ngroups, cap;
    struct tl_buf keybuf;
    bool oom;
};

static const int default_metrics[] = {
    TL_M_WALL_TIME_S, TL_M_CPU_TIME_S,   TL_M_MAX_RSS_BYTES, TL_M_DISK_BYTES,
    TL_M_CORES,       TL_M_QUEUE_TIME_S, TL_M_EXEC_TIME_S,   TL_M_ALLOC_CORES,
    TL_M_ALLOC_MEMORY_BYTES,
};

void tl_summary_opts_default(struct tl_summary_opts *o)
{
    memset(o, 0, sizeof *o);
    o->by[0] = "category";
    o->nby = 1;
    const double q[] = TL_DEFAULT_QUANTILES;
    memcpy(o->q, q, sizeof q);
    o->nq = TL_DEFAULT_NQUANTILES;
    for (size_t i = 0; i < sizeof default_metrics / sizeof *default_metrics; i++)
        o->metrics[o->nmetrics++] = default_metrics[i];
}

bool tl_summary_opts_set_by(struct tl_summary_opts *o, char *list)
{
    o->nby = 0;
    for (char *save = NULL, *k = strtok_r(list, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
        if (o->nby == TL_SUMMARY_MAX_KEYS || !*k) return false;
        o->by[o->nby++] = k;
    }
    return o->nby > 0;
}

bool tl_summary_opts_set_metrics(struct tl_summary_opts *o, const char *list, char *err,
                                 size_t errlen)
{
    o->nmetrics = 0;
    const char *p = list;
    while (*p) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        int m = tl_metric_by_name(p, n);
        if (m < 0) {
            snprintf(err, errlen, "unknown metric '%.*s'", (int)n, p);
            return false;
        }
        if (o->nmetrics < TL_M_COUNT) o->metrics[o->nmetrics++] = m;
        p += n;
        if (*p == ',') p++;
    }
    return o->nmetrics > 0;
}

struct tl_summary *tl_summary_new(const struct tl_summary_opts *opts)
{
    struct tl_summary *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->opts = *opts;
    s->keys = tl_intern_new((size_t)1 << 30);
    if (!s->keys) {
        free(s);
        return NULL;
    }
    return s;
}

static void group_free(struct group *g, int nmetrics)
{
    for (size_t i = 0; i < g->nresults; i++) free(g->results[i].name);
    for (size_t i = 0; i < g->nexits; i++) free(g->exits[i].name);
    free(g->results);
    free(g->exits);
    for (int m = 0; m < nmetrics; m++) free(g->values[m].v);
    free(g->values);
}

void tl_summary_free(struct tl_summary *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->ngroups; i++) group_free(&s->groups[i], s->opts.nmetrics);
    free(s->groups);
    tl_intern_free(s->keys);
    tl_buf_free(&s->keybuf);
    free(s);
}

static struct group *group_for(struct tl_summary *s, const struct tl_record *r)
{
    struct tl_buf *k = &s->keybuf;
    k->len = 0;
    for (int i = 0; i < s->opts.nby; i++) {
        const char *v = tl_record_tag(r, s->opts.by[i]);
        if (i) tl_buf_putc(k, '\x1f');
        if (v) tl_buf_puts(k, v);
        else tl_buf_putc(k, '\x1e'); /* absent, distinct from "" */
    }
    if (k->oom) return NULL;
    int32_t id = tl_intern(s->keys, k->data, k->len);
    if (id < 0) return NULL;
    if ((size_t)id < s->ngroups) return &s->groups[id];
    if (s->ngroups == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        struct group *g = realloc(s->groups, cap * sizeof *g);
        if (!g) return NULL;
        s->groups = g;
        s->cap = cap;
    }
    struct group *g = &s->groups[s->ngroups];
    memset(g, 0, sizeof *g);
    g->values = calloc((size_t)s->opts.nmetrics, sizeof *g->values);
    if (!g->values) return NULL;
    s->ngroups++;
    return g;
}

static bool count_add(struct count **arr, size_t *n, const char *name)
{
    for (size_t i = 0; i < *n; i++)
        if (!strcmp((*arr)[i].name, name)) {
            (*arr)[i].n++;
            return true;
        }
    struct count *a = realloc(*arr, (*n + 1) * sizeof *a);
    if (!a) return false;
    *arr = a;
    a[*n].name = strdup(name);
    if (!a[*n].name) return false;
    a[*n].n = 1;
    (*n)++;
    return true;
}

static bool dvec_push(struct dvec *d, double v)
{
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 16;
        double *p = realloc(d->v, cap * sizeof *p);
        if (!p) return false;
        d->v = p;
        d->cap = cap;
    }
    d->v[d->n++] = v;
    return true;
}

enum tl_err tl_summary_add(struct tl_summary *s, const struct tl_record *r)
{
    if (r->kind != TL_REC_TASK && r->kind != TL_REC_TASK_OPEN) return TL_OK;
    struct group *g = group_for(s, r);
    if (!g) return TL_ERR_NOMEM;
    if (r->kind == TL_REC_TASK_OPEN) {
        g->open++;
        return TL_OK;
    }
    g->attempts++;
    if (!r->final) return TL_OK;
    g->tasks++;
    bool ok = count_add(&g->results, &g->nresults, r->result ? r->result : "(none)");
    if (r->has_exit_code) {
        char code[16];
        snprintf(code, sizeof code, "%d", r->exit_code);
        ok = ok && count_add(&g->exits, &g->nexits, code);
    }
    if (tl_record_has(r, TL_M_WALL_TIME_S)) g->runtime_s += r->v[TL_M_WALL_TIME_S];
    for (int i = 0; i < s->opts.nmetrics; i++) {
        int m = s->opts.metrics[i];
        if (tl_record_has(r, (enum tl_metric)m)) ok = ok && dvec_push(&g->values[i], r->v[m]);
    }
    return ok ? TL_OK : TL_ERR_NOMEM;
}

/* ---------------------------------------------------------------- output */

struct stats {
    size_t count;
    double sum, min, max, mean;
};

static struct stats dvec_stats(struct dvec *d)
{
    struct stats st = {d->n, 0, NAN, NAN, NAN};
    if (!d->n) return st;
    tl_sort_doubles(d->v, d->n);
    /* Kahan-Babuska sum: a million small values must not drift. */
    double sum = 0, c = 0;
    for (size_t i = 0; i < d->n; i++) {
        double t = sum + d->v[i];
        if (fabs(sum) >= fabs(d->v[i])) c += (sum - t) + d->v[i];
        else c += (d->v[i] - t) + sum;
        sum = t;
    }
    st.sum = sum + c;
    st.min = d->v[0];
    st.max = d->v[d->n - 1];
    st.mean = st.sum / (double)d->n;
    return st;
}

static int count_cmp(const void *a, const void *b)
{
    const struct count *x = a, *y = b;
    if (x->n != y->n) return x->n < y->n ? 1 : -1;
    return strcmp(x->name, y->name);
}

static void sort_counts(struct count *c, size_t n)
{
    if (n > 1) qsort(c, n, sizeof *c, count_cmp);
}

/* Group order: by key text, so output is stable whatever the input order. */
static int group_cmp(const void *a, const void *b, void *ctx)
{
    const struct tl_intern *keys = ctx;
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return strcmp(tl_intern_str(keys, x), tl_intern_str(keys, y));
}

static int32_t *sorted_groups(const struct tl_summary *s)
{
    int32_t *ix = malloc((s->ngroups + 1) * sizeof *ix);
    if (!ix) return NULL;
    for (size_t i = 0; i < s->ngroups; i++) ix[i] = (int32_t)i;
    if (s->ngroups > 1) qsort_r(ix, s->ngroups, sizeof *ix, group_cmp, s->keys);
    return ix;
}

/* The i-th tag value of a group key; NULL when absent. */
static const char *key_part(const char *key, int i, char *out, size_t cap)
{
    for (; i > 0; i--) {
        key = strchr(key, '\x1f');
        if (!key) return NULL;
        key++;
    }
    size_t n = strcspn(key, "\x1f");
    if (n == 1 && key[0] == '\x1e') return NULL;
    if (n >= cap) n = cap - 1;
    memcpy(out, key, n);
    out[n] = '\0';
    return out;
}

static void put_json_number(struct tl_buf *b, double v)
{
    if (isfinite(v)) tl_buf_put_double(b, v);
    else tl_buf_puts(b, "null");
}

/* "0.01" for the JSON key, "p001" for CSV columns. */
static void quantile_key(char *out, size_t cap, double q)
{
    tl_fmt_double(out, cap, q);
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

static void write_json(struct tl_summary *s, const struct tl_summary_input *in, size_t nin,
                       struct tl_buf *b, const int32_t *order)
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
            if (!in[i].counters[c]) continue;
            if (!first) tl_buf_putc(b, ',');
            tl_buf_put_json_string(b, in[i].counter_names[c]);
            tl_buf_printf(b, ":%llu", (unsigned long long)in[i].counters[c]);
            first = false;
        }
        tl_buf_putc(b, '}');
        if (in[i].error) {
            tl_buf_puts(b, ",\"error\":");
            tl_buf_put_json_string(b, in[i].error);
        }
        tl_buf_putc(b, '}');
    }
    tl_buf_puts(b, "],\"groups\":[");
    char part[4096], qk[48];
    for (size_t gi = 0; gi < s->ngroups; gi++) {
        int32_t id = order[gi];
        struct group *g = &s->groups[id];
        const char *key = tl_intern_str(s->keys, id);
        if (gi) tl_buf_putc(b, ',');
        tl_buf_puts(b, "{\"key\":{");
        for (int k = 0; k < s->opts.nby; k++) {
            if (k) tl_buf_putc(b, ',');
            tl_buf_put_json_string(b, s->opts.by[k]);
            tl_buf_putc(b, ':');
            const char *v = key_part(key, k, part, sizeof part);
            if (v) tl_buf_put_json_string(b, v);
            else tl_buf_puts(b, "null");
        }
        tl_buf_printf(b, "},\"tasks\":%llu,\"attempts\":%llu,\"open\":%llu,\"results\":{",
                      (unsigned long long)g->tasks, (unsigned long long)g->attempts,
                      (unsigned long long)g->open);
        sort_counts(g->results, g->nresults);
        for (size_t i = 0; i < g->nresults; i++) {
            if (i) tl_buf_putc(b, ',');
            tl_buf_put_json_string(b, g->results[i].name);
            tl_buf_printf(b, ":%llu", (unsigned long long)g->results[i].n);
        }
        tl_buf_puts(b, "},\"exit_codes\":{");
        sort_counts(g->exits, g->nexits);
        for (size_t i = 0; i < g->nexits; i++) {
            if (i) tl_buf_putc(b, ',');
            tl_buf_put_json_string(b, g->exits[i].name);
            tl_buf_printf(b, ":%llu", (unsigned long long)g->exits[i].n);
        }
        tl_buf_puts(b, "},\"integrated_runtime_hrs\":");
        put_json_number(b, g->runtime_s / 3600.0);
        tl_buf_puts(b, ",\"metrics\":{");
        for (int mi = 0; mi < s->opts.nmetrics; mi++) {
            struct dvec *d = &g->values[mi];
            struct stats st = dvec_stats(d);
            if (mi) tl_buf_putc(b, ',');
            tl_buf_put_json_string(b, tl_metric_info[s->opts.metrics[mi]].name);
            tl_buf_printf(b, ":{\"count\":%zu,\"sum\":", st.count);
            put_json_number(b, st.sum);
            tl_buf_puts(b, ",\"min\":");
            put_json_number(b, st.min);
            tl_buf_puts(b, ",\"max\":");
            put_json_number(b, st.max);
            tl_buf_puts(b, ",\"mean\":");
            put_json_number(b, st.mean);
            tl_buf_puts(b, ",\"approx\":false,\"quantiles\":{");
            for (int qi = 0; qi < s->opts.nq; qi++) {
                quantile_key(qk, sizeof qk, s->opts.q[qi]);
                tl_buf_printf(b, "%s\"%s\":", qi ? "," : "", qk);
                put_json_number(b, tl_quantile_sorted(d->v, d->n, s->opts.q[qi]));
            }
            tl_buf_puts(b, "}}");
        }
        tl_buf_puts(b, "}}");
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

static void write_csv(struct tl_summary *s, struct tl_buf *b, const int32_t *order)
{
    char col[64], part[4096];
    for (int k = 0; k < s->opts.nby; k++) {
        csv_field(b, s->opts.by[k]);
        tl_buf_putc(b, ',');
    }
    tl_buf_puts(b, "tasks,attempts,open,results,integrated_runtime_hrs");
    for (int mi = 0; mi < s->opts.nmetrics; mi++) {
        const char *m = tl_metric_info[s->opts.metrics[mi]].name;
        tl_buf_printf(b, ",%s_count,%s_sum,%s_mean", m, m, m);
        for (int qi = 0; qi < s->opts.nq; qi++) {
            quantile_column(col, sizeof col, s->opts.q[qi]);
            tl_buf_printf(b, ",%s_%s", m, col);
        }
    }
    tl_buf_putc(b, '\n');
    for (size_t gi = 0; gi < s->ngroups; gi++) {
        int32_t id = order[gi];
        struct group *g = &s->groups[id];
        const char *key = tl_intern_str(s->keys, id);
        for (int k = 0; k < s->opts.nby; k++) {
            csv_field(b, key_part(key, k, part, sizeof part));
            tl_buf_putc(b, ',');
        }
        tl_buf_printf(b, "%llu,%llu,%llu,", (unsigned long long)g->tasks,
                      (unsigned long long)g->attempts, (unsigned long long)g->open);
        sort_counts(g->results, g->nresults);
        struct tl_buf r = {0};
        for (size_t i = 0; i < g->nresults; i++)
            tl_buf_printf(&r, "%s%s=%llu", i ? " " : "", g->results[i].name,
                          (unsigned long long)g->results[i].n);
        csv_field(b, r.len ? tl_buf_cstr(&r) : "");
        tl_buf_free(&r);
        tl_buf_putc(b, ',');
        csv_number(b, g->runtime_s / 3600.0);
        for (int mi = 0; mi < s->opts.nmetrics; mi++) {
            struct dvec *d = &g->values[mi];
            struct stats st = dvec_stats(d);
            tl_buf_printf(b, ",%zu,", st.count);
            if (st.count) csv_number(b, st.sum);
            tl_buf_putc(b, ',');
            csv_number(b, st.mean);
            for (int qi = 0; qi < s->opts.nq; qi++) {
                tl_buf_putc(b, ',');
                if (d->n) csv_number(b, tl_quantile_sorted(d->v, d->n, s->opts.q[qi]));
            }
        }
        tl_buf_putc(b, '\n');
    }
}

/* Human units in at most 7 characters: 6.01s 12.3min 1.5h 243ms 1.1GiB */
static void human(char *out, size_t cap, double v, enum tl_unit unit)
{
    if (!isfinite(v)) {
        snprintf(out, cap, "-");
        return;
    }
    double a = fabs(v);
    switch (unit) {
    case TL_UNIT_SECONDS:
        if (a == 0) snprintf(out, cap, "0s");
        else if (a < 1e-3) snprintf(out, cap, "%.3gus", v * 1e6);
        else if (a < 1) snprintf(out, cap, "%.3gms", v * 1e3);
        else if (a < 60) snprintf(out, cap, "%.3gs", v);
        else if (a < 3600) snprintf(out, cap, "%.3gmin", v / 60);
        else snprintf(out, cap, "%.3gh", v / 3600);
        return;
    case TL_UNIT_BYTES: {
        static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        int i = 0;
        while (a >= 999.5 && i < 5) { /* never print 1.01e+03MiB */
            a /= 1024;
            v /= 1024;
            i++;
        }
        snprintf(out, cap, v < 1 && i > 0 ? "%.2g%s" : "%.3g%s", v, u[i]); /* 0.98GiB */
        return;
    }
    default: {
        static const char *const u[] = {"", "k", "M", "G", "T"};
        int i = 0;
        while (a >= 999.5 && i < 4) {
            a /= 1000;
            v /= 1000;
            i++;
        }
        snprintf(out, cap, "%.3g%s", v, u[i]);
    }
    }
}

static void write_table(struct tl_summary *s, const struct tl_summary_input *in, size_t nin,
                        struct tl_buf *b, const int32_t *order)
{
    char part[4096], cell[64];
    for (size_t gi = 0; gi < s->ngroups; gi++) {
        int32_t id = order[gi];
        struct group *g = &s->groups[id];
        const char *key = tl_intern_str(s->keys, id);
        if (gi) tl_buf_putc(b, '\n');
        for (int k = 0; k < s->opts.nby; k++) {
            const char *v = key_part(key, k, part, sizeof part);
            tl_buf_printf(b, "%s%s=%s", k ? " " : "", s->opts.by[k], v ? v : "-");
        }
        tl_buf_printf(b, "\n  tasks %llu  attempts %llu", (unsigned long long)g->tasks,
                      (unsigned long long)g->attempts);
        if (g->open) tl_buf_printf(b, "  open %llu", (unsigned long long)g->open);
        human(cell, sizeof cell, g->runtime_s, TL_UNIT_SECONDS);
        tl_buf_printf(b, "  integrated runtime %s", cell);
        sort_counts(g->results, g->nresults);
        tl_buf_puts(b, "\n  results");
        for (size_t i = 0; i < g->nresults; i++)
            tl_buf_printf(b, " %s=%llu", g->results[i].name, (unsigned long long)g->results[i].n);
        tl_buf_putc(b, '\n');
        bool header = false;
        for (int mi = 0; mi < s->opts.nmetrics; mi++) {
            struct dvec *d = &g->values[mi];
            if (!d->n) continue;
            const struct tl_metric_info *info = &tl_metric_info[s->opts.metrics[mi]];
            struct stats st = dvec_stats(d);
            /* 2 + 18 + 1 + 6 + 9 x 8 = 99 columns: fits a 100-column terminal.
             * The mean is in csv and json. */
            if (!header) {
                tl_buf_printf(b, "  %-18s %6s", "metric", "n");
                for (int qi = 0; qi < s->opts.nq && qi < 9; qi++) {
                    quantile_column(cell, sizeof cell, s->opts.q[qi]);
                    tl_buf_printf(b, " %7s", cell);
                }
                tl_buf_putc(b, '\n');
                header = true;
            }
            tl_buf_printf(b, "  %-18.18s %6zu", info->name, st.count);
            for (int qi = 0; qi < s->opts.nq && qi < 9; qi++) {
                human(cell, sizeof cell, tl_quantile_sorted(d->v, d->n, s->opts.q[qi]),
                      info->unit);
                tl_buf_printf(b, " %7s", cell);
            }
            tl_buf_putc(b, '\n');
        }
    }
    if (!s->ngroups) tl_buf_puts(b, "no tasks\n");
    uint64_t lines = 0, rejected = 0;
    for (size_t i = 0; i < nin; i++) {
        lines += in[i].lines;
        rejected += in[i].rejected;
    }
    tl_buf_printf(b, "\n%zu input%s, %llu lines, %llu rejected\n", nin, nin == 1 ? "" : "s",
                  (unsigned long long)lines, (unsigned long long)rejected);
}

enum tl_err tl_summary_write(struct tl_summary *s, enum tl_summary_format fmt,
                             const struct tl_summary_input *inputs, size_t ninputs, FILE *out)
{
    int32_t *order = sorted_groups(s);
    if (!order) return TL_ERR_NOMEM;
    struct tl_buf b = {0};
    switch (fmt) {
    case TL_SUMMARY_JSON: write_json(s, inputs, ninputs, &b, order); break;
    case TL_SUMMARY_CSV: write_csv(s, &b, order); break;
    case TL_SUMMARY_TABLE: write_table(s, inputs, ninputs, &b, order); break;
    }
    free(order);
    enum tl_err rc = TL_OK;
    if (b.oom) rc = TL_ERR_NOMEM;
    else if (fwrite(b.data, 1, b.len, out) != b.len) rc = TL_ERR_IO;
    tl_buf_free(&b);
    return rc;
}
