/* tasklens plan: capacity per category and node type (insights/plan.c), as
 * a table, JSON or line protocol. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/term.h"
#include "cli/insights_cli.h"
#include "core/summary.h"

#define MAX_NODES 8
#define MAX_COUNTS 64

static bool parse_node(char *s, struct tl_node *n)
{
    snprintf(n->spec, sizeof n->spec, "%s", s);
    n->cores = n->mem = 0;
    for (char *save = NULL, *kv = strtok_r(s, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        if (!eq) return false;
        *eq++ = '\0';
        if (!strcmp(kv, "cores")) {
            if (!tl_cli_parse_num(eq, 1, 1e6, &n->cores)) return false;
        } else if (!strcmp(kv, "mem") || !strcmp(kv, "memory")) {
            if (!tl_cli_parse_bytes(eq, &n->mem) || n->mem <= 0) return false;
        } else
            return false;
    }
    return n->cores > 0 && n->mem > 0;
}

static void plan_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens plan --node cores=N,mem=SIZE [--node ...] [OPTIONS] INPUT...\n"
            "\n"
            "Capacity planning the way the DESC DRP study sized Rubin processing: per\n"
            "category the quantile (default p95) of the time a task holds its slot (the\n"
            "longer of its wall time and its CPU time over its cores) and of its peak memory;\n"
            "jobs per node = min(node cores / cores per task, node memory / memory p95);\n"
            "node-hours = tasks x time p95 / 3600 / jobs per node. Prints which resource\n"
            "binds, per category and node type, and the totals.\n"
            "\n"
            "  --node SPEC         cores=128,mem=512GiB (repeatable: one plan per node type)\n"
            "  --scale N           the observed task counts times N (default 1)\n"
            "  --count CAT=N       this many tasks of CAT instead (repeatable)\n"
            "  --quantile Q        time and memory quantile (default 0.95)\n"
            "  --time T            what a task holds its slot for: slot (the default: the\n"
            "                      longer of wall and CPU time / cores), cpu or wall\n"
            "  --cores-per-task N  instead of the observed allocation (else request, else 1)\n" COMMON_HELP);
}

/* The rows of one node type. */
struct plan_out {
    struct tl_buf *b;
    enum fmt fmt;
    const struct tl_plan_opts *o;
    const char *pct;
    int64_t ns;
    int written;
    int width;         /* of the category column */
    const char *unit;  /* the table's node-time column: node-hours, node-min or node-s */
    double per_hour;   /* that unit per node-hour */
};

/* The node-time unit of one node's table, from its total, so a small
 * workload reads "12.5 node-s", not "<0.001" node-hours. */
static void choose_unit(struct plan_out *po, double total_h)
{
    po->unit = "node-hours", po->per_hour = 1;
    if (total_h < 1.0 / 60) po->unit = "node-s", po->per_hour = 3600;
    else if (total_h < 1) po->unit = "node-min", po->per_hour = 60;
}

static const char *time_key(enum tl_plan_time t)
{
    return t == TL_PLAN_CPU ? "cpu" : t == TL_PLAN_WALL ? "wall" : "slot";
}

/* What the table's time column is the quantile of. */
static const char *time_word(enum tl_plan_time t)
{
    return t == TL_PLAN_CPU ? "CPU time" : t == TL_PLAN_WALL ? "wall time" : "max(wall, CPU time / cores)";
}

static void plan_node_head(struct plan_out *po, int ni, const struct tl_node *nd)
{
    struct tl_buf *b = po->b;
    char memh[24];
    tl_summary_human(memh, sizeof memh, nd->mem, TL_UNIT_BYTES);
    if (po->fmt == F_TABLE) {
        tl_buf_printf(b, "%snode cores=%g mem=%s; time = %s of %s, memory = %s of peak RSS\n",
                      ni ? "\n" : "", nd->cores, memh, po->pct, time_word(po->o->time),
                      po->pct);
        tl_cli_name_cell(b, "category", po->width);
        tl_buf_printf(b, " %10s %9s %9s %6s %12s %8s %12s %10s\n", "tasks", "time", "memory", "cores",
                      "jobs/node", "binds", po->unit, "node-days");
    } else if (po->fmt == F_JSON) {
        tl_buf_printf(b, "%s{\"node\":{\"cores\":", ni ? "," : "");
        tl_cli_json_num(b, nd->cores);
        tl_buf_puts(b, ",\"memory_bytes\":");
        tl_cli_json_num(b, nd->mem);
        tl_buf_puts(b, "},\"categories\":[");
    }
}

static void plan_row(struct plan_out *po, size_t k, const char *name, const struct tl_node *nd,
                     const struct tl_cat_plan *p, const struct tl_plan_fit *f)
{
    struct tl_buf *b = po->b;
    const char *binds = f->jobs < 1 ? "memory" : f->binds;
    if (po->fmt == F_TABLE) {
        char t[24], m[24], h[24], d[24], j[24];
        tl_summary_human(t, sizeof t, p->t_q, TL_UNIT_SECONDS);
        tl_summary_human(m, sizeof m, p->m_q, TL_UNIT_BYTES);
        if (f->jobs < 1) snprintf(j, sizeof j, "does not fit");
        else snprintf(j, sizeof j, "%.0f", f->jobs);
        tl_cli_name_cell(b, name, po->width);
        tl_buf_printf(b, " %10.0f %9s %9s %6g %12s %8s %12s %10s\n", p->tasks, t, m, p->cpt, j,
                      !isfinite(p->t_q) ? "-" : binds, tl_cli_plain(h, sizeof h, f->hours * po->per_hour),
                      tl_cli_plain(d, sizeof d, f->hours / 24));
    } else if (po->fmt == F_JSON) {
        tl_buf_puts(b, k ? ",{\"category\":" : "{\"category\":");
        tl_buf_put_json_string(b, name);
        tl_buf_puts(b, ",\"tasks\":");
        tl_cli_json_num(b, p->tasks);
        tl_buf_printf(b, ",\"time_s\":");
        tl_cli_json_num(b, p->t_q);
        tl_buf_printf(b, ",\"time_is\":\"%s\",\"memory_bytes\":", time_key(p->time_is));
        tl_cli_json_num(b, p->m_q);
        tl_buf_puts(b, ",\"cores_per_task\":");
        tl_cli_json_num(b, p->cpt);
        tl_buf_puts(b, ",\"jobs_by_cores\":");
        tl_cli_json_num(b, f->by_cores);
        tl_buf_puts(b, ",\"jobs_by_memory\":");
        tl_cli_json_num(b, f->by_mem);
        tl_buf_puts(b, ",\"jobs_per_node\":");
        tl_cli_json_num(b, f->jobs);
        tl_buf_printf(b, ",\"binds\":\"%s\",\"node_hours\":", binds);
        tl_cli_json_num(b, f->hours);
        tl_buf_puts(b, "}");
    } else {
        static struct tl_point pt;
        tl_point_start(&pt, "task_plan", po->ns);
        tl_point_tag(&pt, "binds", binds);
        tl_point_tag(&pt, "category", name);
        tl_point_tag(&pt, "node", nd->spec);
        tl_point_float(&pt, "tasks", p->tasks);
        tl_point_float(&pt, "time_s", p->t_q);
        tl_point_float(&pt, "memory_bytes", p->m_q);
        tl_point_float(&pt, "cores_per_task", p->cpt);
        tl_point_float(&pt, "jobs_per_node", f->jobs);
        tl_point_float(&pt, "node_hours", f->hours);
        tl_point_float(&pt, "node_days", f->hours / 24);
        tl_cli_put_point(b, &pt, &po->written);
    }
}

static void plan_node_total(struct plan_out *po, const struct tl_node *nd, double total_tasks,
                            double total_h)
{
    struct tl_buf *b = po->b;
    if (po->fmt == F_TABLE) {
        char h[24], d[24];
        tl_cli_name_cell(b, "total", po->width);
        tl_buf_printf(b, " %10.0f %9s %9s %6s %12s %8s %12s %10s\n", total_tasks, "", "", "", "", "",
                      tl_cli_plain(h, sizeof h, total_h * po->per_hour), tl_cli_plain(d, sizeof d, total_h / 24));
    } else if (po->fmt == F_JSON) {
        tl_buf_puts(b, "],\"node_hours\":");
        tl_cli_json_num(b, total_h);
        tl_buf_puts(b, ",\"node_days\":");
        tl_cli_json_num(b, total_h / 24);
        tl_buf_putc(b, '}');
    } else {
        static struct tl_point p;
        tl_point_start(&p, "task_plan", po->ns);
        tl_point_tag(&p, "category", "total");
        tl_point_tag(&p, "node", nd->spec);
        tl_point_float(&p, "tasks", total_tasks);
        tl_point_float(&p, "node_hours", total_h);
        tl_point_float(&p, "node_days", total_h / 24);
        tl_cli_put_point(b, &p, &po->written);
    }
}

static void plan_write(struct tl_buf *b, enum fmt fmt, const struct tl_plan_opts *o,
                       const struct tl_node *nodes, int nnodes, const struct tl_task_rows *rs,
                       const struct tl_cat_plan *cp)
{
    char pct[16];
    snprintf(pct, sizeof pct, "p%02.0f", o->quantile * 100);
    struct plan_out po = {b, fmt, o, pct, rs->newest_ns, 0,
                          tl_cli_name_width((const char *const *)rs->cats.s, rs->cats.n, 8)};
    if (fmt == F_JSON) {
        tl_buf_puts(b, "{\"quantile\":");
        tl_cli_json_num(b, o->quantile);
        tl_buf_puts(b, ",\"scale\":");
        tl_cli_json_num(b, o->scale);
        tl_buf_printf(b, ",\"time\":\"%s\",\"nodes\":[", time_key(o->time));
    }
    for (int ni = 0; ni < nnodes; ni++) {
        double total_h = 0, total_tasks = 0;
        for (size_t k = 0; k < rs->cats.n; k++) {
            struct tl_plan_fit f;
            tl_plan_fit(&nodes[ni], &cp[k], &f);
            if (isfinite(f.hours)) total_h += f.hours;
        }
        choose_unit(&po, total_h);
        total_h = 0;
        plan_node_head(&po, ni, &nodes[ni]);
        for (size_t k = 0; k < rs->cats.n; k++) {
            struct tl_plan_fit f;
            tl_plan_fit(&nodes[ni], &cp[k], &f);
            if (isfinite(f.hours)) total_h += f.hours;
            total_tasks += cp[k].tasks;
            plan_row(&po, k, rs->cats.s[k], &nodes[ni], &cp[k], &f);
        }
        plan_node_total(&po, &nodes[ni], total_tasks, total_h);
    }
    if (fmt == F_JSON) tl_buf_puts(b, "]}\n");
}

/* What the flags ask for. */
struct plan_cmd {
    struct common co;
    struct tl_node nodes[MAX_NODES];
    int nnodes, ncounts;
    const char *count_cat[MAX_COUNTS];
    double count_n[MAX_COUNTS];
    struct tl_plan_opts o;
};

/* One of plan's own flags; false (said) when its value is bad. */
static bool plan_flag(int c, char *arg, struct plan_cmd *k)
{
    switch (c) {
    case 'N':
        if (k->nnodes < MAX_NODES && parse_node(arg, &k->nodes[k->nnodes])) {
            k->nnodes++;
            return true;
        }
        tl_eprintf("tasklens plan: --node wants cores=N,mem=SIZE (at most %d)\n", MAX_NODES);
        return false;
    case 'S':
        if (tl_cli_parse_num(arg, 0, 1e12, &k->o.scale)) return true;
        tl_eprintf("tasklens plan: --scale wants a number >= 0\n");
        return false;
    case 'C': {
        char *eq = strrchr(arg, '=');
        if (!eq || eq == arg || k->ncounts == MAX_COUNTS ||
            !tl_cli_parse_num(eq + 1, 0, 1e15, &k->count_n[k->ncounts])) {
            tl_eprintf("tasklens plan: --count wants CATEGORY=N\n");
            return false;
        }
        *eq = '\0';
        k->count_cat[k->ncounts++] = arg;
        return true;
    }
    case 'Q':
        if (tl_cli_parse_num(arg, 0, 1, &k->o.quantile)) return true;
        tl_eprintf("tasklens plan: --quantile wants a number in [0,1]\n");
        return false;
    case 'T':
        if (strcmp(arg, "slot") && strcmp(arg, "cpu") && strcmp(arg, "wall")) {
            tl_eprintf("tasklens plan: --time is slot, cpu or wall\n");
            return false;
        }
        k->o.time = !strcmp(arg, "cpu") ? TL_PLAN_CPU : !strcmp(arg, "wall") ? TL_PLAN_WALL : TL_PLAN_SLOT;
        return true;
    case 'P':
        if (tl_cli_parse_num(arg, 1e-3, 1e6, &k->o.cores_per_task)) return true;
        tl_eprintf("tasklens plan: --cores-per-task wants a number > 0\n");
        return false;
    }
    return false;
}

/* The flags into k: -1 to go on, else the exit status. */
static int parse_flags(int argc, char **argv, struct plan_cmd *k)
{
    static const struct option longopts[] = {
        {"node", required_argument, NULL, 'N'},     {"scale", required_argument, NULL, 'S'},
        {"count", required_argument, NULL, 'C'},    {"quantile", required_argument, NULL, 'Q'},
        {"time", required_argument, NULL, 'T'},     {"cores-per-task", required_argument, NULL, 'P'},
        COMMON_LONGOPTS, {0}};
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "O:qho:", longopts, NULL)) != -1) {
        if (c > 0 && strchr("NSCQTP", c)) {
            if (!plan_flag(c, optarg, k)) return TL_EXIT_USAGE;
        } else if (c == 'h') {
            plan_usage(stdout);
            return TL_EXIT_OK;
        } else {
            int r = tl_cli_common_option(c, optarg, &k->co, "tasklens plan");
            if (r == 0) plan_usage(stderr);
            if (r <= 0) return TL_EXIT_USAGE;
        }
    }
    if (optind >= argc || !k->nnodes) {
        if (!k->nnodes) tl_eprintf("tasklens plan: at least one --node cores=N,mem=SIZE\n");
        plan_usage(stderr);
        return TL_EXIT_USAGE;
    }
    return -1;
}

/* Every --count names a category of the input. */
static int check_counts(const struct plan_cmd *k, const struct tl_task_rows *rs)
{
    for (int i = 0; i < k->ncounts; i++) {
        bool found = false;
        for (size_t j = 0; j < rs->cats.n; j++) found |= !strcmp(rs->cats.s[j], k->count_cat[i]);
        if (!found) {
            tl_eprintf("tasklens plan: --count %s: no such category in the input\n",
                    k->count_cat[i]);
            return TL_EXIT_USAGE;
        }
    }
    return TL_EXIT_OK;
}

int tl_cmd_plan(int argc, char **argv)
{
    struct plan_cmd k = {.co = {.io = {.max_reports = 10}},
                         .o = {.quantile = 0.95, .scale = 1, .time = TL_PLAN_SLOT}};
    int status = parse_flags(argc, argv, &k);
    if (status >= 0) return status;
    struct tl_task_rows rs = {0};
    status = tl_cli_read_all(&k.co, argc - optind, argv + optind, &rs, "tasklens plan");
    if (status == TL_EXIT_OK) status = check_counts(&k, &rs);
    double *tmp = malloc((rs.n ? rs.n : 1) * sizeof *tmp);
    struct tl_cat_plan *cp = calloc(rs.cats.n ? rs.cats.n : 1, sizeof *cp);
    if (!tmp || !cp) {
        tl_eprintf("tasklens plan: out of memory\n");
        status = TL_EXIT_INPUT;
    }
    struct tl_buf b = {0};
    if (status == TL_EXIT_OK) {
        for (size_t j = 0; j < rs.cats.n; j++) {
            tl_plan_category(&rs, (int32_t)j, &k.o, tmp, &cp[j]);
            for (int i = 0; i < k.ncounts; i++)
                if (!strcmp(rs.cats.s[j], k.count_cat[i])) cp[j].tasks = k.count_n[i];
        }
        plan_write(&b, k.co.fmt, &k.o, k.nodes, k.nnodes, &rs, cp);
        status = tl_cli_write_out(&k.co, &b, "tasklens plan");
    }
    tl_buf_free(&b);
    free(tmp);
    free(cp);
    tl_task_rows_free(&rs);
    return status;
}
