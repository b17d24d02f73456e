/* tasklens check -c FILE: is this configuration going to work?
 *
 * Loads and validates the file (errors name file:line and key), then looks
 * at each part the way `run` would use it and says what it found: each
 * source's files (present, size, detected format), each InfluxDB sink
 * (reachable, database or bucket present, credentials accepted -- through
 * an empty write, which stores nothing), each file sink and directory
 * (writable), the checkpoint (present, readable). Secrets are reported as
 * set or not set, never shown. Exit 0 when everything is usable, 1 when a
 * part is not, 2 when the file itself is wrong. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "checkpoint.h"
#include "cli.h"
#include "http.h"
#include "parser.h"
#include "input.h"
#include "run_config.h"
#include "source.h"

/* One finding (ctx: the count of problems); also how each source type
 * reports its own (tl_check_say). */
static void say(void *problems, bool ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(void *problems, bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(ok ? "  ok    " : "  FAIL  ", stdout);
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    if (!ok) (*(int *)problems)++;
}

/* The directory part of path is writable (or creatable). */
static bool dir_writable(const char *path, bool is_dir, char *why, size_t cap)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    if (!is_dir) {
        char *slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        else snprintf(dir, sizeof dir, ".");
    }
    struct stat st;
    while (stat(dir, &st) && errno == ENOENT) { /* the nearest existing parent */
        char *slash = strrchr(dir, '/');
        if (!slash) {
            snprintf(dir, sizeof dir, ".");
            break;
        }
        *slash = '\0';
        if (!dir[0]) snprintf(dir, sizeof dir, "/");
    }
    if (access(dir, W_OK)) {
        snprintf(why, cap, "%.400s: %s", dir, strerror(errno));
        return false;
    }
    return true;
}

static void check_influx(int *pr, const struct sink_settings *k, int i)
{
    struct tl_influx_sink_cfg sc;
    run_config_influx(k, 1000, &sc);
    struct tl_influx_cfg c = sc.http;
    c.gzip = false;
    c.timeout_ms = (long)(k->timeout < 5000 ? k->timeout : 5000);
    char err[512];
    struct tl_influx *h;
    if (tl_influx_new(&c, &h, err, sizeof err)) {
        say(pr, false, "sinks[%d] influxdb: %s", i, err);
        return;
    }
    printf("  ..    sinks[%d] influxdb %s, %s%s\n", i, tl_influx_where(h),
           c.version == 1 ? (c.user ? "user set, password " : "no user")
                          : "token ",
           c.version == 1 ? (c.user ? (c.password ? "set" : "NOT set") : "")
                          : (c.token ? "set" : "NOT set"));
    struct tl_http_reply r;
    enum tl_http_result res = tl_influx_ping(h, &r);
    if (res != TL_HTTP_OK) {
        say(pr, false, "sinks[%d] influxdb: not reachable: %s", i,
            r.message[0] ? r.message : "no answer");
        tl_influx_free(h);
        return;
    }
    say(pr, true, "sinks[%d] influxdb: reachable", i);
    /* an empty write: the server checks the database and credentials and
     * stores nothing */
    res = tl_influx_write(h, "", 0, &r);
    if (res == TL_HTTP_OK)
        say(pr, true, "sinks[%d] influxdb: %s %s accepts writes", i, c.version == 1 ? "database" : "bucket",
            c.version == 1 ? c.db : c.bucket);
    else if (res == TL_HTTP_NOT_FOUND && k->create_db)
        say(pr, true, "sinks[%d] influxdb: database %s does not exist; create_db makes it", i, c.db);
    else
        say(pr, false, "sinks[%d] influxdb: a write is refused (HTTP %ld): %s", i, r.status,
            r.message[0] ? r.message : "no reason given");
    tl_influx_free(h);
    char why[512];
    bool w = dir_writable(k->spool_dir, true, why, sizeof why);
    say(pr, w, "sinks[%d] spool_dir %s: %s", i, k->spool_dir, w ? "writable" : why);
}

int tl_cmd_check(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"config", required_argument, NULL, 'c'},
        {"config-only", no_argument, NULL, 1},
        {"help", no_argument, NULL, 'h'},
        {0},
    };
    const char *path = NULL;
    bool config_only = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
        if (c == 'c') path = optarg;
        else if (c == 1) config_only = true;
        else {
            fprintf(c == 'h' ? stdout : stderr,
                    "usage: tasklens check [--config-only] -c FILE\n\n"
                    "Validates a `tasklens run` configuration and tries each source and sink.\n"
                    "  --config-only   validate only; try no server, file or directory (for a\n"
                    "                  service's pre-start: `run` itself waits for servers)\n\n"
                    "Exit status: 0 usable; 1 the configuration is valid but something it names\n"
                    "is not usable now (a server unreachable, credentials refused, a directory\n"
                    "not writable); 2 the configuration is wrong.\n");
            return c == 'h' ? TL_EXIT_OK : TL_EXIT_USAGE;
        }
    }
    if (!path || optind != argc) {
        fprintf(stderr, "usage: tasklens check [--config-only] -c FILE\n");
        return TL_EXIT_USAGE;
    }
    struct run_config cfg;
    char err[1024];
    if (run_config_load(&cfg, path, err, sizeof err)) {
        fprintf(stderr, "tasklens check: %s\n", err);
        run_config_free(&cfg);
        return TL_EXIT_USAGE;
    }
    int problems = 0, *pr = &problems;
    printf("%s: valid (%d sources, %d sinks)\n", path, cfg.nsrc, cfg.nsink);
    if (config_only) {
        run_config_free(&cfg);
        return TL_EXIT_OK;
    }
    for (int i = 0; i < cfg.nsrc; i++) cfg.src[i].type->check(&cfg.src[i], i, say, pr);
    for (int i = 0; i < cfg.nsink; i++) {
        const struct sink_settings *k = &cfg.sink[i];
        if (k->kind == SINK_INFLUX) {
            check_influx(pr, k, i);
        } else if (strcmp(k->path, "-")) {
            char why[512];
            bool ok = dir_writable(k->path, false, why, sizeof why);
            say(pr, ok, "sinks[%d] file %s: %s", i, k->path, ok ? "writable" : why);
        } else {
            say(pr, true, "sinks[%d] file: stdout", i);
        }
    }
    if (cfg.run.checkpoint_dir) {
        char ck[4200], why[512];
        snprintf(ck, sizeof ck, "%s/tasklens.ckpt", cfg.run.checkpoint_dir);
        struct tl_ckpt cp;
        enum tl_err rc = tl_ckpt_load(ck, &cp, err, sizeof err);
        if (rc == TL_OK) {
            say(pr, true, "checkpoint %s: readable, %zu sections (a restart resumes from it)", ck,
                cp.nsections);
            tl_ckpt_free(&cp);
        } else if (rc == TL_ERR_OPEN) {
            bool ok = dir_writable(cfg.run.checkpoint_dir, true, why, sizeof why);
            say(pr, ok, "checkpoint_dir %s: %s", cfg.run.checkpoint_dir,
                ok ? "no checkpoint yet; writable" : why);
        } else {
            say(pr, false, "checkpoint: %s", err);
        }
    } else {
        printf("  ..    no checkpoint_dir: a restart reads the sources again from where `from` "
               "says\n");
    }
    run_config_free(&cfg);
    printf("%s\n", problems ? "problems found" : "everything usable");
    return problems ? TL_EXIT_INPUT : TL_EXIT_OK;
}
