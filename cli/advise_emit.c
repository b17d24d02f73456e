/* `advise --emit bps|wq|makeflow|nextflow|snakemake`: the settings of
 * insights/allocate.h in the files the workflow systems read, each with a
 * header saying from which inputs, when and by which rule, and per category
 * its evidence, the candidates its first allocation was chosen from and the
 * replay of the settings against the observed attempts.
 *
 *   bps       an LSST BPS submit YAML fragment: pipetask: LABEL:
 *             requestMemory (MB, as HTCondor counts them: MiB), requestCpus,
 *             and memoryMultiplier / numberOfRetries where a retry must grow;
 *   wq        JSON for the Work Queue / TaskVine API: per category a first
 *             allocation and a maximum (MB), applied as the file says;
 *   makeflow  CATEGORY= blocks with CORES=, MEMORY=, DISK= (MB): the
 *             category's maximum, and MODE=MIN_WASTE where a smaller first
 *             allocation pays (Makeflow chooses it itself);
 *   nextflow  a config (`nextflow run ... -c FILE`): process { withName:
 *             'NAME' { cpus, memory ('N MB': Nextflow's MB is MiB, a closure
 *             of task.attempt where it retries), errorStrategy, maxRetries,
 *             time ('Nm') } };
 *   snakemake a profile's config.yaml (`snakemake --profile DIR`):
 *             set-threads and set-resources (mem_mb: Snakemake's MB are
 *             10^6 bytes, an expression of attempt where it retries; runtime
 *             in minutes), retries.
 * A resource with no measurement in a category is left out (the system's
 * default applies), and said in a comment. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/advise_emit.h"
#include "core/quantile.h"
#include "core/quote.h"

#define MIB 1048576.0

/* MB (MiB) a system is asked for: the recommendation, rounded up. */
long long advise_mb(double bytes)
{
    return (long long)ceil(bytes / MIB - 1e-9);
}

static long long to_cores(double cores)
{
    long long c = (long long)ceil(cores - 1e-9);
    return c < 1 ? 1 : c;
}

static const char *const retry_idiom[] = {
    [TL_RETRY_TO_MAX] = "a first allocation, then the maximum of the category",
    [TL_RETRY_TIMES_ATTEMPT] = "the first x attempt",
    [TL_RETRY_DOUBLING] = "the first x memoryMultiplier 2 per retry"};

static void header(struct tl_buf *b, enum tl_system sys, const char *lead, const struct tl_settings *any,
                   const struct tl_advise_opts *o, char *const *inputs, int ninputs)
{
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    tl_buf_printf(b, "%smade by tasklens advise --emit %s, %s, from:", lead, tl_system_name[sys], when);
    for (int i = 0; i < ninputs; i++) {
        tl_buf_putc(b, ' ');
        tl_quote_comment(b, inputs[i]);
    }
    enum tl_first_by by = any ? any->mem.by : TL_FIRST_MIN_WASTE;
    char margin[32];
    snprintf(margin, sizeof margin, "%g", o->margin);
    tl_buf_printf(b, "\n%srule: cores = cores used p%02.0f (CPU time / wall time where not measured), rounded up "
                     "to a whole core%s%s%s;\n"
                     "%s      memory%s = %s: the last attempt asks for the largest peak that succeeded (or a "
                     "step over the limit a memory death died at) x %g, rounded up to %.0f MiB, so nothing "
                     "that succeeded is killed for good;\n%s      the first allocation ",
                  lead, o->quantile * 100,
                  tl_system_kills_cores(sys) ? ", and a maximum: the largest peak that succeeded x " : "",
                  tl_system_kills_cores(sys) ? margin : "",
                  tl_system_kills_cores(sys) ? ", less the quarter core the resource monitor forgives, rounded up" : "",
                  lead, sys == TL_SYS_WQ || sys == TL_SYS_MAKEFLOW ? " and disk" : "",
                  retry_idiom[any ? any->mem.rule.kind : TL_RETRY_TO_MAX], o->margin,
                  o->round[TL_RES_MEM] / MIB, lead);
    if (by == TL_FIRST_QUANTILE)
        tl_buf_printf(b, "is peak RSS p%02.0f x %g (--quantile)\n", o->quantile * 100, o->margin);
    else if (by == TL_FIRST_MAX_THROUGHPUT)
        tl_buf_puts(b, "runs the most tasks per worker-second (cctools' MAX_THROUGHPUT)\n");
    else
        tl_buf_puts(b, "has the least expected allocated GiB-hours over the observed tasks, retries included (a "
                       "killed attempt charged its whole wall time)\n");
}

/* A category's evidence, as a comment (the name in visible escapes: no
 * code point in it can end the comment). */
static void evidence(struct tl_buf *b, const char *lead, const char *name,
                     const struct tl_cat_advice *ca)
{
    const struct tl_advice *m = &ca->a[TL_RES_MEM];
    tl_buf_puts(b, lead);
    tl_quote_comment(b, name);
    tl_buf_printf(b, ": %zu attempt%s, %zu task%s", ca->attempts, ca->attempts == 1 ? "" : "s", ca->tasks,
                  ca->tasks == 1 ? "" : "s");
    if (m->n_used) tl_buf_printf(b, "; memory: peak RSS max %.4g MiB", m->used_max / MIB);
    else tl_buf_puts(b, "; no memory measured: left to the default");
    if (m->killed && isfinite(m->floor))
        tl_buf_printf(b, "; %zu killed for memory%s, counted as needing a step over the limit they died at",
                      m->killed, m->unmeasured ? " (some with no memory recorded)" : "");
    else if (m->killed)
        tl_buf_printf(b, "; %zu killed for memory with no limit recorded: the rule rests on the survivors", m->killed);
    tl_buf_putc(b, '\n');
}

static void size_mib(struct tl_buf *b, double bytes)
{
    tl_buf_printf(b, "%lld MiB", advise_mb(bytes));
}

/* One resource's rule and the candidates it was chosen from. */
static void rule_comment(struct tl_buf *b, const char *lead, const char *res, const struct tl_choice *c)
{
    const struct tl_rule *r = &c->rule;
    if (!isfinite(r->first)) return;
    tl_buf_printf(b, "%s  %s: first ", lead, res);
    size_mib(b, r->first);
    if (r->retries) {
        tl_buf_printf(b, ", %zu attempts of %zu tasks killed above it and retried (%d retr%s, the last asks for ",
                      c->cost.killed, c->n_needs, r->retries, r->retries == 1 ? "y" : "ies");
        size_mib(b, tl_rule_ask(r, r->retries + 1));
        tl_buf_puts(b, ")");
    } else {
        tl_buf_printf(b, c->n_needs == 1 ? ", its one task fits" : ", all %zu tasks fit", c->n_needs);
    }
    tl_buf_puts(b, "; candidates (first: expected allocated GiB-hours, attempts killed):");
    for (int i = 0; i < c->ncand; i++) {
        tl_buf_puts(b, i ? " \xc2\xb7 " : " ");
        size_mib(b, c->cand[i].first);
        tl_buf_printf(b, " %.3g/%zu %s", c->cand[i].cost.res_h, c->cand[i].cost.killed, c->cand[i].why);
    }
    tl_buf_putc(b, '\n');
    if (isfinite(c->input_rho))
        tl_buf_printf(b, "%s    %s %s the bytes it reads (Spearman %.2f over %zu successes)\n", lead, res,
                      tl_scaling_words(c->input_rho), c->input_rho, c->input_n);
}

static void time_comment(struct tl_buf *b, const char *lead, const struct tl_settings *st)
{
    if (!isfinite(st->time_s)) return;
    tl_buf_printf(b, "%s  time %.0fm: %zu of %zu successful attempts ran longer%s\n", lead, st->time_s / 60,
                  st->time_killed, st->time_succeeded, st->time_killed ? " -- they would be killed at the limit" : "");
}

/* Hours as the comment says them: "-" when not recorded (char[24]). */
static const char *hours(char *buf, double h)
{
    if (isfinite(h)) snprintf(buf, 24, "%.3g", h);
    else snprintf(buf, 24, "-");
    return buf;
}

/* The replay of a category's settings against its observed attempts. */
static void replay_comment(struct tl_buf *b, const char *lead, const struct tl_replay *rp)
{
    const struct tl_replay_side *x = &rp->before, *y = &rp->after;
    char c0[24], c1[24], g0[24], g1[24];
    tl_buf_printf(b, "%s  replay on the observed attempts: %zu of %zu successes killed for good; attempts %zu -> %zu "
                     "(killed %zu -> %zu); allocated core-hours %s -> %s; allocated GiB-hours %s -> %s",
                  lead, rp->successes_lost, rp->succeeded, x->attempts, y->attempts, x->killed, y->killed,
                  hours(c0, x->core_h), hours(c1, y->core_h), hours(g0, x->gib_h), hours(g1, y->gib_h));
    size_t no = x->no_cores > x->no_mem ? x->no_cores : x->no_mem;
    if (no) tl_buf_printf(b, " (%zu observed attempts recorded no allocation%s)", no,
                          no == x->attempts ? ": the trace holds none to compare" : ": left out of the hours before");
    tl_buf_putc(b, '\n');
}

/* What the cores do to the observed attempts: where the system's monitor
 * kills above them, the kills and the maximum they retry at. */
static void cores_comment(struct tl_buf *b, const char *lead, const struct tl_settings *st)
{
    if (!isfinite(st->cores)) return;
    if (!isfinite(st->cores_max)) {
        tl_buf_printf(b, "%s  cores %lld: %zu of %zu measured attempts used more -- slowed, not killed\n", lead,
                      to_cores(st->cores), st->cores_over, st->cores_measured);
        return;
    }
    tl_buf_printf(b, "%s  cores %lld: %zu of %zu measured attempts peaked above %g, where the resource monitor "
                     "kills; a killed attempt retries at the maximum, %lld core%s\n",
                  lead, to_cores(st->cores), st->cores_over, st->cores_measured, st->cores + TL_CORES_GRACE,
                  to_cores(st->cores_max), to_cores(st->cores_max) == 1 ? "" : "s");
}

/* Everything said about category k before its settings. */
static void category_comments(struct tl_buf *b, const char *lead, const struct tl_task_rows *rs, size_t k,
                              const struct advise_plan *p)
{
    evidence(b, lead, rs->cats.s[k], &p->ca[k]);
    const struct tl_settings *st = &p->st[k];
    cores_comment(b, lead, st);
    rule_comment(b, lead, "memory", &p->st[k].mem);
    rule_comment(b, lead, "disk", &p->st[k].disk);
    time_comment(b, lead, &p->st[k]);
    replay_comment(b, lead, &p->rp[k]);
}

/* A category whose name the language cannot hold safely: left out, said
 * in the file (when lead is given) and counted for the caller to say. */
static void refuse(struct tl_buf *b, const char *lead, struct advise_refusals *rf, const char *name,
                   const char *why)
{
    if (!rf->n++) {
        rf->first = name;
        rf->why = why;
    }
    if (lead) tl_buf_printf(b, "%s  (left out: %s)\n", lead, why);
}

static bool name_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/* A Nextflow process name, DSL2's qualified ones (WF:SUB:PROC) included:
 * identifiers joined by ':'. withName takes a pattern, and such a name
 * matches itself and nothing else. */
static bool process_name(const char *s)
{
    for (;;) {
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return false;
        while (name_char(*s)) s++;
        if (!*s) return true;
        if (*s++ != ':') return false;
    }
}

/* A Makeflow category: its lexer reads `CATEGORY=` to the end of the line,
 * trims it and expands $ in it, so only names of letters, digits, inner
 * spaces and none of its special characters read back as written. */
static bool makeflow_name(const char *s)
{
    size_t n = strlen(s);
    if (!n || s[0] == ' ' || s[n - 1] == ' ') return false;
    for (; *s; s++)
        if (!name_char(*s) && !strchr("-.+@%,: ", *s)) return false;
    return true;
}

static const struct tl_settings *first_settings(const struct tl_task_rows *rs, const struct advise_plan *p)
{
    for (size_t k = 0; k < rs->cats.n; k++)
        if (isfinite(p->st[k].mem.rule.first)) return &p->st[k];
    return rs->cats.n ? &p->st[0] : NULL;
}

/* BPS retries a job held for memory with requestMemory x memoryMultiplier
 * per retry, up to the site's memoryLimit; numberOfRetries retries every
 * failure (ctrl_bps_htcondor). */
static void emit_bps(struct tl_buf *b, const struct tl_task_rows *rs, const struct advise_plan *p,
                     const struct tl_advise_opts *o, char *const *inputs, int ninputs, struct advise_refusals *rf)
{
    header(b, TL_SYS_BPS, "# ", first_settings(rs, p), o, inputs, ninputs);
    tl_buf_puts(b, "# labels with no measurement are left out: BPS gives them its defaults. A label that retries\n"
                   "# grows requestMemory x memoryMultiplier per retry of a job held for memory, up to the site's\n"
                   "# memoryLimit (HTCondor plugin); numberOfRetries retries its other failures too\n"
                   "pipetask:\n");
    for (size_t k = 0; k < rs->cats.n; k++) {
        const struct tl_settings *st = &p->st[k];
        category_comments(b, "  # ", rs, k, p);
        if (!isfinite(st->mem.rule.first) && !isfinite(st->cores)) continue;
        struct tl_buf key = {0};
        bool ok = tl_quote_yaml(&key, rs->cats.s[k]); /* a double-quoted YAML key */
        if (ok) {
            tl_buf_puts(b, "  ");
            tl_buf_append(b, key.data, key.len);
            tl_buf_puts(b, ":\n");
        }
        tl_buf_free(&key);
        if (!ok) {
            refuse(b, "  # ", rf, rs->cats.s[k], "not UTF-8, so not a label BPS can name");
            continue;
        }
        if (isfinite(st->mem.rule.first)) {
            tl_buf_printf(b, "    requestMemory: %lld\n", advise_mb(st->mem.rule.first));
            if (st->mem.rule.retries)
                tl_buf_printf(b, "    memoryMultiplier: 2\n    numberOfRetries: %d\n", st->mem.rule.retries);
        }
        if (isfinite(st->cores)) tl_buf_printf(b, "    requestCpus: %lld\n", to_cores(st->cores));
    }
}

/* A first allocation or a maximum as a JSON object of MB and cores. */
static void wq_resources(struct tl_buf *b, const struct tl_settings *st, int k)
{
    const char *sep = "{";
    if (isfinite(st->cores)) {
        tl_buf_printf(b, "%s\"cores\": %lld", sep, to_cores(k > 1 && isfinite(st->cores_max) ? st->cores_max : st->cores));
        sep = ", ";
    }
    if (isfinite(st->mem.rule.first)) {
        tl_buf_printf(b, "%s\"memory\": %lld", sep, advise_mb(tl_rule_ask(&st->mem.rule, k)));
        sep = ", ";
    }
    if (isfinite(st->disk.rule.first))
        tl_buf_printf(b, "%s\"disk\": %lld", sep, advise_mb(tl_rule_ask(&st->disk.rule, k)));
    tl_buf_putc(b, '}');
}

static void json_hours(struct tl_buf *b, double h)
{
    if (isfinite(h)) tl_buf_printf(b, "%.6g", h);
    else tl_buf_puts(b, "null");
}

/* The replay of a category, as numbers (hours: null when not recorded). */
static void wq_replay(struct tl_buf *b, const struct tl_replay *rp)
{
    const struct tl_replay_side *x = &rp->before, *y = &rp->after;
    tl_buf_printf(b, ", \"replay\": {\"tasks\": %zu, \"successes_killed_for_good\": %zu, \"attempts\": [%zu, %zu], "
                     "\"killed\": [%zu, %zu], \"allocated_core_hours\": [", rp->tasks, rp->successes_lost, x->attempts,
                  y->attempts, x->killed, y->killed);
    json_hours(b, x->core_h);
    tl_buf_puts(b, ", ");
    json_hours(b, y->core_h);
    tl_buf_puts(b, "], \"allocated_gib_hours\": [");
    json_hours(b, x->gib_h);
    tl_buf_puts(b, ", ");
    json_hours(b, y->gib_h);
    tl_buf_puts(b, "]}");
}

#define WQ_USE                                                                                          \
    "apply it (Work Queue; TaskVine names in brackets): q.tune(\"category-steady-n-tasks\", 0) [m.tune], " \
    "so the first allocation applies from the first task; then for c, r in d[\"categories\"].items(): "    \
    "q.specify_category_mode(c, WORK_QUEUE_ALLOCATION_MODE_MAX) [m.set_category_mode(c, "               \
    "VINE_ALLOCATION_MODE_MAX)]; q.specify_category_max_resources(c, r[\"max\"]) "                        \
    "[m.set_category_resources_max]; q.specify_category_first_allocation_guess(c, r[\"first\"]) "         \
    "[m.set_category_first_allocation_guess]; and for each resource in r[\"first\"]: "                    \
    "q.enable_category_resource(c, resource, 0) [m.set_category_autolabel_resource(c, resource, "       \
    "False)], so the manager keeps this first allocation. A task over its first allocation is killed "  \
    "and retried once at the maximum (the MAX mode of the manager). Per category, \"replay\" is what "   \
    "these settings do to the observed attempts (advise --replay wq says more)."

static void emit_wq(struct tl_buf *b, const struct tl_task_rows *rs, const struct advise_plan *p,
                    const struct tl_advise_opts *o, char *const *inputs, int ninputs, struct advise_refusals *rf)
{
    struct tl_buf h = {0};
    header(&h, TL_SYS_WQ, "", first_settings(rs, p), o, inputs, ninputs);
    tl_buf_puts(&h, WQ_USE "\n");
    tl_buf_puts(b, "{\n  \"tasklens\": ");
    tl_buf_putc(&h, '\0');
    tl_buf_put_json_string(b, h.data);
    tl_buf_free(&h);
    tl_buf_puts(b, ",\n  \"categories\": {");
    bool first = true;
    for (size_t k = 0; k < rs->cats.n; k++) {
        const struct tl_settings *st = &p->st[k];
        if (!isfinite(st->cores) && !isfinite(st->mem.rule.first) && !isfinite(st->disk.rule.first)) continue;
        if (!tl_utf8_valid(rs->cats.s[k])) { /* JSON would hold another name */
            refuse(NULL, NULL, rf, rs->cats.s[k], "not UTF-8, so not a name JSON can hold");
            continue;
        }
        tl_buf_puts(b, first ? "\n    " : ",\n    ");
        first = false;
        tl_buf_put_json_string(b, rs->cats.s[k]);
        tl_buf_puts(b, ": {\"first\": ");
        wq_resources(b, st, 1);
        tl_buf_puts(b, ", \"max\": ");
        wq_resources(b, st, 2);
        wq_replay(b, &p->rp[k]);
        tl_buf_putc(b, '}');
    }
    tl_buf_puts(b, "\n  }\n}\n");
}

/* Makeflow's category holds a maximum; with MODE=MIN_WASTE Makeflow picks
 * the first allocation itself from what it has seen, as cctools' formula
 * tasklens used. */
static void emit_makeflow(struct tl_buf *b, const struct tl_task_rows *rs, const struct advise_plan *p,
                          const struct tl_advise_opts *o, char *const *inputs, int ninputs,
                          struct advise_refusals *rf)
{
    header(b, TL_SYS_MAKEFLOW, "# ", first_settings(rs, p), o, inputs, ninputs);
    tl_buf_puts(b, "# each block applies to the rules that follow it, until the next CATEGORY. CORES, MEMORY and\n"
                   "# DISK are the category's maximum (the resource monitor kills above them, cores + 0.25); where\n"
                   "# a smaller first allocation pays, MODE=MIN_WASTE lets Makeflow choose it from the tasks it has\n"
                   "# seen (the first shown here is what that rule picks on the observed tasks) and retry a task\n"
                   "# killed above it at the maximum\n");
    for (size_t k = 0; k < rs->cats.n; k++) {
        const struct tl_settings *st = &p->st[k];
        tl_buf_putc(b, '\n');
        category_comments(b, "# ", rs, k, p);
        if (!isfinite(st->cores) && !isfinite(st->mem.rule.first) && !isfinite(st->disk.rule.first)) continue;
        if (!makeflow_name(rs->cats.s[k])) {
            refuse(b, "# ", rf, rs->cats.s[k], "not a name Makeflow reads back as written");
            continue;
        }
        tl_buf_printf(b, "CATEGORY=%s\n", rs->cats.s[k]);
        if (st->mem.rule.retries || st->disk.rule.retries || st->cores_max > st->cores)
            tl_buf_puts(b, "MODE=MIN_WASTE\n");
        if (isfinite(st->cores)) tl_buf_printf(b, "CORES=%lld\n", to_cores(st->cores_max));
        if (isfinite(st->mem.rule.first)) tl_buf_printf(b, "MEMORY=%lld\n", advise_mb(st->mem.rule.cover));
        if (isfinite(st->disk.rule.first)) tl_buf_printf(b, "DISK=%lld\n", advise_mb(st->disk.rule.cover));
    }
}

static void time_rule(struct tl_buf *b, const char *lead, const struct tl_advise_opts *o)
{
    if (o->quantile_given)
        tl_buf_printf(b, "%s      time = wall time p%02.0f of the attempts that succeeded x %g, rounded up "
                         "to a whole minute (--quantile: each block says the successes it would kill)\n",
                      lead, o->quantile * 100, o->margin);
    else
        tl_buf_printf(b, "%s      time = the longest attempt that succeeded x %g, rounded up to a whole "
                         "minute: a time limit kills, and none that succeeded is killed\n", lead, o->margin);
}

#define RESOURCE_KILLS "[137, 140, 143]" /* SIGKILL (memory), the batch time limit, SIGTERM */

static void nextflow_memory(struct tl_buf *b, const struct tl_rule *r)
{
    if (!r->retries) {
        tl_buf_printf(b, "        memory = '%lld MB'\n", advise_mb(r->first));
        return;
    }
    tl_buf_printf(b, "        memory = { \"${%lld * task.attempt} MB\" }\n", advise_mb(r->first));
    tl_buf_puts(b, "        errorStrategy = { task.exitStatus in " RESOURCE_KILLS " ? 'retry' : 'terminate' }\n");
    tl_buf_printf(b, "        maxRetries = %d\n", r->retries);
}

static void emit_nextflow(struct tl_buf *b, const struct tl_task_rows *rs, const struct advise_plan *p,
                          const struct tl_advise_opts *o, char *const *inputs, int ninputs,
                          struct advise_refusals *rf)
{
    header(b, TL_SYS_NEXTFLOW, "// ", first_settings(rs, p), o, inputs, ninputs);
    time_rule(b, "// ", o);
    tl_buf_puts(b, "// use it with: nextflow run PIPELINE -c THIS_FILE (Nextflow's MB are MiB); a retry happens "
                   "only after a resource kill (exit 137, 140, 143)\nprocess {\n");
    for (size_t k = 0; k < rs->cats.n; k++) {
        const struct tl_settings *st = &p->st[k];
        category_comments(b, "    // ", rs, k, p);
        if (!isfinite(st->cores) && !isfinite(st->mem.rule.first) && !isfinite(st->time_s)) continue;
        if (!process_name(rs->cats.s[k])) { /* a selector is a pattern: only a name is safe */
            refuse(b, "    // ", rf, rs->cats.s[k], "not a Nextflow process name");
            continue;
        }
        tl_buf_puts(b, "    withName: ");
        tl_quote_groovy(b, rs->cats.s[k]);
        tl_buf_puts(b, " {\n");
        if (isfinite(st->cores)) tl_buf_printf(b, "        cpus = %lld\n", to_cores(st->cores));
        if (isfinite(st->mem.rule.first)) nextflow_memory(b, &st->mem.rule);
        if (isfinite(st->time_s)) tl_buf_printf(b, "        time = '%.0fm'\n", st->time_s / 60);
        tl_buf_puts(b, "    }\n");
    }
    tl_buf_puts(b, "}\n");
}

/* A Snakemake rule name: a Python identifier. */
static bool rule_name(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return false;
    for (; *s; s++)
        if (!name_char(*s)) return false;
    return true;
}

static void emit_snakemake(struct tl_buf *b, const struct tl_task_rows *rs, const struct advise_plan *p,
                           const struct tl_advise_opts *o, char *const *inputs, int ninputs,
                           struct advise_refusals *rf)
{
    struct tl_buf threads = {0}, res = {0};
    int retries = 0;
    header(b, TL_SYS_SNAKEMAKE, "# ", first_settings(rs, p), o, inputs, ninputs);
    time_rule(b, "# ", o);
    tl_buf_puts(b, "# a profile: save as DIR/config.yaml, run snakemake --profile DIR "
                   "(mem_mb: Snakemake's MB are 10^6 bytes)\n");
    for (size_t k = 0; k < rs->cats.n; k++) {
        const struct tl_settings *st = &p->st[k];
        category_comments(b, "# ", rs, k, p);
        if (!rule_name(rs->cats.s[k])) {
            refuse(b, "# ", rf, rs->cats.s[k], "not a Snakemake rule name");
            continue;
        }
        if (isfinite(st->cores)) tl_buf_printf(&threads, "  %s: %lld\n", rs->cats.s[k], to_cores(st->cores));
        if (!isfinite(st->mem.rule.first) && !isfinite(st->time_s)) continue;
        tl_buf_printf(&res, "  %s:\n", rs->cats.s[k]);
        if (isfinite(st->mem.rule.first)) {
            long long first = (long long)ceil(st->mem.rule.first / 1e6 - 1e-9); /* 10^6 bytes */
            if (st->mem.rule.retries > retries) retries = st->mem.rule.retries;
            if (!st->mem.rule.retries) tl_buf_printf(&res, "    mem_mb: %lld\n", first);
            else /* Snakemake evaluates a resource string with `attempt` in scope */
                tl_buf_printf(&res, "    mem_mb: \"%lld * attempt\"\n", first);
        }
        if (isfinite(st->time_s)) tl_buf_printf(&res, "    runtime: %.0f\n", st->time_s / 60);
    }
    if (retries) /* profile-wide: Snakemake's retries are one number */
        tl_buf_printf(b, "# retries: a rule's memory grows with attempt (above); every failed job is retried\n"
                         "retries: %d\n", retries);
    if (threads.len) {
        tl_buf_puts(b, "set-threads:\n");
        tl_buf_append(b, threads.data, threads.len);
    }
    if (res.len) {
        tl_buf_puts(b, "set-resources:\n");
        tl_buf_append(b, res.data, res.len);
    }
    tl_buf_free(&threads);
    tl_buf_free(&res);
}

bool advise_system_parse(const char *name, enum tl_system *out)
{
    for (int i = 0; i < TL_NSYS; i++)
        if (!strcmp(name, tl_system_name[i])) {
            *out = (enum tl_system)i;
            return true;
        }
    return false;
}

void advise_emit(struct tl_buf *b, enum tl_system sys, const struct tl_task_rows *rs,
                 const struct advise_plan *p, const struct tl_advise_opts *o, char *const *inputs,
                 int ninputs, struct advise_refusals *rf)
{
    typedef void (*emitter)(struct tl_buf *, const struct tl_task_rows *, const struct advise_plan *,
                            const struct tl_advise_opts *, char *const *, int, struct advise_refusals *);
    static const emitter by_system[TL_NSYS] = {emit_bps, emit_wq, emit_makeflow, emit_nextflow, emit_snakemake};
    *rf = (struct advise_refusals){0};
    by_system[sys](b, rs, p, o, inputs, ninputs, rf);
}
