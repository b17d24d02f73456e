/* The command-line side of the insights. See insights_cli.h. */
#include "cli/insights_cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "core/path.h"
#include "core/term.h"
#include "sinks/lineproto.h"
#include "core/summary.h"

/* The options every insight command shares; 1 handled, 0 not ours, -1 bad. */
int tl_cli_common_option(int c, char *arg, struct common *co, const char *cmd)
{
    switch (c) {
    case 'f':
        if (!strcmp(arg, "table")) co->fmt = F_TABLE;
        else if (!strcmp(arg, "json")) co->fmt = F_JSON;
        else if (!strcmp(arg, "lp")) co->fmt = F_LP;
        else {
            tl_eprintf("%s: --format is table, json or lp\n", cmd);
            return -1;
        }
        return 1;
    case 'o': co->out_path = arg; return 1;
    case 'r': co->requests_path = arg; return 1;
    default: return tl_input_option(c, arg, &co->io, co->settings, MAX_SETTINGS, cmd);
    }
}

/* An LSST quantum gets its label's BPS request as its allocation. */
struct with_requests {
    struct tl_requests *rq;
    tl_record_cb add;
    void *ctx;
};

static void add_with_requests(void *ctx, const struct tl_record *r)
{
    struct with_requests *w = ctx;
    if (r->kind != TL_REC_TASK || !r->source || strcmp(r->source, "lsst")) {
        w->add(w->ctx, r);
        return;
    }
    struct tl_record copy = *r;
    tl_requests_apply(w->rq, &copy);
    w->add(w->ctx, &copy);
}

/* What the BPS file did not name, said once. */
static void say_defaulted(const struct common *co, const char *cmd)
{
    size_t n;
    const char *labels = tl_requests_defaulted(co->requests, &n);
    if (!n) return;
    double mb, cpus;
    tl_requests_defaults(co->requests, &mb, &cpus);
    tl_eprintf("%s: %zu LSST %s of labels not in %s (%s) were taken as allocated its "
            "default: requestMemory %g MB, requestCpus %g\n", cmd, n, n == 1 ? "quantum" : "quanta",
            co->requests_path, labels, mb, cpus);
}

/* After each input: the quanta whose RSS is their process's, the exit status. */
struct inputs_read {
    struct common *co;
    int status;
};

static void input_read(void *ctx, int i, enum tl_err rc, struct tl_summary_input *info)
{
    (void)i;
    struct inputs_read *ir = ctx;
    ir->co->process_wide_rss += tl_summary_counter(info, 1, "process_wide_rss");
    ir->status = tl_input_status(ir->status, rc, info, false);
    tl_input_info_free(info);
}

/* Reads every input into rs (a directory: the LSST metadata files under
 * it, else every file of a known format, as `summary` reads it); the exit
 * status so far. */
int tl_cli_read_records(struct common *co, int n, char **args, tl_record_cb add, void *ctx, const char *cmd)
{
    bool oom = false;
    co->io.settings = co->settings;
    co->io.kinds = TL_KIND(TL_REC_TASK) | (co->edges ? TL_KIND(TL_REC_EDGE) : 0); /* finished attempts */
    n = tl_inputs_once(args, n, cmd);
    int status = TL_EXIT_OK;
    struct tl_file_list fl = {0};
    for (int i = 0; i < n; i++) {
        struct stat st;
        if (!stat(args[i], &st) && S_ISDIR(st.st_mode)) {
            size_t before = fl.n, unreadable = fl.unreadable;
            if (!tl_dir_list(&fl, args[i], tl_parser_find("lsst")->member)) {
                status = TL_EXIT_INPUT;
                oom |= fl.unreadable == unreadable; /* no directory it could not read: memory */
            }
            /* no LSST metadata under it: the directory as `summary` reads it */
            if (fl.n == before && !tl_file_list_add(&fl, args[i])) oom = true;
        } else if (!tl_file_list_add(&fl, args[i])) {
            oom = true;
        }
    }
    char err[512];
    if (tl_file_list_problem(&fl, err, sizeof err)) tl_eprintf("%s: %s\n", cmd, err);
    if (co->requests_path && !co->requests &&
        tl_requests_load(co->requests_path, &co->requests, err, sizeof err)) {
        tl_eprintf("%s: --requests: %s\n", cmd, err);
        status = TL_EXIT_USAGE;
        for (size_t i = 0; i < fl.n; i++) free(fl.paths[i]);
        fl.n = 0;
    }
    struct with_requests wr = {co->requests, add, ctx};
    struct tl_reject_budget budget;
    tl_input_budget(&co->io, &budget);
    struct inputs_read ir = {.co = co, .status = status};
    if (co->requests) tl_read_inputs(fl.paths, (int)fl.n, &co->io, add_with_requests, &wr, input_read, &ir);
    else tl_read_inputs(fl.paths, (int)fl.n, &co->io, add, ctx, input_read, &ir);
    status = ir.status;
    tl_file_list_free(&fl);
    tl_reject_budget_end(&budget, cmd);
    co->io.budget = NULL;
    if (co->requests) say_defaulted(co, cmd);
    tl_requests_free(co->requests);
    co->requests = NULL;
    if (oom) {
        tl_eprintf("%s: out of memory\n", cmd);
        status = TL_EXIT_INPUT;
    }
    return status;
}

int tl_cli_read_all(struct common *co, int n, char **args, struct tl_task_rows *rs, const char *cmd)
{
    int status = tl_cli_read_records(co, n, args, tl_task_rows_add, rs, cmd);
    rs->process_wide_rss = co->process_wide_rss;
    if (!tl_task_rows_done(rs)) {
        tl_eprintf("%s: out of memory\n", cmd);
        status = TL_EXIT_INPUT;
    }
    return status;
}

void tl_cli_put_point(struct tl_buf *b, const struct tl_point *p, int *written)
{
    static struct tl_lp_stats st; /* its memos and counts: one command's */
    *written += tl_lp_point(b, p, &st);
}

int tl_cli_write_out(struct common *co, struct tl_buf *b, const char *cmd)
{
    struct tl_out_file out;
    char err[512];
    if (!tl_out_open(&out, co->out_path ? co->out_path : "-", err, sizeof err)) {
        tl_eprintf("%s: %s\n", cmd, err);
        return TL_EXIT_INPUT;
    }
    int e = b->oom ? ENOMEM : fwrite(b->data, 1, b->len, out.f) != b->len ? errno : 0;
    if (!tl_out_commit(&out, e, err, sizeof err)) {
        tl_eprintf("%s: writing %s\n", cmd, err);
        return TL_EXIT_INPUT;
    }
    return TL_EXIT_OK;
}



bool tl_cli_parse_bytes(const char *s, double *out)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s || !(x >= 0) || !isfinite(x)) return false;
    static const char *const suf[] = {"KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "TB",
                                      "K",   "M",   "G",   "T",   "B", ""};
    static const double mul[] = {0x1p10, 0x1p20, 0x1p30, 0x1p40, 1e3, 1e6, 1e9, 1e12,
                                 0x1p10, 0x1p20, 0x1p30, 0x1p40, 1, 1};
    for (size_t i = 0; i < sizeof suf / sizeof *suf; i++)
        if (!strcmp(end, suf[i])) {
            *out = x * mul[i];
            return true;
        }
    return false;
}

bool tl_cli_parse_num(const char *s, double lo, double hi, double *out)
{
    char *end;
    double x = strtod(s, &end);
    if (end == s || *end || !(x >= lo && x <= hi)) return false;
    *out = x;
    return true;
}

/* A shortest round-trip number for JSON, null when not finite. */
void tl_cli_json_num(struct tl_buf *b, double v)
{
    if (isfinite(v)) tl_buf_put_double(b, v);
    else tl_buf_puts(b, "null");
}

/* A number for the table: 3 significant digits, '-' when absent. */
const char *tl_cli_cell(char *buf, size_t cap, double v)
{
    if (!isfinite(v)) snprintf(buf, cap, "-");
    else snprintf(buf, cap, "%.3g", v);
    return buf;
}

const char *tl_cli_plain(char *buf, size_t cap, double v)
{
    if (!isfinite(v)) snprintf(buf, cap, "-");
    else if (v == 0) snprintf(buf, cap, "0");
    else if (fabs(v) < 0.001) snprintf(buf, cap, "%s<0.001", v < 0 ? "-" : "");
    else if (fabs(v) < 1e7) snprintf(buf, cap, "%.4g", v);
    else snprintf(buf, cap, "%.0f", v);
    if (strchr(buf, 'e')) snprintf(buf, cap, "%.0f", v); /* %.4g of 1e4..1e7 */
    return buf;
}

/* Characters of a UTF-8 string: its bytes that do not continue one. */
static int chars(const char *s)
{
    int n = 0;
    for (; *s; s++) n += ((unsigned char)*s & 0xc0) != 0x80;
    return n;
}

/* A name as a terminal shows it: visible escapes (core/term.h). */
static const char *shown(const char *name, struct tl_buf *tmp)
{
    tmp->len = 0;
    tl_vis_append(tmp, name, strlen(name), 0);
    return tmp->oom ? "?" : tl_buf_cstr(tmp);
}

int tl_cli_name_width(const char *const *names, size_t n, int min)
{
    int w = min;
    struct tl_buf tmp = {0};
    for (size_t i = 0; i < n; i++) {
        int c = chars(shown(names[i], &tmp));
        if (c > w) w = c;
    }
    tl_buf_free(&tmp);
    return w > TL_NAME_MAX ? TL_NAME_MAX : w;
}

void tl_cli_name_cell(struct tl_buf *b, const char *name, int width)
{
    struct tl_buf tmp = {0};
    const char *s = shown(name, &tmp);
    int c = chars(s);
    if (c > width) tl_buf_printf(b, "  %s\n  %*s", s, width, "");
    else tl_buf_printf(b, "  %s%*s", s, width - c, "");
    tl_buf_free(&tmp);
}
