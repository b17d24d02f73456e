/* The report's resource samples (report.h): series an input samples over
 * time rather than per task -- a Spark executor's memory, DASF's managed
 * memory, a Chrome counter -- each plotted from its first sample, in the
 * page's units where the series' name tells its unit (Spark's executor
 * metrics: ...Memory in bytes, ...GCTime in milliseconds), else as
 * written. */
#include <math.h>
#include <string.h>

#include "report/report.h"
#include "report/svg.h"

static bool ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);
    return n >= m && !strcmp(s + n - m, tail);
}

enum tl_unit tl_report_sample_unit(const char *name, double *scale)
{
    *scale = 1;
    if (strncmp(name, "executor ", 9)) return TL_UNIT_COUNT;
    if (ends_with(name, "Memory")) return TL_UNIT_BYTES;
    if (ends_with(name, "GCTime")) {
        *scale = 1e-3; /* Spark writes its GC times in milliseconds */
        return TL_UNIT_SECONDS;
    }
    return TL_UNIT_COUNT;
}

void tl_report_samples_section(FILE *o, const struct tl_report_page *pg)
{
    if (!pg->nsamples && !pg->samples_constant) return;
    fprintf(o, "<h2 id=\"samples\">Resource samples</h2><p class=\"note\">Series the inputs "
               "sample over time rather than per task, the %zu with most samples, each from its "
               "first sample%s; in the page's units where the series' name says its unit (Spark's executor "
               "metrics: ...Memory in bytes, ...GCTime in ms, shown as time), else as written.",
            pg->nsamples, pg->samples_more ? "; the others are in <code>summary --format json</code>" : "");
    if (pg->samples_constant)
        fprintf(o, " <span data-constant=\"%zu\">%zu constant series (one value throughout) are "
                   "not drawn.</span>", pg->samples_constant, pg->samples_constant);
    fputs("</p><div class=\"row\">", o);
    for (size_t i = 0; i < pg->nsamples; i++) {
        const struct tl_report_samples *x = &pg->samples[i];
        double t1 = 0;
        for (size_t j = 0; j < x->n; j++) t1 = fmax(t1, x->p[j].x);
        double lo = fmin(0, x->min * x->scale), hi = x->max * x->scale > lo ? x->max * x->scale : lo + 1;
        char plot[1100];
        snprintf(plot, sizeof plot, "samples %s", x->name);
        struct tl_plot p = {o, 420, 170, x->unit == TL_UNIT_BYTES ? 68 : 56, 22, 8, 32, 0, t1 > 0 ? t1 : 1, lo, hi * 1.05, false, false,
                            TL_UNIT_SECONDS, x->unit, true};
        fprintf(o, "<div data-samples=\"");
        tl_html_esc(o, x->name);
        fprintf(o, "\" data-count=\"%zu\" data-min=\"%.17g\" data-max=\"%.17g\">", x->count, x->min,
                x->max);
        tl_plot_begin(&p, plot, x->name, "time since its first sample",
                      x->unit == TL_UNIT_BYTES ? "bytes" : x->unit == TL_UNIT_SECONDS ? "time" : "value");
        fputs("<polyline class=\"running\" points=\"", o);
        for (size_t j = 0; j < x->n; j++)
            fprintf(o, "%.1f,%.1f ", tl_plot_x(&p, x->p[j].x), tl_plot_y(&p, x->p[j].y * x->scale));
        fputs("\"/>", o);
        tl_plot_end(&p);
        char c[32];
        tl_fmt_count(c, sizeof c, (double)x->count);
        fputs("<p class=\"note\">", o);
        tl_html_esc(o, x->name);
        fprintf(o, " (%s samples)</p></div>", c);
    }
    fputs("</div>\n", o);
}

