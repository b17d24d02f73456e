/* The InfluxDB and spool flags of `lines` and `run`. See influx_flags.h. */
#include "influx_flags.h"

#include <stdio.h>
#include <stdlib.h>

#include "options.h"

int tl_influx_option(int c, const char *arg, struct tl_influx_sink_cfg *sc, const char *cmd)
{
    switch (c) {
    case 1001: sc->http.url = arg; return 1;
    case 1002: sc->http.db = arg; return 1;
    case 1003: sc->http.rp = arg; return 1;
    case 1004: sc->http.user = arg; return 1;
    case 1005: sc->http.org = arg; sc->http.version = 2; return 1;
    case 1006: sc->http.bucket = arg; sc->http.version = 2; return 1;
    case 1007: sc->create_db = true; return 1;
    case 1008: sc->http.ca_file = arg; return 1;
    case 1009: sc->http.insecure = true; return 1;
    case 1010: sc->http.gzip = false; return 1;
    case 1011: sc->spool.dir = arg; return 1;
    case 1012: {
        struct tl_option o[] = {{"spool-max", TL_OPT_SIZE, NULL, "", 0}, {0}};
        char err[128];
        size_t v;
        if (tl_options_set(o, &v, "spool-max", arg, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", cmd, err);
            return -1;
        }
        sc->spool.max_bytes = v;
        return 1;
    }
    case 1013: sc->spool.drop_oldest = true; return 1;
    case 1016: {
        char *end;
        long v = strtol(arg, &end, 10);
        if (*end || v < 100 || v > 600000) {
            fprintf(stderr, "%s: --influx-timeout: '%s' is not a number of ms in 100..600000\n", cmd, arg);
            return -1;
        }
        sc->http.timeout_ms = v;
        return 1;
    }
    default: return 0;
    }
}

enum tl_err tl_influx_sink_open(struct tl_influx_sink_cfg *sc, bool quiet,
                                struct tl_influx_sink **sink, const char *cmd)
{
    *sink = NULL;
    if (!sc->http.db && !sc->http.bucket && !sc->http.org) return TL_OK;
    /* secrets only from the environment: never on a command line or in a log */
    sc->http.password = getenv("INFLUX_PASSWORD");
    sc->http.token = getenv("INFLUX_TOKEN");
    sc->quiet = quiet;
    char err[256];
    enum tl_err rc = tl_influx_sink_new(sc, sink, err, sizeof err);
    if (rc) fprintf(stderr, "%s: %s\n", cmd, err);
    return rc;
}
