/* Unit tests of the Work Queue / TaskVine parser, one record type at a time.
 * Lines are copied from the real samples in ../shared/wq/samples (file named
 * above each block) or, for versions without a public sample, written from
 * the format reference (shared/formats/wq-transaction-log.md). */
#include "check.h"
#include "collect.h"
#include "core/options.h"

static const struct tl_parser *wq;

static struct collected run_text(const char *text, const struct tl_parse_stats **stats_out,
                                 uint64_t *counters_out)
{
    struct collected c = {0};
    struct tl_parser_inst inst;
    const struct tl_parse_stats *st = parse_buffer(wq, text, strlen(text), 0, &c, &inst);
    static struct tl_parse_stats copy;
    copy = *st;
    if (stats_out) *stats_out = &copy;
    if (counters_out) {
        struct tl_counter cs[TL_MAX_COUNTERS];
        size_t n = wq->counters(inst.state, cs, TL_MAX_COUNTERS);
        for (size_t i = 0; i < n; i++) counters_out[i] = cs[i].value;
    }
    tl_parser_inst_free(&inst);
    return c;
}

static const struct tl_record *find(const struct collected *c, enum tl_record_kind kind,
                                    int64_t task, int nth)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->recs[i].kind == kind && (task < 0 || c->recs[i].task_id == task) && nth-- == 0)
            return &c->recs[i];
    return NULL;
}

static size_t count_kind(const struct collected *c, enum tl_record_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < c->n; i++) n += c->recs[i].kind == kind;
    return n;
}

#define MIB 1048576.0

/* Parsl_dnpc__transaction_log: WQ-E, whole lifecycle of task 50. */
static void test_wq_e_lifecycle(void)
{
    const char *log =
        "# time manager_pid MANAGER START|END\n"
        "# time manager_pid TASK taskid (RETRIEVED|DONE) (SUCCESS|SIGNAL|END_TIME|FORSAKEN|MAX_RETRIES|"
        "MAX_WALLTIME|UNKNOWN|RESOURCE_EXHAUSTION) exit_code {limits_exceeded} {resources_measured}\n"
        "\n"
        "1680774973462610 372 MANAGER START\n"
        "1680774974507432 372 TASK 50 WAITING f FIRST_RESOURCES {}\n"
        "1680774974507600 372 WORKER worker-c42da73302d0ab96a09b51a6fe976bb0 172.17.0.2:60778  CONNECTION\n"
        "1680774974508523 372 WORKER worker-c42da73302d0ab96a09b51a6fe976bb0 RESOURCES "
        "{\"memory\":[15721,\"MB\"],\"disk\":[480,\"MB\"],\"cores\":[8,\"cores\"]}\n"
        "1680774974509464 372 TRANSFER INPUT 50 1 0.009184 0.000053 exec_parsl_function.py\n"
        "1680774974509617 372 TASK 50 RUNNING 172.17.0.2:60778  FIRST_RESOURCES "
        "{\"memory\":[15721,\"MB\"],\"disk\":[480,\"MB\"],\"gpus\":[0,\"gpus\"],\"cores\":[8,\"cores\"]}\n"
        "1680774974749084 372 TASK 50 WAITING_RETRIEVAL 172.17.0.2:60778 \n"
        "1680774974749716 372 TASK 50 RETRIEVED SUCCESS  0  {} "
        "{\"wq_output_time\":[0.000569,\"s\"],\"wq_input_time\":[0.000208,\"s\"],\"wq_output_size\":[0."
        "0164642333984375,\"MB\"],\"wq_input_size\":[0.01606845855712891,\"MB\"]}\n"
        "1680774974749753 372 TASK 50 DONE SUCCESS  0  {} "
        "{\"wq_output_time\":[0.000569,\"s\"],\"wq_input_time\":[0.000208,\"s\"],\"wq_output_size\":[0."
        "0164642333984375,\"MB\"],\"wq_input_size\":[0.01606845855712891,\"MB\"]}\n"
        "1680774987767670 372 WORKER worker-c42da73302d0ab96a09b51a6fe976bb0 172.17.0.2:60778  "
        "DISCONNECTION EXPLICIT\n"
        "1680774987767936 372 MANAGER END\n";
    const struct tl_parse_stats *st;
    uint64_t counters[64];
    struct collected c = run_text(log, &st, counters);
    CHECK_EQ_INT(st->rejected, 0);
    CHECK_EQ_INT(st->lines, 14);
    CHECK_EQ_INT(count_kind(&c, TL_REC_TASK), 1);
    CHECK_EQ_INT(count_kind(&c, TL_REC_TASK_OPEN), 0);
    CHECK_EQ_INT(count_kind(&c, TL_REC_MANAGER), 2);
    CHECK_EQ_INT(count_kind(&c, TL_REC_WORKER), 3);
    CHECK_EQ_INT(count_kind(&c, TL_REC_TRANSFER), 1);
    const struct tl_record *r = find(&c, TL_REC_TASK, 50, 0);
    CHECK(r != NULL);
    if (r) {
        CHECK_STR(r->source, "wq");
        CHECK_STR(r->workflow, "372@2023-04-06T09:56:13Z");
        CHECK_STR(r->category, "f");
        CHECK_STR(r->worker, "worker-c42da73302d0ab96a09b51a6fe976bb0");
        CHECK_STR(r->host, "172.17.0.2");
        CHECK_STR(r->result, "SUCCESS");
        CHECK(r->has_exit_code);
        CHECK_EQ_INT(r->exit_code, 0);
        CHECK(r->final);
        CHECK_EQ_INT(r->attempt, 1);
        CHECK_EQ_INT(r->time_ns, 1680774974749716LL * 1000);
        CHECK_NEAR(r->v[TL_M_QUEUE_TIME_S], (1680774974509617 - 1680774974507432) / 1e6, 1e-12);
        CHECK_NEAR(r->v[TL_M_EXEC_TIME_S], (1680774974749084 - 1680774974509617) / 1e6, 1e-12);
        CHECK_NEAR(r->v[TL_M_RETRIEVAL_TIME_S], (1680774974749716 - 1680774974749084) / 1e6,
                   1e-12);
        /* no resource monitor: wall time is the lifecycle's execution time */
        CHECK_NEAR(r->v[TL_M_WALL_TIME_S], r->v[TL_M_EXEC_TIME_S], 0);
        CHECK(!tl_record_has(r, TL_M_CPU_TIME_S));
        CHECK(!tl_record_has(r, TL_M_MAX_RSS_BYTES)); /* absent, not zero */
        CHECK(!tl_record_has(r, TL_M_REQ_CORES));     /* requested {} */
        CHECK_NEAR(r->v[TL_M_ALLOC_CORES], 8, 0);
        CHECK_NEAR(r->v[TL_M_ALLOC_MEMORY_BYTES], 15721 * MIB, 0);
        CHECK_NEAR(r->v[TL_M_ALLOC_DISK_BYTES], 480 * MIB, 0);
        CHECK_NEAR(r->v[TL_M_ALLOC_GPUS], 0, 0);
        CHECK_NEAR(r->v[TL_M_INPUT_BYTES], 16849, 0); /* 0.01606845855712891 MB: whole bytes */
        CHECK_NEAR(r->v[TL_M_OUTPUT_TIME_S], 0.000569, 0);
    }
    /* workflow state: one record per second of log time, and at the END */
    size_t nwf = count_kind(&c, TL_REC_WORKFLOW);
    CHECK(nwf >= 2 && nwf <= 4); /* seconds 13, 14, 27 of this run, + END */
    const struct tl_record *wf = find(&c, TL_REC_WORKFLOW, -1, (int)nwf - 1);
    if (wf) {
        CHECK_NEAR(wf->v[TL_M_TASKS_DONE], 1, 0);
        CHECK_NEAR(wf->v[TL_M_TASKS_FAILED], 0, 0);
        CHECK_NEAR(wf->v[TL_M_TASKS_WAITING], 0, 0);
        CHECK_NEAR(wf->v[TL_M_TASKS_RUNNING], 0, 0);
        CHECK_NEAR(wf->v[TL_M_WORKERS], 0, 0);
        CHECK_NEAR(wf->v[TL_M_WORKER_CORES], 0, 0);
        CHECK_EQ_INT(wf->time_ns, 1680774987767936LL * 1000);
    }
    const struct tl_record *wf1 = find(&c, TL_REC_WORKFLOW, -1, 1); /* second 14: task 50 queued */
    if (wf1) {
        CHECK_NEAR(wf1->v[TL_M_TASKS_WAITING], 1, 0);
        CHECK_NEAR(wf1->v[TL_M_WORKERS], 0, 0); /* its line is the WAITING, before CONNECTION */
    }
    const struct tl_record *w = find(&c, TL_REC_WORKER, -1, 1);
    if (w) {
        CHECK_STR(w->state, "RESOURCES");
        CHECK_STR(w->host, "172.17.0.2");
        CHECK_NEAR(w->v[TL_M_ALLOC_MEMORY_BYTES], 15721 * MIB, 0);
    }
    const struct tl_record *d = find(&c, TL_REC_WORKER, -1, 2);
    if (d) {
        CHECK_STR(d->state, "DISCONNECTION");
        CHECK_STR(d->result, "EXPLICIT");
    }
    const struct tl_record *t = find(&c, TL_REC_TRANSFER, 50, 0);
    if (t) {
        CHECK_STR(t->state, "INPUT");
        CHECK_STR(t->category, "f");
        CHECK_NEAR(t->v[TL_M_INPUT_BYTES], 9630, 0); /* 0.009184 MiB = 9630.12 */
        CHECK_NEAR(t->v[TL_M_INPUT_TIME_S], 0.000053, 0);
    }
    collected_free(&c);
}

/* ccl_taskvine-logs__taskvine_paper_colmena_transactions_peer_enabled:
 * VINE-B, full resource-monitor JSON on RETRIEVED, DONE with no JSON. */
static void test_vine_b_monitor(void)
{
    const char *log =
        "1680551920942423 4080849 MANAGER 4080849 START 0\n"
        "1680551940710732 4080849 WORKER worker-7db71f659da367cdfb75142e09ad90ad CONNECTION "
        "10.32.89.1:40608\n"
        "1680551941008169 4080849 TASK 13 WAITING evaluate_mpnn FIRST_RESOURCES 1 {}\n"
        "1680551945232292 4080849 TASK 13 RUNNING worker-7db71f659da367cdfb75142e09ad90ad  "
        "FIRST_RESOURCES {\"time_commit_start\":[1680551945.215729,\"s\"],\"time_commit_end\":["
        "1680551945.232249,\"s\"],\"time_input_mgr\":[0.01652,\"s\"],\"size_input_mgr\":[6."
        "56086254119873,\"MB\"],\"memory\":[4000,\"MB\"],\"disk\":[40227,\"MB\"],\"gpus\":[0,"
        "\"gpus\"],\"cores\":[4,\"cores\"]}\n"
        "1680552100176248 4080849 TASK 13 WAITING_RETRIEVAL worker-7db71f659da367cdfb75142e09ad90ad \n"
        "1680552100353550 4080849 TASK 13 RETRIEVED SUCCESS  0  {} "
        "{\"time_worker_start\":[1680551947.961445,\"s\"],\"time_worker_end\":[1680552100.175421,"
        "\"s\"],\"time_output_mgr\":[0.177033,\"s\"],\"size_output_mgr\":[3.353212356567383,\"MB\"],"
        "\"time_commit_start\":[1680551945.215729,\"s\"],\"time_commit_end\":[1680551945.232249,"
        "\"s\"],\"time_input_mgr\":[0.01652,\"s\"],\"size_input_mgr\":[6.56086254119873,\"MB\"],"
        "\"start\":[1680551947.970377,\"s\"],\"end\":[1680552100.171933,\"s\"],\"wall_time\":[152."
        "201556,\"s\"],\"cpu_time\":[404.906039,\"s\"],\"memory\":[1125,\"MB\"],\"virtual_memory\":["
        "3540,\"MB\"],\"swap_memory\":[0,\"MB\"],\"disk\":[6107,\"MB\"],\"bytes_read\":[6339,\"MB\"],"
        "\"bytes_written\":[5028,\"MB\"],\"bytes_received\":[0,\"MB\"],\"bytes_sent\":[0,\"MB\"],"
        "\"bandwidth\":[0,\"Mbps\"],\"gpus\":[0,\"gpus\"],\"cores\":[2.66,\"cores\"],\"cores_avg\":[2."
        "66,\"cores\"],\"machine_cpus\":[24,\"cores\"],\"machine_load\":[7,\"procs\"],"
        "\"context_switches\":[156243,\"switches\"],\"max_concurrent_processes\":[26,\"procs\"],"
        "\"total_processes\":[46,\"procs\"],\"total_files\":[109857,\"files\"],\"fs_nodes\":[0,"
        "\"nodes\"],\"workers\":[0,\"workers\"]}\n"
        "1680552100353696 4080849 TASK 13 DONE SUCCESS  0 \n"
        "1680554163944826 4080849 MANAGER 4080849 END 2243007101\n";
    const struct tl_parse_stats *st;
    struct collected c = run_text(log, &st, NULL);
    CHECK_EQ_INT(st->rejected, 0);
    CHECK_EQ_INT(count_kind(&c, TL_REC_MANAGER), 2);
    const struct tl_record *r = find(&c, TL_REC_TASK, 13, 0);
    CHECK(r != NULL);
    if (r) {
        CHECK_STR(r->workflow, "4080849@2023-04-03T19:58:40Z");
        CHECK_STR(r->category, "evaluate_mpnn");
        CHECK_STR(r->worker, "worker-7db71f659da367cdfb75142e09ad90ad");
        CHECK_STR(r->host, "10.32.89.1");
        CHECK(r->final);
        CHECK_EQ_INT(r->attempt, 1);
        CHECK_NEAR(r->v[TL_M_WALL_TIME_S], 152.201556, 0);
        CHECK_NEAR(r->v[TL_M_CPU_TIME_S], 404.906039, 0);
        CHECK_NEAR(r->v[TL_M_MAX_RSS_BYTES], 1125 * MIB, 0);
        CHECK_NEAR(r->v[TL_M_VIRTUAL_MEMORY_BYTES], 3540 * MIB, 0);
        CHECK_NEAR(r->v[TL_M_SWAP_BYTES], 0, 0);
        CHECK(tl_record_has(r, TL_M_SWAP_BYTES)); /* a measured zero is present */
        CHECK_NEAR(r->v[TL_M_DISK_BYTES], 6107 * MIB, 0);
        CHECK_NEAR(r->v[TL_M_BYTES_READ], 6339 * MIB, 0);
        CHECK_NEAR(r->v[TL_M_CORES], 2.66, 0);
        CHECK_NEAR(r->v[TL_M_CONTEXT_SWITCHES], 156243, 0);
        CHECK_NEAR(r->v[TL_M_TOTAL_FILES], 109857, 0);
        CHECK_NEAR(r->v[TL_M_MACHINE_CPUS], 24, 0);
        CHECK_NEAR(r->v[TL_M_INPUT_BYTES], 6879563, 0); /* not 6879562.999999999 */
        CHECK_NEAR(r->v[TL_M_OUTPUT_BYTES], 3516098, 0);
        CHECK_NEAR(r->v[TL_M_ALLOC_MEMORY_BYTES], 4000 * MIB, 0);
        CHECK_NEAR(r->v[TL_M_ALLOC_CORES], 4, 0);
    }
    collected_free(&c);
}

/* VINE-C (report-tool sample): READY with attempt, odd category names; and a
 * category with spaces, which must be read from the right. */
static void test_vine_c_ready_and_names(void)
{
    const char *log =
        "1721323715447417 4098947 TASK 1 READY <function_add_at_0x7f4c83763e20> FIRST_RESOURCES 1 "
        "{\"cores\":[1,\"cores\"]}\n"
        "1721323715447500 4098947 TASK 2 READY my  odd cat FIRST_RESOURCES 1 {}\n"
        "1721323715447600 4098947 TASK 3 WAITING cat with space MAX_RESOURCES {\"memory\":[100,\"MB\"]}\n"
        "1742250321494673 318561 TASK 1 READY parsl-default FIRST_RESOURCES 1 "
        "{\"memory\":[10000,\"MB\"],\"disk\":[20000,\"MB\"],\"gpus\":[1,\"gpus\"],\"cores\":[2,\"cores\"]}\n";
    const struct tl_parse_stats *st;
    struct collected c = run_text(log, &st, NULL);
    CHECK_EQ_INT(st->rejected, 0);
    CHECK_EQ_INT(count_kind(&c, TL_REC_TASK_OPEN), 4);
    const struct tl_record *a = find(&c, TL_REC_TASK_OPEN, 1, 0);
    const struct tl_record *b = find(&c, TL_REC_TASK_OPEN, 2, 0);
    const struct tl_record *d = find(&c, TL_REC_TASK_OPEN, 3, 0);
    const struct tl_record *e = find(&c, TL_REC_TASK_OPEN, 1, 1);
    if (a && b && d && e) {
        CHECK_STR(a->category, "<function_add_at_0x7f4c83763e20>");
        CHECK_NEAR(a->v[TL_M_REQ_CORES], 1, 0);
        CHECK_STR(a->state, "WAITING");
        CHECK_STR(b->category, "my  odd cat");
        CHECK_STR(d->category, "cat with space");
        CHECK_NEAR(d->v[TL_M_REQ_MEMORY_BYTES], 100 * MIB, 0);
        /* task 1 of pid 318561 is a different task from task 1 of pid 4098947 */
        CHECK_STR(e->category, "parsl-default");
        CHECK_NEAR(e->v[TL_M_REQ_GPUS], 1, 0);
        CHECK(strcmp(a->workflow, e->workflow) != 0);
    } else {
        CHECK(!"open tasks missing");
    }
    collected_free(&c);
}

/* WQ-D (Debian cctools 9.9) resource exhaustion, then retry with MAX. */
static void test_resource_exhaustion_retry(void)
{
    const char *log =
        "1700000000000000 77 MANAGER START\n"
        "1700000000100000 77 WORKER worker-aa 127.0.0.1:5000  CONNECTION\n"
        "1700000001000000 77 TASK 7 WAITING hog FIRST_RESOURCES {\"memory\":[100,\"MB\"]}\n"
        "1700000002000000 77 TASK 7 RUNNING 127.0.0.1:5000  FIRST_RESOURCES {\"memory\":[100,\"MB\"],"
        "\"cores\":[1,\"cores\"]}\n"
        "1700000010000000 77 TASK 7 WAITING_RETRIEVAL 127.0.0.1:5000 \n"
        "1700000010500000 77 TASK 7 RETRIEVED RESOURCE_EXHAUSTION  137 {\"memory\":[100,\"MB\"]} "
        "{\"memory\":[310,\"MB\"],\"wall_time\":[8.2,\"s\"],\"start\":[1700000002.1,\"s\"]}\n"
        "1700000010600000 77 TASK 7 WAITING hog MAX_RESOURCES {\"memory\":[500,\"MB\"]}\n"
        "1700000011000000 77 TASK 7 RUNNING 127.0.0.1:5000  MAX_RESOURCES {\"memory\":[500,\"MB\"]}\n"
        "1700000020000000 77 TASK 7 WAITING_RETRIEVAL 127.0.0.1:5000 \n"
        "1700000020100000 77 TASK 7 RETRIEVED SUCCESS  0  {} {\"memory\":[320,\"MB\"],"
        "\"wall_time\":[9,\"s\"]}\n"
        "1700000020200000 77 TASK 7 DONE SUCCESS  0  {} {\"memory\":[320,\"MB\"],\"wall_time\":[9,\"s\"]}\n";
    const struct tl_parse_stats *st;
    struct collected c = run_text(log, &st, NULL);
    CHECK_EQ_INT(st->rejected, 0);
    CHECK_EQ_INT(count_kind(&c, TL_REC_TASK), 2);
    const struct tl_record *a1 = find(&c, TL_REC_TASK, 7, 0);
    const struct tl_record *a2 = find(&c, TL_REC_TASK, 7, 1);
    if (a1 && a2) {
        CHECK(!a1->final);
        CHECK_STR(a1->result, "RESOURCE_EXHAUSTION");
        CHECK_EQ_INT(a1->exit_code, 137);
        CHECK_EQ_INT(a1->attempt, 1);
        CHECK_NEAR(a1->v[TL_M_LIMIT_MEMORY_BYTES], 100 * MIB, 0);
        CHECK_NEAR(a1->v[TL_M_MAX_RSS_BYTES], 310 * MIB, 0);
        CHECK_NEAR(a1->v[TL_M_WALL_TIME_S], 8.2, 0);
        CHECK_NEAR(a1->v[TL_M_REQ_MEMORY_BYTES], 100 * MIB, 0);
        CHECK_STR(a1->worker, "worker-aa");
        CHECK(a2->final);
        CHECK_STR(a2->result, "SUCCESS");
        CHECK_EQ_INT(a2->attempt, 2);
        CHECK(!tl_record_has(a2, TL_M_LIMIT_MEMORY_BYTES));
        CHECK_NEAR(a2->v[TL_M_REQ_MEMORY_BYTES], 500 * MIB, 0);
        CHECK_NEAR(a2->v[TL_M_QUEUE_TIME_S], 0.4, 1e-12);
    } else {
        CHECK(!"attempts missing");
    }
    collected_free(&c);
}

/* Worker lost: RUNNING goes back to WAITING (sample 4's pattern); a cancel;
 * RUNNING -> DONE with no RETRIEVED (VINE-B library); RESOURCE_EXHAUSTION
 * with one JSON (limits NULL); measured NULL "{} {}". */
static void test_lifecycle_variants(void)
{
    const char *log =
        "1674676034845358 3701669 MANAGER START\n"
        "1674676100000000 3701669 TASK 1 WAITING default FIRST_RESOURCES {}\n"
        "1674676101000000 3701669 TASK 1 RUNNING 10.32.79.67:36370  FIRST_RESOURCES {}\n"
        "1674676105000000 3701669 TASK 1 WAITING default FIRST_RESOURCES {}\n"
        "1674676106000000 3701669 TASK 1 RUNNING 10.32.79.68:36370  FIRST_RESOURCES {}\n"
        "1674676107000000 3701669 TASK 1 WAITING_RETRIEVAL 10.32.79.68:36370 \n"
        "1674676107100000 3701669 TASK 1 RETRIEVED SUCCESS  0  {} {}\n"
        "1674676107200000 3701669 TASK 1 DONE SUCCESS  0  {} {}\n"
        "1674676108000000 3701669 TASK 2 WAITING default FIRST_RESOURCES {}\n"
        "1674676109000000 3701669 TASK 2 CANCELED\n"
        "1680540643000000 1475717 TASK 2001 RUNNING worker-759f86b7eea98540c0c371dbb9e538fe  FIRST_RESOURCES {}\n"
        "1680540643321548 1475717 TASK 2001 DONE UNKNOWN  -1 \n"
        "1674676110000000 3701669 TASK 3 WAITING default FIRST_RESOURCES {}\n"
        "1674676111000000 3701669 TASK 3 RETRIEVED RESOURCE_EXHAUSTION  1  {\"memory\":[5,\"MB\"]}\n"
        "1674676112000000 3701669 TASK 3 DONE RESOURCE_EXHAUSTION  1  {\"memory\":[5,\"MB\"]}\n";
    const struct tl_parse_stats *st;
    struct collected c = run_text(log, &st, NULL);
    CHECK_EQ_INT(st->rejected, 0);
    const struct tl_record *lost = find(&c, TL_REC_TASK, 1, 0);
    const struct tl_record *fin = find(&c, TL_REC_TASK, 1, 1);
    if (lost && fin) {
        CHECK_STR(lost->result, "REQUEUED");
        CHECK(!lost->final);
        CHECK(!lost->has_exit_code);
        CHECK_STR(lost->host, "10.32.79.67");
        CHECK(fin->final);
        CHECK_EQ_INT(fin->attempt, 2);
        CHECK_STR(fin->host, "10.32.79.68");
        CHECK_NEAR(fin->v[TL_M_QUEUE_TIME_S], 1.0, 1e-12);
    } else {
        CHECK(!"task 1 records missing");
    }
    const struct tl_record *cancel = find(&c, TL_REC_TASK, 2, 0);
    if (cancel) {
        CHECK_STR(cancel->result, "CANCELED");
        CHECK(cancel->final);
        CHECK_STR(cancel->category, "default");
    } else {
        CHECK(!"cancel missing");
    }
    const struct tl_record *lib = find(&c, TL_REC_TASK, 2001, 0);
    if (lib) {
        CHECK_STR(lib->result, "UNKNOWN");
        CHECK_EQ_INT(lib->exit_code, -1);
        CHECK(lib->final);
        CHECK(lib->category == NULL); /* never saw WAITING: unknown, not invented */
    } else {
        CHECK(!"library task missing");
    }
    const struct tl_record *ex = find(&c, TL_REC_TASK, 3, 0);
    if (ex) {
        CHECK_STR(ex->result, "RESOURCE_EXHAUSTION");
        CHECK_NEAR(ex->v[TL_M_MAX_RSS_BYTES], 5 * MIB, 0); /* one JSON: the measurement */
        CHECK(!tl_record_has(ex, TL_M_LIMIT_MEMORY_BYTES));
    } else {
        CHECK(!"task 3 missing");
    }
    collected_free(&c);
}

/* Old families: MASTER (WQ-C, µs start/end), WQ-A/B lines without exit code,
 * where RETRIEVED's lone JSON is the limits. */
static void test_old_families(void)
{
    const char *log =
        "# date time master-pid MASTER START|END\n"
        "# date time master-pid TASK taskid RETRIEVED|DONE task-result ...\n"
        "\n"
        "1500000000000000 900 MASTER START\n"
        "1500000001000000 900 WORKER worker-x 10.0.0.1:9000  CONNECTION\n"
        "1500000002000000 900 TASK 1 WAITING default FIRST_RESOURCES {\"cores\":[1,\"cores\"]}\n"
        "1500000003000000 900 TASK 1 RUNNING 10.0.0.1:9000  FIRST_RESOURCES {\"cores\":[1,\"cores\"]}\n"
        "1500000004000000 900 TASK 1 WAITING_RETRIEVAL 10.0.0.1:9000\n"
        "1500000005000000 900 TASK 1 RETRIEVED RESOURCE_EXHAUSTION {\"memory\":[1000,\"MB\"]}\n"
        "1500000005000100 900 TASK 1 DONE RESOURCE_EXHAUSTION {\"memory\":[1200,\"MB\"],"
        "\"wall_time\":[1.5,\"s\"],\"start\":[1500000003100000,\"us\"],\"cpu_time\":[1000000,\"us\"]}\n"
        "1500000006000000 900 TASK 2 WAITING default FIRST_RESOURCES {}\n"
        "1500000006000001 900 TASK 2 DONE SUCCESS \n"
        "1500000007000000 900 WORKER worker-x 10.0.0.1:9000  DISCONNECTION\n"
        "1500000008000000 900 MASTER END\n";
    const struct tl_parse_stats *st;
    struct collected c = run_text(log, &st, NULL);
    CHECK_EQ_INT(st->rejected, 0);
    const struct tl_record *r = find(&c, TL_REC_TASK, 1, 0);
    if (r) {
        CHECK(r->final);
        CHECK(!r->has_exit_code);
        CHECK_NEAR(r->v[TL_M_LIMIT_MEMORY_BYTES], 1000 * MIB, 0);
        CHECK_NEAR(r->v[TL_M_MAX_RSS_BYTES], 1200 * MIB, 0);
        CHECK_NEAR(r->v[TL_M_WALL_TIME_S], 1.5, 0);
        CHECK_NEAR(r->v[TL_M_CPU_TIME_S], 1.0, 0); /* "us" converted */
    } else {
        CHECK(!"task 1 missing");
    }
    const struct tl_record *r2 = find(&c, TL_REC_TASK, 2, 0);
    if (r2) {
        CHECK_STR(r2->result, "SUCCESS");
        CHECK(!tl_record_has(r2, TL_M_MAX_RSS_BYTES));
    }
    CHECK_EQ_INT(count_kind(&c, TL_REC_MANAGER), 2);
    collected_free(&c);
}

/* One measurement written in the forms JSON allows: the canonical
 * "key":[number,"unit"] the parser reads straight through, and spaces,
 * bare numbers, exponents, escaped and unknown keys and values that send
 * it to the general steps. Every form must give the canonical record. */
/* RETRIEVED and DONE carry the same resource text, and the DONE line
 * reuses the RETRIEVED line's scan when the bytes are equal. Same-length
 * texts that differ, a DONE with no RETRIEVED before it, a text that only
 * starts like the last one, and WQ 6.x (where one JSON on RETRIEVED is the
 * limits and the same text on DONE the measurement) must each still read
 * as their own bytes say. */
static void test_same_text(void)
{
    const char *a = "{\"memory\":[1024,\"MB\"],\"cores\":[2,\"cores\"]}";
    const char *b = "{\"memory\":[2048,\"MB\"],\"cores\":[2,\"cores\"]}";
    char log[4096];
    size_t n = 0;
    static const struct {
        int id;
        bool retrieved;
        int text; /* 0: a, 1: b */
        const char *tail;
        int cut; /* bytes left off the DONE line's text */
    } tasks[] = {{1, true, 0, "", 0}, {2, true, 1, "", 0}, {3, false, 0, "", 0}, {4, true, 0, "x", 0},
                 {5, true, 0, "", 1}};
    for (size_t i = 0; i < sizeof tasks / sizeof *tasks; i++) {
        const char *t = tasks[i].text ? b : a;
        n += (size_t)snprintf(log + n, sizeof log - n,
                              "1680774974507432 372 TASK %d WAITING f FIRST_RESOURCES {}\n"
                              "1680774974509617 372 TASK %d RUNNING 172.17.0.2:60778  FIRST_RESOURCES {}\n",
                              tasks[i].id, tasks[i].id);
        if (tasks[i].retrieved)
            n += (size_t)snprintf(log + n, sizeof log - n,
                                  "1680774974749700 372 TASK %d RETRIEVED SUCCESS  0  {} %s\n", tasks[i].id, t);
        n += (size_t)snprintf(log + n, sizeof log - n,
                              "1680774974749753 372 TASK %d DONE SUCCESS  0  {} %.*s%s\n", tasks[i].id,
                              (int)strlen(t) - tasks[i].cut, t, tasks[i].tail);
    }
    CHECK(n < sizeof log);
    const struct tl_parse_stats *st;
    struct collected c = run_text(log, &st, NULL);
    CHECK_EQ_INT(st->rejected, 2); /* the DONE lines of 4 and 5 */
    static const double mib[] = {1024, 2048, 1024};
    for (int id = 1; id <= 3; id++) {
        const struct tl_record *r = find(&c, TL_REC_TASK, id, 0);
        CHECK(r != NULL);
        if (r) CHECK_NEAR(r->v[TL_M_MAX_RSS_BYTES], mib[id - 1] * MIB, 0);
    }
    collected_free(&c);

    const char *ab =
        "# time manager_pid TASK taskid RETRIEVED|DONE task-result [exit_code] [resources]\n"
        "1680774974507432 372 TASK 6 WAITING f FIRST_RESOURCES {}\n"
        "1680774974509617 372 TASK 6 RUNNING 172.17.0.2:60778  FIRST_RESOURCES {}\n"
        "1680774974749700 372 TASK 6 RETRIEVED SUCCESS {\"memory\":[512,\"MB\"]}\n"
        "1680774974749753 372 TASK 6 DONE SUCCESS {\"memory\":[512,\"MB\"]}\n";
    c = run_text(ab, &st, NULL);
    CHECK_EQ_INT(st->rejected, 0);
    const struct tl_record *r = find(&c, TL_REC_TASK, 6, 0);
    CHECK(r != NULL);
    if (r) {
        CHECK_NEAR(r->v[TL_M_MAX_RSS_BYTES], 512 * MIB, 0);
        CHECK_NEAR(r->v[TL_M_LIMIT_MEMORY_BYTES], 512 * MIB, 0);
    }
    collected_free(&c);
}

/* memory, disk, cores and gpus in cctools' spelling take a path of their
 * own; other units, longer keys that start the same, a member at the very
 * end, other number forms and broken members must come out as the general
 * reader has them. */
static void test_common_members(void)
{
    static const struct {
        const char *json;
        double mem, disk, cores, gpus, cores_avg; /* -1: absent */
    } cases[] = {
        {"{\"memory\":[1024,\"GB\"],\"disk\":[2,\"KB\"],\"cores\":[3,\"core\"],\"gpus\":[1,\"gpu\"]}",
         1024.0 * 1024 * MIB, 2048, 3, 1, -1},
        {"{\"coresx\":[9,\"cores\"],\"diskx\":[9,\"MB\"],\"memoryx\":[9,\"MB\"],\"gpus2\":[9,\"gpus\"],"
         "\"cores_avg\":[1.5,\"cores\"],\"cores\":[4,\"cores\"]}",
         -1, -1, 4, -1, 1.5},
        {"{\"memory\":[1,\"MB\"]}", MIB, -1, -1, -1, -1},
        {"{\"gpus\":[1,\"gpus\"],\"disk\":[5,\"MB\"],\"memory\":[6,\"MB\"],\"cores\":[7,\"cores\"]}",
         6 * MIB, 5 * MIB, 7, 1, -1},
        {"{\"memory\":[-1,\"MB\"],\"disk\":[1.5e3,\"MB\"],\"cores\":[0.5,\"cores\"],\"gpus\":[ 2,\"gpus\"]}",
         -1, 1500 * MIB, 0.5, 2, -1}, /* a negative memory: rejected, the rest kept */
        {"{\"memory\":[0.0002737045288085938,\"MB\"],\"cores\":[2, \"cores\"],\"disk\":[3,\"MB\" ]}",
         287, 3 * MIB, 2, -1, -1},
    };
    static const char *const broken[] = {
        "{\"memory\":[007,\"MB\"]}", "{\"gpus\":[1,\"gpus\"]x}", "{\"cores\":[1,\"cores\"]",
        "{\"disk\":[1,\"MB\"],}", "{\"memory\":[1,\"MB\"]]", "{\"cores\":[1,\"cores\"],\"gpus\":[1,\"gpus\"}",
        "{\"disk\":[1,\"MB\"x,\"cores\":[1,\"cores\"]}", "{\"cores\":[1,\"cores\"x,\"gpus\":[1,\"gpus\"]}",
        "{\"gpus\":[1,\"gpux\"],\"cores\":[1,\"cores\"]}x", "{\"gpus\":[1,\"gpus\"]x\"cores\":[1,\"cores\"]}",
        "{\"zz\":[,\"s\"],\"cores\":[1,\"cores\"]}",
    };
    enum { NC = sizeof cases / sizeof *cases, NB = sizeof broken / sizeof *broken };
    char log[8192];
    size_t n = 0;
    for (int i = 0; i < NC + NB; i++)
        n += (size_t)snprintf(log + n, sizeof log - n,
                              "1680774974507432 372 TASK %d WAITING f FIRST_RESOURCES {}\n"
                              "1680774974509617 372 TASK %d RUNNING 172.17.0.2:60778  FIRST_RESOURCES %s\n"
                              "1680774974749753 372 TASK %d DONE SUCCESS  0  {} %s\n",
                              i + 1, i + 1, i < NC ? cases[i].json : "{}", i + 1,
                              i < NC ? cases[i].json : broken[i - NC]);
    CHECK(n < sizeof log);
    const struct tl_parse_stats *st;
    struct collected c = run_text(log, &st, NULL);
    CHECK_EQ_INT(st->rejected, NB + 2);
    CHECK_EQ_INT(st->rejected_by[TL_REJ_BAD_VALUE], 2); /* memory -1: its RUNNING and DONE lines */
    CHECK_EQ_INT(st->rejected_by[TL_REJ_BAD_JSON], NB - 1);
    CHECK_EQ_INT(st->rejected_by[TL_REJ_BAD_FIELDS], 1); /* the x after the object */
    for (int i = 0; i < NC; i++) {
        const struct tl_record *r = find(&c, TL_REC_TASK, i + 1, 0);
        CHECK(r != NULL);
        if (!r) continue;
        static const enum tl_metric measured[] = {TL_M_MAX_RSS_BYTES, TL_M_DISK_BYTES, TL_M_CORES, TL_M_GPUS,
                                                  TL_M_CORES_AVG};
        static const enum tl_metric alloc[] = {TL_M_ALLOC_MEMORY_BYTES, TL_M_ALLOC_DISK_BYTES, TL_M_ALLOC_CORES,
                                               TL_M_ALLOC_GPUS, TL_M_COUNT};
        const double want[] = {cases[i].mem, cases[i].disk, cases[i].cores, cases[i].gpus, cases[i].cores_avg};
        for (int k = 0; k < 5; k++) {
            bool has = tl_record_has(r, measured[k]);
            if (has != (want[k] != -1) || (has && r->v[measured[k]] != want[k]))
                printf("case %d metric %s: %s %.17g, want %.17g\n", i, tl_metric_info[measured[k]].name,
                       has ? "got" : "absent", has ? r->v[measured[k]] : 0.0, want[k]);
            CHECK(has == (want[k] != -1));
            if (has) CHECK(r->v[measured[k]] == want[k]);
            if (alloc[k] == TL_M_COUNT) continue;
            /* the same object as the RUNNING allocation */
            has = tl_record_has(r, alloc[k]);
            CHECK(has == (want[k] != -1));
            if (has) CHECK(r->v[alloc[k]] == want[k]);
        }
    }
    collected_free(&c);
}

static void test_json_forms(void)
{
    static const char *const forms[] = {
        /* canonical, as cctools writes it */
        "{\"wall_time\":[31.148094,\"s\"],\"memory\":[1024,\"MB\"],\"cores\":[2,\"cores\"],"
        "\"wq_input_size\":[0.5107355117797852,\"MB\"],\"cpu_time\":[4.482269287109375e-05,\"s\"]}",
        /* spaces around everything */
        "{ \"wall_time\" : [ 31.148094 , \"s\" ] , \"memory\" : [ 1024 , \"MB\" ] , \"cores\":[2, \"cores\"],"
        " \"wq_input_size\":[0.5107355117797852,\"MB\" ], \"cpu_time\": [4.482269287109375e-05,\"s\"] }",
        /* bare numbers (MB and s by default), exponent forms */
        "{\"wall_time\":3.1148094e1,\"memory\":1.024E+3,\"cores\":2,\"wq_input_size\":0.5107355117797852,"
        "\"cpu_time\":4482269287109375e-20}",
        /* unknown keys of every shape between, an escaped key that must stay unknown */
        "{\"time_commit_start\":[1742250433.738576,\"s\"],\"wall_time\":[31.148094,\"s\"],"
        "\"wall\\u005ftime\":[99,\"s\"],\"x\\\":[5,\\\"s\\\"],\\\"memory\":[7,\"MB\"],\"x\":{\"a\":[1,2,\"]\"]},\"memory\":[1024,\"MB\"],\"y\":[1,2,3],"
        "\"cores\":[2,\"cores\"],\"z\":null,\"wq_input_size\":[0.5107355117797852,\"MB\"],"
        "\"cpu_time\":[4.482269287109375e-05,\"s\"],\"end\":[1e400,\"s\"]}",
        /* unknown keys with numbers of every spelling (stepped over, not read) */
        "{\"u1\":[1.,\"s\"],\"u2\":[.5,\"s\"],\"u3\":[007,\"s\"],\"u4\":[1e5,\"s\"],\"u5\":[-3,\"s\"],"
        "\"wall_time\":[31.148094,\"s\"],\"u6\":[12345678901234567890123,\"s\"],\"u7\":[1.5.5,\"s\"],"
        "\"memory\":[1024,\"MB\"],\"u8\":[1680542041.099979,\"s\"],\"cores\":[2,\"cores\"],\"u9\":[0,\"\"],"
        "\"wq_input_size\":[0.5107355117797852,\"MB\"],\"cpu_time\":[4.482269287109375e-05,\"s\"],"
        "\"u10\":[5,\"s\"]}",
    };
    enum { NF = sizeof forms / sizeof *forms };
    char log[4096];
    size_t n = 0;
    for (int i = 0; i < NF; i++)
        n += (size_t)snprintf(log + n, sizeof log - n,
                              "1680774974507432 372 TASK %d WAITING f FIRST_RESOURCES {}\n"
                              "1680774974509617 372 TASK %d RUNNING 172.17.0.2:60778  FIRST_RESOURCES {}\n"
                              "1680774974749753 372 TASK %d DONE SUCCESS  0  {} %s\n",
                              i + 1, i + 1, i + 1, forms[i]);
    CHECK(n < sizeof log);
    const struct tl_parse_stats *st;
    struct collected c = run_text(log, &st, NULL);
    CHECK_EQ_INT(st->rejected, 0);
    const struct tl_record *ref = find(&c, TL_REC_TASK, 1, 0);
    CHECK(ref != NULL);
    if (ref) {
        CHECK_NEAR(ref->v[TL_M_WALL_TIME_S], 31.148094, 0);
        CHECK_NEAR(ref->v[TL_M_MAX_RSS_BYTES], 1024 * MIB, 0);
        CHECK_NEAR(ref->v[TL_M_INPUT_BYTES], 535545, 0); /* 0.5107355117797852 MiB */
        CHECK_NEAR(ref->v[TL_M_CPU_TIME_S], 4.482269287109375e-05, 0);
        CHECK_NEAR(ref->v[TL_M_CORES], 2, 0);
    }
    for (int i = 2; i <= NF && ref; i++) {
        const struct tl_record *r = find(&c, TL_REC_TASK, i, 0);
        CHECK(r != NULL);
        if (!r) continue;
        CHECK(!memcmp(r->present, ref->present, sizeof r->present));
        for (int m = 0; m < TL_M_COUNT; m++)
            if (tl_record_has(ref, (enum tl_metric)m) && memcmp(&r->v[m], &ref->v[m], sizeof(double))) {
                fprintf(stderr, "form %d: %s = %.17g, canonical %.17g\n", i, tl_metric_info[m].name,
                        r->v[m], ref->v[m]);
                CHECK(!"form differs");
            }
    }
    collected_free(&c);
    /* An escaped quote does not end a key: this key runs to the quote
     * before s, and what follows it is no JSON. */
    c = run_text("1680774974749753 372 TASK 9 DONE SUCCESS  0  {} {\"x\\\":[5,\"s\"]}\n", &st, NULL);
    CHECK_EQ_INT(st->rejected, 1);
    collected_free(&c);
}

/* MANAGER START records in order: each one's workflow begins with
 * "PID@" and its time is ts (µs). */
struct manager_want {
    const char *pid;
    int64_t ts;
};

static void check_managers(const struct collected *c, const struct manager_want *want, size_t n)
{
    CHECK_EQ_INT(count_kind(c, TL_REC_MANAGER), n);
    for (size_t i = 0; i < n; i++) {
        const struct tl_record *r = find(c, TL_REC_MANAGER, -1, (int)i);
        if (!r) break;
        if (!r->workflow || strncmp(r->workflow, want[i].pid, strlen(want[i].pid)))
            printf("record %zu: workflow %s, want %s...\n", i, r->workflow ? r->workflow : "(null)", want[i].pid);
        CHECK(r->workflow && !strncmp(r->workflow, want[i].pid, strlen(want[i].pid)));
        CHECK_EQ_INT(r->time_ns, want[i].ts * 1000);
    }
}

/* The line prefix (timestamp, manager pid) in the spellings the fast
 * reader leaves to the general one, and what both must refuse. */
static void test_prefix_forms(void)
{
    const char *log = "1700000000000000 42 MANAGER START\n"
                      "  1700000000000001 43 MANAGER START\n"
                      "1700000000000002  44 MANAGER START\n"
                      "1700000000000003\t45 MANAGER START\n"
                      "0001700000000004 46 MANAGER START\n"
                      "17000000000000050 47 MANAGER START\n"
                      "1700000000000006 1234567890123456789 MANAGER START\n"
                      "1700000000000007 12345678901234567890 MANAGER START\n"
                      "1700000000000008 4x MANAGER START\n"
                      "1700000000000009 50 MANAGER START\n";
    const struct tl_parse_stats *st;
    struct collected c = run_text(log, &st, NULL);
    CHECK_EQ_INT(st->rejected, 4); /* tab, 17-digit time, 20-digit pid, 4x */
    CHECK_EQ_INT(st->rejected_by[TL_REJ_BAD_PREFIX], 4);
    static const struct manager_want want[] = {
        {"42@", 1700000000000000}, {"43@", 1700000000000001}, {"44@", 1700000000000002},
        {"46@", 1700000000004},    {"1234567890123456789@", 1700000000000006},
        {"50@", 1700000000000009}};
    check_managers(&c, want, sizeof want / sizeof *want);
    collected_free(&c);
}

/* Consecutive lines repeat the manager pid and the timestamp's first
 * digits, which the reader compares with the line before instead of
 * converting: pids and times that share those bytes and then differ (in
 * the last digit, in length, by a byte that is no digit) are each read as
 * written. */
static void test_prefix_repeats(void)
{
    const char *log = "1680774974507432 23960640001 MANAGER START\n"
                      "1680774974507433 23960640002 MANAGER START\n"
                      "1680774974507434 2396064000 MANAGER START\n"
                      "1680774974507435 239606400011 MANAGER START\n"
                      "1680774974507436 239606400011x MANAGER START\n"
                      "1680774974507437 239606400011 MANAGER START\n"
                      "1680775000000000 239606400011 MANAGER START\n"
                      "16807750 239606400011 MANAGER START\n"
                      "16807750x0000001 239606400011 MANAGER START\n"
                      "1680775000000001x 239606400011 MANAGER START\n"
                      "1680775000000002 2396064 MANAGER START\n"
                      "1680775000000003 2396064 MANAGER START\n"
                      "1680775000000004 2396065 MANAGER START\n"
                      "1680775000000005 123456789012345 MANAGER START\n"
                      "1680775000000006 123456789012346 MANAGER START\n"
                      "1680775000000007 1234567890123456 MANAGER START\n"
                      "1680775000000008 123456789012346 MANAGER START\n"
                      "1680775000000009 239606400011 MANAGER START\n"
                      "1680775000000010 23960640001 MANAGER START\n"
                      "1680775000000011 239606400011 MANAGER START\n";
    const struct tl_parse_stats *st;
    struct collected c = run_text(log, &st, NULL);
    CHECK_EQ_INT(st->rejected, 3);
    CHECK_EQ_INT(st->rejected_by[TL_REJ_BAD_PREFIX], 3);
    static const struct manager_want want[] = {{"23960640001@", 1680774974507432},  {"23960640002@", 1680774974507433},
                {"2396064000@", 1680774974507434},   {"239606400011@", 1680774974507435},
                {"239606400011@", 1680774974507437}, {"239606400011@", 1680775000000000},
                {"239606400011@", 16807750},         {"2396064@", 1680775000000002},
                {"2396064@", 1680775000000003},      {"2396065@", 1680775000000004},
                {"123456789012345@", 1680775000000005}, {"123456789012346@", 1680775000000006},
                {"1234567890123456@", 1680775000000007}, {"123456789012346@", 1680775000000008},
                {"239606400011@", 1680775000000009}, {"23960640001@", 1680775000000010},
                {"239606400011@", 1680775000000011}};
    check_managers(&c, want, sizeof want / sizeof *want);
    collected_free(&c);
}

/* Records counted but not turned into tasks; (null) workers; TaskVine
 * transfers in both unit eras; APPLICATION, LIBRARY, DUTY, CATEGORY. */
static void test_other_records(void)
{
    const char *log =
        "1680552100353397 4080849 CATEGORY evaluate_mpnn MAX {}\n"
        "1680552100353415 4080849 CATEGORY evaluate_mpnn MIN {}\n"
        "1680552100353421 4080849 CATEGORY evaluate_mpnn FIRST FIXED {}\n"
        "1680552100353422 4080849 CATEGORY odd name FIRST MAX \n"
        "1680540635833555 1475717 LIBRARY 2001 SENT worker-ec1ffbeeb3c226b9bc918ca9255c1597\n"
        "1677534228351326 2699325 DUTY 1001 SENT worker-0d6862e611a8fc7506ed67e60d1583d9\n"
        "1742250453104479 318561 WORKER (null) DISCONNECTION FAILURE\n"
        "1742250351631473 318561 WORKER worker-21fe9427ac86925ab0e1905069dac297 TRANSFER INPUT "
        "models 3426155384 9039785 1742250342591684\n"
        "1676508192839360 263671 WORKER worker-41c3 CACHE_UPDATE url-0-de2232bcd1891c4abf3885ac896c012c "
        "155.502572 19.325933\n"
        "1674676512518892 3701669 WORKER (null) CACHE-UPDATE . 0.000000 44.333925\n"
        "1680540643315873 1475717 WORKER worker-ec1ffbeeb3c226b9bc918ca9255c1597 CACHE_UPDATE "
        "task-rnd-xnyjhnoktricetf 206 0 0\n"
        "1742250321000000 318561 APPLICATION phase two begins\n";
    const struct tl_parse_stats *st;
    uint64_t counters[64];
    struct collected c = run_text(log, &st, counters);
    CHECK_EQ_INT(st->rejected, 0);
    const struct tl_record *null_w = find(&c, TL_REC_WORKER, -1, 0);
    if (null_w) {
        CHECK(null_w->worker == NULL);
        CHECK_STR(null_w->result, "FAILURE");
    }
    const struct tl_record *t1 = find(&c, TL_REC_TRANSFER, -1, 0);
    const struct tl_record *t2 = find(&c, TL_REC_TRANSFER, -1, 1);
    const struct tl_record *t3 = find(&c, TL_REC_TRANSFER, -1, 2);
    const struct tl_record *t4 = find(&c, TL_REC_TRANSFER, -1, 3);
    if (t1 && t2 && t3 && t4) {
        CHECK_NEAR(t1->v[TL_M_INPUT_BYTES], 3426155384.0, 0); /* 7.5.1+: bytes, µs */
        CHECK_NEAR(t1->v[TL_M_INPUT_TIME_S], 9.039785, 1e-15);
        CHECK_NEAR(t2->v[TL_M_INPUT_BYTES], 163056265, 0); /* 7.5.0: MiB (155.502572), s */
        CHECK_NEAR(t2->v[TL_M_INPUT_TIME_S], 19.325933, 0);
        CHECK_NEAR(t3->v[TL_M_INPUT_TIME_S], 44.333925, 0);
        CHECK_NEAR(t4->v[TL_M_INPUT_BYTES], 206, 0);
        CHECK_STR(t4->state, "CACHE_UPDATE");
    } else {
        CHECK(!"transfers missing");
    }
    collected_free(&c);
}

/* Several runs appended to one file with the same task ids; a run that
 * crashed (no END) leaves its tasks open; a partial last line is parsed. */
static void test_appended_runs(void)
{
    const char *log =
        "1713205372846168 2394123 MANAGER START\n"
        "1713205372846200 2394123 TASK 1 WAITING a FIRST_RESOURCES {}\n"
        "1713205372846300 2394123 TASK 1 RUNNING 1.2.3.4:5  FIRST_RESOURCES {}\n"
        "\n"
        "# time manager_pid MANAGER START|END\n"
        "\n"
        "1713205400000000 2396064 MANAGER START\n"
        "1713205400000100 2396064 TASK 1 WAITING b FIRST_RESOURCES {}\n"
        "1713205400000200 2396064 TASK 1 RUNNING 1.2.3.4:6  FIRST_RESOURCES {}\n"
        "1713205400000300 2396064 TASK 1 WAITING_RETRIEVAL 1.2.3.4:6 \n"
        "1713205400000400 2396064 TASK 1 RETRIEVED SUCCESS  0  {} {}\n"
        "1713205400000500 2396064 TASK 1 DONE SUCCESS  0  {} {}"; /* no final newline */
    const struct tl_parse_stats *st;
    struct collected c = run_text(log, &st, NULL);
    CHECK_EQ_INT(st->rejected, 0);
    CHECK_EQ_INT(st->lines, 12);
    const struct tl_record *done = find(&c, TL_REC_TASK, 1, 0);
    const struct tl_record *open = find(&c, TL_REC_TASK_OPEN, 1, 0);
    if (done && open) {
        CHECK_STR(done->category, "b");
        CHECK_STR(done->workflow, "2396064@2024-04-15T18:23:20Z");
        CHECK_STR(open->category, "a");
        CHECK_STR(open->state, "RUNNING");
        CHECK_STR(open->workflow, "2394123@2024-04-15T18:22:52Z");
    } else {
        CHECK(!"records missing");
    }
    collected_free(&c);
}

/* MANAGER END: the run's unfinished tasks are reported right there (line
 * 5, before the next run's records), censored at their last state, in task
 * order; the run after it is untouched and reported at the end of input. */
static void test_open_tasks_at_manager_end(void)
{
    const char *log =
        "1713205372000000 11 MANAGER START\n"
        "1713205372000100 11 TASK 2 WAITING a FIRST_RESOURCES {}\n"
        "1713205372000200 11 TASK 1 WAITING a FIRST_RESOURCES {}\n"
        "1713205372000300 11 TASK 1 RUNNING 1.2.3.4:5  FIRST_RESOURCES {\"cores\":[2,\"cores\"]}\n"
        "1713205373000000 11 MANAGER END\n"
        "1713205400000000 12 MANAGER START\n"
        "1713205400000100 12 TASK 1 WAITING b FIRST_RESOURCES {}\n";
    const struct tl_parse_stats *st;
    struct collected c = run_text(log, &st, NULL);
    CHECK_EQ_INT(st->rejected, 0);
    CHECK_EQ_INT(count_kind(&c, TL_REC_TASK_OPEN), 3);
    const struct tl_record *t1 = find(&c, TL_REC_TASK_OPEN, 1, 0);
    const struct tl_record *t2 = find(&c, TL_REC_TASK_OPEN, 2, 0);
    const struct tl_record *b1 = find(&c, TL_REC_TASK_OPEN, 1, 1);
    if (t1 && t2 && b1) {
        CHECK(t1 < t2); /* task order */
        CHECK_EQ_INT(t1->line, 5);
        CHECK_EQ_INT(t2->line, 5);
        CHECK_STR(t1->state, "RUNNING");
        CHECK_STR(t2->state, "WAITING");
        CHECK_EQ_INT(t1->time_ns, 1713205372000300LL * 1000);
        CHECK_NEAR(t1->v[TL_M_ALLOC_CORES], 2, 0);
        CHECK_STR(t1->workflow, "11@2024-04-15T18:22:52Z");
        CHECK_EQ_INT(b1->line, 7); /* still open at the end of input */
        CHECK_STR(b1->category, "b");
        CHECK(b1 > t2);
    } else {
        CHECK(!"records missing");
    }
    /* the END's workflow record still counts them, as the state at END */
    const struct tl_record *wf = NULL;
    for (size_t i = 0; i < c.n; i++)
        if (c.recs[i].kind == TL_REC_WORKFLOW && c.recs[i].line == 5) wf = &c.recs[i];
    CHECK(wf != NULL);
    if (wf) {
        CHECK_NEAR(wf->v[TL_M_TASKS_WAITING], 1, 0);
        CHECK_NEAR(wf->v[TL_M_TASKS_RUNNING], 1, 0);
    }
    collected_free(&c);
}

/* A run without MANAGER END that writes nothing between two later MANAGER
 * STARTs (a crashed manager, restarted twice, as in the samples' copies)
 * is closed at the second: its unfinished tasks are reported there (line
 * 7), not at the end of input. Run 12 wrote a line after run 13 started
 * (two live managers in one stream), so it stays open to the end. With
 * wq.close_superseded=false everything stays open to the end. */
static void test_superseded_runs(void)
{
    const char *log =
        "1713205372000000 11 MANAGER START\n"
        "1713205372000100 11 TASK 1 WAITING a FIRST_RESOURCES {}\n"
        "1713205372000200 11 TASK 1 RUNNING 1.2.3.4:5  FIRST_RESOURCES {}\n"
        "1713205400000000 12 MANAGER START\n"
        "1713205400000100 12 TASK 1 WAITING b FIRST_RESOURCES {}\n"
        "1713205400000200 12 TASK 1 RUNNING 1.2.3.4:6  FIRST_RESOURCES {}\n"
        "1713205500000000 13 MANAGER START\n"
        "1713205500000100 12 TASK 2 WAITING b FIRST_RESOURCES {}\n"
        "1713205500000200 13 TASK 1 WAITING c FIRST_RESOURCES {}\n"
        "1713205600000000 14 MANAGER START\n"
        "1713205600000100 14 TASK 1 WAITING d FIRST_RESOURCES {}\n";
    for (int keep = 0; keep <= 1; keep++) {
        struct collected c = {0};
        struct tl_parser_inst inst;
        tl_parser_inst_init(&inst, wq);
        char err[128]; /* the default closes them */
        if (keep)
            CHECK_EQ_INT(tl_options_set(wq->options, inst.config, "close_superseded", "false", err,
                                        sizeof err),
                         TL_OK);
        struct tl_emit emit = {collect_record, collect_reject, &c, 0};
        tl_parser_inst_open(&inst, &emit, NULL, 0);
        wq->feed(inst.state, log, strlen(log));
        wq->finish(inst.state);
        CHECK_EQ_INT(wq->stats(inst.state)->rejected, 0);
        struct tl_counter cs[TL_MAX_COUNTERS];
        size_t n = wq->counters(inst.state, cs, TL_MAX_COUNTERS);
        uint64_t superseded = 99;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(cs[i].name, "runs ended by later MANAGER STARTs")) superseded = cs[i].value;
        CHECK_EQ_INT(superseded, keep ? 0 : 1);
        CHECK_EQ_INT(count_kind(&c, TL_REC_TASK_OPEN), 5); /* every task, once */
        const struct tl_record *a = find(&c, TL_REC_TASK_OPEN, 1, 0), *b = NULL;
        for (size_t i = 0; i < c.n; i++)
            if (c.recs[i].kind == TL_REC_TASK_OPEN && c.recs[i].category &&
                !strcmp(c.recs[i].category, "b") && !b)
                b = &c.recs[i];
        if (a && b) {
            CHECK_STR(a->category, "a");
            CHECK_STR(a->state, "RUNNING");
            CHECK_EQ_INT(a->time_ns, 1713205372000200LL * 1000); /* censored at RUNNING */
            CHECK_EQ_INT(a->line, keep ? 11 : 7);
            CHECK_EQ_INT(b->line, 11); /* run 12 spoke after run 13 started: kept */
        } else {
            CHECK(!"records missing");
        }
        tl_parser_inst_free(&inst);
        collected_free(&c);
    }
}

/* A crash can leave a run of NUL bytes (preallocated blocks) with the next
 * line right after it, no newline between: the NUL run ends the damaged
 * line, and the line after it is read (it was lost with the damage). */
static void test_nul_run(void)
{
    static const char head[] =
        "1700000000000000 42 MANAGER START\n"
        "1700000000000100 42 TASK 1 WAITING c FIRST_RESOURCES {}\n"
        "1700000000000200 42 TASK 1 RUNNING 10.0.0.1:9000 FIRST_RESOURCES {}\n"
        "1700000000000500 42 TASK 1 WAITING_RETRIEVAL 10.0.0.1:9000\n";
    static const char tail[] =
        "1700000000000600 42 TASK 1 RETRIEVED SUCCESS 0 {} {\"wall_time\":[1.5,\"s\"]}\n"
        "1700000000000700 42 TASK 1 DONE SUCCESS 0\n";
    char text[sizeof head + 300 + sizeof tail];
    size_t n = 0;
    memcpy(text, head, sizeof head - 1);
    n += sizeof head - 1;
    memset(text + n, 0, 300);
    n += 300;
    memcpy(text + n, tail, sizeof tail - 1);
    n += sizeof tail - 1;
    for (int split = 0; split < 2; split++) { /* whole, and cut inside the NUL run */
        struct collected c = {0};
        struct tl_parser_inst inst;
        const struct tl_parse_stats *st =
            parse_buffer(wq, text, n, split ? sizeof head + 100 : 0, &c, &inst);
        CHECK_EQ_INT(st->rejected, 1);
        CHECK_EQ_INT(st->rejected_by[TL_REJ_NUL_BYTE], 1);
        const struct tl_record *t = find(&c, TL_REC_TASK, 1, 0);
        CHECK(t && tl_record_has(t, TL_M_WALL_TIME_S) && t->v[TL_M_WALL_TIME_S] == 1.5);
        tl_parser_inst_free(&inst);
        collected_free(&c);
    }
}

/* A state saved by tasklens 46682b7 (tests/data/checkpoints/README.md):
 * restored here, it reads on from its byte exactly as a single pass does. */
static void test_old_state(void)
{
    const char *data = getenv("TL_TEST_DATA");
    char path[1024];
    size_t nlog, nstate;
    snprintf(path, sizeof path, "%s/wq/demo-cctools-9.9.log", data ? data : "tests/data");
    char *log = slurp(path, &nlog);
    snprintf(path, sizeof path, "%s/checkpoints/wq-state-46682b7.bin", data ? data : "tests/data");
    char *state = slurp(path, &nstate);
    CHECK(log && state);
    if (!log || !state) return;
    const size_t cut = 136415;
    struct collected whole = {0}, rest = {0};
    struct tl_parser_inst a, b;
    parse_buffer(wq, log, nlog, 0, &whole, &a);
    tl_parser_inst_init(&b, wq);
    struct tl_emit emit = {collect_record, collect_reject, &rest, 0};
    tl_parser_inst_open(&b, &emit, NULL, 0);
    CHECK_EQ_INT(wq->restore(b.state, (const uint8_t *)state, nstate), TL_OK);
    wq->feed(b.state, log + cut, nlog - cut);
    wq->finish(b.state);
    /* the records a single pass emits from the state's line on */
    uint64_t from = rest.n ? rest.recs[0].line : 0;
    size_t k = 0;
    while (k < whole.n && whole.recs[k].line < from) k++;
    CHECK_EQ_INT(whole.n - k, rest.n);
    int differ = 0;
    for (size_t i = 0; i < rest.n && k + i < whole.n; i++) {
        struct tl_record x = whole.recs[k + i], y = rest.recs[i];
        /* the workflow gauges' done and failed: that state counted a
         * SUCCESS with a non-zero exit as done and a cancelled task as
         * failed (before the glossary); the restored run keeps those
         * counts for the tasks before it, so they are not compared */
        x.v[TL_M_TASKS_DONE] = y.v[TL_M_TASKS_DONE] = 0;
        x.v[TL_M_TASKS_FAILED] = y.v[TL_M_TASKS_FAILED] = 0;
        differ += x.kind != y.kind || x.task_id != y.task_id || x.attempt != y.attempt ||
                  x.line != y.line || memcmp(x.present, y.present, sizeof x.present) ||
                  memcmp(x.v, y.v, sizeof x.v) || strcmp(x.category ? x.category : "", y.category ? y.category : "");
    }
    CHECK_EQ_INT(differ, 0);
    CHECK(rest.n > 100);
    CHECK_EQ_INT(wq->stats(b.state)->lines, wq->stats(a.state)->lines);
    tl_parser_inst_free(&a);
    tl_parser_inst_free(&b);
    collected_free(&whole);
    collected_free(&rest);
    free(log);
    free(state);
}

int main(void)
{
    wq = tl_parser_find("wq");
    CHECK(wq != NULL);
    if (!wq) return check_done("test_wq_records");
    test_nul_run();
    test_wq_e_lifecycle();
    test_vine_b_monitor();
    test_vine_c_ready_and_names();
    test_resource_exhaustion_retry();
    test_lifecycle_variants();
    test_old_families();
    test_json_forms();
    test_common_members();
    test_same_text();
    test_prefix_forms();
    test_prefix_repeats();
    test_other_records();
    test_appended_runs();
    test_open_tasks_at_manager_end();
    test_superseded_runs();
    test_old_state();
    return check_done("test_wq_records");
}
