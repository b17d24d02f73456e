/* The report's task list (issue 58): every attempt of the run in one table
 * -- its name (else its id), tag, category, attempt, status, exit code,
 * submission, wait, wall time, CPU time, memory, I/O and what it asked for
 * -- searchable and sortable, and a timeline of waiting and running.
 *
 * The rows travel as compact columns in a JSON script element (made by
 * tasks_data.c). A small inline script (tasks_js.c) draws only the rows in
 * view, so a million attempts stay a page a browser opens; without it the
 * first TASKS_STATIC rows are plain HTML. Every name is data: the script
 * sets text, never markup. The data is made on a second thread while the
 * rest of the page is (struct encoding).
 *
 * The timeline is inline SVG, one bar per attempt in order of submission:
 * waiting (submission to start) and running (start to end), as the report's
 * concurrency plot counts them (model.c: end = the record's time, start =
 * end - wall time, submission = start - queue time). Past TIMELINE_ROWS
 * attempts it draws every k-th and says so. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/glossary.h"
#include "core/intern.h"
#include "core/numfmt.h"
#include "report/report.h"
#include "report/svg.h"
#include "report/tasks_impl.h"

#define TASKS_STATIC 100   /* rows written as HTML for a reader without the script */
#define TIMELINE_ROWS 1000 /* bars drawn at most; past it every k-th attempt */
#define LEGEND_MAX 16      /* categories named under the timeline */

/* The rows' data, written on a second thread while the rest of the page is
 * made (tl_report_tasks_start): it reads the rows, which no longer change,
 * and writes only its own buffer. The section takes the buffer when it gets
 * there; without a thread it writes the data itself. */
struct encoding {
    pthread_t thread;
    struct tl_tasks_blocks data; /* the script element, in blocks */
    bool ok, joined;
    size_t *order, norder; /* the timeline's attempts in order of submission, when made there */
};

struct tl_report_tasks *tl_report_tasks_new(void)
{
    struct tl_report_tasks *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    pthread_mutex_init(&t->stream_lock, NULL);
    t->chunk = calloc(ROWS_CHUNKS, sizeof *t->chunk); /* untouched pages cost nothing */
    t->cats = tl_intern_new((size_t)1 << 30);
    t->status = tl_intern_new((size_t)1 << 20);
    t->stream = tl_tasks_stream_new(); /* NULL: the columns are all encoded at the end */
    t->first_submit = NAN;
    if (!t->chunk || !t->cats || !t->status || (t->empty_status = tl_intern(t->status, "", 0)) < 0) {
        tl_report_tasks_free(t);
        return NULL;
    }
    return t;
}

static void encoding_end(struct tl_report_tasks *t)
{
    if (!t->enc) return;
    if (!t->enc->joined) pthread_join(t->enc->thread, NULL);
    free(t->enc->order);
    tl_tasks_blocks_free(&t->enc->data);
    free(t->enc);
    t->enc = NULL;
}

void tl_report_tasks_free(struct tl_report_tasks *t)
{
    if (!t) return;
    encoding_end(t);
    if (t->cats) tl_intern_free(t->cats);
    if (t->status) tl_intern_free(t->status);
    for (size_t c = 0; t->chunk && c < ROWS_CHUNKS && t->chunk[c]; c++) free(t->chunk[c]);
    free(t->chunk);
    tl_tasks_stream_free(t->stream);
    pthread_mutex_destroy(&t->stream_lock);
    free(t->text);
    free(t);
}

bool tl_report_tasks_oom(const struct tl_report_tasks *t)
{
    return t->oom;
}

size_t tl_report_tasks_count(const struct tl_report_tasks *t)
{
    return t->n;
}

/* s kept in the arena: its offset + 1, 0 when s is NULL or memory ran out. */
static size_t keep_text(struct tl_report_tasks *t, const char *s)
{
    if (!s) return 0;
    size_t len = strlen(s) + 1;
    if (t->ntext + len > t->captext) {
        size_t cap = t->captext ? t->captext * 2 : 1 << 16;
        while (cap < t->ntext + len) cap *= 2;
        char *p = realloc(t->text, cap);
        if (!p) {
            t->oom = true;
            return 0;
        }
        t->text = p;
        t->captext = cap;
    }
    memcpy(t->text + t->ntext, s, len);
    t->ntext += len;
    return t->ntext - len + 1;
}

/* ------------------------------------------------------------ times */

static double column_value(const struct trow *w, int c, double t0)
{
    switch (c) {
    case C_CAT: return w->cat;
    case C_STATUS: return w->status;
    case C_EXIT: return w->has_exit ? w->exit : NAN;
    case C_ATTEMPT: return w->attempt > 0 ? w->attempt : NAN;
    case C_ID: return w->id >= 0 ? (double)w->id : NAN;
    case C_SUBMIT: return w->untimed ? NAN : (submit_of(w) - t0) * US;
    case C_QUEUE: return w->queue * US;
    case C_WALL: return w->wall * US;
    case C_CPU: return w->cpu * US;
    case C_RSS: return w->rss;
    case C_READ: return w->read;
    case C_WRITTEN: return w->written;
    case C_REQ_CORES: return w->req_cores * 1000; /* millicores: a Spark task's 0.5 */
    case C_REQ_MEM: return w->req_mem;
    case C_ALLOC_CORES: return w->alloc_cores * 1000;
    case C_ALLOC_MEM: return w->alloc_mem;
    default: return w->req_time * US;
    }
}

/* Which columns a row fills: a mask built without a branch per column. */
static void note_present(struct tl_report_tasks *t, const struct trow *w)
{
#define HAS(c, cond) ((uint32_t)!!(cond) << (c))
    t->present |= HAS(C_CAT, 1) | HAS(C_STATUS, w->status != t->empty_status) | HAS(C_EXIT, w->has_exit) | HAS(C_ATTEMPT, w->attempt > 0) |
                  HAS(C_ID, w->id >= 0) | HAS(C_SUBMIT, !w->untimed) | HAS(C_QUEUE, isfinite(w->queue)) |
                  HAS(C_WALL, isfinite(w->wall)) | HAS(C_CPU, isfinite(w->cpu)) | HAS(C_RSS, isfinite(w->rss)) |
                  HAS(C_READ, isfinite(w->read)) | HAS(C_WRITTEN, isfinite(w->written)) |
                  HAS(C_REQ_CORES, isfinite(w->req_cores)) | HAS(C_REQ_MEM, isfinite(w->req_mem)) |
                  HAS(C_REQ_TIME, isfinite(w->req_time)) | HAS(C_ALLOC_CORES, isfinite(w->alloc_cores)) |
                  HAS(C_ALLOC_MEM, isfinite(w->alloc_mem));
#undef HAS
}

void tl_report_tasks_add(struct tl_report_tasks *t, const struct tl_record *r)
{
    if (t->oom) return;
    size_t c = t->n >> ROWS_SHIFT;
    if (c == ROWS_CHUNKS || (!t->chunk[c] && !(t->chunk[c] = malloc(ROWS_CHUNK * sizeof **t->chunk)))) {
        t->oom = true;
        return;
    }
    const char *cat = r->category ? r->category : "(none)";
    const char *st = r->result ? r->result : "";
    if (!t->last_cat || strcmp(cat, t->last_cat)) {
        t->last_cat_id = tl_intern(t->cats, cat, strlen(cat));
        t->last_cat = t->last_cat_id >= 0 ? tl_intern_str(t->cats, t->last_cat_id) : NULL;
    }
    if (!t->last_status || strcmp(st, t->last_status)) {
        t->last_status_id = tl_intern(t->status, st, strlen(st));
        t->last_status = t->last_status_id >= 0 ? tl_intern_str(t->status, t->last_status_id) : NULL;
    }
    struct trow *w = &t->chunk[c][t->n & (ROWS_CHUNK - 1)];
    *w = (struct trow){
        .id = r->task_id, .label = keep_text(t, r->name ? r->name : r->task_key), .tag = keep_text(t, r->tag),
        .cat = t->last_cat_id, .status = t->last_status_id,
        .exit = r->exit_code, .attempt = r->attempt, .has_exit = r->has_exit_code,
        .untimed = !r->time_ns || r->time_from_file || tl_result_cached(r->result),
        .end = (double)r->time_ns / 1e9, .wall = tl_record_value(r, TL_M_WALL_TIME_S), .queue = tl_record_value(r, TL_M_QUEUE_TIME_S),
        .cpu = tl_record_value(r, TL_M_CPU_TIME_S), .rss = tl_record_value(r, TL_M_MAX_RSS_BYTES), .read = tl_record_value(r, TL_M_BYTES_READ),
        .written = tl_record_value(r, TL_M_BYTES_WRITTEN), .req_cores = tl_record_value(r, TL_M_REQ_CORES),
        .req_mem = tl_record_value(r, TL_M_REQ_MEMORY_BYTES), .req_time = tl_record_value(r, TL_M_REQ_WALL_TIME_S),
        .alloc_cores = tl_record_value(r, TL_M_ALLOC_CORES), .alloc_mem = tl_record_value(r, TL_M_ALLOC_MEMORY_BYTES)};
    if (w->cat < 0 || w->status < 0) {
        t->oom = true;
        return;
    }
    t->has_label |= w->label != 0;
    t->has_tag |= w->tag != 0;
    if (!w->untimed && !(submit_of(w) >= t->first_submit)) t->first_submit = submit_of(w);
    t->n++;
    atomic_store_explicit(&t->ready, t->n, memory_order_release); /* the row, complete, to tl_report_tasks_idle */
    if (t->present != ALL_COLUMNS) note_present(t, w);
}

/* Rows a parsing thread encodes per call: about a millisecond, so it is
 * soon back to parsing when the reader has caught up. */
#define IDLE_ROWS 4096

bool tl_report_tasks_idle(struct tl_report_tasks *t)
{
    if (!t->stream || pthread_mutex_trylock(&t->stream_lock)) return false; /* another thread at it */
    size_t ready = atomic_load_explicit(&t->ready, memory_order_acquire);
    bool some = ready > tl_tasks_stream_done(t->stream);
    if (some) tl_tasks_stream_feed(t->stream, t, ready, IDLE_ROWS);
    pthread_mutex_unlock(&t->stream_lock);
    return some;
}


/* ------------------------------------------------------------ the data */

/* ------------------------------------------------------------ the table */

static const char *const head_label[C_COUNT] = {
    "category", "status", "exit", "attempt", "id", "submitted", "waited", "wall time",
    "CPU time", "peak memory", "read", "written", "cores asked", "memory asked", "time asked", "cores allocated",
    "memory allocated"};

static void cell_text(FILE *o, const char *s)
{
    fputs("<td class=\"t\">", o);
    tl_html_esc(o, s);
    fputs("</td>", o);
}

static void cell_num(FILE *o, double v, enum tl_unit u)
{
    char b[64];
    if (!isfinite(v)) {
        fputs("<td class=\"num\"></td>", o);
        return;
    }
    tl_plot_fmt(b, sizeof b, v, u);
    fprintf(o, "<td class=\"num\" title=\"%.17g\">%s</td>", v, b);
}

static void static_row(FILE *o, const struct tl_report_tasks *t, const struct trow *w, double t0, const bool *show)
{
    char id[32];
    fputs("<tr>", o);
    if (w->label) cell_text(o, t->text + w->label - 1);
    else {
        id[0] = '\0';
        if (w->id >= 0) snprintf(id, sizeof id, "%lld", (long long)w->id);
        cell_text(o, id);
    }
    if (t->has_tag) cell_text(o, w->tag ? t->text + w->tag - 1 : "");
    cell_text(o, tl_intern_str(t->cats, w->cat));
    for (int c = C_STATUS; c < C_COUNT; c++) {
        if (!show[c] || c == C_ID) continue;
        double v = column_value(w, c, t0);
        if (c == C_STATUS) cell_text(o, tl_intern_str(t->status, w->status));
        else if (c == C_EXIT || c == C_ATTEMPT) cell_num(o, v, TL_UNIT_COUNT);
        else if (c == C_RSS || c == C_READ || c == C_WRITTEN || c == C_REQ_MEM || c == C_ALLOC_MEM)
            cell_num(o, v, TL_UNIT_BYTES);
        else if (c == C_REQ_CORES || c == C_ALLOC_CORES) cell_num(o, v / 1000, TL_UNIT_COUNT);
        else cell_num(o, v / US, TL_UNIT_SECONDS);
    }
    fputs("</tr>\n", o);
}

static void table(FILE *o, const struct tl_report_tasks *t, double t0, const bool *show)
{
    fputs("<div class=\"tasks-find\"><input type=\"search\" id=\"task-search\" placeholder=\"find: name, tag, "
          "category, status, exit\" aria-label=\"find tasks\" hidden> <span id=\"task-count\"></span></div>"
          "<div class=\"tasks-scroll\" id=\"task-scroll\"><table class=\"tasks\" id=\"task-table\"><thead><tr>"
          "<th class=\"t\" data-col=\"task\">task</th>",
          o);
    if (t->has_tag) fputs("<th class=\"t\" data-col=\"tag\">tag</th>", o);
    fputs("<th class=\"t\" data-col=\"cat\">category</th>", o);
    for (int c = C_STATUS; c < C_COUNT; c++)
        if (show[c] && c != C_ID)
            fprintf(o, "<th%s data-col=\"%s\">%s</th>", c == C_STATUS ? " class=\"t\"" : "", tl_tasks_col_key[c], head_label[c]);
    fputs("</tr></thead><tbody>\n", o);
    size_t n = t->n < TASKS_STATIC ? t->n : TASKS_STATIC;
    for (size_t i = 0; i < n; i++) static_row(o, t, trow_at(t, i), t0, show);
    fputs("</tbody></table></div>", o);
    char all[32];
    tl_fmt_grouped(all, t->n);
    if (t->n > n)
        fprintf(o, "<p class=\"note\" id=\"task-static-note\">The first %zu of %s attempts, in input order; the "
                   "page's script shows every one, with search and sort.</p>",
                n, all);
}

/* ------------------------------------------------------------ the timeline */

/* Sorts idx by key, stably: an LSD radix sort, 16 bits a pass over the 48
 * the keys use (qsort with a comparator took 0.3 s of a million-attempt
 * page; this takes 0.03 s). */
static bool radix_sort48(uint64_t *key, size_t *idx, size_t n)
{
    uint64_t *k2 = malloc((n + 1) * sizeof *k2);
    size_t *i2 = malloc((n + 1) * sizeof *i2), *count = malloc(((size_t)1 << 16) * sizeof *count);
    bool ok = k2 && i2 && count;
    for (int shift = 0; ok && shift < 48; shift += 16) {
        memset(count, 0, ((size_t)1 << 16) * sizeof *count);
        for (size_t j = 0; j < n; j++) count[(key[j] >> shift) & 0xffff]++;
        for (size_t d = 0, sum = 0; d < (size_t)1 << 16; d++) {
            size_t c = count[d];
            count[d] = sum;
            sum += c;
        }
        for (size_t j = 0; j < n; j++) {
            size_t at = count[(key[j] >> shift) & 0xffff]++;
            k2[at] = key[j];
            i2[at] = idx[j];
        }
        memcpy(key, k2, n * sizeof *key);
        memcpy(idx, i2, n * sizeof *idx);
    }
    free(k2);
    free(i2);
    free(count);
    return ok;
}

/* The timed attempts' indices in order of submission to the microsecond,
 * ties in input order (the same page from the same input), into idx and
 * their count into *n; false without memory. */
static bool timed_order(const struct tl_report_tasks *t, double t0, size_t *idx, size_t *n)
{
    uint64_t *key = malloc((t->n + 1) * sizeof *key);
    if (!key) return false;
    *n = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (trow_at(t, i)->untimed) continue;
        double us = (submit_of(trow_at(t, i)) - t0) * 1e6; /* >= 0: t0 is the first submission */
        key[*n] = us < 0 ? 0 : us < 0x1p48 ? (uint64_t)llround(us) : ((uint64_t)1 << 48) - 1;
        idx[(*n)++] = i;
    }
    bool ok = radix_sort48(key, idx, *n);
    free(key);
    return ok;
}

static void bar_title(FILE *o, const struct tl_report_tasks *t, const struct trow *w)
{
    char q[64], r[64];
    tl_plot_fmt(q, sizeof q, isfinite(w->queue) ? w->queue : 0, TL_UNIT_SECONDS);
    tl_plot_fmt(r, sizeof r, isfinite(w->wall) ? w->wall : 0, TL_UNIT_SECONDS);
    fputs("<title>", o);
    if (w->label) tl_html_esc(o, t->text + w->label - 1);
    else fprintf(o, "task %lld", (long long)w->id);
    fputs(" (", o);
    tl_html_esc(o, tl_intern_str(t->cats, w->cat));
    fprintf(o, "): waited %s, ran %s</title>", q, r);
}

/* Neighbouring categories far apart on the colour wheel (the golden angle). */
static int category_hue(int32_t cat)
{
    return (int)fmod((double)cat * 137.508 + 210, 360);
}

/* The categories on the timeline with their colours, most attempts first;
 * false without memory. */
static bool legend(FILE *o, const struct tl_report_tasks *t, const size_t *idx, size_t n)
{
    size_t ncat = tl_intern_count(t->cats), *count = calloc(ncat + 1, sizeof *count);
    if (!count) return false;
    for (size_t i = 0; i < n; i++) count[trow_at(t, idx[i])->cat]++;
    for (int shown = 0; shown < LEGEND_MAX; shown++) {
        size_t best = ncat;
        for (size_t c = 0; c < ncat; c++)
            if (count[c] && (best == ncat || count[c] > count[best])) best = c;
        if (best == ncat) break;
        fprintf(o, " <span class=\"swatch\" style=\"background:hsl(%d,55%%,42%%)\"></span>", category_hue((int32_t)best));
        tl_html_esc(o, tl_intern_str(t->cats, (int32_t)best));
        char c[32];
        tl_fmt_grouped(c, count[best]);
        fprintf(o, " (%s)", c);
        count[best] = 0;
    }
    size_t rest = 0;
    for (size_t c = 0; c < ncat; c++) rest += count[c] > 0;
    if (rest) fprintf(o, "; %zu more categories", rest);
    fputc('.', o);
    free(count);
    return true;
}

/* The timeline; false when it could not be drawn for memory (never a page
 * that says no attempt was timed because the sort found no room). */
static bool timeline(FILE *o, struct tl_report_tasks *t, double t0)
{
    size_t *idx, n;
    if (t->enc && t->enc->order) { /* made on the second thread */
        idx = t->enc->order;
        n = t->enc->norder;
        t->enc->order = NULL;
    } else if (!(idx = malloc((t->n + 1) * sizeof *idx)) || !timed_order(t, t0, idx, &n)) {
        free(idx);
        return false;
    }
    size_t k = n > TIMELINE_ROWS ? (n + TIMELINE_ROWS - 1) / TIMELINE_ROWS : 1;
    size_t rows = (n + k - 1) / k;
    double t1 = t0;
    for (size_t i = 0; i < n; i++) t1 = fmax(t1, trow_at(t, idx[i])->end);
    if (!n || !(t1 > t0)) {
        fprintf(o, "<p class=\"note\" data-timeline=\"0\">No timeline: %s.</p>",
                n ? "the attempts' times span no time" : "no attempt records a time of its own (a file's time is "
                                                          "not when its task ran)");
        free(idx);
        return true;
    }
    double h = fmin(10, fmax(2, 1000.0 / (double)rows)); /* 1,000 bars: 2 px each, one above the next */
    struct tl_plot p = {.out = o, .w = 1100, .h = (int)ceil(h * (double)rows) + 60, .ml = 60, .mr = 20, .mt = 10,
                        .mb = 40, .x0 = 0, .x1 = t1 - t0, .y0 = 0, .y1 = (double)rows, .xtime = true,
                        .xunit = TL_UNIT_SECONDS, .no_yticks = true};
    tl_plot_begin(&p, "task-timeline", "each attempt: waiting, then running", "time since the first submission",
                  "attempts");
    for (size_t j = 0; j < rows; j++) {
        const struct trow *w = trow_at(t, idx[j * k]);
        double s = submit_of(w) - t0, a = start_of(w) - t0, e = w->end - t0;
        double y = tl_plot_y(&p, (double)(rows - j)), xs = tl_plot_x(&p, s), xa = tl_plot_x(&p, a), xe = tl_plot_x(&p, e);
        fputs("<g class=\"tb\">", o);
        bar_title(o, t, w);
        if (xa > xs) fprintf(o, "<rect class=\"wait\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>", xs, y,
                             xa - xs, h * 0.8);
        fprintf(o, "<rect class=\"run\" data-cat=\"%d\" fill=\"hsl(%d,55%%,42%%)\" x=\"%.1f\" y=\"%.1f\" "
                   "width=\"%.1f\" height=\"%.1f\"/></g>",
                w->cat, category_hue(w->cat), xa, y, fmax(xe - xa, 0.5), h * 0.8);
    }
    tl_plot_end(&p);
    char timed[32], untimed[32];
    tl_fmt_grouped(timed, n);
    tl_fmt_grouped(untimed, t->n - n);
    fprintf(o, "<p class=\"note\" data-timeline=\"%zu\" data-every=\"%zu\">", rows, k);
    if (k > 1)
        fprintf(o, "Every %zu%s attempt of %s in order of submission: %zu bars (the table holds them all).", k,
                k % 10 == 1 && k % 100 != 11 ? "st" : k % 10 == 2 && k % 100 != 12 ? "nd"
                                                  : k % 10 == 3 && k % 100 != 13 ? "rd" : "th",
                timed, rows);
    else fprintf(o, "Each of the %s attempts in order of submission.", timed);
    fputs(" Grey: waiting (submitted, not started); coloured: running, by category:", o);
    bool ok = legend(o, t, idx, n);
    if (n < t->n) fprintf(o, " %s attempts with no time of their own (cached, or timed by their file) are not drawn.",
                          untimed);
    fputs("</p>", o);
    free(idx);
    return ok;
}

/* ------------------------------------------------------------ the section */

extern const char tl_report_tasks_js[];

#define TASKS_CSS                                                                                          \
    "<style>.tasks-scroll{max-height:70vh;overflow:auto;border:1px solid #bbb;max-width:100%}"            \
    "table.tasks{margin:0}table.tasks th{position:sticky;top:0;cursor:pointer;z-index:1;white-space:normal}"                 \
    "table.tasks td{height:18px;max-width:20em;overflow:hidden;text-overflow:ellipsis}"                   \
    "table.tasks .t{text-align:left}table.tasks tr.spacer td{padding:0;border:0}"          \
    "th[aria-sort=ascending]::after{content:' \\25B2'}th[aria-sort=descending]::after{content:' \\25BC'}" \
    ".swatch{display:inline-block;width:.9em;height:.9em;vertical-align:middle;margin:0 .2em 0 .5em}"          \
    ".tasks-find{margin:.5em 0}#task-search{width:28em}.wait{fill:#c8c8c8}.tb:hover rect{fill:#000}</style>"

static void shown_columns(const struct tl_report_tasks *t, bool *show)
{
    for (int c = 0; c < C_COUNT; c++) show[c] = c == C_CAT || column_present(t, c);
}

static void *encode_main(void *arg)
{
    struct tl_report_tasks *t = arg;
    bool show[C_COUNT];
    shown_columns(t, show);
    double t0 = t->first_submit;
    pthread_mutex_lock(&t->stream_lock); /* what the parsing threads began */
    t->enc->ok = tl_tasks_data_keep(&t->enc->data, t, t0, show, t->stream);
    pthread_mutex_unlock(&t->stream_lock);
    size_t *order = malloc((t->n + 1) * sizeof *order); /* the timeline's order, too */
    if (order && !timed_order(t, isfinite(t0) ? t0 : 0, order, &t->enc->norder)) {
        free(order); /* the section tries again */
        order = NULL;
    }
    t->enc->order = order;
    return NULL;
}

void tl_report_tasks_start(struct tl_report_tasks *t)
{
    if (!t || !t->n || t->enc || !(t->enc = calloc(1, sizeof *t->enc))) return;
    if (pthread_create(&t->enc->thread, NULL, encode_main, t)) { /* no thread: the section writes it */
        free(t->enc);
        t->enc = NULL;
    }
}

/* The rows' data: the second thread's buffer when it made one, else written
 * here; false when it could not be written whole. */
static bool data_here(FILE *o, struct tl_report_tasks *t, double t0, const bool *show)
{
    if (t->enc) {
        pthread_join(t->enc->thread, NULL);
        t->enc->joined = true;
        bool made = t->enc->ok, ok = made;
        const struct tl_tasks_blocks *kp = &t->enc->data;
        for (size_t i = 0; ok && i < kp->n; i++) ok = fwrite(kp->b[i], 1, kp->len[i], o) == kp->len[i];
        tl_tasks_blocks_free(&t->enc->data);
        if (made) return true; /* a write that fell short is the page's error (ferror), not made again */
    }
    return tl_tasks_data_write(o, t, t0, show);
}

bool tl_report_tasks_section(FILE *o, const struct tl_report_page *pg)
{
    struct tl_report_tasks *t = pg->tasks;
    if (!t || !t->n) return true;
    double t0 = t->first_submit;
    bool show[C_COUNT] = {0};
    shown_columns(t, show);
    fputs(TASKS_CSS, o);
    char count[32];
    tl_fmt_grouped(count, t->n);
    fprintf(o, "<section id=\"tasks\" data-tasks=\"%zu\"><h2>Tasks</h2><p class=\"note\">Every attempt (%s), as "
               "the input recorded it: a retried task has a row per attempt. Times are to the microsecond; a cell's "
               "tooltip holds its exact value.</p>",
            t->n, count);
    table(o, t, t0, show);
    bool whole = data_here(o, t, t0, show);
    fprintf(o, "<script id=\"task-script\">%s</script>", tl_report_tasks_js);
    fputs("<h3>Timeline</h3>", o);
    whole = timeline(o, t, isfinite(t0) ? t0 : 0) && whole;
    encoding_end(t);
    fputs("</section>\n", o);
    return whole;
}
