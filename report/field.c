/* The report's line profile (report.h): line_profiler's per-line table, as
 * its users read it (fink-science-perf's README walks through one) -- per
 * function, Line #, Hits, Time, Per Hit, % Time and the code, the functions
 * with the most time first, the lines that take a tenth or more of their
 * function marked -- and, when the input is a profile only, the page's
 * card. Every number carries its exact value in data-v, as the other
 * tables. (What codecarbon measured is energy.c's.) */
#include <math.h>
#include <string.h>

#include "report/report.h"
#include "report/svg.h"
#include "core/summary.h"

#define FIELD_MAX_FUNCTIONS 30 /* drawn; more are counted */
#define FIELD_MAX_ROWS 80      /* lines per function drawn: the costliest, in line order */

static void value_cell(FILE *o, double v, enum tl_unit unit, const char *key)
{
    char h[48];
    tl_summary_human(h, sizeof h, v, unit);
    fprintf(o, "<td data-k=\"%s\" data-v=\"%.17g\" title=\"%.17g\">%s</td>", key, v, v, h);
}

static void plain_cell(FILE *o, double v, const char *fmt, const char *key)
{
    char h[48];
    snprintf(h, sizeof h, fmt, v);
    fprintf(o, "<td data-k=\"%s\" data-v=\"%.17g\">%s</td>", key, v, h);
}

/* The lines [from, to) of one function. */
static void function_table(FILE *o, const struct tl_report_line *l, size_t n, int k)
{
    double total = l[0].function_s;
    char t[48];
    tl_summary_human(t, sizeof t, total, TL_UNIT_SECONDS);
    fputs("<h3 class=\"fn\">", o);
    tl_html_esc(o, l[0].function);
    fprintf(o, " <span class=\"note\">total %s over %zu timed line%s</span></h3>", t, n, n == 1 ? "" : "s");
    /* past FIELD_MAX_ROWS lines: the costliest ones, still in line order */
    double cut = -1;
    if (n > FIELD_MAX_ROWS) {
        double best[FIELD_MAX_ROWS];
        size_t nb = 0;
        for (size_t i = 0; i < n; i++) {
            double s = l[i].seconds;
            if (nb < FIELD_MAX_ROWS) best[nb++] = s;
            else {
                size_t lo = 0;
                for (size_t j = 1; j < nb; j++) lo = best[j] < best[lo] ? j : lo;
                if (s > best[lo]) best[lo] = s;
            }
        }
        cut = best[0];
        for (size_t j = 1; j < nb; j++) cut = best[j] < cut ? best[j] : cut;
    }
    fprintf(o, "<table class=\"lines\" data-table=\"lines-%d\"><tr><th>Line #</th><th>Hits</th>"
               "<th>Time</th><th>Per Hit</th><th>%% Time</th><th class=\"n\">Line Contents</th></tr>", k);
    size_t shown = 0;
    for (size_t i = 0; i < n; i++) {
        if (l[i].seconds < cut || shown == FIELD_MAX_ROWS) continue;
        shown++;
        double pct = total > 0 ? 100 * l[i].seconds / total : NAN;
        fprintf(o, "<tr%s><td data-k=\"line\" data-v=\"%ld\">%ld</td>", pct >= 10 ? " class=\"hot\"" : "",
                l[i].lineno, l[i].lineno);
        plain_cell(o, l[i].hits, "%.0f", "hits");
        value_cell(o, l[i].seconds, TL_UNIT_SECONDS, "time");
        value_cell(o, l[i].hits > 0 ? l[i].seconds / l[i].hits : NAN, TL_UNIT_SECONDS, "per_hit");
        plain_cell(o, pct, "%.1f", "pct");
        fputs("<td class=\"n code\">", o);
        if (l[i].code) tl_html_esc(o, l[i].code);
        fputs("</td></tr>", o);
    }
    fputs("</table>", o);
    if (shown < n)
        fprintf(o, "<p class=\"note\">%zu of %zu lines shown: those with the most time.</p>", shown, n);
}

/* The functions by total time, each with its hottest line: where to look. */
static void function_index(FILE *o, const struct tl_report_page *pg)
{
    fputs("<table data-table=\"functions\"><tr><th class=\"n\">function</th><th>total</th><th>lines</th>"
          "<th>hits</th><th>hottest line</th><th>its % Time</th><th class=\"n\">its code</th></tr>", o);
    size_t i = 0;
    int k = 0;
    while (i < pg->nlines && k < FIELD_MAX_FUNCTIONS) {
        size_t j = i, hot = i;
        double hits = 0;
        for (; j < pg->nlines && pg->lines[j].function == pg->lines[i].function; j++) {
            hits += pg->lines[j].hits;
            if (pg->lines[j].seconds > pg->lines[hot].seconds) hot = j;
        }
        const struct tl_report_line *h = &pg->lines[hot];
        fputs("<tr>", o);
        tl_html_name_cell(o, h->function);
        value_cell(o, h->function_s, TL_UNIT_SECONDS, "total");
        plain_cell(o, (double)(j - i), "%.0f", "lines");
        plain_cell(o, hits, "%.0f", "hits");
        plain_cell(o, (double)h->lineno, "%.0f", "hot_line");
        plain_cell(o, h->function_s > 0 ? 100 * h->seconds / h->function_s : NAN, "%.1f", "hot_pct");
        fputs("<td class=\"n code\">", o);
        if (h->code) tl_html_esc(o, h->code);
        fputs("</td></tr>", o);
        i = j;
        k++;
    }
    fputs("</table>\n", o);
}

/* Where Line Contents came from when the input held no code. */
static void sources_note(FILE *o, const struct tl_report_sources *src)
{
    if (!src->nfiles && !src->missing) return;
    fputs("<p class=\"note\" data-sources=\"", o);
    for (size_t i = 0; i < src->nfiles; i++) {
        if (i) fputc(' ', o);
        tl_html_esc(o, src->files[i]);
    }
    fprintf(o, "\" data-missing=\"%zu\" data-changed=\"%zu\">", src->missing, src->changed);
    if (src->nfiles) {
        fputs("The input holds timings only; Line Contents are read from ", o);
        for (size_t i = 0; i < src->nfiles; i++) {
            fputs(i ? ", <code>" : "<code>", o);
            tl_html_esc(o, src->files[i]);
            fputs("</code>", o);
        }
        fputs(", as line_profiler reads them when it shows a profile. ", o);
    }
    if (src->changed)
        fprintf(o, "<b>%zu of these files changed after the profile was written</b>: their code may not be what "
                   "ran. ", src->changed);
    if (src->missing)
        fprintf(o, "The source of %zu function%s was not found beside the input, one or two folders up, or in the "
                   "working directory: its lines show no code.", src->missing, src->missing == 1 ? "" : "s");
    fputs("</p>\n", o);
}

void tl_report_profile_card(FILE *o, const struct tl_report_page *pg)
{
    size_t functions = 0;
    double hits = 0, top = 0;
    for (size_t i = 0; i < pg->nlines; i++) {
        functions += !i || pg->lines[i].function != pg->lines[i - 1].function;
        hits += pg->lines[i].hits;
        top = pg->lines[i].function_s > top ? pg->lines[i].function_s : top;
    }
    char t[48], h[48];
    tl_summary_human(t, sizeof t, top, TL_UNIT_SECONDS);
    tl_fmt_count(h, sizeof h, hits);
    fprintf(o, "<section id=\"glance\"><div class=\"card\" data-card=\"profile\">"
               "<div class=\"stat\" data-k=\"inputs\" data-v=\"%zu\"><b>%zu</b><span>input%s</span></div>"
               "<div class=\"stat\" data-k=\"functions\" data-v=\"%zu\"><b>%zu</b><span>functions profiled</span></div>"
               "<div class=\"stat\" data-k=\"lines\" data-v=\"%zu\"><b>%zu</b><span>lines timed</span></div>"
               "<div class=\"stat\" data-k=\"hits\" data-v=\"%.17g\"><b>%s</b><span>hits</span></div>"
               "<div class=\"stat\" data-k=\"top_function_s\" data-v=\"%.17g\"><b>%s</b><span>in the costliest "
               "function (its callees' profiled lines included)</span></div></div></section>\n",
            pg->ninputs, pg->ninputs, pg->ninputs == 1 ? "" : "s", functions, functions, pg->nlines + pg->lines_more,
            pg->nlines + pg->lines_more, hits, h, top, t);
}

void tl_report_line_profile(FILE *o, const struct tl_report_page *pg)
{
    if (!pg->nlines) return;
    fputs("<h2 id=\"lines\">Line profile</h2>\n<p class=\"note\">Per profiled function (file:first "
          "line:name), each line line_profiler timed: Time is its total over its hits, % Time its "
          "share of the function's total, the sum of its lines. A caller's line counts the time of "
          "the profiled functions it calls, so totals of nested functions overlap. Lines with 10 % "
          "or more are marked.</p>\n",
          o);
    sources_note(o, &pg->sources);
    function_index(o, pg);
    size_t i = 0;
    int k = 0;
    while (i < pg->nlines) {
        size_t j = i;
        while (j < pg->nlines && pg->lines[j].function == pg->lines[i].function) j++;
        if (k < FIELD_MAX_FUNCTIONS) function_table(o, pg->lines + i, j - i, k);
        k++;
        i = j;
    }
    if (k > FIELD_MAX_FUNCTIONS)
        fprintf(o, "<p class=\"note\">%d more functions, with less time, are not drawn.</p>",
                k - FIELD_MAX_FUNCTIONS);
    if (pg->lines_more) fprintf(o, "<p class=\"note\">%zu more lines were not kept.</p>", pg->lines_more);
    fputc('\n', o);
}
