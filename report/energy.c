/* The report's energy section (report.h), for runs that measured their
 * energy (codecarbon): per category the energy and CO2 the records carry,
 * beside tasklens's estimate from CPU time and memory-time (`tasklens
 * energy`'s model), each labelled and never added together; the categories
 * with most energy first; the attempts that emitted most; and the mean
 * power of each attempt over time.
 *
 * Units as codecarbon's users read them: energy in Wh or kWh, CO2 in g or
 * kg, one unit per column (the one its largest value reads best in), so a
 * column compares at a glance. Every number carries its exact value (J,
 * kg) in data-v. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "report/svg.h"

#define ENERGY_TOP 10 /* attempts in the emissions table */

/* A column's unit: the larger one once its largest value reaches it. */
struct unit {
    const char *name;
    double per; /* of the canonical unit (J, kg) in one of these */
};

static struct unit energy_unit(double max_j)
{
    return max_j >= 3.6e6 ? (struct unit){"kWh", 3.6e6} : (struct unit){"Wh", 3600};
}

static struct unit co2_unit(double max_kg)
{
    return max_kg >= 1 ? (struct unit){"kg", 1} : (struct unit){"g", 1e-3};
}

/* A value in the column's unit, 3 significant digits, exact in data-v. */
static void unit_cell(FILE *o, double v, struct unit u, const char *key)
{
    if (!isfinite(v)) {
        fprintf(o, "<td data-k=\"%s\" data-v=\"null\">-</td>", key);
        return;
    }
    double x = v / u.per;
    int decimals = x == 0 || fabs(x) >= 100 ? 0 : fabs(x) >= 10 ? 1 : (int)fmin(9, 2 - floor(log10(fabs(x))));
    fprintf(o, "<td data-k=\"%s\" data-v=\"%.17g\" title=\"%.17g\">%.*f</td>", key, v, v, decimals, x);
}

struct row {
    const struct tl_report_energy *c;
    double measured_j, measured_kg, estimated_j, estimated_kg;
    size_t covered;
};

static int by_energy(const void *a, const void *b)
{
    const struct row *x = a, *y = b;
    double ex = isfinite(x->measured_j) ? x->measured_j : -1, ey = isfinite(y->measured_j) ? y->measured_j : -1;
    if (ex != ey) return ex < ey ? 1 : -1;
    double sx = isfinite(x->estimated_j) ? x->estimated_j : -1, sy = isfinite(y->estimated_j) ? y->estimated_j : -1;
    if (sx != sy) return sx < sy ? 1 : -1;
    return strcmp(x->c->name, y->c->name);
}

static void category_head(FILE *o, struct unit eu, struct unit cu)
{
    fprintf(o, "<table data-table=\"energy\" data-energy-unit=\"%s\" data-co2-unit=\"%s\"><tr><th class=\"n\">"
               "category</th><th>attempts</th><th>measured energy (%s)</th><th>measured CO<sub>2</sub>eq (%s)</th>"
               "<th>estimated energy (%s)</th><th>estimated CO<sub>2</sub>eq (%s)</th><th>estimate covers</th></tr>",
            eu.name, cu.name, eu.name, cu.name, eu.name, cu.name);
}

static void category_rows(FILE *o, const struct row *v, size_t n, struct unit eu, struct unit cu)
{
    for (size_t k = 0; k < n; k++) {
        fputs("<tr>", o);
        tl_html_name_cell(o, v[k].c->name);
        fprintf(o, "<td data-k=\"attempts\" data-v=\"%zu\">%zu</td>", v[k].c->e.attempts, v[k].c->e.attempts);
        unit_cell(o, v[k].measured_j, eu, "measured_j");
        unit_cell(o, v[k].measured_kg, cu, "measured_kg");
        unit_cell(o, v[k].estimated_j, eu, "estimated_j");
        unit_cell(o, v[k].estimated_kg, cu, "estimated_kg");
        fprintf(o, "<td data-k=\"covered\" data-v=\"%zu\">%zu of %zu</td></tr>", v[k].covered, v[k].covered,
                v[k].c->e.attempts);
    }
}

/* Most energy first: TL_REPORT_TOP categories, then the next ones
 * collapsed, as the other per-category tables; `tasklens energy` lists
 * every one. The units are chosen over all of them. */
static void category_table(FILE *o, const struct tl_report_page *pg)
{
    const struct tl_power *pw = &pg->power;
    size_t n = pg->nenergy;
    struct row *v = calloc(n + 1, sizeof *v);
    if (!v) return;
    double max_j = 0, max_kg = 0;
    for (size_t k = 0; k < n; k++) {
        const struct tl_energy *e = &pg->energy[k].e;
        size_t covered = e->attempts - (e->no_cpu > e->no_mem ? e->no_cpu : e->no_mem);
        double kwh = covered ? (e->cpu_kwh + e->mem_kwh) * pw->pue : NAN; /* none: not 0 J */
        v[k] = (struct row){&pg->energy[k], e->measured ? e->measured_kwh * 3.6e6 : NAN,
                            e->measured ? e->measured_kg : NAN, kwh * 3.6e6, kwh * pw->g_kwh / 1000, covered};
        max_j = fmax(max_j, fmax(isfinite(v[k].measured_j) ? v[k].measured_j : 0,
                                 isfinite(v[k].estimated_j) ? v[k].estimated_j : 0));
        max_kg = fmax(max_kg, fmax(isfinite(v[k].measured_kg) ? v[k].measured_kg : 0,
                                   isfinite(v[k].estimated_kg) ? v[k].estimated_kg : 0));
    }
    qsort(v, n, sizeof *v, by_energy);
    struct unit eu = energy_unit(max_j), cu = co2_unit(max_kg);
    size_t top = n > TL_REPORT_TOP + 1 ? TL_REPORT_TOP : n;
    category_head(o, eu, cu);
    category_rows(o, v, top, eu, cu);
    fputs("</table>\n", o);
    if (top < n) {
        size_t shown = tl_report_collapsed_open(o, n - top, "categories", "");
        category_head(o, eu, cu);
        category_rows(o, v + top, shown, eu, cu);
        fputs("</table>", o);
        tl_report_collapsed_close(o, n - top, "categories", "tasklens energy", "");
    }
    free(v);
}

static int by_emissions(const void *a, const void *b)
{
    const struct tl_report_energy_point *x = *(const struct tl_report_energy_point *const *)a,
                                        *y = *(const struct tl_report_energy_point *const *)b;
    double kx = isfinite(x->kg) ? x->kg : -1, ky = isfinite(y->kg) ? y->kg : -1;
    if (kx != ky) return kx < ky ? 1 : -1;
    return x < y ? -1 : x > y; /* input order */
}

/* The attempts that emitted most (else used most energy, when none records CO2). */
static void emissions_table(FILE *o, const struct tl_report_page *pg)
{
    size_t n = pg->nenergy_points;
    const struct tl_report_energy_point **v = malloc((n + 1) * sizeof *v);
    if (!v) return;
    double max_j = 0, max_kg = 0;
    for (size_t i = 0; i < n; i++) {
        v[i] = &pg->energy_points[i];
        max_j = fmax(max_j, v[i]->energy_j);
        max_kg = fmax(max_kg, isfinite(v[i]->kg) ? v[i]->kg : 0);
    }
    qsort(v, n, sizeof *v, by_emissions);
    struct unit eu = energy_unit(max_j), cu = co2_unit(max_kg);
    fprintf(o, "<h3>The attempts that emitted most</h3><table data-table=\"top-emissions\"><tr><th class=\"n\">"
               "task</th><th class=\"n\">category</th><th>CO<sub>2</sub>eq (%s)</th><th>energy (%s)</th>"
               "<th>duration</th><th>mean power (W)</th></tr>",
            cu.name, eu.name);
    for (size_t i = 0; i < n && i < ENERGY_TOP; i++) {
        char d[48];
        tl_plot_fmt(d, sizeof d, v[i]->wall, TL_UNIT_SECONDS);
        fputs("<tr>", o);
        tl_html_name_cell(o, v[i]->id);
        tl_html_name_cell(o, v[i]->category ? v[i]->category : "");
        unit_cell(o, v[i]->kg, cu, "kg");
        unit_cell(o, v[i]->energy_j, eu, "energy_j");
        fprintf(o, "<td data-k=\"wall\" data-v=\"%.17g\">%s</td>", v[i]->wall, isfinite(v[i]->wall) ? d : "-");
        unit_cell(o, v[i]->wall > 0 ? v[i]->energy_j / v[i]->wall : NAN, (struct unit){"W", 1}, "power_w");
        fputs("</tr>", o);
    }
    fputs("</table>\n", o);
    free(v);
}

/* Each attempt's mean power (energy / duration) at its end, over time. */
static void power_plot(FILE *o, const struct tl_report_page *pg)
{
    double t0 = INFINITY, t1 = -INFINITY, top = 0;
    size_t n = 0;
    for (size_t i = 0; i < pg->nenergy_points; i++) {
        const struct tl_report_energy_point *p = &pg->energy_points[i];
        if (!isfinite(p->end) || !(p->wall > 0)) continue;
        t0 = fmin(t0, p->end);
        t1 = fmax(t1, p->end);
        top = fmax(top, p->energy_j / p->wall);
        n++;
    }
    if (n < 2 || !(t1 > t0) || !(top > 0)) return;
    struct tl_plot p = {.out = o, .w = 800, .h = 220, .ml = 56, .mr = 20, .mt = 10, .mb = 40, .x0 = 0,
                        .x1 = t1 - t0, .y0 = 0, .y1 = top * 1.1, .xtime = true, .xunit = TL_UNIT_SECONDS,
                        .yunit = TL_UNIT_WATTS};
    tl_plot_begin(&p, "energy-power", "each attempt's mean power over time", "time (each attempt at its end)",
                  "mean power (W)");
    for (size_t i = 0; i < pg->nenergy_points; i++) {
        const struct tl_report_energy_point *e = &pg->energy_points[i];
        if (!isfinite(e->end) || !(e->wall > 0)) continue;
        double w = e->energy_j / e->wall;
        fprintf(o, "<circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" data-v=\"%.17g\"><title>", tl_plot_x(&p, e->end - t0),
                tl_plot_y(&p, w), w);
        tl_html_esc(o, e->id[0] ? e->id : "(no id)");
        fputs(" (", o);
        tl_html_esc(o, e->category ? e->category : "");
        fprintf(o, "): %.3g W over %.3g s</title></circle>", w, e->wall);
    }
    tl_plot_end(&p);
    fprintf(o, "<p class=\"note\">%zu attempts, each at its end: the energy it measured over its duration (CPU, GPU "
               "and memory together).</p>\n", n);
}

void tl_report_energy(FILE *o, const struct tl_report_page *pg)
{
    if (!pg->nenergy) return;
    const struct tl_power *pw = &pg->power;
    fprintf(o, "<h2 id=\"energy\">Energy and CO<sub>2</sub></h2>\n<p class=\"note\"><b>Measured</b>: "
               "what codecarbon wrote for each run or task (energy_consumed; emissions, at the "
               "carbon intensity it chose), summed. <b>Estimated</b>: <code>tasklens energy</code>'s "
               "model from CPU time and memory-time (%g W per busy core, %g W per GiB held, PUE %g, "
               "%g gCO<sub>2</sub>eq/kWh); an attempt without CPU time or memory counts as zero, and "
               "the last column says how many had them. The two are never added. Most energy first; each "
               "column in one unit, its head says which.</p>\n",
            pw->w_core, pw->w_gib, pw->pue, pw->g_kwh);
    category_table(o, pg);
    if (pg->nenergy_points) {
        emissions_table(o, pg);
        power_plot(o, pg);
    }
    if (pg->energy_points_more)
        fprintf(o, "<p class=\"note\">%zu more measured attempts were not kept for these.</p>", pg->energy_points_more);
}
