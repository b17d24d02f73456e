/* libFuzzer target for every registered parser.
 *
 * The first input byte picks the parser and the chunk size; the rest is fed
 * in pieces of that size, then finish(). An input that starts with a line
 * "PATH:<path>" names the input (LSST data ids come from the path: the
 * butler template reader is fuzzed too). Inputs of odd size ask for edges
 * (Chrome's flows are bound). Catches crashes, overreads (under
 * ASan), leaks, and any record that breaks the record invariants. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parsers/parser.h"

static void on_record(void *ctx, const struct tl_record *r)
{
    (void)ctx;
    /* Invariants every consumer relies on. */
    if (r->kind >= TL_REC_KIND_COUNT) abort();
    if (tl_record_bad_values(r)) abort(); /* negative, NaN, inf: parsers reject those */
    if (r->category) (void)strlen(r->category);
    if (r->host) (void)strlen(r->host);
    if (r->worker) (void)strlen(r->worker);
    if (r->result) (void)strlen(r->result);
    if (r->workflow) (void)strlen(r->workflow);
    if (r->kind == TL_REC_EDGE && (!r->depends || !*r->depends || r->task_id < 0)) abort();
    if (r->n_tags < 0 || r->n_tags > TL_MAX_EXTRA_TAGS) abort();
    for (int i = 0; i < r->n_tags; i++)
        if (!r->tags[i].key || !r->tags[i].value || !*r->tags[i].value) abort();
}

static void on_reject(void *ctx, uint64_t line, enum tl_reject why, const char *detail)
{
    (void)ctx;
    (void)line;
    if ((unsigned)why >= TL_REJ_COUNT) abort();
    if (detail) (void)strlen(detail);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    size_t nparsers = 0;
    while (tl_parsers[nparsers]) nparsers++;
    const struct tl_parser *p = tl_parsers[data[0] % nparsers];
    size_t step = 1 + (data[0] >> 4) * 37;
    data++;
    size--;
    struct tl_parser_inst inst;
    if (tl_parser_inst_init(&inst, p)) return 0;
    /* small limits so the fuzzer reaches the limit paths */
    char err[128];
    tl_options_set(p->options, inst.config, "max_line", "4K", err, sizeof err);
    tl_options_set(p->options, inst.config, "max_open_tasks", "64", err, sizeof err);
    tl_options_set(p->options, inst.config, "max_nodes", "5000", err, sizeof err);
    tl_options_set(p->options, inst.config, "max_doc", "64K", err, sizeof err);
    tl_options_set(p->options, inst.config, "max_event", "4K", err, sizeof err);
    tl_options_set(p->options, inst.config, "max_open", "64", err, sizeof err);
    tl_options_set(p->options, inst.config, "max_names", "64K", err, sizeof err);
    /* odd sizes ask for every kind, edges too (Chrome then binds its flows) */
    struct tl_emit emit = {on_record, on_reject, NULL, size & 1 ? ~0u : 0};
    char name[1024] = "repo/u/x/run/calibrateImage_metadata/20240311/i/i_39/2024031100123/"
                      "calibrateImage_metadata_LSSTCam_i_i_39_2024031100123_R22_S11_u_x_run.json";
    if (size > 5 && !memcmp(data, "PATH:", 5)) {
        const uint8_t *nl = memchr(data, '\n', size);
        size_t n = (nl ? (size_t)(nl - data) : size) - 5;
        if (n >= sizeof name) n = sizeof name - 1;
        memcpy(name, data + 5, n);
        name[n] = '\0';
        size_t used = nl ? (size_t)(nl - data) + 1 : size;
        data += used;
        size -= used;
    }
    if (tl_parser_inst_open(&inst, &emit, NULL, 0) == TL_OK) {
        if (p->set_name) p->set_name(inst.state, name);
        for (size_t off = 0; off < size; off += step)
            p->feed(inst.state, (const char *)data + off, size - off < step ? size - off : step);
        p->finish(inst.state);
    }
    tl_parser_inst_free(&inst);
    return 0;
}
