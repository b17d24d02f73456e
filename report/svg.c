/* SVG frames and axes for the report's plots. See svg.h. */
#include "report/svg.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "core/numfmt.h"
#include "core/summary.h"

/* The longest run of a name between places a line may break: spaces, and
 * the ':' and '/' that join a DSL2 process name or a path. */
static size_t longest_part(const char *name)
{
    size_t best = 0, run = 0;
    for (const char *p = name; *p; p++) {
        run = *p == ' ' || *p == ':' || *p == '/' ? 0 : run + 1;
        best = run > best ? run : best;
    }
    return best;
}

void tl_html_name_cell(FILE *out, const char *name)
{
    if (strlen(name) <= 40) {
        fputs("<td class=\"n\">", out);
        tl_html_esc(out, name);
        fputs("</td>", out);
        return;
    }
    bool parts = longest_part(name) <= 64; /* WF:SUB:PROC wraps at its colons, never inside a name */
    fputs(parts ? "<td class=\"n parts\" title=\"" : "<td class=\"n long\" title=\"", out);
    tl_html_esc(out, name);
    fputs("\">", out);
    for (const char *p = name; *p; p++) {
        char c[2] = {*p, 0};
        tl_html_esc(out, c);
        if (parts && (*p == ':' || *p == '/')) fputs("<wbr>", out);
    }
    fputs("</td>", out);
}

void tl_html_esc(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(*s, out);
        }
    }
}

void tl_fmt_count(char *buf, size_t cap, double v)
{
    double a = fabs(v);
    if (!isfinite(v)) snprintf(buf, cap, "-");
    else if (a == 0) snprintf(buf, cap, "0");
    else if (a < 0.001) snprintf(buf, cap, "%s<0.001", v < 0 ? "-" : "");
    else snprintf(buf, cap, "%.4g", v);
    if (!strchr(buf, 'e') && !(a >= 1e4 && isfinite(v))) return;
    /* a whole number with thousands separators: 13,510 */
    char g[32];
    tl_fmt_grouped(g, (uint64_t)llround(fabs(v)));
    snprintf(buf, cap, "%s%s", v < 0 ? "-" : "", g);
}

void tl_fmt_amount(char *buf, size_t cap, double hours, const char *what)
{
    double a = fabs(hours), v = hours;
    const char *unit = "h";
    if (a < 1.0 / 60) unit = "s", v = hours * 3600;
    else if (a < 1) unit = "min", v = hours * 60;
    char num[40];
    tl_fmt_count(num, sizeof num, v);
    if (!isfinite(hours)) snprintf(buf, cap, "-");
    else snprintf(buf, cap, "%s %s-%s", num, what, unit);
}

void tl_plot_fmt(char *buf, size_t cap, double v, enum tl_unit unit)
{
    if (unit == TL_UNIT_COUNT) return tl_fmt_count(buf, cap, v);
    tl_summary_human(buf, cap, v, unit);
}

static double axis_pos(double v, double lo, double hi, bool logs)
{
    if (logs) {
        v = log10(v > 0 ? v : lo);
        lo = log10(lo);
        hi = log10(hi);
    }
    double f = hi > lo ? (v - lo) / (hi - lo) : 0.5;
    return f < 0 ? 0 : f > 1 ? 1 : f;
}

void tl_svg_num(FILE *o, double v)
{
    char b[400];
    fwrite(b, 1, tl_fmt_fixed1(b, sizeof b, v), o);
}

double tl_plot_x(const struct tl_plot *p, double x)
{
    return p->ml + axis_pos(x, p->x0, p->x1, p->logx) * (p->w - p->ml - p->mr);
}

double tl_plot_y(const struct tl_plot *p, double y)
{
    return p->h - p->mb - axis_pos(y, p->y0, p->y1, p->logy) * (p->h - p->mt - p->mb);
}

/* A step for a time axis near raw seconds: one a person counts in (15 s,
 * 1 min, 6 h, 1 d), never +3.33min. */
static double time_step(double raw)
{
    static const double steps[] = {1,    2,    5,    10,    15,    30,    60,    120,    300,
                                   600,  900,  1800, 3600,  7200,  10800, 21600, 43200, 86400,
                                   172800, 604800};
    if (raw < 1) return 0; /* below a second: the decimal steps */
    for (size_t i = 0; i < sizeof steps / sizeof *steps; i++)
        if (raw <= steps[i] * 1.25) return steps[i];
    return ceil(raw / 604800) * 604800; /* weeks */
}

/* Up to ~6 tick values in [lo, hi]: powers of ten on a log axis, 1-2-5
 * steps on a linear one (time: steps of the clock; a count: whole steps
 * once the span is over one). */
static int ticks(double lo, double hi, bool logs, bool time, enum tl_unit unit, double *t, int max)
{
    int n = 0;
    bool whole = unit == TL_UNIT_COUNT;
    if (logs && unit == TL_UNIT_BYTES && hi / lo >= 4) { /* powers of two: 1MiB, 4MiB, 16MiB */
        double a = floor(log2(lo)), b = ceil(log2(hi));
        double step = ceil((b - a) / 6);
        for (double e = a; e <= b && n < max; e += step) {
            double v = ldexp(1.0, (int)e);
            if (v >= lo * 0.999 && v <= hi * 1.001) t[n++] = v;
        }
        if (n >= 2) return n;
        n = 0;
    }
    if (logs && unit == TL_UNIT_SECONDS && hi >= 60) { /* past a minute, the clock's units */
        static const double c[] = {1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10, 60, 600, 3600,
                                   36000, 86400, 864000};
        double cand[16];
        int m = 0;
        for (size_t i = 0; i < sizeof c / sizeof *c; i++)
            if (c[i] >= lo * 0.999 && c[i] <= hi * 1.001) cand[m++] = c[i];
        int step = (m + 6) / 7;
        for (int i = 0; i < m && n < max; i += step ? step : 1) t[n++] = cand[i];
        if (n >= 2) return n;
        n = 0;
    }
    if (logs) {
        double a = floor(log10(lo)), b = ceil(log10(hi));
        double step = ceil((b - a) / 6);
        if (step < 1) step = 1;
        for (double e = a; e <= b && n < max; e += step) {
            double v = pow(10, e);
            if (v >= lo * 0.999 && v <= hi * 1.001) t[n++] = v;
        }
        if (n < 2) { /* under a decade: its ends */
            n = 0;
            t[n++] = lo;
            t[n++] = hi;
        }
        return n;
    }
    double span = hi - lo;
    if (!(span > 0)) {
        t[0] = lo;
        return 1;
    }
    double raw = span / 5, mag = pow(10, floor(log10(raw)));
    double step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
    if (time && time_step(raw) > 0) step = time_step(raw);
    if (whole && span >= 1 && step < 1) step = 1;
    for (double v = ceil(lo / step) * step; v <= hi + step * 1e-9 && n < max; v += step) t[n++] = v;
    return n;
}

/* A count on an axis, short: 950, 12k, 1.5M, 2G (a table spells it whole). */
static void tick_count(char *buf, size_t cap, double v)
{
    static const char *const sfx[] = {"", "k", "M", "G", "T"};
    int k = 0;
    while (fabs(v) >= 1000 && k < 4) v /= 1000, k++;
    if (k) snprintf(buf, cap, "%.3g%s", v, sfx[k]);
    else tl_fmt_count(buf, cap, v);
}

static void tick_label(char *buf, size_t cap, double v, enum tl_unit unit, bool time)
{
    if (!time) {
        if (unit == TL_UNIT_COUNT) tick_count(buf, cap, v);
        else tl_plot_fmt(buf, cap, v, unit);
        return;
    }
    char h[32];
    tl_summary_human(h, sizeof h, v, TL_UNIT_SECONDS);
    snprintf(buf, cap, "+%s", h);
}

static void axes(struct tl_plot *p, const char *xlabel, const char *ylabel)
{
    FILE *o = p->out;
    double t[16];
    char lab[48];
    int x0 = p->ml, x1 = p->w - p->mr, y0 = p->mt, y1 = p->h - p->mb;
    fprintf(o, "<rect class=\"frame\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\"/>", x0, y0,
            x1 - x0, y1 - y0);
    int n = ticks(p->x0, p->x1, p->logx, p->xtime, p->xunit, t, 16);
    for (int i = 0; i < n; i++) {
        double x = tl_plot_x(p, t[i]);
        tick_label(lab, sizeof lab, t[i], p->xunit, p->xtime);
        fprintf(o, "<line class=\"tick\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
                   "<text class=\"tl\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>",
                x, y1, x, y1 + 4, x, y1 + 15, lab);
    }
    n = p->no_yticks ? 0 : ticks(p->y0, p->y1, p->logy, false, p->yunit, t, 16);
    for (int i = 0; i < n; i++) {
        double y = tl_plot_y(p, t[i]);
        tick_label(lab, sizeof lab, t[i], p->yunit, false);
        fprintf(o, "<line class=\"grid\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>"
                   "<text class=\"tl\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                x0, y, x1, y, x0 - 4, y + 3, lab);
    }
    fprintf(o, "<text class=\"al\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">", (x0 + x1) / 2,
            p->h - 3);
    tl_html_esc(o, xlabel);
    fprintf(o, "</text><text class=\"al\" transform=\"translate(11,%d) rotate(-90)\" "
               "text-anchor=\"middle\">", (y0 + y1) / 2);
    tl_html_esc(o, ylabel);
    fputs("</text>", o);
}

void tl_plot_begin(struct tl_plot *p, const char *data_plot, const char *label,
                   const char *xlabel, const char *ylabel)
{
    if (p->logx && !(p->x0 > 0)) p->x0 = p->x1 > 0 ? p->x1 / 10 : 1;
    if (p->logy && !(p->y0 > 0)) p->y0 = p->y1 > 0 ? p->y1 / 10 : 1;
    if (!(p->x1 > p->x0)) p->x1 = p->logx ? p->x0 * 10 : p->x0 + 1;
    if (!(p->y1 > p->y0)) p->y1 = p->logy ? p->y0 * 10 : p->y0 + 1;
    fprintf(p->out, "<svg class=\"plot\" data-plot=\"");
    tl_html_esc(p->out, data_plot);
    fprintf(p->out, "\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
            p->w, p->h, p->w, p->h);
    tl_html_esc(p->out, label);
    fputs("\"><title>", p->out);
    tl_html_esc(p->out, label);
    fputs("</title>", p->out);
    axes(p, xlabel, ylabel);
}

void tl_plot_end(struct tl_plot *p)
{
    fputs("</svg>\n", p->out);
}
