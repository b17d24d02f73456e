/* BPS submit YAML requests as allocations (requests.h). */
#include "core/requests.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/config.h"

#define MIB 1048576.0

struct request {
    char *label;
    double mb, cpus; /* < 0: not given for the label: the default */
};

struct tl_requests {
    double mb, cpus; /* the defaults */
    struct request *v;
    size_t n;
    struct tl_buf defaulted; /* labels that fell back, "a,b" */
    size_t defaulted_records;
};

/* A number, or an error naming where. NULL node: keep *out. */
static bool number(const struct tl_cfg_doc *d, const struct tl_cfg_node *v, const char *where,
                   double *out, char *err, size_t errlen)
{
    if (!v) return true;
    char *end = NULL;
    double x = v->kind == TL_CFG_SCALAR ? strtod(v->scalar, &end) : -1;
    if (v->kind != TL_CFG_SCALAR || end == v->scalar || *end || !(x > 0) || x > 1e12) {
        snprintf(err, errlen, "%s:%d: %s: a positive number is expected%s%s", d->path, v->line,
                 where, v->kind == TL_CFG_SCALAR ? ", not " : "",
                 v->kind == TL_CFG_SCALAR ? v->scalar : "");
        return false;
    }
    *out = x;
    return true;
}

static enum tl_err load_labels(struct tl_requests *rq, const struct tl_cfg_doc *d,
                               const struct tl_cfg_node *pt, char *err, size_t errlen)
{
    if (!pt) return TL_OK;
    if (pt->kind != TL_CFG_MAP) {
        snprintf(err, errlen, "%s:%d: pipetask: a mapping of task labels is expected", d->path,
                 pt->line);
        return TL_ERR_USAGE;
    }
    rq->v = calloc(pt->n + 1, sizeof *rq->v);
    if (!rq->v) return TL_ERR_NOMEM;
    for (size_t i = 0; i < pt->n; i++) {
        const struct tl_cfg_node *lab = pt->items[i];
        struct request *r = &rq->v[rq->n];
        char where[256];
        *r = (struct request){NULL, -1, -1};
        snprintf(where, sizeof where, "pipetask.%s.requestMemory", pt->keys[i]);
        if (!number(d, tl_cfg_get(lab, "requestMemory"), where, &r->mb, err, errlen))
            return TL_ERR_USAGE;
        snprintf(where, sizeof where, "pipetask.%s.requestCpus", pt->keys[i]);
        if (!number(d, tl_cfg_get(lab, "requestCpus"), where, &r->cpus, err, errlen))
            return TL_ERR_USAGE;
        if (r->mb < 0 && r->cpus < 0) continue; /* other settings only */
        if (!(r->label = strdup(pt->keys[i]))) return TL_ERR_NOMEM;
        rq->n++;
    }
    return TL_OK;
}

enum tl_err tl_requests_load(const char *path, struct tl_requests **out, char *err, size_t errlen)
{
    *out = NULL;
    struct tl_cfg_doc d;
    enum tl_err rc = tl_cfg_load_verbatim(path, &d, err, errlen);
    if (rc) {
        tl_cfg_free(&d);
        return rc;
    }
    struct tl_requests *rq = calloc(1, sizeof *rq);
    if (!rq) rc = TL_ERR_NOMEM;
    else {
        rq->mb = TL_BPS_DEFAULT_MEMORY_MB;
        rq->cpus = TL_BPS_DEFAULT_CPUS;
        if (!number(&d, tl_cfg_get(d.root, "requestMemory"), "requestMemory", &rq->mb, err, errlen) ||
            !number(&d, tl_cfg_get(d.root, "requestCpus"), "requestCpus", &rq->cpus, err, errlen))
            rc = TL_ERR_USAGE;
        else rc = load_labels(rq, &d, tl_cfg_get(d.root, "pipetask"), err, errlen);
    }
    tl_cfg_free(&d);
    if (rc) tl_requests_free(rq);
    else *out = rq;
    return rc;
}

void tl_requests_free(struct tl_requests *rq)
{
    if (!rq) return;
    for (size_t i = 0; i < rq->n; i++) free(rq->v[i].label);
    free(rq->v);
    tl_buf_free(&rq->defaulted);
    free(rq);
}

bool tl_requests_get(const struct tl_requests *rq, const char *label, double *bytes,
                     double *cores)
{
    *bytes = rq->mb * MIB;
    *cores = rq->cpus;
    for (size_t i = 0; label && i < rq->n; i++)
        if (!strcmp(rq->v[i].label, label)) {
            if (rq->v[i].mb > 0) *bytes = rq->v[i].mb * MIB;
            if (rq->v[i].cpus > 0) *cores = rq->v[i].cpus;
            return true;
        }
    return false;
}

/* Whether "a,b,c" holds label. */
static bool listed(const struct tl_buf *b, const char *label)
{
    size_t n = strlen(label);
    for (const char *p = b->data; p && p < b->data + b->len;) {
        const char *e = memchr(p, ',', (size_t)(b->data + b->len - p));
        size_t len = e ? (size_t)(e - p) : (size_t)(b->data + b->len - p);
        if (len == n && !memcmp(p, label, n)) return true;
        p += len + 1;
    }
    return false;
}

bool tl_requests_apply(struct tl_requests *rq, struct tl_record *r)
{
    double bytes, cores;
    bool found = tl_requests_get(rq, r->category, &bytes, &cores);
    if (!tl_record_has(r, TL_M_ALLOC_MEMORY_BYTES)) tl_record_set(r, TL_M_ALLOC_MEMORY_BYTES, bytes);
    if (!tl_record_has(r, TL_M_ALLOC_CORES)) tl_record_set(r, TL_M_ALLOC_CORES, cores);
    if (found) return true;
    rq->defaulted_records++;
    const char *label = r->category ? r->category : "(none)";
    if (!listed(&rq->defaulted, label)) {
        if (rq->defaulted.len) tl_buf_putc(&rq->defaulted, ',');
        tl_buf_puts(&rq->defaulted, label);
    }
    return false;
}

const char *tl_requests_defaulted(const struct tl_requests *rq, size_t *records)
{
    *records = rq->defaulted_records;
    if (!rq->defaulted.len) return "";
    struct tl_buf *b = (struct tl_buf *)&rq->defaulted;
    tl_buf_putc(b, '\0'); /* terminated; the length stays */
    b->len--;
    return b->data;
}

void tl_requests_defaults(const struct tl_requests *rq, double *mb, double *cpus)
{
    *mb = rq->mb;
    *cpus = rq->cpus;
}
