/* libFuzzer target for the `task` point encoder: the first byte gives a
 * category length, that many bytes the category (any bytes), the rest
 * doubles for the metrics, eight bytes each. Aborts when:
 *   - the point differs from the one encoded with a fresh encoder state
 *     (the memo of recent values' text carries over from earlier inputs);
 *   - the category is not escaped exactly as line protocol wants, or a
 *     point is written for one that cannot be;
 *   - a field is missing, reads back as another double, is written for
 *     nan or inf, or has more digits than the shortest %.Ng that reads
 *     back (integers below 1e17 print in full, as documented). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/lp_ref.h"
#include "core/buf.h"
#include "core/record.h"
#include "sinks/lineproto.h"

static int sig_digits(const char *s, size_t n)
{
    int d = 0;
    bool lead = true;
    for (size_t i = 0; i < n && s[i] != 'e'; i++) {
        if (s[i] < '0' || s[i] > '9') continue;
        if (lead && s[i] == '0') continue;
        lead = false;
        d++;
    }
    return d ? d : 1;
}

static void check_field(const char *key, const char *val, size_t n, const struct tl_record *r)
{
    int m = tl_metric_by_name(key, strlen(key));
    if (m < 0 || !tl_record_has(r, (enum tl_metric)m) || !isfinite(r->v[m])) abort();
    char text[64];
    if (n >= sizeof text) abort();
    memcpy(text, val, n);
    text[n] = '\0';
    char *end;
    double back = strtod(text, &end);
    if (*end || memcmp(&back, &r->v[m], sizeof back)) abort();
    double v = r->v[m];
    if (v == floor(v) && fabs(v) < 1e17) return;
    char ref[64];
    int prec = 1;
    for (; prec < 17; prec++) {
        snprintf(ref, sizeof ref, "%.*g", prec, v);
        if (strtod(ref, NULL) == v) break;
    }
    if (sig_digits(text, n) > prec) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct tl_lp_stats memo; /* carries over between inputs */
    if (size < 1) return 0;
    size_t cn = data[0] % 48;
    if (cn > size - 1) cn = size - 1;
    char cat[49], esc[100];
    memcpy(cat, data + 1, cn);
    cat[cn] = '\0';
    struct tl_record r;
    tl_record_init(&r, TL_REC_TASK);
    r.source = "wq";
    r.workflow = "w";
    r.host = "h";
    r.category = cat;
    r.task_id = 5;
    r.attempt = 1;
    r.time_ns = 1700000000000000000LL;
    r.final = data[0] & 0x80; /* a retried attempt carries retried=true after the tags */
    const uint8_t *d = data + 1 + cn;
    size_t nd = (size - 1 - cn) / 8;
    for (size_t i = 0; i < nd && i < TL_M_COUNT; i++) {
        double v;
        memcpy(&v, d + 8 * i, sizeof v);
        tl_record_set(&r, (enum tl_metric)i, v);
    }

    struct tl_buf a = {0}, b = {0};
    struct tl_lp_stats *fresh = calloc(1, sizeof *fresh);
    if (!fresh) return 0;
    int wa = tl_lp_task(&a, &r, &memo), wb = tl_lp_task(&b, &r, fresh);
    free(fresh);
    if (wa != wb || a.len != b.len || (a.len && memcmp(a.data, b.data, a.len))) abort();
    const char *want = lp_ref_escape(cat, esc);
    if (!want) {
        if (wa != 0 || a.len) abort();
    } else {
        if (wa != 1) abort();
        tl_buf_putc(&a, '\0');
        char head[200];
        const char *retried = r.final ? "" : ",retried=true";
        if (*want)
            snprintf(head, sizeof head, "task,category=%s,host=h,source=wq,workflow=w%s ", want, retried);
        else
            snprintf(head, sizeof head, "task,host=h,source=wq,workflow=w%s ", retried);
        size_t hn = strlen(head);
        if (strncmp(a.data, head, hn)) abort();
        /* the fields, up to the timestamp: name=value,... */
        const char *p = a.data + hn, *stop = strrchr(a.data, ' ');
        int floats = 0;
        while (p < stop) {
            const char *eq = memchr(p, '=', (size_t)(stop - p));
            const char *comma = memchr(p, ',', (size_t)(stop - p));
            if (!eq) abort();
            if (!comma) comma = stop;
            char key[64];
            size_t kn = (size_t)(eq - p);
            if (kn >= sizeof key) abort();
            memcpy(key, p, kn);
            key[kn] = '\0';
            if (strcmp(key, "task_id") && strcmp(key, "attempt") && strcmp(key, "final")) {
                check_field(key, eq + 1, (size_t)(comma - eq - 1), &r);
                floats++;
            }
            p = comma + 1;
        }
        int want_floats = 0;
        for (int m = 0; m < TL_M_COUNT; m++)
            want_floats += tl_record_has(&r, (enum tl_metric)m) && isfinite(r.v[m]);
        if (floats != want_floats) abort();
    }
    tl_buf_free(&a);
    tl_buf_free(&b);
    return 0;
}
