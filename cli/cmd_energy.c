/* tasklens energy: energy and emissions per category and per workflow
 * (insights/energy.c), as a table, JSON or line protocol. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/term.h"
#include "cli/insights_cli.h"

static void energy_emit(struct tl_buf *b, enum fmt fmt, const char *scope, const char *name,
                        const struct tl_energy *e, const struct tl_power *pw, int64_t ns, bool *first_json,
                        int *written)
{
    double kwh = (e->cpu_kwh + e->mem_kwh) * pw->pue;
    double kg = kwh * pw->g_kwh / 1000;
    if (fmt == F_JSON) {
        tl_buf_puts(b, *first_json ? "{\"" : ",{\"");
        *first_json = false;
        tl_buf_puts(b, scope);
        tl_buf_puts(b, "\":");
        tl_buf_put_json_string(b, name);
        tl_buf_printf(b, ",\"attempts\":%zu,\"without_cpu_time\":%zu,\"without_memory_time\":%zu,\"kwh_cpu\":",
                      e->attempts, e->no_cpu, e->no_mem);
        tl_cli_json_num(b, e->cpu_kwh * pw->pue);
        tl_buf_puts(b, ",\"kwh_memory\":");
        tl_cli_json_num(b, e->mem_kwh * pw->pue);
        tl_buf_puts(b, ",\"kwh\":");
        tl_cli_json_num(b, kwh);
        tl_buf_puts(b, ",\"kg_co2eq\":");
        tl_cli_json_num(b, kg);
        if (e->measured) {
            tl_buf_printf(b, ",\"measured_attempts\":%zu,\"measured_kwh\":", e->measured);
            tl_cli_json_num(b, e->measured_kwh);
            tl_buf_puts(b, ",\"measured_kg_co2eq\":");
            tl_cli_json_num(b, e->measured_kg);
        }
        tl_buf_putc(b, '}');
    } else {
        static struct tl_point p;
        tl_point_start(&p, "task_energy", ns);
        tl_point_tag(&p, scope, name);
        tl_point_tag(&p, "scope", scope);
        tl_point_float(&p, "kwh", kwh);
        tl_point_float(&p, "kwh_cpu", e->cpu_kwh * pw->pue);
        tl_point_float(&p, "kwh_memory", e->mem_kwh * pw->pue);
        tl_point_float(&p, "kg_co2eq", kg);
        tl_point_int(&p, "attempts", (int64_t)e->attempts);
        tl_point_float(&p, "w_per_core", pw->w_core);
        tl_point_float(&p, "w_per_gib", pw->w_gib);
        tl_point_float(&p, "pue", pw->pue);
        tl_point_float(&p, "g_co2eq_per_kwh", pw->g_kwh);
        if (e->measured) {
            tl_point_float(&p, "measured_kwh", e->measured_kwh);
            tl_point_float(&p, "measured_kg_co2eq", e->measured_kg);
            tl_point_int(&p, "measured_attempts", (int64_t)e->measured);
        }
        tl_cli_put_point(b, &p, written);
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

/* The table's or JSON's head: the model, with every assumption. */
static void energy_head(struct tl_buf *b, enum fmt fmt, const struct tl_power *pw,
                        const struct tl_energy *total)
{
    if (fmt == F_TABLE) {
        tl_buf_printf(b,
                      "assumptions: %g W per busy core, %g W per GiB held, PUE %g, %g gCO2eq/kWh\n"
                      "kWh = PUE x (sum cpu_time_s x W_core + sum peak_RSS_GiB x wall_s x W_GiB) / 3.6e6; "
                      "kgCO2eq = kWh x intensity / 1000\n",
                      pw->w_core, pw->w_gib, pw->pue, pw->g_kwh);
        if (total->no_cpu || total->no_mem)
            tl_buf_printf(b, "coverage: %zu of %zu attempts without CPU time, %zu without memory and wall time "
                             "(counted as zero)\n",
                          total->no_cpu, total->attempts, total->no_mem);
        if (total->measured)
            tl_buf_printf(b, "measured: %zu attempts carry their own energy and CO2 (codecarbon): shown "
                             "beside the estimate, as written, never mixed into it\n",
                          total->measured);
    } else if (fmt == F_JSON) {
        tl_buf_puts(b, "{\"assumptions\":{\"w_per_core\":");
        tl_cli_json_num(b, pw->w_core);
        tl_buf_puts(b, ",\"w_per_gib\":");
        tl_cli_json_num(b, pw->w_gib);
        tl_buf_puts(b, ",\"pue\":");
        tl_cli_json_num(b, pw->pue);
        tl_buf_puts(b, ",\"g_co2eq_per_kwh\":");
        tl_cli_json_num(b, pw->g_kwh);
        tl_buf_puts(b, "},\"categories\":[");
    }
}

/* The table's units: one per column, chosen from the total so its numbers
 * read without an exponent (a test run's energy is milliwatt-hours). */
struct energy_units {
    const char *energy, *carbon;
    double energy_per_kwh, carbon_per_kg;
    int width; /* of the name column */
    bool measured; /* columns for the records' own energy and CO2 */
};

static struct energy_units units_for(const struct tl_energy *total, const struct tl_power *pw,
                                     const struct tl_task_rows *rs)
{
    double kwh = (total->cpu_kwh + total->mem_kwh) * pw->pue, kg = kwh * pw->g_kwh / 1000;
    if (total->measured) { /* one unit for estimate and measurement, so they compare */
        kwh = fmax(kwh, total->measured_kwh);
        kg = fmax(kg, total->measured_kg);
    }
    struct energy_units u = {"kWh", "kgCO2eq", 1, 1, 8, total->measured > 0};
    if (kwh < 1e-3) u = (struct energy_units){"mWh", "kgCO2eq", 1e6, 1, 8};
    else if (kwh < 1) u = (struct energy_units){"Wh", "kgCO2eq", 1e3, 1, 8};
    if (kg < 1e-3) u.carbon = "mgCO2eq", u.carbon_per_kg = 1e6;
    else if (kg < 1) u.carbon = "gCO2eq", u.carbon_per_kg = 1e3;
    int wc = tl_cli_name_width((const char *const *)rs->cats.s, rs->cats.n, 8);
    int ww = tl_cli_name_width((const char *const *)rs->wfs.s, rs->wfs.n, 8);
    u.width = wc > ww ? wc : ww;
    u.measured = total->measured > 0;
    return u;
}

static void energy_table_head(struct tl_buf *b, const char *what, const struct energy_units *u)
{
    char cpu[24], mem[24];
    snprintf(cpu, sizeof cpu, "%s cpu", u->energy);
    snprintf(mem, sizeof mem, "%s memory", u->energy);
    tl_buf_putc(b, '\n');
    tl_cli_name_cell(b, what, u->width);
    tl_buf_printf(b, " %9s %12s %12s %12s %12s", "attempts", cpu, mem, u->energy, u->carbon);
    if (u->measured) {
        char me[32], mc[32];
        snprintf(me, sizeof me, "measured %s", u->energy);
        snprintf(mc, sizeof mc, "measured %s", u->carbon);
        tl_buf_printf(b, " %14s %18s", me, mc);
    }
    tl_buf_putc(b, '\n');
}

static void energy_table_row(struct tl_buf *b, const char *name, const struct tl_energy *e,
                             const struct tl_power *pw, const struct energy_units *u)
{
    double f = pw->pue * u->energy_per_kwh, kwh = (e->cpu_kwh + e->mem_kwh) * pw->pue;
    char c[24], m[24], t[24], g[24];
    tl_cli_name_cell(b, name, u->width);
    tl_buf_printf(b, " %9zu %12s %12s %12s %12s", e->attempts, tl_cli_plain(c, sizeof c, e->cpu_kwh * f),
                  tl_cli_plain(m, sizeof m, e->mem_kwh * f), tl_cli_plain(t, sizeof t, kwh * u->energy_per_kwh),
                  tl_cli_plain(g, sizeof g, kwh * pw->g_kwh / 1000 * u->carbon_per_kg));
    if (u->measured) {
        char me[24] = "-", mc[24] = "-";
        if (e->measured) {
            tl_cli_plain(me, sizeof me, e->measured_kwh * u->energy_per_kwh);
            tl_cli_plain(mc, sizeof mc, e->measured_kg * u->carbon_per_kg);
        }
        tl_buf_printf(b, " %14s %18s", me, mc);
    }
    tl_buf_putc(b, '\n');
}

static void energy_table(struct tl_buf *b, const struct tl_power *pw, const struct tl_task_rows *rs,
                         const struct tl_energy *ec, const struct tl_energy *ew,
                         const struct tl_energy *total)
{
    struct energy_units u = units_for(total, pw, rs);
    energy_head(b, F_TABLE, pw, total);
    energy_table_head(b, "category", &u);
    for (size_t k = 0; k < rs->cats.n; k++) energy_table_row(b, rs->cats.s[k], &ec[k], pw, &u);
    energy_table_head(b, "workflow", &u);
    for (size_t k = 0; k < rs->wfs.n; k++) energy_table_row(b, rs->wfs.s[k], &ew[k], pw, &u);
    tl_buf_putc(b, '\n');
    energy_table_row(b, "total", total, pw, &u);
}

/* Per category, per workflow and in total. */
static void energy_write(struct tl_buf *b, enum fmt fmt, const struct tl_power *pw,
                         const struct tl_task_rows *rs, const struct tl_energy *ec,
                         const struct tl_energy *ew, const struct tl_energy *total)
{
    if (fmt == F_TABLE) return energy_table(b, pw, rs, ec, ew, total);
    int written = 0;
    bool first = true;
    energy_head(b, fmt, pw, total);
    for (size_t k = 0; k < rs->cats.n; k++)
        energy_emit(b, fmt, "category", rs->cats.s[k], &ec[k], pw, rs->newest_ns, &first, &written);
    if (fmt == F_JSON) {
        tl_buf_puts(b, "],\"workflows\":[");
        first = true;
    }
    for (size_t k = 0; k < rs->wfs.n; k++)
        energy_emit(b, fmt, "workflow", rs->wfs.s[k], &ew[k], pw, rs->newest_ns, &first, &written);
    if (fmt == F_JSON) {
        tl_buf_puts(b, "],\"total\":");
        first = true;
        energy_emit(b, fmt, "total", "total", total, pw, rs->newest_ns, &first, &written);
        tl_buf_puts(b, "}\n");
    }
}

/* The flags into co and pw: -1 to go on, else the exit status. */
static int parse_flags(int argc, char **argv, struct common *co, struct tl_power *pw)
{
    static const struct option longopts[] = {
        {"w-per-core", required_argument, NULL, 'W'}, {"w-per-gib", required_argument, NULL, 'G'},
        {"pue", required_argument, NULL, 'P'},        {"intensity", required_argument, NULL, 'I'},
        COMMON_LONGOPTS, {0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "O:qho:", longopts, NULL)) != -1) {
        double *dst = c == 'W' ? &pw->w_core : c == 'G' ? &pw->w_gib : c == 'P' ? &pw->pue : c == 'I' ? &pw->g_kwh : NULL;
        if (dst) {
            if (!tl_cli_parse_num(optarg, c == 'P' ? 1 : 0, 1e6, dst)) {
                tl_eprintf("tasklens energy: bad number '%s'%s\n", optarg, c == 'P' ? " (PUE >= 1)" : "");
                return TL_EXIT_USAGE;
            }
            continue;
        }
        if (c == 'h') {
            energy_usage(stdout);
            return TL_EXIT_OK;
        }
        int r = tl_cli_common_option(c, optarg, co, "tasklens energy");
        if (r == 0) energy_usage(stderr);
        if (r <= 0) return TL_EXIT_USAGE;
    }
    if (optind >= argc) {
        energy_usage(stderr);
        return TL_EXIT_USAGE;
    }
    return -1;
}

int tl_cmd_energy(int argc, char **argv)
{
    struct common co = {.io = {.max_reports = 10}};
    struct tl_power pw;
    tl_power_default(&pw);
    int status = parse_flags(argc, argv, &co, &pw);
    if (status >= 0) return status;
    struct tl_task_rows rs = {0};
    status = tl_cli_read_all(&co, argc - optind, argv + optind, &rs, "tasklens energy");
    struct tl_energy *ec = calloc(rs.cats.n + 1, sizeof *ec), *ew = calloc(rs.wfs.n + 1, sizeof *ew);
    if (!ec || !ew) {
        tl_eprintf("tasklens energy: out of memory\n");
        status = TL_EXIT_INPUT;
    }
    struct tl_buf b = {0};
    if (status == TL_EXIT_OK) {
        struct tl_energy total = {0};
        for (size_t i = 0; i < rs.n; i++) {
            tl_energy_add(&ec[rs.r[i].cat], &rs.r[i], &pw);
            tl_energy_add(&ew[rs.r[i].wf], &rs.r[i], &pw);
            tl_energy_add(&total, &rs.r[i], &pw);
        }
        energy_write(&b, co.fmt, &pw, &rs, ec, ew, &total);
        status = tl_cli_write_out(&co, &b, "tasklens energy");
    }
    tl_buf_free(&b);
    free(ec);
    free(ew);
    tl_task_rows_free(&rs);
    return status;
}
