/* libFuzzer target for what tasklens reads back besides logs: configuration
 * files (YAML through libyaml into our tree) and the Work Queue parser's
 * checkpointed state. Hostile or damaged bytes must give an error, never a
 * crash, a leak, an overread or a state that breaks the parser later.
 *
 * mode 0: the input is a configuration file.
 * mode 1: a valid saved parser state (from a small log with open tasks,
 *         a worker and a partial line) is damaged by the input -- (offset,
 *         byte) pairs overwrite it, the first byte also truncates it -- then
 *         restored; an accepted state must keep parsing and save again. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/config.h"
#include "parsers/parser.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void on_record(void *ctx, const struct tl_record *r)
{
    (void)ctx;
    (void)r;
}

static const char LOG[] =
    "# time manager_pid MANAGER START|END\n"
    "1700000000000000 42 MANAGER START\n"
    "1700000000000100 42 WORKER worker-1 10.0.0.1:9000 CONNECTION\n"
    "1700000000000200 42 TASK 1 WAITING calib FIRST_RESOURCES {\"cores\":[1,\"cores\"]}\n"
    "1700000000000300 42 TASK 1 RUNNING 10.0.0.1:9000 FIRST_RESOURCES {\"memory\":[40,\"MB\"]}\n"
    "1700000000000400 42 TASK 2 WAITING other FIRST_RESOURCES {}\n"
    "1700000000000500 42 TASK 1 WAITING_RETRIEVAL 10.0.0.1:9000\n"
    "1700000000000600 42 TASK 1 RETRIEVED SUCCESS 0 {} {\"wall_time\":[1.5,\"s\"]}\n"
    "1700000000000700 42 TASK 3 WAITING calib FIRST_RES";

static const char TAIL[] =
    "OURCES {}\n1700000000000800 42 TASK 1 DONE SUCCESS 0\n"
    "1700000000000900 42 TASK 2 RUNNING 10.0.0.1:9000 FIRST_RESOURCES {}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t mode = data[0] & 1;
    data++;
    size--;
    if (mode == 0) {
        struct tl_cfg_doc doc;
        char err[512];
        if (tl_cfg_parse("fuzz.yaml", (const char *)data, size, &doc, err, sizeof err) == TL_OK) {
            const struct tl_cfg_node *n = tl_cfg_get(doc.root, "sources");
            if (n && n->kind == TL_CFG_SEQ)
                for (size_t i = 0; i < n->n; i++) (void)tl_cfg_get(n->items[i], "type");
        }
        tl_cfg_free(&doc);
        return 0;
    }
    const struct tl_parser *wq = tl_parser_find("wq");
    struct tl_emit emit = {on_record, NULL, NULL, 0};
    struct tl_parser_inst a;
    tl_parser_inst_init(&a, wq);
    tl_parser_inst_open(&a, &emit, NULL, 0);
    wq->feed(a.state, LOG, sizeof LOG - 1);
    struct tl_buf saved = {0};
    wq->save(a.state, &saved);
    tl_parser_inst_free(&a);
    if (size >= 1 && saved.len) saved.len -= data[0] % 4 == 0 ? data[0] % saved.len : 0;
    for (size_t i = 1; i + 1 < size; i += 2)
        if (saved.len) saved.data[data[i] % saved.len] = (char)data[i + 1];
    struct tl_parser_inst b;
    tl_parser_inst_init(&b, wq);
    tl_parser_inst_open(&b, &emit, NULL, 0);
    if (wq->restore(b.state, (const uint8_t *)saved.data, saved.len) == TL_OK) {
        wq->feed(b.state, TAIL, sizeof TAIL - 1);
        struct tl_buf again = {0};
        wq->save(b.state, &again);
        wq->finish(b.state);
        tl_buf_free(&again);
    }
    tl_parser_inst_free(&b);
    tl_buf_free(&saved);
    return 0;
}
