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

#include "buf.h"
#include "butler_path.h"
#include "parser.h"

struct lsst_config {
    size_t max_doc;
    long long max_nodes;
    const char *rss_unit;
    const char *path_regex;
};

static const struct tl_option lsst_options[] = {
    {"max_doc", TL_OPT_SIZE, "64M", "largest metadata document read (bytes)",
     offsetof(struct lsst_config, max_doc)},
    {"max_nodes", TL_OPT_INT, "1000000", "YAML/JSON nodes visited per document at most",
     offsetof(struct lsst_config, max_nodes)},
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
    char *name;
    pcre2_code *re;
    pcre2_match_data *md;
    char tagbuf[2048];
    struct tl_tag tags[MAX_PATH_TAGS];
    int ntags;
    char workflow[512];
    char path_label[256];
    long long nodes; /* visited in this document */
};

/* ---------------------------------------------------------------- values */

/* "2026-02-05T17:52:57.668196+00:00", or naive, or with Z: ns since epoch. */
static bool parse_utc(const char *s, int64_t *ns)
{
    struct tm tm = {0};
    int y, mo, d, h, mi, sec, n = 0;
    if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 &&
        sscanf(s, "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6)
        return false;
    /* 1970..2200: differences of two times fit in int64 nanoseconds */
    if (y < 1970 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 24 ||
        mi < 0 || mi > 59 || sec < 0 || sec > 61)
        return false;
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    int64_t frac = 0;
    const char *p = s + n;
    if (*p == '.') {
        int digits = 0;
        for (p++; *p >= '0' && *p <= '9'; p++)
            if (digits < 9) {
                frac = frac * 10 + (*p - '0');
                digits++;
            }
        while (digits++ < 9) frac *= 10;
    }
    int64_t off = 0; /* +HH:MM: the tools drop it (it is always +00:00) */
    if ((*p == '+' || *p == '-') && strlen(p) >= 6) {
        int oh = (p[1] - '0') * 10 + (p[2] - '0'), om = (p[4] - '0') * 10 + (p[5] - '0');
        off = (*p == '+' ? 1 : -1) * ((int64_t)oh * 3600 + om * 60);
    }
    *ns = ((int64_t)timegm(&tm) - off) * 1000000000 + frac;
    return true;
}

/* One (key, value) of the quantum section, value as text (the last of a
 * list). */
static void quantum_key(struct quantum *q, const char *key, const char *val, bool is_num,
                        double num)
{
    if (!strcmp(key, "__version__")) {
        q->version = is_num ? (int)num : atoi(val ? val : "0");
        return;
    }
    if (!strcmp(key, "nodeName")) {
        if (val) snprintf(q->node, sizeof q->node, "%s", val);
        return;
    }
    for (int ph = 0; ph < NPHASE; ph++) {
        size_t pl = strlen(phase_names[ph]);
        if (strncmp(key, phase_names[ph], pl)) continue;
        const char *rest = key + pl;
        if (!strcmp(rest, "Utc")) {
            if (val && parse_utc(val, &q->utc_ns[ph])) q->has_utc[ph] = true;
            return;
        }
        for (int f = 0; f < NFIELD; f++)
            if (!strcmp(rest, field_names[f])) {
                double x = num;
                if (!is_num) {
                    char *end;
                    if (!val) return;
                    x = strtod(val, &end);
                    if (end == val) return;
                }
                if (!isfinite(x)) return;
                q->v[ph][f] = x;
                q->has[ph][f] = true;
                return;
            }
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

/* ---------------------------------------------------------------- JSON */

static void json_value_key(struct quantum *q, const char *key, json_t *v)
{
    if (json_is_array(v)) {
        size_t n = json_array_size(v);
        if (!n) return;
        v = json_array_get(v, n - 1); /* the last call's value */
    }
    if (json_is_number(v)) quantum_key(q, key, NULL, true, json_number_value(v));
    else if (json_is_string(v)) quantum_key(q, key, json_string_value(v), false, 0);
    else if (json_is_true(v) || json_is_false(v))
        quantum_key(q, key, NULL, true, json_is_true(v));
}

/* One TaskMetadata (or plain mapping of sections) into q. */
static bool json_task_metadata(struct quantum *q, json_t *tm)
{
    if (!json_is_object(tm)) return false;
    /* TaskMetadata: only scalars / arrays / metadata at the top (pydantic
     * may leave the empty ones out); anything else is a plain mapping */
    json_t *sections = json_object_get(tm, "metadata");
    bool typed = json_is_object(sections);
    const char *tk;
    json_t *tv;
    json_object_foreach(tm, tk, tv) typed &= !strcmp(tk, "scalars") || !strcmp(tk, "arrays") ||
                                             !strcmp(tk, "metadata");
    if (!typed) sections = tm; /* a plain mapping */
    const char *name;
    json_t *sec;
    json_object_foreach(sections, name, sec) {
        section_seen(q, name);
        if (!json_is_object(sec)) continue;
        if (strcmp(name, "quantum")) {
            json_t *sc = typed ? json_object_get(sec, "scalars") : sec;
            json_t *nn = json_is_object(sc) ? json_object_get(sc, "nodeName") : NULL;
            if (json_is_string(nn) && !strchr(name, ':'))
                snprintf(q->task_node, sizeof q->task_node, "%s", json_string_value(nn));
            continue;
        }
        q->have_quantum = true;
        const char *k;
        json_t *v;
        if (typed) {
            json_t *sc = json_object_get(sec, "scalars"), *ar = json_object_get(sec, "arrays");
            if (json_is_object(sc)) json_object_foreach(sc, k, v) json_value_key(q, k, v);
            if (json_is_object(ar)) json_object_foreach(ar, k, v) json_value_key(q, k, v);
        } else {
            json_object_foreach(sec, k, v) json_value_key(q, k, v);
        }
    }
    return true;
}

/* Bare NaN, Infinity and -Infinity (pydantic's ser_json_inf_nan="constants")
 * are not JSON: outside strings they become null (absent values). */
static char *json_fix_constants(const char *p, size_t n, size_t *outlen)
{
    char *o = malloc(n + n / 2 + 8);
    if (!o) return NULL;
    size_t j = 0;
    bool in_str = false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        if (in_str) {
            o[j++] = c;
            if (c == '\\' && i + 1 < n) o[j++] = p[++i];
            else if (c == '"') in_str = false;
            continue;
        }
        if (c == '"') in_str = true;
        size_t skip = 0;
        if (c == 'N' && n - i >= 3 && !memcmp(p + i, "NaN", 3)) skip = 3;
        else if (c == 'I' && n - i >= 8 && !memcmp(p + i, "Infinity", 8)) skip = 8;
        else if (c == '-' && n - i >= 9 && !memcmp(p + i, "-Infinity", 9)) skip = 9;
        if (skip) {
            memcpy(o + j, "null", 4);
            j += 4;
            i += skip - 1;
            continue;
        }
        o[j++] = c;
    }
    *outlen = j;
    return o;
}

/* ---------------------------------------------------------------- YAML */

struct ywalk {
    struct lsst_state *st;
    yaml_document_t *d;
    bool over;
};

static bool ycount(struct ywalk *w)
{
    if (++w->st->nodes > w->st->cfg.max_nodes) w->over = true;
    return !w->over;
}

static const char *yscalar(yaml_node_t *n)
{
    return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* A value node: a scalar, or a list whose last scalar counts. */
static const char *ylast(struct ywalk *w, yaml_node_t *v)
{
    if (v && v->type == YAML_SEQUENCE_NODE) {
        yaml_node_item_t *a = v->data.sequence.items.start, *b = v->data.sequence.items.top;
        if (a == b) return NULL;
        v = yaml_document_get_node(w->d, b[-1]);
    }
    return yscalar(v);
}

static void yquantum_key(struct quantum *q, const char *key, const char *val)
{
    if (!key || !val) return;
    quantum_key(q, key, val, false, 0);
}

/* A PropertySet/PropertyList sequence of entries [name, Type, value(, c)]:
 * top = true at the document root (entries of Type PropertySet are
 * sections); in_quantum: this is the quantum section. */
static void ypropertyset(struct ywalk *w, struct quantum *q, yaml_node_t *seq, bool top,
                         bool in_quantum)
{
    for (yaml_node_item_t *it = seq->data.sequence.items.start;
         it < seq->data.sequence.items.top && ycount(w); it++) {
        yaml_node_t *e = yaml_document_get_node(w->d, *it);
        if (!e || e->type != YAML_SEQUENCE_NODE) continue;
        yaml_node_item_t *f = e->data.sequence.items.start;
        size_t nf = (size_t)(e->data.sequence.items.top - f);
        if (nf < 3) continue;
        const char *name = yscalar(yaml_document_get_node(w->d, f[0]));
        const char *type = yscalar(yaml_document_get_node(w->d, f[1]));
        yaml_node_t *val = yaml_document_get_node(w->d, f[2]);
        if (!name || !type || !val) continue;
        if (!strcmp(type, "PropertySet") || !strcmp(type, "PropertyList")) {
            if (top) {
                section_seen(q, name);
                if (!strcmp(name, "quantum") && val->type == YAML_SEQUENCE_NODE) {
                    q->have_quantum = true;
                    ypropertyset(w, q, val, false, true);
                } else if (!strchr(name, ':') && val->type == YAML_SEQUENCE_NODE) {
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
static void ymapping(struct ywalk *w, struct quantum *q, yaml_node_t *map)
{
    for (yaml_node_pair_t *pr = map->data.mapping.pairs.start;
         pr < map->data.mapping.pairs.top && ycount(w); pr++) {
        const char *name = yscalar(yaml_document_get_node(w->d, pr->key));
        yaml_node_t *sec = yaml_document_get_node(w->d, pr->value);
        if (!name || !sec) continue;
        section_seen(q, name);
        if (strcmp(name, "quantum")) {
            if (sec->type == YAML_MAPPING_NODE && !strchr(name, ':'))
                for (yaml_node_pair_t *kv = sec->data.mapping.pairs.start;
                     kv < sec->data.mapping.pairs.top && ycount(w); kv++) {
                    const char *k = yscalar(yaml_document_get_node(w->d, kv->key));
                    const char *v = ylast(w, yaml_document_get_node(w->d, kv->value));
                    if (k && v && !strcmp(k, "nodeName"))
                        snprintf(q->task_node, sizeof q->task_node, "%s", v);
                }
            continue;
        }
        if (sec->type == YAML_MAPPING_NODE) {
            q->have_quantum = true;
            for (yaml_node_pair_t *kv = sec->data.mapping.pairs.start;
                 kv < sec->data.mapping.pairs.top && ycount(w); kv++)
                yquantum_key(q, yscalar(yaml_document_get_node(w->d, kv->key)),
                             ylast(w, yaml_document_get_node(w->d, kv->value)));
        } else if (sec->type == YAML_SEQUENCE_NODE) {
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

static void set(struct tl_record *r, enum tl_metric m, double v)
{
    if (!isfinite(v)) return;
    r->v[m] = v;
    r->present |= (uint64_t)1 << m;
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
    /* analysis_tools: missing init/start count as end */
    for (int f = 0; f < NFIELD; f++)
        for (int ph = INIT; ph <= START; ph++)
            if (!q->has[ph][f] && q->has[END][f]) q->v[ph][f] = q->v[END][f];
    double end_cpu = q->v[END][F_CPU];
    set(&r, TL_M_CPU_TIME_S, end_cpu - q->v[START][F_CPU]);
    set(&r, TL_M_INIT_TIME_S, q->v[START][F_CPU] - q->v[INIT][F_CPU]);
    if (q->has_utc[PREP]) set(&r, TL_M_WALL_TIME_S, (double)(q->utc_ns[END] - q->utc_ns[PREP]) * 1e-9);
    if (q->has[END][F_RSS]) {
        double mult = 1;
        if (!strcmp(st->cfg.rss_unit, "kib")) mult = 1024;
        else if (strcmp(st->cfg.rss_unit, "bytes") && q->version < 1) mult = 1024;
        set(&r, TL_M_MAX_RSS_BYTES, q->v[END][F_RSS] * mult);
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
            set(&r, deltas[i].m, q->v[END][deltas[i].f] - q->v[START][deltas[i].f]);
    r.n_tags = st->ntags;
    memcpy(r.tags, st->tags, sizeof(struct tl_tag) * (size_t)st->ntags);
    st->stats.records++;
    st->emit.record(st->emit.ctx, &r);
}

static void new_quantum(struct quantum *q)
{
    memset(q, 0, sizeof *q);
    q->version = -1;
}

static void parse_json_doc(struct lsst_state *st, const char *p, size_t n)
{
    size_t len;
    char *fixed = json_fix_constants(p, n, &len);
    if (!fixed) return reject(st, TL_REJ_LIMIT, "out of memory");
    json_error_t je;
    json_t *root = json_loadb(fixed, len, JSON_REJECT_DUPLICATES, &je);
    free(fixed);
    if (!root) {
        char detail[200];
        snprintf(detail, sizeof detail, "JSON line %d: %s", je.line, je.text);
        return reject(st, TL_REJ_BAD_DOCUMENT, detail);
    }
    json_t *attempts = json_object_get(root, "attempts");
    if (json_is_array(attempts)) { /* provenance: one record per attempt */
        size_t na = json_array_size(attempts);
        for (size_t i = 0; i < na; i++) {
            struct quantum q;
            new_quantum(&q);
            if (json_task_metadata(&q, json_array_get(attempts, i)))
                emit_quantum(st, &q, (int)i + 1, i + 1 == na);
            else reject(st, TL_REJ_BAD_DOCUMENT, "an attempt is not a TaskMetadata object");
        }
        if (!na) reject(st, TL_REJ_NO_RESOURCES, "no attempts");
    } else {
        struct quantum q;
        new_quantum(&q);
        if (json_task_metadata(&q, root)) emit_quantum(st, &q, 1, true);
        else reject(st, TL_REJ_BAD_DOCUMENT, "not a JSON object");
    }
    json_decref(root);
}

static void parse_yaml_doc(struct lsst_state *st, const char *p, size_t n)
{
    yaml_parser_t yp;
    yaml_document_t d;
    if (!yaml_parser_initialize(&yp)) return reject(st, TL_REJ_LIMIT, "out of memory");
    yaml_parser_set_input_string(&yp, (const unsigned char *)p, n);
    if (!yaml_parser_load(&yp, &d)) {
        char detail[200];
        snprintf(detail, sizeof detail, "YAML line %d: %s", (int)yp.problem_mark.line + 1,
                 yp.problem ? yp.problem : "syntax error");
        yaml_parser_delete(&yp);
        return reject(st, TL_REJ_BAD_DOCUMENT, detail);
    }
    yaml_node_t *root = yaml_document_get_root_node(&d);
    struct quantum q;
    new_quantum(&q);
    struct ywalk w = {st, &d, false};
    if (!root) reject(st, TL_REJ_BAD_DOCUMENT, "empty document");
    else {
        if (root->type == YAML_SEQUENCE_NODE) ypropertyset(&w, &q, root, true, false);
        else if (root->type == YAML_MAPPING_NODE) ymapping(&w, &q, root);
        if (w.over) reject(st, TL_REJ_TOO_LARGE, "too many nodes");
        else if (root->type == YAML_SCALAR_NODE) reject(st, TL_REJ_BAD_DOCUMENT, "a single value");
        else emit_quantum(st, &q, 1, true);
    }
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

static enum tl_err lsst_open(void **state, const void *config, const struct tl_emit *emit)
{
    struct lsst_state *st = calloc(1, sizeof *st);
    if (!st) return TL_ERR_NOMEM;
    st->cfg = *(const struct lsst_config *)config;
    st->emit = *emit;
    if (strcmp(st->cfg.rss_unit, "auto") && strcmp(st->cfg.rss_unit, "kib") &&
        strcmp(st->cfg.rss_unit, "bytes")) {
        free(st);
        return TL_ERR_USAGE;
    }
    const char *pat = st->cfg.path_regex;
    int errc;
    PCRE2_SIZE erroff;
    if (pat) st->re = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED, 0, &errc, &erroff, NULL);
    if (pat && !st->re) {
        char msg[256];
        pcre2_get_error_message(errc, (PCRE2_UCHAR *)msg, sizeof msg);
        fprintf(stderr, "tasklens: lsst.path_regex at offset %zu: %s\n", (size_t)erroff, msg);
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
    st->nodes = 0;
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
    return TL_OK;
}

static void lsst_close(void *state)
{
    struct lsst_state *st = state;
    if (!st) return;
    tl_buf_free(&st->doc);
    pcre2_match_data_free(st->md);
    pcre2_code_free(st->re);
    free(st->name);
    free(st);
}

static const struct tl_parse_stats *lsst_stats(const void *state)
{
    return &((const struct lsst_state *)state)->stats;
}

/* A metadata document: the PropertySet tag, a `quantum` entry or section
 * near the start, or TaskMetadata's JSON keys. */
static int lsst_probe(const char *buf, size_t len)
{
    size_t n = len < 65536 ? len : 65536;
    if (memmem(buf, n, "!<lsst.daf.base.Property", 24)) return 95;
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

const struct tl_parser tl_parser_lsst = {
    .name = "lsst",
    .help = "LSST task metadata (<label>_metadata: YAML PropertySet, JSON TaskMetadata)",
    .probe = lsst_probe,
    .config_size = sizeof(struct lsst_config),
    .options = lsst_options,
    .open = lsst_open,
    .feed = lsst_feed,
    .finish = lsst_finish,
    .close = lsst_close,
    .stats = lsst_stats,
    .set_name = lsst_set_name,
};
