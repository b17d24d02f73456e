/* Packing a record (core/record_pack.h) and back gives the record: one
 * made to hold what no sample does (tags, NULL beside empty strings, every
 * metric), and every record of every real input in
 * ../shared/<format>/samples, every field
 * compared -- kind, flags, ids, times, line, the presence mask, each
 * present metric bit for bit, each string (NULL stays NULL) and each tag --
 * with absent metrics 0, as the threads of a batch reading hand records
 * back (pipeline/batch_pool.c). Records follow one another in one buffer,
 * as in a block. */
#include "check.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/record_pack.h"
#include "pipeline/batch.h"

struct run {
    long records, differ, strings, tags;
    struct tl_buf packed;
};

static bool same_string(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

static bool same_record(const struct tl_record *a, const struct tl_record *b, long *strings)
{
    bool ok = a->kind == b->kind && a->task_id == b->task_id && a->attempt == b->attempt &&
              a->exit_code == b->exit_code && a->has_exit_code == b->has_exit_code &&
              a->final == b->final && a->time_ns == b->time_ns && a->start_ns == b->start_ns &&
              a->time_from_file == b->time_from_file && a->line == b->line &&
              !memcmp(a->present, b->present, sizeof a->present) && a->n_tags == b->n_tags;
    for (int m = 0; ok && m < TL_M_COUNT; m++) {
        bool here = a->present[m >> 6] >> (m & 63) & 1;
        ok = here ? !memcmp(&a->v[m], &b->v[m], sizeof(double)) : b->v[m] == 0;
    }
    const char *const sa[] = {a->source, a->workflow, a->category, a->host, a->worker, a->result,
                              a->state, a->task_key, a->name, a->tag, a->depends};
    const char *const sb[] = {b->source, b->workflow, b->category, b->host, b->worker, b->result,
                              b->state, b->task_key, b->name, b->tag, b->depends};
    for (size_t i = 0; ok && i < sizeof sa / sizeof *sa; i++) {
        ok = same_string(sa[i], sb[i]);
        *strings += sa[i] != NULL;
    }
    for (int t = 0; ok && t < a->n_tags; t++)
        ok = same_string(a->tags[t].key, b->tags[t].key) && same_string(a->tags[t].value, b->tags[t].value);
    return ok;
}

/* Packs each record after the ones before it and compares what unpacks
 * with it (its strings are the parser's only during the callback). */
static void on_record(void *ctx, const struct tl_record *r)
{
    struct run *run = ctx;
    size_t before = run->packed.len;
    tl_record_pack(&run->packed, r);
    static struct tl_record back;
    tl_record_unpack(run->packed.data + before, &back);
    if (!same_record(r, &back, &run->strings)) {
        if (!run->differ) fprintf(stderr, "  record at line %llu differs after packing\n", (unsigned long long)r->line);
        run->differ++;
    }
    run->records++;
    run->tags += r->n_tags;
    if (run->packed.len > (1u << 20)) run->packed.len = 0; /* a block's worth, then the next */
}

static bool is_sample(const char *name)
{
    const char *dot = strrchr(name, '.');
    return name[0] != '.' && strncmp(name, "SOURCES", 7) &&
           !(dot && (!strcmp(dot, ".md") || !strcmp(dot, ".txt") || !strcmp(dot, ".sha256")));
}

static void walk(const char *dir, struct run *run, int *files)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!is_sample(e->d_name)) continue;
        char path[8192];
        snprintf(path, sizeof path, "%.4000s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st)) continue;
        if (S_ISDIR(st.st_mode)) {
            walk(path, run, files);
        } else if (S_ISREG(st.st_mode)) {
            struct tl_input_opts io = {.quiet = true};
            struct tl_summary_input info = {0};
            tl_read_input(path, &io, on_record, run, &info);
            tl_input_info_free(&info);
            (*files)++;
        }
    }
    closedir(d);
}

/* What no sample holds: tags (a NULL key or value among them), NULL
 * strings beside empty ones, every metric present, negative and NaN-free
 * extremes, a huge line number. */
static void made_record(struct run *run)
{
    struct tl_record r = {.kind = TL_REC_TASK_OPEN, .source = "wq", .workflow = "", .category = "c\x01\xff",
                          .name = "align (1)", .task_id = -1, .attempt = 7, .exit_code = -9,
                          .has_exit_code = true, .final = true, .time_ns = INT64_MIN + 1,
                          .start_ns = TL_NO_TIME, .line = UINT64_MAX, .time_from_file = true, .n_tags = 3};
    r.tags[0] = (struct tl_tag){"band", "i"};
    r.tags[1] = (struct tl_tag){"visit", NULL};
    r.tags[2] = (struct tl_tag){NULL, "x"};
    for (int m = 0; m < TL_M_COUNT; m++) {
        r.present[m >> 6] |= 1ull << (m & 63);
        r.v[m] = m % 2 ? -1e308 / (m + 1) : 5e-324 * m;
    }
    on_record(run, &r);
}

int main(void)
{
    const char *shared = getenv("TL_SHARED_DIR");
    char root[4096];
    snprintf(root, sizeof root, "%s", shared ? shared : "../shared");
    DIR *d = opendir(root);
    if (!d) {
        snprintf(root + strlen(root), sizeof root - strlen(root), " not found");
        check_skip(root);
    }
    static struct run run;
    made_record(&run);
    CHECK(run.records == 1 && run.tags == 3 && run.differ == 0);
    int files = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char samples[8192];
        snprintf(samples, sizeof samples, "%s/%s/samples", root, e->d_name);
        if (e->d_name[0] != '.') walk(samples, &run, &files);
    }
    closedir(d);
    printf("  %d real inputs: %ld records (%ld strings, %ld tags) packed and unpacked, %ld differ\n",
           files, run.records, run.strings, run.tags, run.differ);
    CHECK(files >= 50);
    CHECK(run.records > 300000);
    CHECK(run.differ == 0);
    tl_buf_free(&run.packed);
    return check_done("test_record_pack");
}
