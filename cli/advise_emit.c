/* `advise --emit bps|wq|makeflow|nextflow|snakemake`: the recommendations
 * in the files the workflow systems read, each with a header saying from
 * which inputs, when, and by which rule.
 *
 *   bps       an LSST BPS submit YAML fragment: pipetask: LABEL:
 *             requestMemory (MB, as HTCondor counts them: MiB) and
 *             requestCpus, to include or paste into a submit file;
 *   wq        JSON for the Work Queue / TaskVine Python API:
 *             for c, r in d["categories"].items():
 *                 q.specify_category_max_resources(c, r)   (memory, disk in MB)
 *   makeflow  CATEGORY= blocks with CORES=, MEMORY=, DISK= (MB), for the
 *             rules that follow each.
 *   nextflow  a config (`nextflow run ... -c FILE`): process { withName:
 *             'NAME' { cpus, memory ('N MB': Nextflow's MB is MiB), time
 *             ('Nm') } } per process;
 *   snakemake a profile's config.yaml (`snakemake --profile DIR`):
 *             set-threads and set-resources (mem_mb: Snakemake's MB are
 *             10^6 bytes; runtime in minutes) per rule.
 * Nextflow and Snakemake also get a time: wall time at the same quantile x
 * the margin, rounded up to a whole minute (a task over its time is killed,
 * as over its memory).
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
static long long to_mb(double bytes)
{
    return (long long)ceil(bytes / MIB - 1e-9);
}

static long long to_cores(double cores)
{
    long long c = (long long)ceil(cores - 1e-9);
    return c < 1 ? 1 : c;
}

static void header(struct tl_buf *b, const char *sys, const char *lead,
                   const struct tl_advise_opts *o, char *const *inputs, int ninputs)
{
    char when[32], mem[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M UTC", gmtime(&now));
    snprintf(mem, sizeof mem, "%.0f MiB", o->round[TL_RES_MEM] / MIB);
    tl_buf_printf(b, "%smade by tasklens advise --emit %s, %s, from:", lead, sys, when);
    for (int i = 0; i < ninputs; i++) {
        tl_buf_putc(b, ' ');
        tl_quote_comment(b, inputs[i]);
    }
    tl_buf_printf(b, "\n%srule: memory = peak RSS p%02.0f x %g, rounded up to %s, in MB (MiB);\n"
                     "%s      cores = cores used p%02.0f (CPU time / wall time where not measured), "
                     "rounded up to a whole core;\n"
                     "%s      disk = sandbox disk p%02.0f x %g, rounded up, in MB (Work Queue, "
                     "Makeflow)\n",
                  lead, o->quantile * 100, o->margin, mem, lead, o->quantile * 100, lead,
                  o->quantile * 100, o->margin);
}

/* A category's evidence, as a comment (the name in visible escapes: no
 * code point in it can end the comment). */
static void evidence(struct tl_buf *b, const char *lead, const char *name,
                     const struct tl_cat_advice *ca)
{
    const struct tl_advice *m = &ca->a[TL_RES_MEM];
    tl_buf_puts(b, lead);
    tl_quote_comment(b, name);
    tl_buf_printf(b, ": %zu attempt%s", ca->attempts, ca->attempts == 1 ? "" : "s");
    if (m->n_used)
        tl_buf_printf(b, "; memory: peak RSS max %.4g MiB, %zu of %zu measured attempts above the "
                         "recommendation (killed where the executor enforces memory)",
                      m->used_max / MIB, m->exceed, m->n_used);
    else tl_buf_puts(b, "; no memory measured: left to the default");
    if (m->killed) tl_buf_printf(b, "; %zu killed for memory", m->killed);
    if (m->unmeasured) tl_buf_printf(b, " (%zu with no memory recorded)", m->unmeasured);
    if (m->rec_is_floor) tl_buf_puts(b, ", the recommendation is above the limit they died at");
    tl_buf_putc(b, '\n');
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

static void emit_bps(struct tl_buf *b, const struct tl_task_rows *rs, const struct tl_cat_advice *ca,
                     const struct tl_advise_opts *o, char *const *inputs, int ninputs, struct advise_refusals *rf)
{
    header(b, "bps", "# ", o, inputs, ninputs);
    tl_buf_puts(b, "# labels with no measurement are left out: BPS gives them its defaults\n"
                   "pipetask:\n");
    for (size_t k = 0; k < rs->cats.n; k++) {
        const struct tl_advice *m = &ca[k].a[TL_RES_MEM], *c = &ca[k].a[TL_RES_CORES];
        evidence(b, "  # ", rs->cats.s[k], &ca[k]);
        if (!m->n_used && !c->n_used) continue;
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
        if (m->n_used) tl_buf_printf(b, "    requestMemory: %lld\n", to_mb(m->rec));
        if (c->n_used) tl_buf_printf(b, "    requestCpus: %lld\n", to_cores(c->rec));
    }
}

static void emit_wq(struct tl_buf *b, const struct tl_task_rows *rs, const struct tl_cat_advice *ca,
                    const struct tl_advise_opts *o, char *const *inputs, int ninputs, struct advise_refusals *rf)
{
    struct tl_buf h = {0};
    header(&h, "wq", "", o, inputs, ninputs);
    tl_buf_puts(b, "{\n  \"tasklens\": ");
    tl_buf_putc(&h, '\0');
    tl_buf_put_json_string(b, h.data);
    tl_buf_free(&h);
    tl_buf_puts(b, ",\n  \"categories\": {");
    bool first = true;
    for (size_t k = 0; k < rs->cats.n; k++) {
        const struct tl_advice *a = ca[k].a;
        if (!a[TL_RES_MEM].n_used && !a[TL_RES_CORES].n_used && !a[TL_RES_DISK].n_used) continue;
        if (!tl_utf8_valid(rs->cats.s[k])) { /* JSON would hold another name */
            refuse(NULL, NULL, rf, rs->cats.s[k], "not UTF-8, so not a name JSON can hold");
            continue;
        }
        tl_buf_puts(b, first ? "\n    " : ",\n    ");
        first = false;
        tl_buf_put_json_string(b, rs->cats.s[k]);
        tl_buf_puts(b, ": {");
        const char *sep = "";
        if (a[TL_RES_CORES].n_used) {
            tl_buf_printf(b, "\"cores\": %lld", to_cores(a[TL_RES_CORES].rec));
            sep = ", ";
        }
        if (a[TL_RES_MEM].n_used) {
            tl_buf_printf(b, "%s\"memory\": %lld", sep, to_mb(a[TL_RES_MEM].rec));
            sep = ", ";
        }
        if (a[TL_RES_DISK].n_used) tl_buf_printf(b, "%s\"disk\": %lld", sep, to_mb(a[TL_RES_DISK].rec));
        tl_buf_putc(b, '}');
    }
    tl_buf_puts(b, "\n  }\n}\n");
}

static void emit_makeflow(struct tl_buf *b, const struct tl_task_rows *rs,
                          const struct tl_cat_advice *ca, const struct tl_advise_opts *o,
                          char *const *inputs, int ninputs, struct advise_refusals *rf)
{
    header(b, "makeflow", "# ", o, inputs, ninputs);
    tl_buf_puts(b, "# each block applies to the rules that follow it, until the next CATEGORY\n");
    for (size_t k = 0; k < rs->cats.n; k++) {
        const struct tl_advice *a = ca[k].a;
        tl_buf_putc(b, '\n');
        evidence(b, "# ", rs->cats.s[k], &ca[k]);
        if (!a[TL_RES_MEM].n_used && !a[TL_RES_CORES].n_used && !a[TL_RES_DISK].n_used) continue;
        if (!makeflow_name(rs->cats.s[k])) {
            refuse(b, "# ", rf, rs->cats.s[k], "not a name Makeflow reads back as written");
            continue;
        }
        tl_buf_printf(b, "CATEGORY=%s\n", rs->cats.s[k]);
        if (a[TL_RES_CORES].n_used) tl_buf_printf(b, "CORES=%lld\n", to_cores(a[TL_RES_CORES].rec));
        if (a[TL_RES_MEM].n_used) tl_buf_printf(b, "MEMORY=%lld\n", to_mb(a[TL_RES_MEM].rec));
        if (a[TL_RES_DISK].n_used) tl_buf_printf(b, "DISK=%lld\n", to_mb(a[TL_RES_DISK].rec));
    }
}

/* A time limit: minutes to ask for, over the attempts that succeeded (a
 * limit kills; issue 57 point 1): by default the longest of them x the
 * margin, so nothing that succeeded is killed; with --quantile, that
 * quantile x the margin, and `killed` says how many successes it would
 * have killed. minutes 0: no successful attempt with a wall time. */
/* An attempt that did its work: what a hard limit must not kill. */
static bool row_succeeded(const struct tl_task_row *r)
{
    return !r->failed && !r->cancelled && !r->library;
}

struct time_limit {
    long long minutes;
    size_t succeeded, killed;
};

static struct time_limit wall_limit(const struct tl_task_rows *rs, size_t k, const struct tl_advise_opts *o)
{
    struct time_limit t = {0};
    double *tmp = malloc((rs->n ? rs->n : 1) * sizeof *tmp);
    if (!tmp) return t;
    for (size_t j = rs->at[k]; j < rs->at[k + 1]; j++) {
        const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
        if (row_succeeded(r) && isfinite(r->v[TL_V_WALL])) tmp[t.succeeded++] = r->v[TL_V_WALL];
    }
    tl_sort_doubles(tmp, t.succeeded);
    double q = o->quantile_given ? tl_quantile_or_nan(tmp, t.succeeded, o->quantile)
                                 : t.succeeded ? tmp[t.succeeded - 1] : NAN;
    if (t.succeeded && isfinite(q)) {
        t.minutes = (long long)ceil(q * o->margin / 60 - 1e-9);
        if (t.minutes < 1) t.minutes = 1;
        for (size_t i = 0; i < t.succeeded; i++) t.killed += tmp[i] > (double)t.minutes * 60;
    }
    free(tmp);
    return t;
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

/* The time limit's line of evidence: what it does to the observed successes. */
static void time_evidence(struct tl_buf *b, const char *lead, const struct time_limit *t)
{
    if (!t->minutes) return;
    tl_buf_printf(b, "%stime %lldm: %zu of %zu successful attempts ran longer%s\n", lead, t->minutes,
                  t->killed, t->succeeded, t->killed ? " -- they would be killed at the limit" : "");
}

/* Nextflow's memory, a hard limit where its executor enforces it (issue 57
 * points 1, 2): the first attempt asks for the recommendation; when the
 * largest success (or a memory death's limit) x the margin needs more, the
 * block retries on a resource kill with memory x task.attempt, as many
 * retries as reach it (at most MAX_RETRIES; past that the first ask
 * grows). */
#define MAX_RETRIES 3
#define RESOURCE_KILLS "[137, 140, 143]" /* SIGKILL (memory), the batch time limit, SIGTERM */

struct mem_plan {
    long long first_mb, cover_mb; /* the first attempt's ask; what the last retry must reach */
    int retries;
    size_t succeeded, over;       /* successes measured; those above the first ask */
};

static struct mem_plan mem_plan(const struct tl_task_rows *rs, size_t k, const struct tl_advice *m,
                                const struct tl_advise_opts *o)
{
    struct mem_plan p = {to_mb(m->rec), 0, 0, 0, 0};
    double need = isfinite(m->floor) && m->floor > 0 ? m->floor : 0;
    for (size_t j = rs->at[k]; j < rs->at[k + 1]; j++) {
        const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
        if (!row_succeeded(r) || !isfinite(r->v[TL_V_MEM])) continue;
        p.succeeded++;
        p.over += r->v[TL_V_MEM] > m->rec;
        if (r->v[TL_V_MEM] > need) need = r->v[TL_V_MEM];
    }
    double gran = o->round[TL_RES_MEM];
    p.cover_mb = to_mb(ceil(need * o->margin / gran - 1e-9) * gran);
    if (p.cover_mb <= p.first_mb) return p;
    p.retries = (int)((p.cover_mb + p.first_mb - 1) / p.first_mb) - 1;
    if (p.retries > MAX_RETRIES) { /* the first ask grows so that the last retry still reaches */
        p.retries = MAX_RETRIES;
        long long g = to_mb(gran);
        p.first_mb = ((p.cover_mb + MAX_RETRIES) / (MAX_RETRIES + 1) + g - 1) / g * g;
    }
    return p;
}

static void nextflow_memory(struct tl_buf *b, const struct mem_plan *p)
{
    if (!p->retries) {
        tl_buf_printf(b, "        memory = '%lld MB'\n", p->first_mb);
        return;
    }
    tl_buf_printf(b, "        // memory: %zu of %zu successes used more than %lld MB; each retry after a resource "
                     "kill asks for %lld MB more, the last (%lld MB) covers the largest x the margin\n",
                  p->over, p->succeeded, p->first_mb, p->first_mb, p->first_mb * (p->retries + 1));
    tl_buf_printf(b, "        memory = { \"${%lld * task.attempt} MB\" }\n", p->first_mb);
    tl_buf_puts(b, "        errorStrategy = { task.exitStatus in " RESOURCE_KILLS " ? 'retry' : 'terminate' }\n");
    tl_buf_printf(b, "        maxRetries = %d\n", p->retries);
}

static void emit_nextflow(struct tl_buf *b, const struct tl_task_rows *rs,
                          const struct tl_cat_advice *ca, const struct tl_advise_opts *o,
                          char *const *inputs, int ninputs, struct advise_refusals *rf)
{
    header(b, "nextflow", "// ", o, inputs, ninputs);
    time_rule(b, "// ", o);
    tl_buf_puts(b, "// use it with: nextflow run PIPELINE -c THIS_FILE (Nextflow's MB are MiB)\nprocess {\n");
    for (size_t k = 0; k < rs->cats.n; k++) {
        const struct tl_advice *a = ca[k].a;
        struct time_limit tl = wall_limit(rs, k, o);
        long long minutes = tl.minutes;
        evidence(b, "    // ", rs->cats.s[k], &ca[k]);
        time_evidence(b, "    //   ", &tl);
        if (!a[TL_RES_MEM].n_used && !a[TL_RES_CORES].n_used && !minutes) continue;
        if (!process_name(rs->cats.s[k])) { /* a selector is a pattern: only a name is safe */
            refuse(b, "    // ", rf, rs->cats.s[k], "not a Nextflow process name");
            continue;
        }
        tl_buf_puts(b, "    withName: ");
        tl_quote_groovy(b, rs->cats.s[k]);
        tl_buf_puts(b, " {\n");
        if (a[TL_RES_CORES].n_used) tl_buf_printf(b, "        cpus = %lld\n", to_cores(a[TL_RES_CORES].rec));
        if (a[TL_RES_MEM].n_used) {
            struct mem_plan mp = mem_plan(rs, k, &a[TL_RES_MEM], o);
            nextflow_memory(b, &mp);
        }
        if (minutes) tl_buf_printf(b, "        time = '%lldm'\n", minutes);
        tl_buf_puts(b, "    }\n");
    }
    tl_buf_puts(b, "}\n");
}

/* A Snakemake rule name: a Python identifier. */
static bool rule_name(const char *s)
{
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return false;
    for (; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return false;
    return true;
}

static void emit_snakemake(struct tl_buf *b, const struct tl_task_rows *rs,
                           const struct tl_cat_advice *ca, const struct tl_advise_opts *o,
                           char *const *inputs, int ninputs, struct advise_refusals *rf)
{
    struct tl_buf threads = {0}, res = {0};
    int retries = 0;
    header(b, "snakemake", "# ", o, inputs, ninputs);
    time_rule(b, "# ", o);
    tl_buf_puts(b, "# a profile: save as DIR/config.yaml, run snakemake --profile DIR "
                   "(mem_mb: Snakemake's MB are 10^6 bytes)\n");
    for (size_t k = 0; k < rs->cats.n; k++) {
        const struct tl_advice *a = ca[k].a;
        struct time_limit tl = wall_limit(rs, k, o);
        long long minutes = tl.minutes;
        evidence(b, "# ", rs->cats.s[k], &ca[k]);
        time_evidence(b, "#   ", &tl);
        if (!rule_name(rs->cats.s[k])) {
            refuse(b, "# ", rf, rs->cats.s[k], "not a Snakemake rule name");
            continue;
        }
        if (a[TL_RES_CORES].n_used)
            tl_buf_printf(&threads, "  %s: %lld\n", rs->cats.s[k], to_cores(a[TL_RES_CORES].rec));
        if (!a[TL_RES_MEM].n_used && !minutes) continue;
        tl_buf_printf(&res, "  %s:\n", rs->cats.s[k]);
        if (a[TL_RES_MEM].n_used) {
            struct mem_plan mp = mem_plan(rs, k, &a[TL_RES_MEM], o);
            long long first = (long long)ceil((double)mp.first_mb * MIB / 1e6 - 1e-9); /* 10^6 bytes */
            if (mp.retries > retries) retries = mp.retries;
            if (!mp.retries) tl_buf_printf(&res, "    mem_mb: %lld\n", first);
            else /* Snakemake evaluates a resource string with `attempt` in scope */
                tl_buf_printf(&res, "    # %zu of %zu successes used more: x attempt, the last of %d covers the "
                                    "largest x the margin\n    mem_mb: \"%lld * attempt\"\n",
                              mp.over, mp.succeeded, mp.retries + 1, first);
        }
        if (minutes) tl_buf_printf(&res, "    runtime: %lld\n", minutes);
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

bool advise_emit_parse(const char *name, enum advise_emit *out)
{
    static const char *const names[] = {"bps", "wq", "makeflow", "nextflow", "snakemake"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(name, names[i])) {
            *out = (enum advise_emit)(i + 1);
            return true;
        }
    return false;
}

void advise_emit(struct tl_buf *b, enum advise_emit e, const struct tl_task_rows *rs,
                 const struct tl_cat_advice *ca, const struct tl_advise_opts *o,
                 char *const *inputs, int ninputs, struct advise_refusals *rf)
{
    *rf = (struct advise_refusals){0};
    if (e == EMIT_BPS) emit_bps(b, rs, ca, o, inputs, ninputs, rf);
    else if (e == EMIT_WQ) emit_wq(b, rs, ca, o, inputs, ninputs, rf);
    else if (e == EMIT_MAKEFLOW) emit_makeflow(b, rs, ca, o, inputs, ninputs, rf);
    else if (e == EMIT_NEXTFLOW) emit_nextflow(b, rs, ca, o, inputs, ninputs, rf);
    else if (e == EMIT_SNAKEMAKE) emit_snakemake(b, rs, ca, o, inputs, ninputs, rf);
}
