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

#include "cli/cli.h"
#include "cli/input.h"
#include "core/checkpoint.h"
#include "parsers/parser.h"
#include "pipeline/run_config.h"
#include "pipeline/source.h"
#include "core/path.h"
#include "core/term.h"

/* One finding (ctx: the count of problems); also how each source type
 * reports its own (tl_check_say). */
static void say(void *problems, int verdict, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(void *problems, int verdict, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tl_vprintln(stdout, verdict == TL_CHECK_NOTE ? "  ..    " : verdict ? "  ok    " : "  FAIL  ", fmt, ap);
    va_end(ap);
    if (verdict == TL_CHECK_FAIL) (*(int *)problems)++;
}

/* Whether a YAML key names a secret: password, token, secret, or a key
 * ending in them (sasl.password, ssl.key.password). */
static bool secret_key(const char *k, size_t n)
{
    static const char *const ends[] = {"password", "token", "secret"};
    for (size_t i = 0; i < sizeof ends / sizeof *ends; i++) {
        size_t e = strlen(ends[i]);
        if (n >= e && !memcmp(k + n - e, ends[i], e)) return true;
    }
    return false;
}

/* A configuration file others may read that holds a secret as it is (not
 * ${VAR}): said with the line of the first, never its value. */
static void literal_secrets(const char *path, int *pr)
{
    struct stat st;
    FILE *f = fopen(path, "r");
    if (!f || fstat(fileno(f), &st) || !(st.st_mode & (S_IRGRP | S_IROTH))) {
        if (f) fclose(f);
        return;
    }
    char line[4096];
    int no = 0, first = 0;
    char key[64] = "";
    while (fgets(line, sizeof line, f) && !first) {
        no++;
        char *p = line + strspn(line, " \t-");
        size_t klen = strcspn(p, ":");
        if (!p[klen] || *p == '#') continue;
        char *v = p + klen + 1;
        v += strspn(v, " \t\"'");
        if (secret_key(p, klen) && *v && *v != '\n' && *v != '#' && strncmp(v, "${", 2)) {
            first = no;
            snprintf(key, sizeof key, "%.*s", (int)(klen < 60 ? klen : 60), p);
        }
    }
    fclose(f);
    if (first)
        say(pr, TL_CHECK_NOTE, "%s is readable by others (mode %03o) and holds a secret as it is "
            "(`%s` at line %d, not shown): write ${VAR} and set VAR in the service's environment, "
            "or chmod 600 it", path, (unsigned)(st.st_mode & 0777), key, first);
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
        tl_eprintf("usage: tasklens check [--config-only] -c FILE\n");
        return TL_EXIT_USAGE;
    }
    struct run_config cfg;
    char err[1024];
    if (run_config_load(&cfg, path, err, sizeof err)) {
        tl_eprintf("tasklens check: %s\n", err);
        run_config_free(&cfg);
        return TL_EXIT_USAGE;
    }
    int problems = 0, *pr = &problems;
    printf("%s: valid (%d sources, %d sinks)\n", path, cfg.nsrc, cfg.nsink);
    literal_secrets(path, pr);
    if (config_only) {
        run_config_free(&cfg);
        return TL_EXIT_OK;
    }
    for (int i = 0; i < cfg.nsrc; i++) cfg.src[i].type->check(cfg.src[i].config, i, say, pr);
    for (int i = 0; i < cfg.nsink; i++) cfg.sink[i].type->check(cfg.sink[i].config, i, say, pr);
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
            bool ok = tl_dir_writable(cfg.run.checkpoint_dir, true, why, sizeof why);
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
