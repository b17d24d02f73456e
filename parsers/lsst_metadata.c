/* LSST task metadata (`<label>_metadata`): one record per quantum.
 *
 * The format (shared/formats/lsst-task-metadata.md) comes in three shapes:
 *   - YAML PropertySet: a top-level sequence (tag !<lsst.daf.base.PropertySet>)
 *     of entries [name, Type, value] -- or [name, Type, value, comment] in a
 *     PropertyList, or !!python/tuple entries in older files; an entry of
 *     Type PropertySet holds a nested sequence (a section: `quantum`,
 *     `<label>`, `<label>:<subtask>`);
 *   - JSON TaskMetadata: {"scalars", "arrays", "metadata": {section: ...}},
 *     one compact line, with bare NaN / Infinity allowed; or a provenance
 *     wrapper {"attempts": [TaskMetadata...]} (one record per attempt);
 *   - plain mappings (YAML or JSON): {section: {key: value-or-list}}.
 * Repeated values are lists; the last element is the value (as the LSST
 * tools read them).
 *
 * Every shape is reduced to the same thing: for the `quantum` section, the
 * {prep,init,start,end}{Utc,CpuTime,...} values, `__version__` and
 * `nodeName`; and the task label (the top-level section that is neither
 * `quantum` nor `job` and has no `:`). The record follows analysis_tools'
 * GatherResourceUsageTask: max_rss_bytes = endMaxResidentSetSize (KiB when
 * __version__ is missing or 0, unless rss_unit says otherwise), cpu_time_s
 * = end - start CpuTime, init_time_s = start - init CpuTime, wall_time_s =
 * endUtc - prepUtc; a quantum without init/start (NoWorkFound) counts those
 * as end, and gets result NO_WORK.
 *
 * A parser never does I/O: the document arrives through feed() in any
 * split and is parsed at finish(), bounded by max_doc bytes. The file's
 * path (set_name) gives data-id tags: the butler's file template
 * (butler_path.c), or a PCRE2 pattern with named groups. A malformed document is one counted, reported rejection. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <yaml.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "core/buf.h"
#include "core/term.h"
#include "core/numfmt.h"
#include "parsers/butler_path.h"
#include "parsers/jscan.h"
#include "parsers/md_tree.h"
#include "parsers/civil_time.h"
#include "parsers/parser.h"

struct lsst_config {
    size_t max_doc;
    long long max_nodes;
    bool fast_scan;
    const char *rss_unit;
    const char *path_regex;
};

static const struct tl_option lsst_options[] = {
    {"max_doc", TL_OPT_SIZE, "64M", "largest metadata document read (bytes)",
     offsetof(struct lsst_config, max_doc)},
    {"max_nodes", TL_OPT_INT, "1000000", "YAML/JSON nodes per document at most",
     offsetof(struct lsst_config, max_nodes)},
    {"fast_scan", TL_OPT_BOOL, "true",
     "hand scanners for the shapes the LSST tools write (the rest goes to Jansson / libyaml); "
     "false: every document through the libraries (the same records, slower)",
     offsetof(struct lsst_config, fast_scan)},
    {"rss_unit", TL_OPT_STRING, "auto",
     "MaxResidentSetSize unit when __version__ is missing or 0: auto (KiB), kib or bytes",
     offsetof(struct lsst_config, rss_unit)},
    {"path_regex", TL_OPT_STRING, NULL,
     "PCRE2 with named groups (band, visit, detector, tract, patch, skymap, instrument, run, "
     "physical_filter, label) matched against the file path (default: the butler's file "
     "template, read by parsers/butler_path.c)",
     offsetof(struct lsst_config, path_regex)},
    {0},
};

enum phase { PREP, INIT, START, END, NPHASE };
static const char *const phase_names[NPHASE] = {"prep", "init", "start", "end"};

enum field {
    F_CPU, F_USER, F_SYSTEM, F_RSS, F_MINFLT, F_MAJFLT, F_BLKIN, F_BLKOUT, F_VCSW, F_IVCSW, NFIELD
};
static const char *const field_names[NFIELD] = {
    "CpuTime",         "UserTime",        "SystemTime",  "MaxResidentSetSize",
    "MinorPageFaults", "MajorPageFaults", "BlockInputs", "BlockOutputs",
    "VoluntaryContextSwitches", "InvoluntaryContextSwitches"};

/* What one document says about its quantum. */
struct quantum {
    double v[NPHASE][NFIELD];
    bool has[NPHASE][NFIELD];
    int64_t utc_ns[NPHASE];
    bool has_utc[NPHASE];
    int version; /* -1: absent */
    char node[256];
    char task_node[256]; /* nodeName of the task's own section (older files) */
    char label[256];
    bool have_quantum;
};

#define MAX_PATH_TAGS 10

struct lsst_state {
    struct lsst_config cfg;
    struct tl_emit emit;
    struct tl_parse_stats stats;
    struct tl_buf doc;
    bool too_big;
    bool nomem; /* the document left out for lack of memory: finish fails it (not the input's fault) */
    char *name;
    pcre2_code *re;
    pcre2_match_data *md;
    char tagbuf[2048];
    struct tl_tag tags[MAX_PATH_TAGS];
    int ntags;
    char workflow[512];
    char path_label[256];
    struct md_tree tree;
    uint64_t docs[3]; /* read by the fast scanners, by Jansson / libyaml; process-wide RSS quanta */
};

/* ---------------------------------------------------------------- values */

static const unsigned char phase_len[NPHASE] = {4, 4, 5, 3};
static const unsigned char field_len[NFIELD] = {7, 8, 10, 18, 15, 15, 11, 12, 24, 26};

/* One (key, value) of the quantum section, value as text (the last of a
 * list). Names are matched by length first: this runs for every key. */
/* YAML's .inf, -.inf and .nan (any of the spellings YAML 1.1 allows), which
 * strtod does not take: a value a document holds, so one emit_quantum
 * rejects rather than one that silently is not there. */
static bool yaml_special_float(const char *v, double *x)
{
    const char *s = v + (*v == '-' || *v == '+');
    bool inf = !strcmp(s, ".inf") || !strcmp(s, ".Inf") || !strcmp(s, ".INF");
    bool nan = s == v && (!strcmp(s, ".nan") || !strcmp(s, ".NaN") || !strcmp(s, ".NAN"));
    if (inf) *x = *v == '-' ? -HUGE_VAL : HUGE_VAL;
    if (nan) *x = NAN;
    return inf || nan;
}

static void quantum_key(struct quantum *q, const char *key, const char *val, bool is_num,
                        double num)
{
    size_t kl = strlen(key);
    if (kl == 11 && !memcmp(key, "__version__", 11)) {
        q->version = is_num ? (int)num : atoi(val ? val : "0");
        return;
    }
    if (kl == 8 && !memcmp(key, "nodeName", 8)) {
        if (val) snprintf(q->node, sizeof q->node, "%s", val);
        return;
    }
    int ph = key[0] == 'p' ? PREP : key[0] == 'i' ? INIT : key[0] == 's' ? START : key[0] == 'e' ? END : -1;
    if (ph < 0 || kl < phase_len[ph] || memcmp(key, phase_names[ph], phase_len[ph])) return;
    const char *rest = key + phase_len[ph];
    size_t rl = kl - phase_len[ph];
    if (rl == 3 && !memcmp(rest, "Utc", 3)) {
        if (val && tl_parse_iso_time(val, &q->utc_ns[ph])) q->has_utc[ph] = true;
        return;
    }
    for (int f = 0; f < NFIELD; f++)
        if (rl == field_len[f] && !memcmp(rest, field_names[f], rl)) {
            double x = num;
            if (!is_num) {
                if (!val) return;
                /* strtod's result, bit for bit, without strtod for plain numbers */
                if (!tl_parse_double(val, val + strlen(val), &x) && !yaml_special_float(val, &x)) {
                    char *end;
                    x = strtod(val, &end);
                    if (end == val) return;
                }
            }
            q->v[ph][f] = x; /* inf and nan too: emit_quantum rejects them with their file */
            q->has[ph][f] = true;
            return;
        }
}

/* A top-level section name: the label is the one that is not quantum or
 * job and has no ':' (a subtask); a subtask's prefix is the fallback. */
static void section_seen(struct quantum *q, const char *name)
{
    if (!strcmp(name, "quantum") || !strcmp(name, "job")) return;
    const char *colon = strchr(name, ':');
    if (!colon) {
        snprintf(q->label, sizeof q->label, "%s", name);
    } else if (!q->label[0]) {
        snprintf(q->label, sizeof q->label, "%.*s", (int)(colon - name), name);
    }
}

/* ---------------------------------------------------------------- the walk */

/* The walk reads the document's tree (md_tree.h), whichever builder made
 * it. A JSON value: a scalar, or a list whose last element counts. */
static void json_value_key(struct quantum *q, const struct md_tree *t, const char *key, uint32_t v)
{
    if (t->v[v].type == MD_SEQ) {
        if (!t->v[v].n) return;
        uint32_t last = v + 1;
        for (uint32_t i = 1; i < t->v[v].n; i++) last = t->v[last].next;
        v = last; /* the last call's value */
    }
    const struct md_node *x = &t->v[v];
    switch (x->type) {
    case MD_INT:
    case MD_REAL:
    case MD_NUM: quantum_key(q, key, NULL, true, md_number(x)); break;
    case MD_STR: quantum_key(q, key, x->s, false, 0); break;
    case MD_TRUE:
    case MD_FALSE: quantum_key(q, key, NULL, true, x->type == MD_TRUE); break;
    default: break;
    }
}

static void json_keys(struct quantum *q, const struct md_tree *t, uint32_t m)
{
    if (t->v[m].type != MD_MAP) return;
    for (uint32_t k = m + 1; k < t->v[m].next; k = t->v[k + 1].next)
        if (t->v[k].type == MD_STR) json_value_key(q, t, t->v[k].s, k + 1);
}

static bool key_is(const struct md_node *k, const char *s)
{
    return k->type == MD_STR && !strcmp(k->s, s);
}

/* One TaskMetadata (or plain mapping of sections) at node tm into q. */
static bool json_task_metadata(struct quantum *q, const struct md_tree *t, uint32_t tm)
{
    if (t->v[tm].type != MD_MAP) return false;
    /* TaskMetadata: only scalars / arrays / metadata at the top (pydantic
     * may leave the empty ones out); anything else is a plain mapping */
    uint32_t sections = md_get(t, tm, "metadata");
    bool typed = sections && t->v[sections].type == MD_MAP;
    for (uint32_t k = tm + 1; k < t->v[tm].next; k = t->v[k + 1].next)
        typed &= key_is(&t->v[k], "scalars") || key_is(&t->v[k], "arrays") ||
                 key_is(&t->v[k], "metadata");
    if (!typed) sections = tm; /* a plain mapping */
    for (uint32_t k = sections + 1; k < t->v[sections].next; k = t->v[k + 1].next) {
        if (t->v[k].type != MD_STR) continue;
        const char *name = t->v[k].s;
        uint32_t sec = k + 1;
        section_seen(q, name);
        if (t->v[sec].type != MD_MAP) continue;
        if (strcmp(name, "quantum")) {
            uint32_t sc = typed ? md_get(t, sec, "scalars") : sec;
            uint32_t nn = sc ? md_get(t, sc, "nodeName") : 0;
            if (nn && t->v[nn].type == MD_STR && !strchr(name, ':'))
                snprintf(q->task_node, sizeof q->task_node, "%s", t->v[nn].s);
            continue;
        }
        q->have_quantum = true;
        if (typed) {
            uint32_t sc = md_get(t, sec, "scalars"), ar = md_get(t, sec, "arrays");
            if (sc) json_keys(q, t, sc);
            if (ar) json_keys(q, t, ar);
        } else {
            json_keys(q, t, sec);
        }
    }
    return true;
}

/* YAML: a PropertySet sequence or a plain mapping of sections. */
struct ywalk {
    const struct md_tree *t;
};

static const char *yscalar(const struct ywalk *w, uint32_t n)
{
    return w->t->v[n].type == MD_STR ? w->t->v[n].s : NULL;
}

/* A value node: a scalar, or a list whose last scalar counts. */
static const char *ylast(const struct ywalk *w, uint32_t v)
{
    const struct md_node *x = &w->t->v[v];
    if (x->type == MD_SEQ) {
        if (!x->n) return NULL;
        uint32_t last = v + 1;
        for (uint32_t i = 1; i < x->n; i++) last = w->t->v[last].next;
        v = last;
    }
    return yscalar(w, v);
}

static void yquantum_key(struct quantum *q, const char *key, const char *val)
{
    if (!key || !val) return;
    quantum_key(q, key, val, false, 0);
}

/* A PropertySet/PropertyList sequence of entries [name, Type, value(, c)]:
 * top = true at the document root (entries of Type PropertySet are
 * sections); in_quantum: this is the quantum section. */
static void ypropertyset(struct ywalk *w, struct quantum *q, uint32_t seq, bool top,
                         bool in_quantum)
{
    const struct md_tree *t = w->t;
    for (uint32_t e = seq + 1; e < t->v[seq].next; e = t->v[e].next) {
        if (t->v[e].type != MD_SEQ || t->v[e].n < 3) continue;
        uint32_t f0 = e + 1, f1 = t->v[f0].next, val = t->v[f1].next;
        const char *name = yscalar(w, f0), *type = yscalar(w, f1);
        if (!name || !type) continue;
        if (!strcmp(type, "PropertySet") || !strcmp(type, "PropertyList")) {
            if (top) {
                section_seen(q, name);
                if (!strcmp(name, "quantum") && t->v[val].type == MD_SEQ) {
                    q->have_quantum = true;
                    ypropertyset(w, q, val, false, true);
                } else if (!strchr(name, ':') && t->v[val].type == MD_SEQ) {
                    ypropertyset(w, q, val, false, false); /* the task's nodeName */
                }
            }
            continue;
        }
        if (in_quantum) yquantum_key(q, name, ylast(w, val));
        else if (!top && !strcmp(name, "nodeName") && ylast(w, val))
            snprintf(q->task_node, sizeof q->task_node, "%s", ylast(w, val));
    }
}

/* A plain mapping of sections. */
static void ymapping(struct ywalk *w, struct quantum *q, uint32_t map)
{
    const struct md_tree *t = w->t;
    for (uint32_t k = map + 1; k < t->v[map].next; k = t->v[k + 1].next) {
        const char *name = yscalar(w, k);
        uint32_t sec = k + 1;
        if (!name) continue;
        section_seen(q, name);
        if (strcmp(name, "quantum")) {
            if (t->v[sec].type == MD_MAP && !strchr(name, ':'))
                for (uint32_t kv = sec + 1; kv < t->v[sec].next; kv = t->v[kv + 1].next) {
                    const char *key = yscalar(w, kv), *v = ylast(w, kv + 1);
                    if (key && v && !strcmp(key, "nodeName"))
                        snprintf(q->task_node, sizeof q->task_node, "%s", v);
                }
            continue;
        }
        if (t->v[sec].type == MD_MAP) {
            q->have_quantum = true;
            for (uint32_t kv = sec + 1; kv < t->v[sec].next; kv = t->v[kv + 1].next)
                yquantum_key(q, yscalar(w, kv), ylast(w, kv + 1));
        } else if (t->v[sec].type == MD_SEQ) {
            q->have_quantum = true;
            ypropertyset(w, q, sec, false, true);
        }
    }
}

/* ---------------------------------------------------------------- records */

static void reject(struct lsst_state *st, enum tl_reject why, const char *detail)
{
    st->stats.rejected++;
    st->stats.rejected_by[why]++;
    if (st->emit.reject) st->emit.reject(st->emit.ctx, st->stats.lines, why, detail);
}

static void reject_nomem(struct lsst_state *st)
{
    st->nomem = true;
    reject(st, TL_REJ_LIMIT, "out of memory");
}


static void emit_quantum(struct lsst_state *st, struct quantum *q, int attempt, bool final)
{
    if (!q->have_quantum || !q->has[END][F_CPU] || !q->has_utc[END]) {
        reject(st, TL_REJ_NO_RESOURCES, q->have_quantum ? "no endCpuTime/endUtc in quantum"
                                                        : "no quantum section");
        return;
    }
    struct tl_record r;
    memset(&r, 0, sizeof r);
    r.kind = TL_REC_TASK;
    r.source = "lsst";
    r.task_id = -1;
    r.attempt = attempt;
    r.final = final;
    r.line = st->stats.lines;
    r.category = q->label[0] ? q->label : st->path_label[0] ? st->path_label : "(unknown)";
    r.host = q->node[0] ? q->node : q->task_node[0] ? q->task_node : NULL;
    r.workflow = st->workflow[0] ? st->workflow : NULL;
    bool no_work = !q->has[START][F_CPU] && !q->has[INIT][F_CPU];
    r.result = no_work ? "NO_WORK" : "SUCCESS";
    r.time_ns = q->utc_ns[END];
    if (q->has_utc[PREP]) r.start_ns = q->utc_ns[PREP]; /* where the wall time starts */
    /* analysis_tools: missing init/start count as end */
    for (int f = 0; f < NFIELD; f++)
        for (int ph = INIT; ph <= START; ph++)
            if (!q->has[ph][f] && q->has[END][f]) q->v[ph][f] = q->v[END][f];
    double end_cpu = q->v[END][F_CPU];
    tl_record_set(&r, TL_M_CPU_TIME_S, end_cpu - q->v[START][F_CPU]);
    tl_record_set(&r, TL_M_INIT_TIME_S, q->v[START][F_CPU] - q->v[INIT][F_CPU]);
    if (q->has_utc[PREP]) tl_record_set(&r, TL_M_WALL_TIME_S, (double)(q->utc_ns[END] - q->utc_ns[PREP]) * 1e-9);
    /* Quanta run one after another in one process (pipetask -j 1, a BPS
     * job clustering quanta) report getrusage's ru_maxrss: the process's
     * peak so far, never lower. One that ends with the peak its process
     * had before it began (prep) did not raise it: its value is earlier
     * work's, an upper bound of its own. Counted, so summary and advise
     * say so (DM-54057's calibrateImage provenance: 3.16 GB at prep and
     * at end). */
    if (!no_work && q->has[PREP][F_RSS] && q->has[END][F_RSS] && q->v[END][F_RSS] > 0 &&
        q->v[END][F_RSS] == q->v[PREP][F_RSS])
        st->docs[2]++;
    if (q->has[END][F_RSS]) {
        double mult = 1;
        if (!strcmp(st->cfg.rss_unit, "kib")) mult = 1024;
        else if (strcmp(st->cfg.rss_unit, "bytes") && q->version < 1) mult = 1024;
        tl_record_set(&r, TL_M_MAX_RSS_BYTES, q->v[END][F_RSS] * mult);
    }
    static const struct {
        enum field f;
        enum tl_metric m;
    } deltas[] = {
        {F_USER, TL_M_USER_TIME_S},         {F_SYSTEM, TL_M_SYSTEM_TIME_S},
        {F_MINFLT, TL_M_MINOR_PAGE_FAULTS}, {F_MAJFLT, TL_M_MAJOR_PAGE_FAULTS},
        {F_BLKIN, TL_M_BLOCK_INPUTS},       {F_BLKOUT, TL_M_BLOCK_OUTPUTS},
        {F_VCSW, TL_M_CONTEXT_SWITCHES},    {F_IVCSW, TL_M_INVOL_CONTEXT_SWITCHES},
    };
    for (size_t i = 0; i < sizeof deltas / sizeof *deltas; i++)
        if (q->has[END][deltas[i].f] && (q->has[START][deltas[i].f] || no_work))
            tl_record_set(&r, deltas[i].m, q->v[END][deltas[i].f] - q->v[START][deltas[i].f]);
    r.n_tags = st->ntags;
    memcpy(r.tags, st->tags, sizeof(struct tl_tag) * (size_t)st->ntags);
    char detail[160]; /* .inf, 1e400, an end before its start */
    if (tl_record_drop_bad_values(&r, detail, sizeof detail)) reject(st, TL_REJ_BAD_VALUE, detail);
    st->stats.records++;
    st->emit.record(st->emit.ctx, &r);
}

static void new_quantum(struct quantum *q)
{
    memset(q, 0, sizeof *q);
    q->version = -1;
}

static void tree_reject(struct lsst_state *st, enum md_rc rc)
{
    if (rc == MD_TOO_MANY) reject(st, TL_REJ_TOO_LARGE, "more nodes than max_nodes");
    else if (rc == MD_TOO_DEEP) reject(st, TL_REJ_TOO_LARGE, "nested deeper than 64 levels");
    else reject_nomem(st);
}

static void reset_tree(struct lsst_state *st)
{
    long long m = st->cfg.max_nodes;
    md_tree_reset(&st->tree, m < 1 ? 1 : m > UINT32_MAX / 2 ? UINT32_MAX / 2 : (uint32_t)m);
}

/* The fast scanner's tree, when it vouches for the document; false: an
 * empty tree for the library's. */
static bool fast_tree(struct lsst_state *st, enum md_rc (*scan)(struct md_tree *, const char *, size_t),
                      const char *p, size_t n)
{
    reset_tree(st);
    bool fast = st->cfg.fast_scan && scan(&st->tree, p, n) == MD_OK;
    if (!fast) reset_tree(st);
    st->docs[fast ? 0 : 1]++;
    return fast;
}

static void walk_json(struct lsst_state *st)
{
    const struct md_tree *t = &st->tree;
    uint32_t attempts = md_get(t, 0, "attempts");
    if (attempts && t->v[attempts].type == MD_SEQ) { /* provenance: one record per attempt */
        uint32_t na = t->v[attempts].n, a = attempts + 1;
        for (uint32_t i = 0; i < na; i++, a = t->v[a].next) {
            struct quantum q;
            new_quantum(&q);
            if (json_task_metadata(&q, t, a)) emit_quantum(st, &q, (int)i + 1, i + 1 == na);
            else reject(st, TL_REJ_BAD_DOCUMENT, "an attempt is not a TaskMetadata object");
        }
        if (!na) reject(st, TL_REJ_NO_RESOURCES, "no attempts");
    } else {
        struct quantum q;
        new_quantum(&q);
        if (json_task_metadata(&q, t, 0)) emit_quantum(st, &q, 1, true);
        else reject(st, TL_REJ_BAD_DOCUMENT, "not a JSON object");
    }
}

static void parse_json_doc(struct lsst_state *st, const char *p, size_t n)
{
    if (fast_tree(st, md_json_fast, p, n)) return walk_json(st);
    if (tl_json_values_upper(p, n, 2 * st->cfg.max_nodes) > 2 * st->cfg.max_nodes) /* keys count too */
        return reject(st, TL_REJ_TOO_LARGE, "more nodes than max_nodes");
    size_t len;
    char *fixed = md_json_constants_to_null(p, n, &len);
    if (!fixed) return reject_nomem(st);
    json_error_t je;
    json_t *root = json_loadb(fixed, len, JSON_REJECT_DUPLICATES, &je);
    free(fixed);
    /* Jansson out of memory: its code says so, or no text where it could not */
    if (!root && (json_error_code(&je) == json_error_out_of_memory || !je.text[0])) return reject_nomem(st);
    if (!root) {
        char detail[200];
        snprintf(detail, sizeof detail, "JSON line %d: %s", je.line, je.text);
        return reject(st, TL_REJ_BAD_DOCUMENT, detail);
    }
    enum md_rc rc = md_from_jansson(&st->tree, root);
    if (rc != MD_OK) tree_reject(st, rc);
    else walk_json(st);
    json_decref(root);
}

static void walk_yaml(struct lsst_state *st)
{
    struct quantum q;
    new_quantum(&q);
    struct ywalk w = {&st->tree};
    enum md_type root = st->tree.v[0].type;
    if (root == MD_SEQ) ypropertyset(&w, &q, 0, true, false);
    else if (root == MD_MAP) ymapping(&w, &q, 0);
    if (root != MD_SEQ && root != MD_MAP) reject(st, TL_REJ_BAD_DOCUMENT, "a single value");
    else emit_quantum(st, &q, 1, true);
}

/* Whether flow collections ([ and {, outside quoted scalars and comments)
 * nest deeper than the tree may (MD_MAX_DEPTH). libyaml's time grows with
 * the square of that nesting (a 200 KB document of brackets took ~35 s), and
 * the tree would refuse it after the parse anyway: one pass refuses it first. */
static bool flow_too_deep(const char *p, size_t n)
{
    int depth = 0;
    char quote = 0;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (quote) {
            if (c == '\\' && quote == '"') i++;
            else if (c == quote) quote = 0;
            continue;
        }
        if (c == '"' || c == '\'') quote = c;
        else if (c == '#' && (i == 0 || p[i - 1] == ' ' || p[i - 1] == '\t' || p[i - 1] == '\n'))
            while (i < n && p[i] != '\n') i++;
        else if ((c == '[' || c == '{') && ++depth > MD_MAX_DEPTH) return true;
        else if ((c == ']' || c == '}') && depth > 0) depth--;
    }
    return false;
}

/* Whether the document has at most max nodes, counted on libyaml's event
 * stream (constant memory) before its loader builds the tree: 32 MB of
 * "[0,0,...]" (3 KB compressed) made 16 million nodes and took 2.7 GB. */
static bool yaml_nodes_within(const char *p, size_t n, long long max)
{
    yaml_parser_t yp;
    if (!yaml_parser_initialize(&yp)) return false;
    yaml_parser_set_input_string(&yp, (const unsigned char *)p, n);
    long long nodes = 0;
    bool done = false, ok = true;
    while (!done && ok) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&yp, &ev)) break; /* the loader says what is wrong */
        nodes += ev.type == YAML_SCALAR_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
                 ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_ALIAS_EVENT;
        ok = nodes <= max;
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&yp);
    return ok;
}

static void parse_yaml_doc(struct lsst_state *st, const char *p, size_t n)
{
    if (fast_tree(st, md_yaml_fast, p, n)) return walk_yaml(st);
    if (flow_too_deep(p, n)) return reject(st, TL_REJ_TOO_LARGE, "flow collections nested deeper than 64");
    if (!yaml_nodes_within(p, n, st->cfg.max_nodes)) return reject(st, TL_REJ_TOO_LARGE, "more nodes than max_nodes");
    yaml_parser_t yp;
    yaml_document_t d;
    if (!yaml_parser_initialize(&yp)) return reject_nomem(st);
    yaml_parser_set_input_string(&yp, (const unsigned char *)p, n);
    if (!yaml_parser_load(&yp, &d)) {
        if (yp.error == YAML_MEMORY_ERROR) { /* not the document's fault */
            yaml_parser_delete(&yp);
            return reject_nomem(st);
        }
        char detail[200];
        snprintf(detail, sizeof detail, "YAML line %d: %s", (int)yp.problem_mark.line + 1,
                 yp.problem ? yp.problem : "syntax error");
        yaml_parser_delete(&yp);
        return reject(st, TL_REJ_BAD_DOCUMENT, detail);
    }
    enum md_rc rc = md_from_libyaml(&st->tree, &d);
    if (rc == MD_FALLBACK) reject(st, TL_REJ_BAD_DOCUMENT, "empty document");
    else if (rc != MD_OK) tree_reject(st, rc);
    else walk_yaml(st);
    yaml_document_delete(&d);
    yaml_parser_delete(&yp);
}

/* ---------------------------------------------------------------- path */

static void keep_tag(struct lsst_state *st, size_t *used, const char *key, const char *v, size_t len)
{
    if (!strcmp(key, "label")) {
        snprintf(st->path_label, sizeof st->path_label, "%.*s", (int)len, v);
    } else if (!strcmp(key, "run")) {
        snprintf(st->workflow, sizeof st->workflow, "%.*s", (int)len, v);
    } else if (st->ntags < MAX_PATH_TAGS && *used + len + 1 < sizeof st->tagbuf) {
        char *dst = st->tagbuf + *used;
        memcpy(dst, v, len);
        dst[len] = '\0';
        *used += len + 1;
        st->tags[st->ntags].key = key; /* static, or in the compiled pattern */
        st->tags[st->ntags++].value = dst;
    }
}

static void path_tags(struct lsst_state *st)
{
    st->ntags = 0;
    st->workflow[0] = st->path_label[0] = '\0';
    if (!st->name) return;
    size_t used = 0;
    if (!st->re) {
        struct tl_span ids[TL_BID_COUNT];
        tl_butler_path_ids(st->name, ids);
        for (int i = 0; i < TL_BID_COUNT; i++)
            if (ids[i].p) keep_tag(st, &used, tl_bid_names[i], ids[i].p, ids[i].n);
        return;
    }
    int rc = pcre2_match(st->re, (PCRE2_SPTR)st->name, PCRE2_ZERO_TERMINATED, 0, 0, st->md, NULL);
    if (rc < 0) return;
    uint32_t count;
    PCRE2_SPTR table;
    uint32_t esize;
    pcre2_pattern_info(st->re, PCRE2_INFO_NAMECOUNT, &count);
    pcre2_pattern_info(st->re, PCRE2_INFO_NAMETABLE, &table);
    pcre2_pattern_info(st->re, PCRE2_INFO_NAMEENTRYSIZE, &esize);
    PCRE2_SIZE *ov = pcre2_get_ovector_pointer(st->md);
    for (uint32_t i = 0; i < count; i++) {
        const unsigned char *e = table + i * esize;
        int g = (e[0] << 8) | e[1];
        const char *gname = (const char *)e + 2;
        if (g >= rc || ov[2 * g] == PCRE2_UNSET) continue;
        size_t len = ov[2 * g + 1] - ov[2 * g];
        const char *v = st->name + ov[2 * g];
        if (len) keep_tag(st, &used, gname, v, len);
    }
}

/* ---------------------------------------------------------------- plugin */

/* A path_regex compiled (NULL with the reason in err when it does not). */
static pcre2_code *compile_path_regex(const char *pat, char *err, size_t errcap)
{
    int errc;
    PCRE2_SIZE erroff;
    pcre2_code *re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, 0, &errc, &erroff, NULL);
    if (!re) {
        char msg[256];
        pcre2_get_error_message(errc, (PCRE2_UCHAR *)msg, sizeof msg);
        snprintf(err, errcap, "lsst.path_regex at offset %zu: %s", (size_t)erroff, msg);
    }
    return re;
}

static enum tl_err lsst_validate(const void *config, const char **key, char *err, size_t errcap)
{
    const struct lsst_config *c = config;
    if (strcmp(c->rss_unit, "auto") && strcmp(c->rss_unit, "kib") && strcmp(c->rss_unit, "bytes")) {
        *key = "rss_unit";
        snprintf(err, errcap, "lsst.rss_unit is auto, kib or bytes, not '%s'", c->rss_unit);
        return TL_ERR_USAGE;
    }
    if (!c->path_regex) return TL_OK;
    pcre2_code *re = compile_path_regex(c->path_regex, err, errcap);
    if (!re) {
        *key = "path_regex";
        return TL_ERR_USAGE;
    }
    pcre2_code_free(re);
    return TL_OK;
}

static enum tl_err lsst_open(void **state, const void *config, const struct tl_emit *emit, char *err, size_t errcap)
{
    struct lsst_state *st = calloc(1, sizeof *st);
    if (!st) return TL_ERR_NOMEM;
    st->cfg = *(const struct lsst_config *)config;
    st->emit = *emit;
    const char *pat = st->cfg.path_regex;
    if (pat && !(st->re = compile_path_regex(pat, err, errcap))) { /* validated: out of memory */
        free(st);
        return TL_ERR_USAGE;
    }
    if (st->re) st->md = pcre2_match_data_create_from_pattern(st->re, NULL);
    *state = st;
    return TL_OK;
}

static void lsst_set_name(void *state, const char *name)
{
    struct lsst_state *st = state;
    free(st->name);
    st->name = name ? strdup(name) : NULL;
    path_tags(st);
}

static enum tl_err lsst_feed(void *state, const char *buf, size_t len)
{
    struct lsst_state *st = state;
    if (st->too_big) return TL_OK;
    if (st->doc.len + len > st->cfg.max_doc) {
        st->too_big = true;
        st->doc.len = 0;
        return TL_OK;
    }
    tl_buf_append(&st->doc, buf, len);
    return st->doc.oom ? TL_ERR_NOMEM : TL_OK;
}

static enum tl_err lsst_finish(void *state)
{
    struct lsst_state *st = state;
    if (st->too_big) {
        st->stats.lines++;
        reject(st, TL_REJ_TOO_LARGE, "over max_doc");
    } else if (st->doc.len) {
        st->stats.lines++; /* documents */
        const char *p = st->doc.data;
        size_t n = st->doc.len, i = 0;
        while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t')) i++;
        if (memchr(p, '\0', n)) reject(st, TL_REJ_NUL_BYTE, NULL);
        else if (i < n && (p[i] == '{' || p[i] == '[') && !(p[i] == '[' && n - i > 1 && p[i + 1] == '['))
            parse_json_doc(st, p, n);
        else parse_yaml_doc(st, p, n);
    }
    st->doc.len = 0;
    st->too_big = false;
    bool nomem = st->nomem;
    st->nomem = false;
    return nomem ? TL_ERR_NOMEM : TL_OK;
}

static void lsst_close(void *state)
{
    struct lsst_state *st = state;
    if (!st) return;
    tl_buf_free(&st->doc);
    md_tree_free(&st->tree);
    pcre2_match_data_free(st->md);
    pcre2_code_free(st->re);
    free(st->name);
    free(st);
}

static const struct tl_parse_stats *lsst_stats(const void *state)
{
    return &((const struct lsst_state *)state)->stats;
}

static size_t lsst_counters(const void *state, struct tl_counter *out, size_t max)
{
    static const char *const n[3] = {"documents_fast_scan", "documents_library", "process_wide_rss"};
    return tl_counters_fill(out, max, n, ((const struct lsst_state *)state)->docs, 3);
}

/* A metadata document: the PropertySet tag, a `quantum` entry or section
 * near the start, or TaskMetadata's JSON keys. */
/* Whether the PropertySet tag is in buf as YAML writes it: as a value (after
 * ':' or '-') or at a line's start, not quoted in prose (a SOURCES.md that
 * describes the format was read as metadata and counted as a rejection). */
static bool property_tag(const char *buf, size_t n)
{
    const char *p = buf, *end = buf + n;
    while ((p = memmem(p, (size_t)(end - p), "!<lsst.daf.base.Property", 24))) {
        const char *q = p;
        while (q > buf && (q[-1] == ' ' || q[-1] == '\t')) q--;
        if (q == buf || q[-1] == ':' || q[-1] == '-' || q[-1] == '\n') return true;
        p += 24;
    }
    return false;
}

static int lsst_probe(const char *buf, size_t len)
{
    size_t n = len < 65536 ? len : 65536;
    if (property_tag(buf, n)) return 95;
    size_t i = 0;
    while (i < n && (buf[i] == ' ' || buf[i] == '\n' || buf[i] == '\r' || buf[i] == '\t')) i++;
    if (i < n && buf[i] == '{') {
        if (memmem(buf, n, "\"attempts\"", 10) || (memmem(buf, n, "\"scalars\"", 9) &&
                                                    memmem(buf, n, "\"metadata\"", 10)))
            return 90;
        if (memmem(buf, n, "\"quantum\"", 9)) return 70;
        return 0;
    }
    if (memmem(buf, n, "- - quantum", 11) || memmem(buf, n, "\nquantum:", 9) ||
        (n >= 8 && !memcmp(buf + i, "quantum:", 8)))
        return 80;
    return 0;
}

/* A pipeline task's metadata file in a butler datastore:
 * <label>_metadata[_...].{yaml,json}, compressed or not. */
static bool lsst_member(const char *base)
{
    if (base[0] == '.' || !strstr(base, "_metadata")) return false;
    static const char *const exts[] = {".yaml", ".json", ".yaml.gz", ".json.gz", ".yaml.zst",
                                       ".json.zst"};
    size_t bl = strlen(base);
    for (size_t i = 0; i < sizeof exts / sizeof *exts; i++) {
        size_t el = strlen(exts[i]);
        if (bl > el && !strcmp(base + bl - el, exts[i])) return true;
    }
    return false;
}

const struct tl_parser tl_parser_lsst = {
    .name = "lsst",
    .help = "LSST task metadata (<label>_metadata: YAML PropertySet, JSON TaskMetadata)",
    .probe = lsst_probe,
    .config_size = sizeof(struct lsst_config),
    .options = lsst_options,
    .validate = lsst_validate,
    .open = lsst_open,
    .feed = lsst_feed,
    .finish = lsst_finish,
    .close = lsst_close,
    .stats = lsst_stats,
    .counters = lsst_counters,
    .set_name = lsst_set_name,
    .member = lsst_member,
};
