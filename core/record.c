/* The record's metric table (names, units, help) and the small helpers every
 * room uses on a record: names to metrics, tags by name, impossible values. */
#include "core/record.h"

#include <stdio.h>
#include <string.h>

#include "core/numfmt.h"

const struct tl_metric_info tl_metric_info[TL_M_COUNT] = {
#define TL_METRIC_INFO(e, n, u, h) [TL_M_##e] = {n, u, h, sizeof n - 1},
    TL_METRICS(TL_METRIC_INFO)
#undef TL_METRIC_INFO
};

int tl_metric_by_name(const char *name, size_t len)
{
    for (int i = 0; i < TL_M_COUNT; i++) {
        const char *n = tl_metric_info[i].name;
        if (strlen(n) == len && memcmp(n, name, len) == 0) return i;
    }
    return -1;
}

int tl_metric_list(const char *list, int *out, char *err, size_t errlen)
{
    int n_out = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        int m = tl_metric_by_name(p, n);
        if (m < 0) {
            int at = snprintf(err, errlen, "unknown metric '%.*s' (known:", (int)n, p);
            for (int k = 0; k < TL_M_COUNT && at > 0 && (size_t)at < errlen; k++)
                at += snprintf(err + at, errlen - (size_t)at, " %s", tl_metric_info[k].name);
            if (at > 0 && (size_t)at < errlen) snprintf(err + at, errlen - (size_t)at, ")");
            return 0;
        }
        if (n_out < TL_M_COUNT) out[n_out++] = m;
        p += n;
        if (*p == ',') p++;
    }
    if (!n_out) snprintf(err, errlen, "no metric named");
    return n_out;
}

const char *tl_record_kind_str(enum tl_record_kind k)
{
    static const char *const names[TL_REC_KIND_COUNT] = {
        "task", "task_open", "worker", "manager", "transfer", "sample", "workflow", "edge",
    };
    return (unsigned)k < TL_REC_KIND_COUNT ? names[k] : "?";
}

void tl_record_init(struct tl_record *r, enum tl_record_kind kind)
{
    /* Only the header is cleared: v[] is valid where `present` says so, and
     * clearing 40 doubles per record on the hot path buys nothing. */
    memset(r, 0, offsetof(struct tl_record, v));
    r->kind = kind;
    r->task_id = -1;
    r->start_ns = TL_NO_TIME;
    r->n_tags = 0;
}

enum tl_tag_field tl_tag_field(const char *key)
{
    static const char *const names[TL_TAG_OTHER] = {"category", "host",   "workflow",
                                                     "source",   "worker", "result"};
    for (int f = 0; f < TL_TAG_OTHER; f++)
        if (!strcmp(key, names[f])) return (enum tl_tag_field)f;
    return TL_TAG_OTHER;
}

const char *tl_record_tag(const struct tl_record *r, const char *key)
{
    return tl_record_tag_at(r, tl_tag_field(key), key);
}

/* Whether metric m's value is one no measurement can have. */
static bool value_impossible(const struct tl_record *r, int m)
{
    double v = r->v[m] < 0 && m == TL_M_SAMPLE_VALUE ? -r->v[m] : r->v[m]; /* may be < 0 */
    return !tl_value_possible(v);
}

bool tl_record_bad_values_slow(const struct tl_record *r)
{
    for (int w = 0; w < TL_MASK_WORDS; w++)
        for (uint64_t bits = r->present[w]; bits; bits &= bits - 1)
            if (value_impossible(r, w * 64 + __builtin_ctzll(bits))) return true;
    return false;
}

void tl_record_drop_values(struct tl_record *r, char *detail, size_t cap)
{
    size_t len = 0;
    if (cap) detail[0] = '\0';
    for (int m = 0; m < TL_M_COUNT; m++) {
        if (!tl_record_has(r, (enum tl_metric)m) || !value_impossible(r, m)) continue;
        tl_record_unset(r, (enum tl_metric)m);
        char num[TL_FMT_WIDE + 1];
        tl_fmt_double_wide(num, r->v[m]);
        if (len < cap)
            len += (size_t)snprintf(detail + len, cap - len, "%s%s=%s", len ? " " : "",
                                    tl_metric_info[m].name, num);
    }
}
