/* The registry: which parsers exist, and auto-detection by probing. A build
 * may leave out the parsers whose libraries it lacks (TL_DASF, TL_PARSL). */
#include "parsers/parser.h"

#include "core/bytes.h"

#include <stdlib.h>
#include <string.h>

extern const struct tl_parser tl_parser_wq;
extern const struct tl_parser tl_parser_lsst;
extern const struct tl_parser tl_parser_chrome;
#ifdef TL_WITH_DASF
extern const struct tl_parser tl_parser_dasf;
#endif
extern const struct tl_parser tl_parser_spark;
extern const struct tl_parser tl_parser_rmonitor;
#ifdef TL_WITH_PARSL
extern const struct tl_parser tl_parser_parsl;
#endif
extern const struct tl_parser tl_parser_nextflow;
extern const struct tl_parser tl_parser_snakemake;
extern const struct tl_parser tl_parser_codecarbon;
extern const struct tl_parser tl_parser_lineprof;

const struct tl_parser *const tl_parsers[] = {
    &tl_parser_wq,
    &tl_parser_lsst,
    &tl_parser_chrome,
#ifdef TL_WITH_DASF
    &tl_parser_dasf,
#endif
    &tl_parser_spark,
    &tl_parser_rmonitor,
#ifdef TL_WITH_PARSL
    &tl_parser_parsl,
#endif
    &tl_parser_nextflow,
    &tl_parser_snakemake,
    &tl_parser_codecarbon,
    &tl_parser_lineprof,
    NULL,
};

const char *tl_parsers_left_out(void)
{
    return ""
#ifndef TL_WITH_DASF
           " dasf (TL_DASF=OFF)"
#endif
#ifndef TL_WITH_PARSL
           " parsl (TL_PARSL=OFF)"
#endif
        ;
}

const struct tl_parser *tl_parser_find(const char *name)
{
    for (int i = 0; tl_parsers[i]; i++)
        if (!strcmp(tl_parsers[i]->name, name)) return tl_parsers[i];
    return NULL;
}

const struct tl_parser *tl_parser_for_dir(const char *dirname)
{
    for (int i = 0; tl_parsers[i]; i++)
        if (tl_parsers[i]->dir_whole && tl_parsers[i]->dir_whole(dirname)) return tl_parsers[i];
    return NULL;
}

const struct tl_parser *tl_parser_detect(const char *buf, size_t len, int *score)
{
    const struct tl_parser *best = NULL;
    int best_score = 0;
    if (score) *score = 0;
    if (!len) return NULL; /* nothing to be sure of (and no NULL + 0 for the probes) */
    for (int i = 0; tl_parsers[i]; i++) {
        int s = tl_parsers[i]->probe(buf, len);
        if (s > best_score) {
            best_score = s;
            best = tl_parsers[i];
        }
    }
    if (score) *score = best_score;
    return best;
}

enum tl_err tl_parser_inst_init(struct tl_parser_inst *inst, const struct tl_parser *p)
{
    memset(inst, 0, sizeof *inst);
    inst->p = p;
    inst->config = calloc(1, p->config_size ? p->config_size : 1);
    if (!inst->config) return TL_ERR_NOMEM;
    return tl_options_defaults(p->options, inst->config);
}

enum tl_err tl_parser_inst_open(struct tl_parser_inst *inst, const struct tl_emit *emit, char *err, size_t errcap)
{
    if (errcap) err[0] = '\0';
    const char *key = NULL;
    char why[512];
    if (inst->p->validate && inst->p->validate(inst->config, &key, why, sizeof why)) {
        if (errcap) snprintf(err, errcap, "%s", why);
        return TL_ERR_USAGE;
    }
    return inst->p->open(&inst->state, inst->config, emit, err, errcap);
}

void tl_parser_inst_free(struct tl_parser_inst *inst)
{
    if (inst->state) inst->p->close(inst->state);
    free(inst->config);
    memset(inst, 0, sizeof *inst);
}

void tl_parse_stats_put(struct tl_buf *b, const struct tl_parse_stats *st)
{
    tl_put_varint(b, st->lines);
    tl_put_varint(b, st->records);
    tl_put_varint(b, st->rejected);
    tl_counters_put(b, st->rejected_by, TL_REJ_COUNT);
}

bool tl_parse_stats_get(const uint8_t **p, const uint8_t *end, struct tl_parse_stats *st)
{
    return tl_get_varint(p, end, &st->lines) && tl_get_varint(p, end, &st->records) &&
           tl_get_varint(p, end, &st->rejected) && tl_counters_get(p, end, st->rejected_by, TL_REJ_COUNT);
}

void tl_counters_put(struct tl_buf *b, const uint64_t *v, size_t n)
{
    tl_put_varint(b, n);
    for (size_t i = 0; i < n; i++) tl_put_varint(b, v[i]);
}

bool tl_counters_get(const uint8_t **p, const uint8_t *end, uint64_t *v, size_t max)
{
    uint64_t n;
    if (!tl_get_varint(p, end, &n) || n > max) return false;
    memset(v, 0, max * sizeof *v);
    for (uint64_t i = 0; i < n; i++)
        if (!tl_get_varint(p, end, &v[i])) return false;
    return true;
}
