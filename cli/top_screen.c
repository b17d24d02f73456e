/* One frame of `tasklens top` as text: the run line, the workflow line, the
 * categories table, the stragglers, the failures, the last message and the
 * keys. A small ANSI writer, not curses (docs/top.md says why and what it
 * measured): the frame is redrawn whole at most once a second, each line
 * cut to the width and ended with "clear to end of line", so a resize or a
 * shorter line never leaves debris. Numbers are formatted as `summary`'s
 * table formats them (tl_summary_human), so the two read alike. */
#include "cli/top.h"
#include "core/term.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/summary.h"

#define CSI "\x1b["
#define BOLD CSI "1m"
#define REVERSE CSI "7m"
#define RED CSI "31m"
#define YELLOW CSI "33m"
#define DIM CSI "2m"
#define RESET CSI "0m"

/* A line being built: text cut at width visible columns (escape sequences
 * are not columns). */
struct line {
    struct tl_buf *out;
    const struct top_view *v;
    int col;
};

static void line_begin(struct line *l, struct tl_buf *out, const struct top_view *v)
{
    *l = (struct line){out, v, 0};
}

static void line_style(struct line *l, const char *sgr)
{
    if (l->v->colour) tl_buf_puts(l->out, sgr);
}

/* Appends text, names in it in visible escapes (term.h: nothing from an
 * input reaches the terminal as a control); what passes the width is cut
 * (its last column shows '~'). */
static void line_put(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line_put(struct line *l, const char *fmt, ...)
{
    char raw[1024], tmp[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    tl_vis(raw, tmp, sizeof tmp);
    for (const unsigned char *p = (const unsigned char *)tmp; *p; p++) {
        bool starts_char = (*p & 0xC0) != 0x80; /* UTF-8: count a character once */
        if (starts_char && l->col >= l->v->width) return;
        if (starts_char && l->col == l->v->width - 1 && p[1] && (p[1] & 0xC0) != 0x80) {
            tl_buf_putc(l->out, '~');
            l->col++;
            return;
        }
        tl_buf_putc(l->out, (char)*p);
        l->col += starts_char;
    }
}

static void line_end(struct line *l)
{
    line_style(l, RESET);
    if (l->v->screen) tl_buf_puts(l->out, CSI "K");
    tl_buf_puts(l->out, l->v->screen ? "\r\n" : "\n");
}

/* The screen's last line: no newline, which would scroll the frame up. */
static void line_end_last(struct line *l)
{
    line_style(l, RESET);
    tl_buf_puts(l->out, CSI "K");
}

/* ---------------------------------------------------------------- formats */

static const char *human(char *buf, size_t cap, double v, enum tl_unit unit)
{
    if (isnan(v)) snprintf(buf, cap, "-");
    else tl_summary_human(buf, cap, v, unit);
    return buf;
}

static const char *count_or_dash(char *buf, size_t cap, int64_t v)
{
    if (v < 0) snprintf(buf, cap, "-");
    else snprintf(buf, cap, "%lld", (long long)v);
    return buf;
}

/* A waste: "over" when more was used than allocated (the task outgrew it);
 * a decimal above 99 %, so nearly all does not read as all. */
static const char *percent(char *buf, size_t cap, double frac)
{
    if (isnan(frac)) snprintf(buf, cap, "-");
    else if (frac < 0) snprintf(buf, cap, "over");
    else if (frac > 0.99 && frac < 1) snprintf(buf, cap, "%.1f%%", frac * 100);
    else snprintf(buf, cap, "%.0f%%", frac * 100);
    return buf;
}

/* A rate in at most 5 characters, two or three significant digits, so
 * its column never runs into the next ("00.0289" was FAIL 0 and 0.0289). */
static const char *rate(char *buf, size_t cap, double per_min)
{
    if (isnan(per_min)) snprintf(buf, cap, "-");
    else if (per_min >= 1000) tl_summary_human(buf, cap, per_min, TL_UNIT_COUNT); /* 14.4M: a trace's µs */
    else if (per_min >= 10 || per_min == 0) snprintf(buf, cap, "%.0f", per_min);
    else if (per_min >= 1) snprintf(buf, cap, "%.1f", per_min);
    else if (per_min >= 0.01) snprintf(buf, cap, "%.2f", per_min);
    else snprintf(buf, cap, "<0.01");
    return buf;
}

/* A log time as HH:MM:SS UTC. */
static const char *clock_of(char *buf, size_t cap, int64_t ns)
{
    time_t t = (time_t)(ns / 1000000000LL);
    struct tm tm;
    if (ns <= 0 || !gmtime_r(&t, &tm)) snprintf(buf, cap, "--:--:--");
    else strftime(buf, cap, "%H:%M:%S", &tm);
    return buf;
}

/* The i-th character of s (UTF-8), or its end. */
static const char *char_at(const char *s, int i)
{
    for (; *s; s++)
        if ((*s & 0xC0) != 0x80 && i-- == 0) return s;
    return s;
}

/* A name cut to width in the middle ("compu~nergy", "subgr~ph_17"): the
 * end of a name often tells categories apart (a number, a suffix). It is
 * cut as shown, in visible escapes, on whole characters. */
static void fit_name(char *out, size_t cap, const char *name, int width)
{
    struct tl_buf v = {0};
    tl_vis_append(&v, name, strlen(name), 0);
    const char *s = v.oom ? "?" : tl_buf_cstr(&v);
    int n = 0;
    for (const char *p = s; *p; p++) n += (*p & 0xC0) != 0x80;
    if (n <= width || width < 5) {
        snprintf(out, cap, "%.*s", (int)(char_at(s, width) - s), s);
    } else {
        int head = (width - 1) / 2, tail = width - 1 - head;
        snprintf(out, cap, "%.*s~%s", (int)(char_at(s, head) - s), s, char_at(s, n - tail));
    }
    tl_buf_free(&v);
}

/* ---------------------------------------------------------------- the rows */

static double sort_key(const struct tl_live_row *r, enum top_sort s)
{
    switch (s) {
    case TOP_SORT_RUNNING: return (double)r->running;
    case TOP_SORT_WAITING: return (double)r->waiting;
    case TOP_SORT_DONE: return (double)r->done;
    case TOP_SORT_FAILED: return (double)r->failed;
    case TOP_SORT_RATE: return r->per_min;
    case TOP_SORT_WALL_P95: return r->wall_p95;
    case TOP_SORT_MEM_P95: return r->rss_p95;
    case TOP_SORT_WASTE: return r->mem_waste;
    default: return 0;
    }
}

/* Largest first, unknown last; ties keep their first-seen order. */
static int cmp_rows(const void *a, const void *b, void *ctx)
{
    const struct tl_live_row *const *x = a, *const *y = b;
    enum top_sort sorting = *(const enum top_sort *)ctx;
    double kx = sort_key(*x, sorting), ky = sort_key(*y, sorting);
    bool nx = isnan(kx) || kx < 0, ny = isnan(ky) || ky < 0;
    if (nx != ny) return nx ? 1 : -1;
    if (!nx && kx != ky) return kx > ky ? -1 : 1;
    return *x < *y ? -1 : *x > *y;
}

/* Nothing open and nothing ended in the window. */
static bool idle(const struct tl_live_row *r)
{
    return r->running <= 0 && r->waiting <= 0 && r->done + r->failed == 0;
}

/* The rows the filter keeps, in the chosen order; in a recent window, not
 * the idle ones (counted in *idle_n: the whole run shows them). */
static size_t visible_rows(struct tl_live_row *rows, size_t n, const struct top_view *v,
                           const struct tl_live_row **out, size_t *idle_n)
{
    size_t k = 0;
    *idle_n = 0;
    for (size_t i = 0; i < n; i++) {
        if (v->filter[0] && !strstr(rows[i].category, v->filter)) continue;
        if (v->window != TL_LIVE_RUN && idle(&rows[i])) (*idle_n)++;
        else out[k++] = &rows[i];
    }
    enum top_sort by = v->sort;
    if (by != TOP_SORT_SEEN) qsort_r(out, k, sizeof *out, cmp_rows, &by);
    return k;
}

static const char *const sort_names[TOP_NSORTS] = {"seen", "run", "wait", "done", "fail", "/min",
                                                   "wall p95", "mem p95", "waste"};

/* Column widths: category takes what the others leave. */
enum { W_RUN = 4, W_WAIT = 5, W_DONE = 6, W_FAIL = 5, W_RATE = 6, W_Q = 9, W_WASTE = 6 };
static int category_width(int width, bool cpu_waste)
{
    int rest = W_RUN + W_WAIT + W_DONE + W_FAIL + W_RATE + 4 * W_Q + W_WASTE + (cpu_waste ? W_WASTE : 0);
    int w = width - rest - 1;
    return w < 8 ? 8 : w > 40 ? 40 : w;
}

static void header_row(struct tl_buf *out, const struct top_view *v, int cw, bool cpu_waste)
{
    struct line l;
    line_begin(&l, out, v);
    line_style(&l, REVERSE);
    line_put(&l, "%-*s%*s%*s%*s%*s%*s%*s%*s%*s%*s%*s", cw, "CATEGORY", W_RUN, "RUN", W_WAIT, "WAIT",
             W_DONE, "DONE", W_FAIL, "FAIL", W_RATE, "/MIN", W_Q, "WALL p50", W_Q, "p95", W_Q,
             "MEM p50", W_Q, "p95", W_WASTE, cpu_waste ? "WMEM" : "WASTE");
    if (cpu_waste) line_put(&l, "%*s", W_WASTE, "WCPU");
    line_put(&l, "%*s", v->width - l.col, ""); /* the bar spans the width */
    line_end(&l);
}

static void waste_cell(struct line *l, const char *text)
{
    bool over = !strcmp(text, "over");
    if (over) line_style(l, RED);
    line_put(l, "%*s", W_WASTE, text);
    if (over) line_style(l, RESET);
}

static void category_row(struct tl_buf *out, const struct top_view *v, const struct tl_live_row *r,
                         int cw, bool cpu_waste)
{
    char a[5][24], q[4][16], name[256];
    fit_name(name, sizeof name, r->category, cw - 1);
    struct line l;
    line_begin(&l, out, v);
    line_put(&l, "%-*s%*s%*s%*llu", cw, name, W_RUN, count_or_dash(a[0], 24, r->running), W_WAIT,
             count_or_dash(a[1], 24, r->waiting), W_DONE, (unsigned long long)r->done);
    if (r->failed) line_style(&l, RED);
    line_put(&l, "%*llu", W_FAIL, (unsigned long long)r->failed);
    if (r->failed) line_style(&l, RESET);
    line_put(&l, "%*s%*s%*s%*s%*s", W_RATE, rate(a[2], 24, r->per_min), W_Q,
             human(q[0], 16, r->wall_p50, TL_UNIT_SECONDS), W_Q, human(q[1], 16, r->wall_p95, TL_UNIT_SECONDS),
             W_Q, human(q[2], 16, r->rss_p50, TL_UNIT_BYTES), W_Q, human(q[3], 16, r->rss_p95, TL_UNIT_BYTES));
    waste_cell(&l, percent(a[3], 24, r->mem_waste));
    if (cpu_waste) waste_cell(&l, percent(a[4], 24, r->core_waste));
    line_end(&l);
}

/* ---------------------------------------------------------------- the lines above */

static void run_line(struct tl_buf *out, const struct top_view *v, struct tl_live *L)
{
    char now[16], from[16];
    int64_t t = tl_live_now(L);
    struct line l;
    line_begin(&l, out, v);
    line_style(&l, BOLD);
    line_put(&l, "tasklens top");
    line_style(&l, RESET);
    if (v->paused) {
        line_style(&l, REVERSE);
        line_put(&l, " PAUSED ");
        line_style(&l, RESET);
    }
    if (t < 946684800000000000LL) /* before 2000: a trace's own clock, not a date */
        line_put(&l, "  %s%s of the trace's clock", v->window == TL_LIVE_RUN ? "whole run" : "last ",
                 v->window == TL_LIVE_RUN ? "" : tl_live_window_name(v->window));
    else if (v->window == TL_LIVE_RUN) line_put(&l, "  whole run to %s UTC", clock_of(now, sizeof now, t));
    else
        line_put(&l, "  last %s: %s-%s UTC", tl_live_window_name(v->window),
                 clock_of(from, sizeof from,
                          (t / 60000000000LL - (v->window == TL_LIVE_5MIN ? 4 : 59)) * 60000000000LL),
                 clock_of(now, sizeof now, t));
    if (v->waiting_for) line_put(&l, "  waiting for %s (it does not exist yet)", v->waiting_for);
    else line_put(&l, "  %s %s", v->input_over ? "read" : v->follow ? "following" : "reading", v->title);
    line_end(&l);
}

static void duration(char *buf, size_t cap, double s)
{
    if (s < 60) snprintf(buf, cap, "%.0fs", s);
    else if (s < 3600) snprintf(buf, cap, "%dm%02ds", (int)(s / 60), (int)fmod(s, 60));
    else snprintf(buf, cap, "%dh%02dm", (int)(s / 3600), (int)fmod(s / 60, 60));
}

static void eta(struct line *l, const struct tl_live_workflow *w);

static void workflow_lines(struct tl_buf *out, const struct top_view *v, struct tl_live *L,
                           const struct tl_live_workflow *w, uint64_t done, uint64_t failed)
{
    char a[4][32];
    struct line l;
    line_begin(&l, out, v);
    /* connected workers with no cores: none reported its resources (a worker has >= 1) */
    bool cores_unsaid = isnan(w->cores_total) || (w->cores_total == 0 && w->workers > 0);
    if (w->known)
        line_put(&l, "workers %lld  cores %s", (long long)w->workers,
                 cores_unsaid ? "-" : human(a[0], 32, w->cores_total, TL_UNIT_COUNT));
    else line_put(&l, "workers -  cores -");
    /* allocated (what runs holds) and used (CPU time over the window): two numbers */
    bool alloc = !isnan(w->cores_in_use), used = !isnan(w->cores_used);
    if (alloc) line_put(&l, " (%s allocated to running tasks", human(a[1], 32, w->cores_in_use, TL_UNIT_COUNT));
    if (used) line_put(&l, "%s%s used", alloc ? ", " : " (", human(a[2], 32, w->cores_used, TL_UNIT_COUNT));
    if (alloc || used) line_put(&l, ")");
    eta(&l, w);
    line_end(&l);
    line_begin(&l, out, v);
    line_put(&l, "tasks %s running  %s waiting  %llu done  ", count_or_dash(a[2], 32, w->running),
             count_or_dash(a[3], 32, w->waiting), (unsigned long long)done);
    if (failed) line_style(&l, RED);
    line_put(&l, "%llu failed", (unsigned long long)failed);
    if (failed) line_style(&l, RESET);
    line_put(&l, "  %s ended/min", rate(a[0], 32, w->per_min));
    line_end(&l);
}

/* "a" or "a..b" when they differ as shown. */
static const char *span_of(char *buf, size_t cap, double a, double b)
{
    char x[32], y[32];
    duration(x, sizeof x, a);
    duration(y, sizeof y, b);
    if (strcmp(x, y)) snprintf(buf, cap, "%s..%s", x, y);
    else snprintf(buf, cap, "%s", x);
    return buf;
}

/* The time to done: the longer of what is open over the rate things end
 * at (the window's) and the critical path left (what the longest open task
 * still needs at its category's p50 .. p95). */
static void eta(struct line *l, const struct tl_live_workflow *w)
{
    char e[72], p[72], r[32];
    long long open = (long long)(w->running + w->waiting);
    if (w->running < 0) line_put(l, "  ETA -: this format does not say what runs or waits");
    else if (w->eta_s == 0) line_put(l, "  ETA now: nothing runs or waits");
    else if (isnan(w->eta_p50_s)) line_put(l, "  ETA -: nothing ended in the window");
    else if (isnan(w->path_left_p50_s))
        line_put(l, "  ETA %s = %lld open / %s per min", span_of(e, sizeof e, w->eta_p50_s, w->eta_p95_s), open,
                 rate(r, sizeof r, w->per_min));
    else if (isnan(w->eta_s))
        line_put(l, "  ETA %s = path left (nothing ended in the window)",
                 span_of(e, sizeof e, w->eta_p50_s, w->eta_p95_s));
    else
        line_put(l, "  ETA %s = max(%lld open / %s per min, path left %s)",
                 span_of(e, sizeof e, w->eta_p50_s, w->eta_p95_s), open, rate(r, sizeof r, w->per_min),
                 span_of(p, sizeof p, w->path_left_p50_s, w->path_left_p95_s));
}

static void straggler_lines(struct tl_buf *out, const struct top_view *v, struct tl_live *L, int max)
{
    const struct tl_live_straggler *s;
    size_t n = tl_live_stragglers(L, &s);
    if (!n || max < 2) return;
    struct line l;
    line_begin(&l, out, v);
    line_style(&l, BOLD);
    line_put(&l, "Running longest against their category's wall p95 (whole run)");
    line_end(&l);
    for (size_t i = 0; i < n && (int)i < max - 1; i++) {
        char e[32], p[16], name[256];
        duration(e, sizeof e, s[i].elapsed_s);
        fit_name(name, sizeof name, s[i].category, 24);
        line_begin(&l, out, v);
        double ratio = s[i].elapsed_s / s[i].p95_s;
        if (ratio >= 1) line_style(&l, YELLOW);
        line_put(&l, "  %4.1fx  task %lld  %s  running %s, p95 %s  %s", ratio, (long long)s[i].task_id,
                 name, e, human(p, sizeof p, s[i].p95_s, TL_UNIT_SECONDS), s[i].host);
        line_end(&l);
    }
}

/* One line: per category that failed, its failed attempts by cause (the
 * whole run), as many as the width holds. */
static void category_causes(struct tl_buf *out, const struct top_view *v, const struct tl_live *L)
{
    struct line l;
    line_begin(&l, out, v);
    line_put(&l, "  by category:");
    const char *name, *sep = " ";
    const uint64_t *c;
    for (size_t i = 0; (c = tl_live_category_causes(L, i, &name)); i++)
        for (int k = TL_CAUSE_NONE + 1; k < TL_CAUSE_COUNT; k++) {
            if (!c[k]) continue;
            line_put(&l, "%s%s: %s %llu", sep, name, tl_cause_label((enum tl_cause)k), (unsigned long long)c[k]);
            sep = "; ";
        }
    line_end(&l);
}

static void failure_lines(struct tl_buf *out, const struct top_view *v, struct tl_live *L, int max)
{
    const struct tl_live_failure *f;
    uint64_t total;
    size_t n = tl_live_failures(L, &f, max > 2 ? (size_t)max - 2 : 0, &total);
    if (!total || max < 3) return;
    struct line l;
    line_begin(&l, out, v);
    line_style(&l, BOLD);
    line_put(&l, "Failed attempts, newest first (%llu in all", (unsigned long long)total);
    const uint64_t *causes = tl_live_causes(L);
    const char *sep = ": ";
    for (int c = TL_CAUSE_NONE + 1; c < TL_CAUSE_COUNT; c++) {
        if (!causes[c]) continue;
        line_put(&l, "%s%s %llu", sep, tl_cause_label((enum tl_cause)c), (unsigned long long)causes[c]);
        sep = ", ";
    }
    line_put(&l, ")");
    line_end(&l);
    category_causes(out, v, L);
    for (size_t i = 0; i < n; i++) {
        char t[16];
        line_begin(&l, out, v);
        line_style(&l, RED);
        line_put(&l, "  %s  task %lld", clock_of(t, sizeof t, f[i].time_ns), (long long)f[i].task_id);
        if (f[i].attempt > 1) line_put(&l, " (attempt %d)", f[i].attempt);
        if (!f[i].final) line_put(&l, " (retried)");
        line_put(&l, "  %s  %s", f[i].category, f[i].result);
        if (f[i].has_exit) line_put(&l, " exit %d", f[i].exit_code);
        line_put(&l, " (%s)", tl_cause_label(f[i].cause));
        if (f[i].host[0]) line_put(&l, "  %s", f[i].host);
        line_end(&l);
    }
}

static void bottom_lines(struct tl_buf *out, const struct top_view *v)
{
    struct line l;
    if (v->message[0]) {
        line_begin(&l, out, v);
        line_style(&l, DIM);
        line_put(&l, "%s", v->message);
        line_end(&l);
    }
    if (!v->screen) return;
    line_begin(&l, out, v);
    if (v->filtering) line_put(&l, "filter categories: %s_   (Enter: apply, Esc: clear)", v->filter);
    else
        line_put(&l, "q quit  s sort (%s)  f filter%s%s  w window (%s)  p %s", sort_names[v->sort],
                 v->filter[0] ? " " : "", v->filter, tl_live_window_name(v->window),
                 v->paused ? "resume" : "pause");
    line_end_last(&l);
}

/* Empty lines down to where the message and key lines go (the last rows). */
static void pad_to_bottom(struct tl_buf *out, const struct top_view *v)
{
    int lines = 0;
    for (size_t i = 0; i < out->len; i++) lines += out->data[i] == '\n';
    int bottom = 1 + (v->message[0] ? 1 : 0); /* the message, the key line (no newline) */
    while (lines < v->height - bottom) {
        struct line l;
        line_begin(&l, out, v);
        line_end(&l);
        lines++;
    }
}

/* ---------------------------------------------------------------- the frame */

void top_render(struct tl_buf *out, struct tl_live *L, struct tl_agg *agg, const struct top_view *v)
{
    out->len = 0;
    if (v->screen) tl_buf_puts(out, CSI "H");
    struct tl_live_row *rows;
    size_t n = tl_live_rows(L, agg, v->window, &rows);
    struct tl_live_workflow w;
    tl_live_workflow(L, v->window, &w);
    uint64_t done = 0, failed = 0;
    for (size_t i = 0; i < n; i++) done += rows[i].done, failed += rows[i].failed;
    const struct tl_live_row **shown = malloc((n ? n : 1) * sizeof *shown);
    if (!shown) return;
    size_t idle_n;
    size_t k = visible_rows(rows, n, v, shown, &idle_n);
    run_line(out, v, L);
    workflow_lines(out, v, L, &w, done, failed);
    bool cpu_waste = v->width >= 90;
    int cw = category_width(v->width, cpu_waste);
    header_row(out, v, cw, cpu_waste);
    /* the height: the table first (at least 5 rows when there are), then
     * stragglers (up to 1 + 5 lines) and failures share what is left */
    int fixed = 4 + (v->message[0] ? 1 : 0) + (v->screen ? 1 : 0);
    int left = v->height ? v->height - fixed : 1 << 20;
    const struct tl_live_straggler *sg;
    int strag = (int)tl_live_stragglers(L, &sg);
    int strag_lines = strag ? 1 + strag : 0;
    int table = (int)k;
    if (v->height && table > left - strag_lines - 2) {
        table = left - strag_lines - 2;
        if (table < 5) table = (int)k < 5 ? (int)k : 5;
        if (table > left) table = left;
    }
    for (int i = 0; i < table && i < (int)k; i++) {
        bool more = (size_t)table < k && i == table - 1;
        if (!more) category_row(out, v, shown[i], cw, cpu_waste);
        else {
            struct line l;
            line_begin(&l, out, v);
            line_put(&l, "... %zu more categories (s sorts, f filters)", k - (size_t)i);
            line_end(&l);
        }
    }
    left -= table < (int)k ? table : (int)k;
    if (idle_n && left > 0) {
        struct line l;
        line_begin(&l, out, v);
        line_style(&l, DIM);
        line_put(&l, "%zu categor%s idle in the window (w: the whole run lists them)", idle_n,
                 idle_n == 1 ? "y" : "ies");
        line_end(&l);
        left--;
    }
    if (v->filter[0] && !k) {
        struct line l;
        line_begin(&l, out, v);
        line_put(&l, "(no category matches the filter)");
        line_end(&l);
        left--;
    }
    straggler_lines(out, v, L, strag_lines < left ? strag_lines : left);
    left -= strag_lines < left ? strag_lines : left;
    failure_lines(out, v, L, v->height ? left : 11);
    if (v->screen) pad_to_bottom(out, v);
    bottom_lines(out, v);
    if (v->screen) tl_buf_puts(out, CSI "J");
    free(shown);
}
