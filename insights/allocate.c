/* The settings `advise` writes into a workflow system, chosen by expected
 * cost over the observed tasks, and their replay. See allocate.h and
 * docs/advise.md ("First allocation and retries", "Replay"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/quantile.h"
#include "insights/allocate.h"

const char *const tl_system_name[TL_NSYS] = {"bps", "wq", "makeflow", "nextflow", "snakemake"};
const char *const tl_first_by_name[3] = {"min_waste", "max_throughput", "quantile"};

#define MAX_CANDIDATES 128 /* first allocations tried (evenly spaced when more are distinct) */

bool tl_alloc_scratch_init(struct tl_alloc_scratch *s, size_t rows)
{
    s->nd = malloc((rows ? rows : 1) * sizeof *s->nd);
    s->v = malloc((rows ? rows : 1) * sizeof *s->v);
    s->pair = malloc((rows ? rows : 1) * sizeof *s->pair);
    return s->nd && s->v && s->pair;
}

void tl_alloc_scratch_free(struct tl_alloc_scratch *s)
{
    free(s->nd);
    free(s->v);
    free(s->pair);
}

/* ------------------------------------------------------------ input size */

static int cmp_pair_x(const void *a, const void *b)
{
    double x = ((const struct tl_pair *)a)->x, y = ((const struct tl_pair *)b)->x;
    return (x > y) - (x < y);
}

static int cmp_pair_y(const void *a, const void *b)
{
    double x = ((const struct tl_pair *)a)->y, y = ((const struct tl_pair *)b)->y;
    return (x > y) - (x < y);
}

/* Ranks (1-based, ties averaged) of x into rx, or of y into ry, in the
 * order the pairs are sorted by. */
static void rank_pairs(struct tl_pair *p, size_t n, bool by_y)
{
    qsort(p, n, sizeof *p, by_y ? cmp_pair_y : cmp_pair_x);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        double v = by_y ? p[i].y : p[i].x;
        while (j < n && (by_y ? p[j].y : p[j].x) == v) j++;
        double r = (double)(i + 1 + j) / 2; /* the mean of ranks i+1 .. j */
        for (size_t k = i; k < j; k++) *(by_y ? &p[k].ry : &p[k].rx) = r;
        i = j;
    }
}

/* Spearman's rho: Pearson's correlation of the ranks (NAN when a side is
 * constant). */
static double spearman(struct tl_pair *p, size_t n)
{
    rank_pairs(p, n, false);
    rank_pairs(p, n, true);
    double mean = (double)(n + 1) / 2, sxy = 0, sxx = 0, syy = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = p[i].rx - mean, dy = p[i].ry - mean;
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : NAN;
}

double tl_rule_ask(const struct tl_rule *r, int k)
{
    if (r->kind == TL_RETRY_TO_MAX) return k == 1 ? r->first : r->cover;
    if (r->kind == TL_RETRY_TIMES_ATTEMPT) return r->first * k;
    return ldexp(r->first, k - 1);
}

/* The retries a rule needs so that its last attempt asks for the cover. */
static int rule_retries(enum tl_retry_kind kind, double first, double cover)
{
    if (!(cover > first * (1 + 1e-12))) return 0;
    if (kind == TL_RETRY_TO_MAX) return 1;
    if (kind == TL_RETRY_TIMES_ATTEMPT) return (int)ceil(cover / first - 1e-9) - 1;
    return (int)ceil(log2(cover / first) - 1e-9);
}

/* The smallest first allocation whose retries (at most TL_MAX_RETRIES)
 * still reach the cover, rounded up to the granularity. */
static double least_first(enum tl_retry_kind kind, double cover, double gran)
{
    double f = kind == TL_RETRY_TO_MAX          ? gran
               : kind == TL_RETRY_TIMES_ATTEMPT ? cover / (TL_MAX_RETRIES + 1)
                                                : ldexp(cover, -TL_MAX_RETRIES);
    f = ceil(f / gran - 1e-9) * gran;
    return f < gran ? gran : f;
}

static struct tl_rule make_rule(enum tl_retry_kind kind, double first, double cover)
{
    return (struct tl_rule){kind, first, cover, rule_retries(kind, first, cover)};
}

struct tl_rule_cost tl_rule_cost(const struct tl_need *nd, size_t n, const struct tl_rule *r)
{
    struct tl_rule_cost c = {0};
    for (size_t i = 0; i < n; i++)
        for (int k = 1;; k++) {
            double ask = tl_rule_ask(r, k);
            c.attempts++;
            c.res_h += ask / TL_GIB * nd[i].t / 3600;
            if (nd[i].need <= ask) break;
            c.killed++;
            if (k > r->retries) {
                c.lost++;
                break;
            }
        }
    return c;
}

/* Tasks per worker-second at first allocation a, cctools' MAX_THROUGHPUT:
 * a worker of the maximum runs max/a tasks that fit at once, one that does
 * not alone, after its killed first attempt. */
static double throughput(const struct tl_need *nd, size_t n, double a, double max)
{
    double fit = 0, over = 0, t_all = 0, t_over = 0;
    for (size_t i = 0; i < n; i++) {
        t_all += nd[i].t;
        if (nd[i].need <= a) fit++;
        else over++, t_over += nd[i].t;
    }
    double den = t_all + t_over;
    return den > 0 ? (fit * max / a + over) / den : 0;
}

static int cmp_need(const void *a, const void *b)
{
    double x = ((const struct tl_need *)a)->need, y = ((const struct tl_need *)b)->need;
    return (x > y) - (x < y);
}

/* The first allocations worth trying: each distinct need rounded up to the
 * granularity, from the least the rule allows to the cover (sorted needs). */
static size_t candidate_firsts(const struct tl_need *nd, size_t n, double lo, double cover, double gran,
                               double *out)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        double a = ceil(nd[i].need / gran - 1e-9) * gran;
        if (a < lo) a = lo;
        if (a > cover) a = cover;
        if (!m || out[m - 1] != a) out[m++] = a;
    }
    if (!m || out[m - 1] != cover) out[m++] = cover;
    if (m <= MAX_CANDIDATES) return m;
    for (size_t j = 0; j < MAX_CANDIDATES; j++) out[j] = out[j * (m - 1) / (MAX_CANDIDATES - 1)];
    return MAX_CANDIDATES;
}

static void add_candidate(struct tl_choice *ch, const struct tl_need *nd, size_t n, double first,
                          const char *why)
{
    for (int i = 0; i < ch->ncand; i++)
        if (ch->cand[i].first == first) return;
    if (ch->ncand == TL_NCAND || !isfinite(first)) return;
    struct tl_rule r = make_rule(ch->rule.kind, first, ch->rule.cover);
    ch->cand[ch->ncand++] = (struct tl_candidate){first, tl_rule_cost(nd, n, &r), why};
}

static int cmp_cand(const void *a, const void *b)
{
    double x = ((const struct tl_candidate *)a)->first, y = ((const struct tl_candidate *)b)->first;
    return (x > y) - (x < y);
}

/* The choice for one resource: needs sorted, cover and the first by each
 * mode, the rule for `by` (quantile: the advice's recommendation). */
static void choose(struct tl_need *nd, size_t n, enum tl_retry_kind kind, enum tl_first_by by,
                   double quantile_rec, const struct tl_advise_opts *o, double gran, double *tmp,
                   struct tl_choice *ch)
{
    ch->rule = (struct tl_rule){kind, NAN, NAN, 0};
    ch->min_waste = ch->max_throughput = NAN;
    ch->n_needs = n;
    if (!n) return;
    qsort(nd, n, sizeof *nd, cmp_need);
    double cover = ceil(nd[n - 1].need * o->margin / gran - 1e-9) * gran;
    if (cover < gran) cover = gran;
    double lo = least_first(kind, cover, gran);
    size_t m = candidate_firsts(nd, n, lo, cover, gran, tmp);
    double best = INFINITY, best_t = -1;
    ch->rule.cover = cover;
    for (size_t j = 0; j < m; j++) {
        struct tl_rule r = make_rule(kind, tmp[j], cover);
        double c = tl_rule_cost(nd, n, &r).res_h;
        if (c < best * (1 - 1e-12)) best = c, ch->min_waste = tmp[j];
        if (kind != TL_RETRY_TO_MAX) continue; /* cctools' mode: a first, then the maximum */
        double t = throughput(nd, n, tmp[j], cover);
        if (t > best_t * (1 + 1e-12)) best_t = t, ch->max_throughput = tmp[j];
    }
    double first = by == TL_FIRST_MAX_THROUGHPUT && isfinite(ch->max_throughput) ? ch->max_throughput
                   : by == TL_FIRST_QUANTILE && isfinite(quantile_rec)      ? quantile_rec
                                                                           : ch->min_waste;
    if (first < lo) first = lo;
    if (first > cover) first = cover;
    ch->by = by;
    ch->rule = make_rule(kind, first, cover);
    ch->cost = tl_rule_cost(nd, n, &ch->rule);
    add_candidate(ch, nd, n, first, "chosen");
    add_candidate(ch, nd, n, ch->min_waste, "min waste");
    add_candidate(ch, nd, n, ch->max_throughput, "max throughput");
    add_candidate(ch, nd, n, fmax(lo, fmin(cover, quantile_rec)), "quantile rule");
    add_candidate(ch, nd, n, fmax(lo, ceil(nd[(n - 1) / 2].need / gran - 1e-9) * gran), "median need");
    add_candidate(ch, nd, n, cover, "no retries");
    qsort(ch->cand, (size_t)ch->ncand, sizeof *ch->cand, cmp_cand);
}

/* An attempt that did its work -- what a hard limit must not kill -- in
 * this run or, cached, in an earlier one: evidence of need either way (the
 * replay leaves cached ones out: not this run's work). */
static bool row_succeeded(const struct tl_task_row *r)
{
    return !r->failed && !r->cancelled && !r->library;
}

/* The limit a memory death died at: its named limit, else its allocation,
 * else its request (NAN: none recorded). */
static double death_limit(const struct tl_task_row *r)
{
    return isfinite(r->v[TL_V_LIM_MEM])     ? r->v[TL_V_LIM_MEM]
           : isfinite(r->v[TL_V_ALLOC_MEM]) ? r->v[TL_V_ALLOC_MEM]
                                            : r->v[TL_V_REQ_MEM];
}

/* A task's need of memory (column TL_V_MEM) or disk: a success's peak; a
 * memory death's at least a byte over the limit it died at (or its peak,
 * when larger). NAN: not known. */
static double task_need(const struct tl_task_row *r, int col)
{
    if (row_succeeded(r)) return r->v[col];
    if (col != TL_V_MEM || !r->killed_mem) return NAN;
    double lim = death_limit(r), u = r->v[TL_V_MEM];
    if (!isfinite(lim)) return u;
    return isfinite(u) && u > lim + 1 ? u : lim + 1;
}

static size_t collect_needs(const struct tl_task_rows *rs, int32_t cat, int col, struct tl_need *nd,
                            size_t *censored)
{
    size_t n = 0;
    *censored = 0;
    for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
        const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
        if (!r->final) continue;
        double need = task_need(r, col);
        if (!isfinite(need)) continue;
        *censored += !row_succeeded(r);
        nd[n++] = (struct tl_need){need, isfinite(r->v[TL_V_WALL]) ? r->v[TL_V_WALL] : 0};
    }
    return n;
}

/* A time limit over the successes: the longest x the margin by default, the
 * quantile x the margin when asked; whole minutes. */
static void time_limit(const struct tl_task_rows *rs, int32_t cat, const struct tl_advise_opts *o, double *v,
                       struct tl_settings *st)
{
    size_t n = 0;
    for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
        const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
        if (row_succeeded(r) && isfinite(r->v[TL_V_WALL])) v[n++] = r->v[TL_V_WALL];
    }
    tl_sort_doubles(v, n);
    st->time_succeeded = n;
    double q = o->quantile_given ? tl_quantile_or_nan(v, n, o->quantile) : n ? v[n - 1] : NAN;
    if (!isfinite(q)) return;
    double minutes = ceil(q * o->margin / 60 - 1e-9);
    st->time_s = (minutes < 1 ? 1 : minutes) * 60;
    for (size_t i = 0; i < n; i++) st->time_killed += v[i] > st->time_s;
}

const char *tl_scaling_words(double rho)
{
    return rho >= 0.7 ? "scales with" : rho >= 0.3 ? "scales partly with" : rho <= -0.3 ? "falls with" : "does not follow";
}

/* The need of column col against bytes read, over the successes that
 * recorded both (a memory death's need is a bound, not a measure). */
static void input_scaling(const struct tl_task_rows *rs, int32_t cat, int col, struct tl_pair *p,
                          struct tl_choice *ch)
{
    size_t n = 0;
    for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
        const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
        if (r->final && row_succeeded(r) && isfinite(r->v[col]) && isfinite(r->v[TL_V_READ]))
            p[n++] = (struct tl_pair){r->v[TL_V_READ], r->v[col], 0, 0};
    }
    ch->input_n = n;
    ch->input_rho = n >= TL_MIN_SCALING ? spearman(p, n) : NAN;
}

/* Cores used by an attempt: the monitor's peak, else CPU time / wall time. */
static double cores_used(const struct tl_task_row *r)
{
    double u = r->v[TL_V_CORES];
    if (!isfinite(u) && isfinite(r->v[TL_V_CPU]) && r->v[TL_V_WALL] > 0) u = r->v[TL_V_CPU] / r->v[TL_V_WALL];
    return u;
}

bool tl_system_kills_cores(enum tl_system sys)
{
    return sys == TL_SYS_WQ || sys == TL_SYS_MAKEFLOW;
}

/* The cores an attempt may use before it counts as over: a monitor that
 * kills forgives a quarter core. */
static double cores_limit(const struct tl_settings *st, double ask)
{
    return isfinite(st->cores_max) ? ask + TL_CORES_GRACE : ask;
}

/* What the cores do to the observed attempts; where a limit kills, the
 * maximum a retry asks for covers every success. */
static void cores_evidence(const struct tl_task_rows *rs, int32_t cat, enum tl_system sys, double margin,
                           struct tl_settings *st)
{
    st->cores_max = NAN;
    if (!isfinite(st->cores)) return;
    double peak = 0;
    for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
        const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
        double u = cores_used(r);
        if (!isfinite(u)) continue;
        st->cores_measured++;
        if (row_succeeded(r) && u > peak) peak = u;
    }
    if (tl_system_kills_cores(sys))
        st->cores_max = fmax(st->cores, ceil(peak * margin - TL_CORES_GRACE - 1e-9));
    double limit = cores_limit(st, st->cores);
    for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
        double u = cores_used(&rs->r[rs->by_cat[j]]);
        st->cores_over += isfinite(u) && u > limit;
    }
}

static enum tl_retry_kind system_retries(enum tl_system sys)
{
    return sys == TL_SYS_NEXTFLOW || sys == TL_SYS_SNAKEMAKE ? TL_RETRY_TIMES_ATTEMPT
           : sys == TL_SYS_BPS                             ? TL_RETRY_DOUBLING
                                                           : TL_RETRY_TO_MAX;
}

void tl_settings_for(enum tl_system sys, enum tl_first_by by, const struct tl_task_rows *rs, int32_t cat,
                     const struct tl_cat_advice *ca, const struct tl_advise_opts *o,
                     struct tl_alloc_scratch *sc, struct tl_settings *st)
{
    memset(st, 0, sizeof *st);
    const struct tl_advice *c = &ca->a[TL_RES_CORES];
    st->cores = c->n_used ? fmax(1, ceil(c->rec - 1e-9)) : NAN;
    cores_evidence(rs, cat, sys, o->margin, st);
    st->time_s = NAN;
    if (o->quantile_given) by = TL_FIRST_QUANTILE;
    enum tl_retry_kind kind = system_retries(sys);
    size_t n = collect_needs(rs, cat, TL_V_MEM, sc->nd, &st->mem.censored);
    choose(sc->nd, n, kind, by, ca->a[TL_RES_MEM].rec, o, o->round[TL_RES_MEM], sc->v, &st->mem);
    input_scaling(rs, cat, TL_V_MEM, sc->pair, &st->mem);
    st->disk.rule = (struct tl_rule){kind, NAN, NAN, 0};
    st->disk.min_waste = st->disk.max_throughput = st->disk.input_rho = NAN;
    if (sys == TL_SYS_WQ || sys == TL_SYS_MAKEFLOW) { /* the systems that take a disk */
        n = collect_needs(rs, cat, TL_V_DISK, sc->nd, &st->disk.censored);
        choose(sc->nd, n, kind, by, ca->a[TL_RES_DISK].rec, o, o->round[TL_RES_DISK], sc->v, &st->disk);
        input_scaling(rs, cat, TL_V_DISK, sc->pair, &st->disk);
    }
    if (sys == TL_SYS_NEXTFLOW || sys == TL_SYS_SNAKEMAKE) time_limit(rs, cat, o, sc->v, st);
}

/* ------------------------------------------------------------ replay */

static double first_of(double a, double b)
{
    return isfinite(a) ? a : b;
}

/* An attempt's hours at its cores and memory (NAN: not recorded, counted). */
static void charge(struct tl_replay_side *s, double cores, double mem, double held)
{
    if (isfinite(cores)) s->core_h += cores * held / 3600;
    else s->no_cores++;
    if (isfinite(mem)) s->gib_h += mem / TL_GIB * held / 3600;
    else s->no_mem++;
}

/* The observed side: every attempt charged its allocation (else request). */
static void replay_before(const struct tl_task_row *r, struct tl_replay_side *s)
{
    double wall = isfinite(r->v[TL_V_WALL]) ? r->v[TL_V_WALL] : 0;
    double cores = first_of(r->v[TL_V_ALLOC_CORES], r->v[TL_V_REQ_CORES]);
    double mem = first_of(r->v[TL_V_ALLOC_MEM], r->v[TL_V_REQ_MEM]);
    s->attempts++;
    s->killed += r->killed_mem || r->killed_time || r->exhausted;
    s->failed += r->final && r->failed;
    charge(s, cores, mem, wall);
}

/* What attempt k asks for of one resource: the rule's, else as observed. */
static double ask_or_observed(const struct tl_rule *ru, int k, double observed)
{
    return isfinite(ru->first) ? tl_rule_ask(ru, k) : observed;
}

/* One task (its final row) replayed attempt by attempt under the settings. */
static void replay_task(const struct tl_task_row *r, const struct tl_settings *st, struct tl_replay *rp)
{
    struct tl_replay_side *s = &rp->after;
    bool ok = row_succeeded(r);
    double wall = isfinite(r->v[TL_V_WALL]) ? r->v[TL_V_WALL] : 0;
    double need_mem = task_need(r, TL_V_MEM), need_disk = task_need(r, TL_V_DISK);
    bool replayable = ok || (r->killed_mem && isfinite(need_mem)); /* else it fails again, once */
    double obs_cores = first_of(r->v[TL_V_ALLOC_CORES], r->v[TL_V_REQ_CORES]), need_cores = cores_used(r);
    double obs_mem = first_of(r->v[TL_V_ALLOC_MEM], r->v[TL_V_REQ_MEM]);
    double obs_disk = first_of(r->v[TL_V_ALLOC_DISK], r->v[TL_V_REQ_DISK]);
    int retries = st->mem.rule.retries > st->disk.rule.retries ? st->mem.rule.retries : st->disk.rule.retries;
    if (isfinite(st->cores_max) && st->cores_max > st->cores && retries < 1) retries = 1;
    rp->tasks++;
    rp->succeeded += ok;
    for (int k = 1;; k++) {
        double mem = ask_or_observed(&st->mem.rule, k, obs_mem);
        double disk = ask_or_observed(&st->disk.rule, k, obs_disk);
        double cores = !isfinite(st->cores) ? obs_cores : k > 1 && isfinite(st->cores_max) ? st->cores_max : st->cores;
        bool over_time = ok && isfinite(st->time_s) && wall > st->time_s;
        bool over_cores = isfinite(st->cores_max) && isfinite(need_cores) && need_cores > cores_limit(st, cores);
        bool over = (isfinite(need_mem) && isfinite(mem) && need_mem > mem) ||
                    (isfinite(need_disk) && isfinite(disk) && need_disk > disk);
        rp->cores_kills += over_cores && !over && replayable;
        over = over || over_cores;
        double held = over_time ? st->time_s : wall;
        s->attempts++;
        charge(s, cores, mem, held);
        if (!replayable) { /* a failure of its own (or a death at an unknown limit): it fails again */
            s->failed++;
            s->killed += r->killed_mem || r->killed_time;
            return;
        }
        if (!over && !over_time) return;
        s->killed++;
        if (over_time || k > retries) { /* a time limit does not grow: retrying it is futile */
            s->failed++;
            rp->successes_lost += ok;
            return;
        }
    }
}

void tl_replay_category(const struct tl_task_rows *rs, int32_t cat, const struct tl_settings *st,
                        struct tl_replay *rp)
{
    memset(rp, 0, sizeof *rp);
    for (size_t j = rs->at[cat]; j < rs->at[cat + 1]; j++) {
        const struct tl_task_row *r = &rs->r[rs->by_cat[j]];
        if (r->cached || r->cancelled || r->library) continue; /* not this run's work */
        replay_before(r, &rp->before);
        if (r->final) replay_task(r, st, rp);
    }
    struct tl_replay_side *side[2] = {&rp->before, &rp->after};
    for (int i = 0; i < 2; i++) { /* absent, never 0 */
        if (side[i]->no_cores == side[i]->attempts) side[i]->core_h = NAN;
        if (side[i]->no_mem == side[i]->attempts) side[i]->gib_h = NAN;
    }
}
