/* tasklens advise: right-sizing per category (insights/advise.c), as a
 * table, JSON or line protocol. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/advise_replay.h"
#include "core/term.h"
#include "cli/cli.h"
#include "cli/insights_cli.h"
#include "core/summary.h"

static void fmt_res(char *buf, size_t cap, double v, int res)
{
    if (res == TL_RES_CORES) tl_cli_cell(buf, cap, v);
    else tl_summary_human(buf, cap, v, TL_UNIT_BYTES);
}

static void advise_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens advise [OPTIONS] INPUT...\n"
            "\n"
            "Right-sizing per category: requested, allocated and used cores, memory and\n"
            "disk; the waste (allocated minus used, times wall time) in core-hours and\n"
            "GiB-hours; a recommendation (used quantile, x margin for memory and disk,\n"
            "rounded up to the worker granularity) with the share of attempts that would have\n"
            "exceeded it and the waste it would save; and what RESOURCE_EXHAUSTION\n"
            "attempts cost and whether the recommendation would have avoided them.\n"
            "\n"
            "  --quantile Q        used quantile the recommendation starts from (default 0.95)\n"
            "  --margin M          multiplied in for memory and disk (default 1.2)\n"
            "  --round RES=STEP    granularity: cores=1, memory=256MiB, disk=256MiB (defaults)\n"
            "  --emit SYSTEM       the recommendations as SYSTEM reads them: bps (LSST BPS submit\n"
            "                      YAML), wq (Work Queue / TaskVine category JSON), makeflow\n"
            "                      (CATEGORY blocks), nextflow (a -c config: withName cpus,\n"
            "                      memory, time) or snakemake (a profile: set-threads,\n"
            "                      set-resources), with the rule and the inputs in a header;\n"
            "                      memory and disk as a first allocation and retries in the\n"
            "                      system's idiom, the last covering every success x margin\n"
            "  --allocation MODE   how the first allocation is chosen: waste (default: the least\n"
            "                      expected allocated GiB-hours over the observed tasks, retries\n"
            "                      included)\n"
            "                      or throughput (the most tasks per worker-second; Work Queue,\n"
            "                      Makeflow); --quantile picks the quantile rule instead\n"
            "  --replay SYSTEM     instead of the advice: what --emit SYSTEM writes, the candidate\n"
            "                      first allocations, and a replay against the observed attempts\n"
            "                      (attempts, kills, allocated core- and GiB-hours, observed and\n"
            "                      replayed)\n" COMMON_HELP
            "\n"
            "The formulas are in docs/advise.md (man tasklens: advise).\n");
}

/* The rule, said once above the table or in the JSON. */
static void advise_header(struct tl_buf *b, enum fmt fmt, const struct tl_advise_opts *o,
                          const char *pct)
{
    const double *gran = o->round;
    if (fmt == F_TABLE) {
        char g1[16], g2[16];
        tl_summary_human(g1, sizeof g1, gran[TL_RES_MEM], TL_UNIT_BYTES);
        tl_summary_human(g2, sizeof g2, gran[TL_RES_DISK], TL_UNIT_BYTES);
        tl_buf_printf(b,
                      "recommendation = used %s (x %g for memory and disk), rounded up to cores %g, "
                      "memory %s, disk %s\n",
                      pct, o->margin, gran[TL_RES_CORES], g1, g2);
        tl_buf_printf(b, "waste = (allocated - used) x wall time; used cores = cpu/wall; memory and "
                         "disk use their peak\n");
    }
    if (fmt == F_JSON) {
        tl_buf_printf(b, "{\"quantile\":");
        tl_cli_json_num(b, o->quantile);
        tl_buf_puts(b, ",\"margin\":");
        tl_cli_json_num(b, o->margin);
        tl_buf_puts(b, ",\"round\":{\"cores\":");
        tl_cli_json_num(b, gran[TL_RES_CORES]);
        tl_buf_puts(b, ",\"memory_bytes\":");
        tl_cli_json_num(b, gran[TL_RES_MEM]);
        tl_buf_puts(b, ",\"disk_bytes\":");
        tl_cli_json_num(b, gran[TL_RES_DISK]);
        tl_buf_puts(b, "},\"categories\":[");
    }
}

/* hours of something as "12.5 core-s", "3.2 GiB-min", "1.5 h": the unit
 * that keeps the number readable, never an exponent. */
static const char *amount(char *buf, size_t cap, double hours, const char *what)
{
    char num[24];
    const char *unit = "h";
    double v = hours;
    if (hours < 1.0 / 60) unit = "s", v = hours * 3600;
    else if (hours < 1) unit = "min", v = hours * 60;
    tl_cli_plain(num, sizeof num, v);
    if (*what) snprintf(buf, cap, "%s %s-%s", num, what, unit);
    else snprintf(buf, cap, "%s %s", num, unit);
    return buf;
}

static void advise_table(struct tl_buf *b, const char *name, const struct tl_cat_advice *x,
                         const char *pct)
{
    tl_buf_puts(b, "\ncategory=");
    tl_vis_append(b, name, strlen(name), 0); /* a name on a terminal */
    tl_buf_printf(b, "  attempts %zu  tasks %zu\n", x->attempts, x->tasks);
    char usedq[24];
    snprintf(usedq, sizeof usedq, "used %s", pct);
    tl_buf_printf(b, "  %-8s %9s %9s %9s %9s %9s %14s %9s %7s %17s\n", "resource", "requested",
                  "allocated", "used p50", usedq, "used max", "waste", "recommend", "exceed",
                  "saves");
    for (int res = 0; res < TL_NRES; res++) {
        const struct tl_advice *a = &x->a[res];
        char c1[24], c2[24], c3[24], c4[24], c5[24], c6[32], c7[24], c8[16], c9[48];
        fmt_res(c1, sizeof c1, a->req, res);
        fmt_res(c2, sizeof c2, a->alloc, res);
        fmt_res(c3, sizeof c3, a->used_p50, res);
        fmt_res(c4, sizeof c4, a->used_q, res);
        fmt_res(c5, sizeof c5, a->used_max, res);
        if (a->n_waste) amount(c6, sizeof c6, a->waste, res == TL_RES_CORES ? "core" : "GiB");
        else snprintf(c6, sizeof c6, "-");
        fmt_res(c7, sizeof c7, a->rec, res);
        if (a->n_used) snprintf(c8, sizeof c8, "%.1f%%", 100.0 * (double)a->exceed / (double)a->n_used);
        else snprintf(c8, sizeof c8, "-");
        if (a->n_waste && tl_advice_costs(a) > 0) { /* more than was allocated: a cost, never < 0 */
            char cost[32];
            snprintf(c9, sizeof c9, "costs %s",
                     amount(cost, sizeof cost, tl_advice_costs(a), res == TL_RES_CORES ? "core" : "GiB"));
        } else if (a->n_waste) {
            amount(c9, sizeof c9, tl_advice_saves(a), res == TL_RES_CORES ? "core" : "GiB");
        } else {
            snprintf(c9, sizeof c9, "-");
        }
        tl_buf_printf(b, "  %-8s %9s %9s %9s %9s %9s %14s %9s %7s %17s\n", tl_res_name[res], c1, c2,
                      c3, c4, c5, c6, c7, c8, c9);
    }
    const struct tl_advice *m = &x->a[TL_RES_MEM];
    if (m->killed) {
        char fl[32];
        fmt_res(fl, sizeof fl, m->floor, TL_RES_MEM);
        tl_buf_printf(b, "  killed for memory: %zu attempt%s", m->killed, m->killed == 1 ? "" : "s");
        if (m->unmeasured)
            tl_buf_printf(b, " (%zu with no memory recorded: left out of the quantile)", m->unmeasured);
        if (isfinite(m->floor))
            tl_buf_printf(b, "; %s at a limit of %s: the recommendation is above it%s\n",
                          m->killed == 1 ? "it died" : "the largest died", fl,
                          m->rec_is_floor ? " (set by that limit, a floor)" : "");
        else tl_buf_puts(b, "; no limit recorded: the recommendation comes from the survivors only\n");
    }
    if (x->exhausted) {
        char core[32], gib[32], wall[32];
        tl_buf_printf(b, "  RESOURCE_EXHAUSTION: %zu attempt%s cost %s, %s (%s wall); ", x->exhausted,
                      x->exhausted == 1 ? "" : "s", amount(core, sizeof core, x->ex_core_h, "core"),
                      amount(gib, sizeof gib, x->ex_gib_h, "GiB"), amount(wall, sizeof wall, x->ex_wall_h, ""));
        if (x->exhausted == 1)
            tl_buf_printf(b, "the recommendation %s it\n", x->avoided ? "avoids" : "does not avoid");
        else
            tl_buf_printf(b, "the recommendation avoids %zu of them\n", x->avoided);
    }
}

static void advise_json(struct tl_buf *b, size_t k, const char *name,
                        const struct tl_cat_advice *x, const char *pct)
{
    tl_buf_puts(b, k ? ",{\"category\":" : "{\"category\":");
    tl_buf_put_json_string(b, name);
    tl_buf_printf(b, ",\"attempts\":%zu,\"tasks\":%zu,\"resources\":{", x->attempts, x->tasks);
    for (int res = 0; res < TL_NRES; res++) {
        const struct tl_advice *a = &x->a[res];
        tl_buf_printf(b, "%s\"%s\":{\"unit\":\"%s\",\"requested_p50\":", res ? "," : "", tl_res_name[res],
                      res == TL_RES_CORES ? "cores" : "bytes");
        tl_cli_json_num(b, a->req);
        tl_buf_puts(b, ",\"allocated_p50\":");
        tl_cli_json_num(b, a->alloc);
        tl_buf_puts(b, ",\"used_p50\":");
        tl_cli_json_num(b, a->used_p50);
        tl_buf_printf(b, ",\"used_%s\":", pct);
        tl_cli_json_num(b, a->used_q);
        tl_buf_puts(b, ",\"used_max\":");
        tl_cli_json_num(b, a->used_max);
        tl_buf_puts(b, ",\"recommend\":");
        tl_cli_json_num(b, a->rec);
        tl_buf_printf(b, ",\"measured\":%zu,\"exceed\":%zu,\"exceed_fraction\":", a->n_used, a->exceed);
        tl_cli_json_num(b, a->n_used ? (double)a->exceed / (double)a->n_used : NAN);
        tl_buf_printf(b, ",\"waste_unit\":\"%s\",\"waste\":", tl_res_waste_unit[res]);
        tl_cli_json_num(b, a->n_waste ? a->waste : NAN);
        tl_buf_puts(b, ",\"waste_with_recommendation\":");
        tl_cli_json_num(b, a->n_waste ? a->waste_rec : NAN);
        tl_buf_puts(b, ",\"saves\":");
        tl_cli_json_num(b, tl_advice_saves(a));
        tl_buf_puts(b, ",\"costs\":");
        tl_cli_json_num(b, tl_advice_costs(a));
        if (res == TL_RES_MEM) { /* censored: killed for memory, used at least their limit */
            tl_buf_printf(b, ",\"killed\":%zu,\"killed_unmeasured\":%zu,\"floor\":", a->killed,
                          a->unmeasured);
            tl_cli_json_num(b, a->floor);
            tl_buf_printf(b, ",\"recommend_is_floor\":%s", a->rec_is_floor ? "true" : "false");
        }
        tl_buf_putc(b, '}');
    }
    tl_buf_printf(b, "},\"resource_exhaustion\":{\"attempts\":%zu,\"core_hours\":", x->exhausted);
    tl_cli_json_num(b, x->ex_core_h);
    tl_buf_puts(b, ",\"gib_hours\":");
    tl_cli_json_num(b, x->ex_gib_h);
    tl_buf_puts(b, ",\"wall_hours\":");
    tl_cli_json_num(b, x->ex_wall_h);
    tl_buf_printf(b, ",\"avoided\":%zu}}", x->avoided);
}

static void advise_lp(struct tl_buf *b, const char *name, const struct tl_cat_advice *x, double q,
                      int64_t ns, int *written)
{
    for (int res = 0; res < TL_NRES; res++) {
        const struct tl_advice *a = &x->a[res];
        static struct tl_point p;
        tl_point_start(&p, "task_advice", ns);
        tl_point_tag(&p, "category", name);
        tl_point_tag(&p, "resource", tl_res_name[res]);
        /* bytes stay bytes, as in `task` points */
        tl_point_float(&p, "requested_p50", a->req);
        tl_point_float(&p, "allocated_p50", a->alloc);
        tl_point_float(&p, "used_p50", a->used_p50);
        tl_point_float(&p, "used_q", a->used_q);
        tl_point_float(&p, "used_max", a->used_max);
        tl_point_float(&p, "recommend", a->rec);
        tl_point_float(&p, "exceed_fraction",
                 a->n_used ? (double)a->exceed / (double)a->n_used : NAN);
        if (a->n_waste) {
            tl_point_float(&p, "waste_hours", a->waste);
            tl_point_float(&p, "saves_hours", tl_advice_saves(a));
            tl_point_float(&p, "costs_hours", tl_advice_costs(a));
        }
        tl_point_float(&p, "quantile", q);
        tl_point_int(&p, "attempts", (int64_t)x->attempts);
        tl_point_int(&p, "exhausted", (int64_t)x->exhausted);
        tl_point_int(&p, "exhausted_avoided", (int64_t)x->avoided);
        tl_point_float(&p, "exhausted_core_hours", x->ex_core_h);
        tl_point_float(&p, "exhausted_gib_hours", x->ex_gib_h);
        tl_cli_put_point(b, &p, written);
    }
}

/* What to write: the advice (table, JSON, line protocol), a workflow
 * system's file, or the replay of one. */
struct advise_out {
    bool emit, replay;
    enum tl_system sys;
    enum tl_first_by by;
};

/* The settings and replay of every category under the system asked for. */
static bool advise_plan_make(const struct tl_task_rows *rs, const struct tl_cat_advice *ca,
                             const struct tl_advise_opts *o, const struct advise_out *out,
                             struct tl_settings *st, struct tl_replay *rp)
{
    struct tl_alloc_scratch sc;
    bool ok = tl_alloc_scratch_init(&sc, rs->n);
    for (size_t k = 0; ok && k < rs->cats.n; k++) {
        tl_settings_for(out->sys, out->by, rs, (int32_t)k, &ca[k], o, &sc, &st[k]);
        tl_replay_category(rs, (int32_t)k, &st[k], &rp[k]);
    }
    tl_alloc_scratch_free(&sc);
    return ok;
}

/* The advice of every category into b: a table, JSON or line protocol; or
 * a workflow system's file (a name it cannot hold is left out and said); or
 * the replay of one. false when out of memory. */
static bool advise_write(struct tl_buf *b, const struct advise_out *out, const struct common *co,
                         const struct tl_task_rows *rs, const struct tl_cat_advice *ca,
                         const struct tl_advise_opts *o, char *const *inputs, int ninputs)
{
    if (out->emit || out->replay) {
        size_t nc = rs->cats.n ? rs->cats.n : 1;
        struct tl_settings *st = calloc(nc, sizeof *st);
        struct tl_replay *rp = calloc(nc, sizeof *rp);
        bool ok = st && rp && advise_plan_make(rs, ca, o, out, st, rp);
        struct advise_plan p = {ca, st, rp};
        struct advise_refusals rf = {0};
        if (ok && out->emit) advise_emit(b, out->sys, rs, &p, o, inputs, ninputs, &rf);
        else if (ok) advise_replay_write(b, co->fmt, out->sys, rs, &p);
        if (rf.n) /* a name the file cannot hold exactly never goes in it */
            tl_eprintf("tasklens advise: %zu categor%s left out of the file: '%s' is %s\n", rf.n,
                       rf.n == 1 ? "y" : "ies", rf.first, rf.why);
        free(st);
        free(rp);
        return ok;
    }
    int written = 0;
    char pct[16];
    snprintf(pct, sizeof pct, "p%02.0f", o->quantile * 100);
    advise_header(b, co->fmt, o, pct);
    for (size_t k = 0; k < rs->cats.n; k++) {
        if (co->fmt == F_TABLE) advise_table(b, rs->cats.s[k], &ca[k], pct);
        else if (co->fmt == F_JSON) advise_json(b, k, rs->cats.s[k], &ca[k], pct);
        else advise_lp(b, rs->cats.s[k], &ca[k], o->quantile, rs->newest_ns, &written);
    }
    if (co->fmt == F_JSON) tl_buf_puts(b, "]}\n");
    return true;
}

/* One of advise's own options: 1 taken, -1 a usage error (said), 0 not one. */
static int advise_option(int c, char *arg, struct tl_advise_opts *o, struct advise_out *out)
{
    switch (c) {
    case 'Q':
        if (!tl_cli_parse_num(arg, 0, 1, &o->quantile)) {
            tl_eprintf("tasklens advise: --quantile wants a number in [0,1]\n");
            return -1;
        }
        o->quantile_given = true;
        return 1;
    case 'M':
        if (!tl_cli_parse_num(arg, 1, 100, &o->margin)) {
            tl_eprintf("tasklens advise: --margin wants a number in [1,100]\n");
            return -1;
        }
        return 1;
    case 'R': {
        char *eq = strchr(arg, '=');
        int res = -1;
        if (eq) {
            *eq = '\0';
            for (int k = 0; k < TL_NRES; k++)
                if (!strcmp(arg, tl_res_name[k])) res = k;
        }
        double v = 0;
        bool ok = res >= 0 && (res == TL_RES_CORES ? tl_cli_parse_num(eq + 1, 1e-3, 1e6, &v)
                                                : tl_cli_parse_bytes(eq + 1, &v) && v >= 1);
        if (!ok) {
            tl_eprintf("tasklens advise: --round wants cores=N, memory=SIZE or disk=SIZE\n");
            return -1;
        }
        o->round[res] = v;
        return 1;
    }
    case 'E':
    case 'P':
        if (!advise_system_parse(arg, &out->sys)) {
            tl_eprintf("tasklens advise: --%s is bps, wq, makeflow, nextflow or snakemake\n",
                       c == 'E' ? "emit" : "replay");
            return -1;
        }
        if (c == 'E') out->emit = true;
        else out->replay = true;
        return 1;
    case 'A':
        if (strcmp(arg, "waste") && strcmp(arg, "throughput")) {
            tl_eprintf("tasklens advise: --allocation is waste or throughput\n");
            return -1;
        }
        out->by = *arg == 'w' ? TL_FIRST_MIN_WASTE : TL_FIRST_MAX_THROUGHPUT;
        return 1;
    default: return 0;
    }
}

int tl_cmd_advise(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"quantile", required_argument, NULL, 'Q'}, {"margin", required_argument, NULL, 'M'},
        {"round", required_argument, NULL, 'R'},    {"emit", required_argument, NULL, 'E'},
        {"replay", required_argument, NULL, 'P'},   {"allocation", required_argument, NULL, 'A'},
        COMMON_LONGOPTS, {0}};
    struct advise_out out = {.by = TL_FIRST_MIN_WASTE};
    struct common co = {.io = {.max_reports = 10}};
    struct tl_advise_opts o;
    tl_advise_opts_default(&o);
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "O:qho:", longopts, NULL)) != -1) {
        switch (c) {
        case 'h': advise_usage(stdout); return TL_EXIT_OK;
        default: {
            int r = advise_option(c, optarg, &o, &out);
            if (r < 0) return TL_EXIT_USAGE;
            if (r > 0) break;
            r = tl_cli_common_option(c, optarg, &co, "tasklens advise");
            if (r < 0) return TL_EXIT_USAGE;
            if (r == 0) {
                advise_usage(stderr);
                return TL_EXIT_USAGE;
            }
        }
        }
    }
    if (optind >= argc) {
        advise_usage(stderr);
        return TL_EXIT_USAGE;
    }
    struct tl_task_rows rs = {0};
    int ninputs = tl_inputs_once(argv + optind, argc - optind, "tasklens advise");
    int status = tl_cli_read_all(&co, ninputs, argv + optind, &rs, "tasklens advise");
    if (rs.process_wide_rss) /* their memory recommendations rest on upper bounds */
        tl_eprintf("tasklens advise: note: " TL_NOTE_PROCESS_RSS "; memory advice for their "
                        "categories is from those bounds\n",
                (unsigned long long)rs.process_wide_rss);
    double *tmp = malloc(tl_advise_tmp_len(&rs) * sizeof *tmp);
    struct tl_cat_advice *ca = calloc(rs.cats.n ? rs.cats.n : 1, sizeof *ca);
    if (!tmp || !ca) {
        tl_eprintf("tasklens advise: out of memory\n");
        status = TL_EXIT_INPUT;
    }
    struct tl_buf b = {0};
    if (status == TL_EXIT_OK) {
        for (size_t k = 0; k < rs.cats.n; k++) tl_advise_category(&rs, (int32_t)k, &o, tmp, &ca[k]);
        if (out.emit && out.replay) {
            tl_eprintf("tasklens advise: --emit writes a file and --replay a report of one: one of them\n");
            status = TL_EXIT_USAGE;
        } else if (!advise_write(&b, &out, &co, &rs, ca, &o, argv + optind, ninputs)) {
            tl_eprintf("tasklens advise: out of memory\n");
            status = TL_EXIT_INPUT;
        } else {
            status = tl_cli_write_out(&co, &b, "tasklens advise");
        }
    }
    tl_buf_free(&b);
    free(tmp);
    free(ca);
    tl_task_rows_free(&rs);
    return status;
}

