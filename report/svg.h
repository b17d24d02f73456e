/* Small SVG plots drawn by tasklens for the HTML report: a frame with axes
 * (linear or log10, ticks labelled in the metric's unit), and the marks
 * (bars, lines, points, rules) placed through it. Every mark can carry a
 * <title>, which browsers show as a tooltip with the exact value. */
#ifndef TL_SVG_H
#define TL_SVG_H

#include <stdbool.h>
#include <stdio.h>

#include "core/record.h"

struct tl_plot {
    FILE *out;
    int w, h;                   /* the SVG's size in px */
    int ml, mr, mt, mb;         /* margins (axes and labels live there) */
    double x0, x1, y0, y1;      /* data range */
    bool logx, logy;
    enum tl_unit xunit, yunit;
    bool xtime;                 /* x is seconds after the start: "+12 min" */
    bool no_yticks;             /* y is not a number (rows of categories) */
};

/* Opens <svg> with its frame, axes and labels; data-plot names it for tests,
 * label is its accessible name. */
void tl_plot_begin(struct tl_plot *p, const char *data_plot, const char *label,
                   const char *xlabel, const char *ylabel);
void tl_plot_end(struct tl_plot *p);
/* Data to pixel coordinates (clamped to the frame). */
double tl_plot_x(const struct tl_plot *p, double x);
double tl_plot_y(const struct tl_plot *p, double y);
/* A coordinate, as "%.1f" writes it (tl_fmt_fixed1): a page's plots write
 * tens of thousands, and fprintf's float formatting was a tenth of it. */
void tl_svg_num(FILE *o, double v);
/* A count for people: 4 significant digits, whole numbers past 10,000 with
 * thousands separators, "<0.001" below: never an exponent. */
void tl_fmt_count(char *buf, size_t cap, double v);
/* An amount of resource-time given in hours, in the unit that keeps it
 * readable: "0.41 core-s", "3.2 GiB-min", "1,345 GiB-h". */
void tl_fmt_amount(char *buf, size_t cap, double hours, const char *what);
/* A value as the axes write it (human units). */
void tl_plot_fmt(char *buf, size_t cap, double v, enum tl_unit unit);
/* <td class="n">name</td>: a name that wraps at its spaces; one longer
 * than a table column should be (a 657-character kernel name) may wrap
 * anywhere, with the whole name as its tooltip. */
void tl_html_name_cell(FILE *out, const char *name);
/* Text escaped for HTML/SVG content and attributes. */
void tl_html_esc(FILE *out, const char *s);

#endif
