/* The InfluxDB and spool flags `lines` and `run` share, turned into an
 * InfluxDB sink's settings. */
#ifndef TL_CLI_INFLUX_FLAGS_H
#define TL_CLI_INFLUX_FLAGS_H

#include <getopt.h>
#include <stdbool.h>

#include "sink.h"

/* The InfluxDB and spool options `lines` and `run` share: put
 * TL_INFLUX_LONGOPTS in a getopt_long table, hand each option to
 * tl_influx_option (1: applied, 0: not one of these, -1: bad value, printed),
 * then tl_influx_sink_open (no sink when no InfluxDB was configured; the
 * password and token come only from INFLUX_PASSWORD / INFLUX_TOKEN). */
#define TL_INFLUX_LONGOPTS                                                                         \
    {"influx-url", required_argument, NULL, 1001}, {"influx-db", required_argument, NULL, 1002},   \
        {"influx-rp", required_argument, NULL, 1003},                                              \
        {"influx-user", required_argument, NULL, 1004},                                            \
        {"influx-org", required_argument, NULL, 1005},                                             \
        {"influx-bucket", required_argument, NULL, 1006},                                          \
        {"influx-create-db", no_argument, NULL, 1007},                                             \
        {"influx-ca-file", required_argument, NULL, 1008},                                         \
        {"influx-insecure", no_argument, NULL, 1009}, {"no-gzip", no_argument, NULL, 1010},        \
        {"spool-dir", required_argument, NULL, 1011},                                              \
        {"spool-max", required_argument, NULL, 1012},                                              \
        {"spool-drop-oldest", no_argument, NULL, 1013},                                            \
        {"influx-timeout", required_argument, NULL, 1016}

#define TL_INFLUX_HELP                                                                             \
    "  --influx-url URL        e.g. http://127.0.0.1:8086\n"                                       \
    "  --influx-db NAME        1.x database (--influx-rp RP for a retention policy)\n"             \
    "  --influx-user NAME      1.x user; the password comes from $INFLUX_PASSWORD\n"               \
    "  --influx-org ORG --influx-bucket B   2.x; the token comes from $INFLUX_TOKEN\n"             \
    "  --influx-create-db      create the 1.x database if it does not exist\n"                     \
    "  --influx-ca-file F, --influx-insecure   TLS options passed to libcurl\n"                    \
    "  --no-gzip               send uncompressed bodies\n"                                         \
    "  --influx-timeout MS     per-request timeout (default 10000)\n"                              \
    "  --spool-dir DIR         where batches wait while InfluxDB is unavailable\n"                 \
    "                          (default ./tasklens-spool)\n"                                       \
    "  --spool-max SIZE        spool cap (default 1G); when full, reading pauses\n"                \
    "  --spool-drop-oldest     when full, drop the oldest batches (counted) instead\n"

int tl_influx_option(int c, const char *arg, struct tl_influx_sink_cfg *sc, const char *cmd);
/* TL_OK with *sink NULL when sc names no database/bucket/org. */
enum tl_err tl_influx_sink_open(struct tl_influx_sink_cfg *sc, bool quiet,
                                struct tl_influx_sink **sink, const char *cmd);

#endif
