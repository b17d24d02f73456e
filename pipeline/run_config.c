/* `tasklens run` settings: the option tables and the YAML layout. See
 * run_config.h. */
#include "pipeline/run_config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "parsers/parser.h"
#include "pipeline/source.h"

#define RS(f) offsetof(struct run_settings, f)
static const struct tl_option run_options[] = {
    {"checkpoint_dir", TL_OPT_STRING, NULL,
     "where state is saved so a restart resumes without loss or double counting (none: no "
     "checkpoints)",
     RS(checkpoint_dir)},
    {"flush_interval", TL_OPT_INT, "1000", "ms between hand-offs to the sinks", RS(flush_interval)},
    {"cumulative_interval", TL_OPT_INT, "10", "s between cumulative task_quantiles points",
     RS(cumulative_interval)},
    {"checkpoint_interval", TL_OPT_INT, "5", "s between checkpoints", RS(checkpoint_interval)},
    {"drain_timeout", TL_OPT_INT, "30000", "ms to wait at exit for InfluxDB to take the spool",
     RS(drain_timeout)},
    {"log_level", TL_OPT_STRING, "info", "error, warn, info or debug", RS(log_level)},
    {"instance", TL_OPT_STRING, NULL, "`instance` tag of the self-metrics (default: host name)",
     RS(instance)},
    {"quiet", TL_OPT_BOOL, "false", "no status line, no rejected-line reports", RS(quiet)},
    {"requests", TL_OPT_STRING, NULL,
     "an LSST BPS submit YAML: each quantum is taken as allocated what it requests for its "
     "label (requestMemory MB, requestCpus; else the file's defaults), as `advise --requests`",
     RS(requests)},
    {0},
};

#define AS(f) offsetof(struct agg_settings, f)
static const struct tl_option agg_options[] = {
    {"by", TL_OPT_LIST, "source,category", "tags that group the quantiles (list)", AS(by)},
    {"window", TL_OPT_INT, "60", "tumbling window in s over record time (0: none)", AS(window)},
    {"alpha", TL_OPT_DOUBLE, "0.005", "relative error of the sketches", AS(alpha)},
    {"max_keys", TL_OPT_INT, "10000",
     "groups kept, and categories named on task points (InfluxDB series); later ones go to "
     "`_other`, counted (self-metrics agg_overflow_records, other_points)", AS(max_keys)},
    {"exact_limit", TL_OPT_INT, "10000", "values kept verbatim per sketch (exact quantiles)",
     AS(exact_limit)},
    {"histograms", TL_OPT_BOOL, "true",
     "also write each closed window as task_histogram buckets (bounds fixed by alpha), which "
     "the dashboards sum over any range",
     AS(histograms)},
    {"histogram_windows", TL_OPT_LIST, "600,3600",
     "coarser windows also written as task_histogram buckets (s, multiples of `window`): what the "
     "dashboards read over a day or a week instead of every window",
     AS(histogram_windows)},
    {"allowed_lateness", TL_OPT_INT, "900",
     "s a record may come after its window was written and still land in that window's "
     "quantiles (the window is written again whole; two managers' logs read one after the "
     "other, a clock that steps back); later ones are counted (self-metric too_late_records) "
     "and said, and still count in cumulative and histogram points",
     AS(allowed_lateness)},
    {0},
};

void run_config_init(struct run_config *c)
{
    memset(c, 0, sizeof *c);
    tl_options_defaults(run_options, &c->run);
    tl_options_defaults(agg_options, &c->agg);
}

struct src_settings *run_config_add_source(struct run_config *c, const struct tl_source_type *type)
{
    if (c->nsrc == RUN_MAX_SOURCES) return NULL;
    void *config = calloc(1, type->config_size);
    if (!config) return NULL;
    struct src_settings *s = &c->src[c->nsrc++];
    *s = (struct src_settings){.type = type, .config = config};
    tl_options_defaults(type->options, config);
    return s;
}

enum tl_err run_config_source_set(struct src_settings *s, const char *name, const char *value)
{
    char err[256];
    return tl_options_set(s->type->options, s->config, name, value, err, sizeof err);
}

struct tl_sink_conf *run_config_add_sink(struct run_config *c, const struct tl_sink_type *type)
{
    if (c->nsink == RUN_MAX_SINKS) return NULL;
    struct tl_sink_conf *s = &c->sink[c->nsink];
    if (tl_sink_conf_init(s, type)) {
        tl_sink_conf_free(s);
        return NULL;
    }
    c->nsink++;
    return s;
}

const char *run_config_source_get(const struct src_settings *s, const char *name)
{
    for (const struct tl_option *o = s->type->options; o && o->name; o++)
        if (!strcmp(o->name, name) && (o->type == TL_OPT_STRING || o->type == TL_OPT_LIST))
            return *(const char *const *)((const char *)s->config + o->offset);
    return NULL;
}

/* The `type:` of a list entry: its index among names (n of them), or -1
 * with the message in err. */
static int entry_type(const struct tl_cfg_doc *d, const struct tl_cfg_node *m,
                      const char *const *names, int n, const char *where, char *err, size_t errlen)
{
    if (m->kind != TL_CFG_MAP) {
        snprintf(err, errlen, "%s:%d: %s must be a mapping with a `type`", d->path, m->line, where);
        return -1;
    }
    const struct tl_cfg_node *t = tl_cfg_get(m, "type");
    if (!t || t->kind != TL_CFG_SCALAR) {
        snprintf(err, errlen, "%s:%d: %s: `type` is missing", d->path, m->line, where);
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], t->scalar)) return i;
    char known[256] = "";
    for (int i = 0; i < n; i++)
        snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "",
                 names[i]);
    snprintf(err, errlen, "%s:%d: %s: type '%s' is not one of %s", d->path, t->line, where,
             t->scalar, known);
    return -1;
}

/* A source entry beyond its option table: the type's own checks, the
 * parser and its options. */
static enum tl_err check_source_entry(const struct tl_cfg_doc *d, const struct tl_cfg_node *m,
                                      const char *where, const struct src_settings *s, char *err,
                                      size_t errlen)
{
    char why[512];
    const char *key = NULL;
    const struct src_base *b = tl_src_base(s);
    if (s->type->validate && s->type->validate(s->config, &key, why, sizeof why)) {
        snprintf(err, errlen, "%s:%d: %s: %s", d->path, key ? tl_cfg_key_line(m, key) : m->line,
                 where, why);
        return TL_ERR_USAGE;
    }
    if (b->parser && strcmp(b->parser, "auto") && !tl_parser_find(b->parser)) {
        snprintf(err, errlen, "%s:%d: %s: parser: '%s' is not a known format (see "
                 "`tasklens formats`)",
                 d->path, tl_cfg_key_line(m, "parser"), where, b->parser);
        return TL_ERR_USAGE;
    }
    if (!b->parser_options) return TL_OK;
    const struct tl_parser *p = b->parser ? tl_parser_find(b->parser) : NULL;
    if (!p) {
        snprintf(err, errlen, "%s:%d: %s: parser options need a named parser, not auto", d->path,
                 b->parser_options->line, where);
        return TL_ERR_USAGE;
    }
    /* validated here against a scratch config; applied when the parser is
     * set up */
    _Alignas(16) char scratch[1024] = {0};
    char pw[96];
    snprintf(pw, sizeof pw, "%s options", where);
    if (p->config_size > sizeof scratch) return TL_ERR_INTERNAL;
    tl_options_defaults(p->options, scratch);
    enum tl_err rc = tl_cfg_apply(d, b->parser_options, p->options, scratch, pw, NULL, err, errlen);
    if (rc || !p->validate || !(rc = p->validate(scratch, &key, why, sizeof why))) return rc;
    snprintf(err, errlen, "%s:%d: %s: %s", d->path, tl_cfg_key_line(b->parser_options, key), pw, why);
    return rc;
}

/* A sink entry beyond its option table: the type's own checks. */
static enum tl_err check_sink(const struct tl_sink_conf *k, const char *file, int i, char *err,
                              size_t errlen)
{
    char why[512];
    const char *key = NULL;
    if (!k->type->validate || !k->type->validate(k->config, &key, why, sizeof why)) return TL_OK;
    if (key)
        snprintf(err, errlen, "%s:%d: sinks[%d].%s: %s", file, k->line, i, key, why);
    else
        snprintf(err, errlen, "%s:%d: sinks[%d] (%s): %s", file, k->line, i, k->type->name, why);
    return TL_ERR_USAGE;
}

static enum tl_err load_list(struct run_config *c, const char *key, char *err, size_t errlen)
{
    const struct tl_cfg_doc *d = &c->doc;
    const struct tl_cfg_node *list = tl_cfg_get(d->root, key);
    if (!list) return TL_OK;
    if (list->kind != TL_CFG_SEQ) {
        snprintf(err, errlen, "%s:%d: %s: a list is expected (entries start with '- ')", d->path,
                 list->line, key);
        return TL_ERR_USAGE;
    }
    bool sources = !strcmp(key, "sources");
    const char *names[64];
    int nnames = 0;
    if (sources)
        for (int i = 0; tl_source_types[i] && nnames < 64; i++) names[nnames++] = tl_source_types[i]->name;
    else
        for (int i = 0; tl_sink_types[i] && nnames < 64; i++) names[nnames++] = tl_sink_types[i]->name;
    for (size_t i = 0; i < list->n; i++) {
        const struct tl_cfg_node *m = list->items[i];
        char where[64];
        snprintf(where, sizeof where, "%s[%zu]", key, i);
        int t = entry_type(d, m, names, nnames, where, err, errlen);
        if (t < 0) return TL_ERR_USAGE;
        snprintf(where, sizeof where, "%s[%zu] (%s)", key, i, names[t]);
        static const char *const skip_type[] = {"type", NULL};
        enum tl_err rc;
        if (sources) {
            struct src_settings *s = run_config_add_source(c, tl_source_types[t]);
            if (!s) {
                snprintf(err, errlen, "%s:%d: more than %d sources", d->path, m->line,
                         RUN_MAX_SOURCES);
                return TL_ERR_LIMIT;
            }
            s->line = m->line;
            if ((rc = tl_cfg_apply(d, m, s->type->options, s->config, where, skip_type, err, errlen)) ||
                (rc = check_source_entry(d, m, where, s, err, errlen)))
                return rc;
            continue;
        }
        struct tl_sink_conf *k = run_config_add_sink(c, tl_sink_types[t]);
        if (!k) {
            snprintf(err, errlen, "%s:%d: more than %d sinks", d->path, m->line, RUN_MAX_SINKS);
            return TL_ERR_LIMIT;
        }
        k->line = m->line;
        if ((rc = tl_cfg_apply(d, m, k->type->options, k->config, where, skip_type, err, errlen)) ||
            (rc = check_sink(k, d->path, (int)i, err, errlen)))
            return rc;
    }
    return TL_OK;
}

enum tl_err run_config_load(struct run_config *c, const char *path, char *err, size_t errlen)
{
    run_config_init(c);
    c->file = path;
    enum tl_err rc = tl_cfg_load(path, &c->doc, err, errlen);
    if (rc) return rc;
    static const char *const top_skip[] = {"sources", "sinks", "aggregate", NULL};
    rc = tl_cfg_apply(&c->doc, c->doc.root, run_options, &c->run, "top level", top_skip, err,
                      errlen);
    if (rc) {
        /* name the list keys too when a top-level key is unknown */
        char *known = strstr(err, "(known: ");
        if (known && strlen(err) + 40 < errlen) {
            size_t at = strlen(err) - 1;
            snprintf(err + at, errlen - at, ", sources, sinks, aggregate)");
        }
        return rc;
    }
    const struct tl_cfg_node *agg = tl_cfg_get(c->doc.root, "aggregate");
    if (agg && (rc = tl_cfg_apply(&c->doc, agg, agg_options, &c->agg, "aggregate", NULL, err,
                                  errlen)))
        return rc;
    if ((rc = load_list(c, "sources", err, errlen)) || (rc = load_list(c, "sinks", err, errlen)))
        return rc;
    return run_config_validate(c, err, errlen);
}

enum tl_err run_config_validate(const struct run_config *c, char *err, size_t errlen)
{
    const char *f = c->file ? c->file : "command line";
    if (!c->nsrc) {
        snprintf(err, errlen, "%s: no sources (give `sources:` or --follow PATH)", f);
        return TL_ERR_USAGE;
    }
    if (!c->nsink && !c->view_only) {
        snprintf(err, errlen, "%s: no sinks (give `sinks:`, --influx-db/--influx-bucket or "
                 "--lines-out)", f);
        return TL_ERR_USAGE;
    }
    int stdin_sources = 0;
    for (int i = 0; i < c->nsrc; i++) stdin_sources += !strcmp(c->src[i].type->name, "stdin");
    if (stdin_sources > 1) {
        snprintf(err, errlen, "%s: stdin can be a source only once", f);
        return TL_ERR_USAGE;
    }
    struct {
        const char *name;
        long long v, min, max;
    } ranges[] = {
        {"flush_interval", c->run.flush_interval, 10, 3600000},
        {"cumulative_interval", c->run.cumulative_interval, 1, 86400},
        {"checkpoint_interval", c->run.checkpoint_interval, 1, 86400},
        {"drain_timeout", c->run.drain_timeout, 0, 86400000},
        {"aggregate.window", c->agg.window, 0, 86400 * 366},
        {"aggregate.max_keys", c->agg.max_keys, 1, 100000000},
        {"aggregate.exact_limit", c->agg.exact_limit, 0, 100000000},
        {"aggregate.allowed_lateness", c->agg.allowed_lateness, 0, 86400},
    };
    for (size_t i = 0; i < sizeof ranges / sizeof *ranges; i++)
        if (ranges[i].v < ranges[i].min || ranges[i].v > ranges[i].max) {
            snprintf(err, errlen, "%s: %s: %lld is outside %lld..%lld", f, ranges[i].name,
                     ranges[i].v, ranges[i].min, ranges[i].max);
            return TL_ERR_USAGE;
        }
    for (int i = 0; i < c->nsrc; i++) {
        const struct src_settings *src = &c->src[i];
        char why[512];
        const char *key = NULL;
        if (tl_src_base(src)->path && !*tl_src_base(src)->path) {
            snprintf(err, errlen, "%s:%d: sources[%d].path: empty", f, src->line, i);
            return TL_ERR_USAGE;
        }
        /* entries of a file were checked as they were read, with their lines */
        if (!src->line && src->type->validate && src->type->validate(src->config, &key, why, sizeof why)) {
            snprintf(err, errlen, "%s: sources[%d] (%s): %s", f, i, src->type->name, why);
            return TL_ERR_USAGE;
        }
    }
    for (int i = 0; i < c->nsink; i++) { /* entries of a file were checked as they were read */
        enum tl_err rc = c->sink[i].line ? TL_OK : check_sink(&c->sink[i], f, i, err, errlen);
        if (rc) return rc;
    }
    if (!(c->agg.alpha > 0 && c->agg.alpha < 0.5)) {
        snprintf(err, errlen, "%s: aggregate.alpha: %g is outside (0, 0.5)", f, c->agg.alpha);
        return TL_ERR_USAGE;
    }
    static const char *const levels[] = {"error", "warn", "info", "debug"};
    bool level_ok = false;
    for (int i = 0; i < 4; i++) level_ok |= !strcmp(c->run.log_level, levels[i]);
    if (!level_ok) {
        snprintf(err, errlen, "%s: log_level: '%s' is not error, warn, info or debug", f,
                 c->run.log_level);
        return TL_ERR_USAGE;
    }
    return TL_OK;
}

void run_config_free(struct run_config *c)
{
    for (int i = 0; i < c->nsrc; i++) free(c->src[i].config);
    c->nsrc = 0;
    for (int i = 0; i < c->nsink; i++) tl_sink_conf_free(&c->sink[i]);
    c->nsink = 0;
    tl_cfg_free(&c->doc);
}

void run_config_help(FILE *out)
{
    fprintf(out, "Settings of `tasklens run -c FILE` (YAML). Values may use ${VAR} or "
                 "${VAR:-default}.\n\ntop level:\n");
    tl_options_help(run_options, "", out);
    fprintf(out, "\naggregate:\n");
    tl_options_help(agg_options, "", out);
    for (int i = 0; tl_source_types[i]; i++) {
        const struct tl_source_type *t = tl_source_types[i];
        fprintf(out, "\nsources: - type: %s (%s)\n", t->name, t->help);
        tl_options_help(t->options, "", out);
    }
    for (int i = 0; tl_sink_types[i]; i++) {
        const struct tl_sink_type *t = tl_sink_types[i];
        fprintf(out, "\nsinks: - type: %s (%s)\n", t->name, t->help);
        tl_options_help(t->options, "", out);
    }
    for (int i = 0; tl_parsers[i]; i++) {
        fprintf(out, "\nparser %s (%s), under a source's `options:`\n", tl_parsers[i]->name,
                tl_parsers[i]->help);
        tl_options_help(tl_parsers[i]->options, "", out);
    }
}
