/* `advise --replay SYSTEM`: the settings `--emit SYSTEM` writes, the
 * candidate first allocations they were chosen from, and their replay
 * against the observed attempts (insights/allocate.h), as a table or JSON.
 * Every number here is recomputed independently in the tests
 * (tests/integration/advise_replay.py). */
#include <math.h>
#include <string.h>

#include "cli/advise_replay.h"
#include "core/term.h"
#include "core/summary.h"

static const char *const retry_kind_name[] = {"to_max", "times_attempt", "doubling"};
static const char *const by_words[] = {"the least expected allocated GiB-hours", "the most tasks per worker-second",
                                       "the quantile rule, --quantile"};

static void bytes_cell(char *buf, size_t cap, double v)
{
    tl_summary_human(buf, cap, v, TL_UNIT_BYTES);
}

static void table_choice(struct tl_buf *b, const char *res, const struct tl_choice *c)
{
    const struct tl_rule *r = &c->rule;
    if (!isfinite(r->first)) return;
    char f[24], l[24];
    bytes_cell(f, sizeof f, r->first);
    bytes_cell(l, sizeof l, tl_rule_ask(r, r->retries + 1));
    tl_buf_printf(b, "  %-7s first %s", res, f);
    if (r->retries) tl_buf_printf(b, ", %d retr%s up to %s", r->retries, r->retries == 1 ? "y" : "ies", l);
    tl_buf_printf(b, " (%s; %zu tasks, %zu died at a limit)\n", by_words[c->by], c->n_needs, c->censored);
    if (isfinite(c->input_rho))
        tl_buf_printf(b, "          %s %s the bytes it reads (Spearman %.2f over %zu successes)\n", res,
                      tl_scaling_words(c->input_rho), c->input_rho, c->input_n);
    tl_buf_printf(b, "          %-10s %14s %7s\n", "first", "alloc GiB-h", "killed");
    for (int i = 0; i < c->ncand; i++) {
        const struct tl_candidate *x = &c->cand[i];
        bytes_cell(f, sizeof f, x->first);
        tl_buf_printf(b, "        %s %-10s %14.4g %7zu  %s\n", x->first == r->first ? "*" : " ", f, x->cost.res_h,
                      x->cost.killed, x->why);
    }
}

static void table_side(struct tl_buf *b, const char *what, const struct tl_replay_side *s)
{
    char c[24], g[24];
    tl_cli_cell(c, sizeof c, s->core_h);
    tl_cli_cell(g, sizeof g, s->gib_h);
    tl_buf_printf(b, "  %-9s %9zu %7zu %7zu %12s %12s", what, s->attempts, s->killed, s->failed, c, g);
    size_t no = s->no_cores > s->no_mem ? s->no_cores : s->no_mem;
    if (no && no < s->attempts) tl_buf_printf(b, "  (%zu attempts recorded no allocation: not in the hours)", no);
    tl_buf_putc(b, '\n');
}

static void replay_table(struct tl_buf *b, const char *name, const struct tl_settings *st,
                         const struct tl_replay *rp)
{
    tl_buf_puts(b, "\ncategory=");
    tl_vis_append(b, name, strlen(name), 0); /* a name on a terminal */
    tl_buf_printf(b, "  tasks %zu (%zu succeeded)\n", rp->tasks, rp->succeeded);
    if (isfinite(st->cores) && isfinite(st->cores_max))
        tl_buf_printf(b, "  %-7s %.0f: %zu of %zu measured attempts peaked above %g, where the monitor kills (a retry asks for %.0f)\n",
                      "cores", st->cores, st->cores_over, st->cores_measured, st->cores + TL_CORES_GRACE,
                      st->cores_max);
    else if (isfinite(st->cores))
        tl_buf_printf(b, "  %-7s %.0f: %zu of %zu measured attempts used more (slowed, not killed)\n", "cores",
                      st->cores, st->cores_over, st->cores_measured);
    table_choice(b, "memory", &st->mem);
    table_choice(b, "disk", &st->disk);
    if (isfinite(st->time_s))
        tl_buf_printf(b, "  %-7s %.0f min: %zu of %zu successes ran longer\n", "time", st->time_s / 60,
                      st->time_killed, st->time_succeeded);
    tl_buf_printf(b, "  %-9s %9s %7s %7s %12s %12s\n", "", "attempts", "killed", "failed", "alloc core-h",
                  "alloc GiB-h");
    table_side(b, "observed", &rp->before);
    table_side(b, "replayed", &rp->after);
    tl_buf_printf(b, "  successes killed for good: %zu\n", rp->successes_lost);
}

static void json_cost(struct tl_buf *b, const struct tl_rule_cost *c)
{
    tl_buf_puts(b, "\"allocated_gib_hours\":");
    tl_cli_json_num(b, c->res_h);
    tl_buf_printf(b, ",\"attempts\":%zu,\"killed\":%zu,\"lost\":%zu", c->attempts, c->killed, c->lost);
}

static void json_choice(struct tl_buf *b, const char *res, const struct tl_choice *c)
{
    tl_buf_printf(b, ",\"%s\":", res);
    if (!isfinite(c->rule.first)) {
        tl_buf_puts(b, "null");
        return;
    }
    tl_buf_puts(b, "{\"first\":");
    tl_cli_json_num(b, c->rule.first);
    tl_buf_puts(b, ",\"cover\":");
    tl_cli_json_num(b, c->rule.cover);
    tl_buf_printf(b, ",\"retries\":%d,\"retry\":\"%s\",\"by\":\"%s\",\"min_waste\":", c->rule.retries,
                  retry_kind_name[c->rule.kind], tl_first_by_name[c->by]);
    tl_cli_json_num(b, c->min_waste);
    tl_buf_puts(b, ",\"max_throughput\":");
    tl_cli_json_num(b, c->max_throughput);
    tl_buf_printf(b, ",\"tasks\":%zu,\"censored\":%zu,\"input_size\":{\"tasks\":%zu,\"spearman\":", c->n_needs,
                  c->censored, c->input_n);
    tl_cli_json_num(b, c->input_rho);
    tl_buf_puts(b, "},\"expected\":{");
    json_cost(b, &c->cost);
    tl_buf_puts(b, "},\"candidates\":[");
    for (int i = 0; i < c->ncand; i++) {
        tl_buf_puts(b, i ? ",{\"first\":" : "{\"first\":");
        tl_cli_json_num(b, c->cand[i].first);
        tl_buf_putc(b, ',');
        json_cost(b, &c->cand[i].cost);
        tl_buf_printf(b, ",\"why\":\"%s\"}", c->cand[i].why);
    }
    tl_buf_puts(b, "]}");
}

static void json_side(struct tl_buf *b, const char *what, const struct tl_replay_side *s)
{
    tl_buf_printf(b, ",\"%s\":{\"attempts\":%zu,\"killed\":%zu,\"failed\":%zu,\"allocated_core_hours\":", what,
                  s->attempts, s->killed, s->failed);
    tl_cli_json_num(b, s->core_h);
    tl_buf_puts(b, ",\"allocated_gib_hours\":");
    tl_cli_json_num(b, s->gib_h);
    tl_buf_printf(b, ",\"attempts_without_cores\":%zu,\"attempts_without_memory\":%zu}", s->no_cores, s->no_mem);
}

static void replay_json(struct tl_buf *b, size_t k, const char *name, const struct tl_settings *st,
                        const struct tl_replay *rp)
{
    tl_buf_puts(b, k ? ",{\"category\":" : "{\"category\":");
    tl_buf_put_json_string(b, name);
    tl_buf_printf(b, ",\"tasks\":%zu,\"succeeded\":%zu,\"successes_lost\":%zu,\"cores\":", rp->tasks, rp->succeeded,
                  rp->successes_lost);
    tl_cli_json_num(b, st->cores);
    tl_buf_puts(b, ",\"cores_max\":");
    tl_cli_json_num(b, st->cores_max);
    json_choice(b, "memory", &st->mem);
    json_choice(b, "disk", &st->disk);
    tl_buf_puts(b, ",\"time_s\":");
    tl_cli_json_num(b, st->time_s);
    tl_buf_printf(b, ",\"time_killed\":%zu,\"cores_measured\":%zu,\"cores_over\":%zu,\"cores_kills\":%zu",
                  st->time_killed, st->cores_measured, st->cores_over, rp->cores_kills);
    json_side(b, "observed", &rp->before);
    json_side(b, "replayed", &rp->after);
    tl_buf_putc(b, '}');
}

void advise_replay_write(struct tl_buf *b, enum fmt fmt, enum tl_system sys, const struct tl_task_rows *rs,
                         const struct advise_plan *p)
{
    if (fmt == F_JSON) tl_buf_printf(b, "{\"system\":\"%s\",\"categories\":[", tl_system_name[sys]);
    else
        tl_buf_printf(b, "replay of what `advise --emit %s` writes, against the observed attempts: a killed "
                         "attempt is charged its whole wall time (an upper bound), a memory death needs a step "
                         "over its limit, any other failure fails again once\n",
                      tl_system_name[sys]);
    for (size_t k = 0; k < rs->cats.n; k++) {
        if (fmt == F_JSON) replay_json(b, k, rs->cats.s[k], &p->st[k], &p->rp[k]);
        else replay_table(b, rs->cats.s[k], &p->st[k], &p->rp[k]);
    }
    if (fmt == F_JSON) tl_buf_puts(b, "]}\n");
}
