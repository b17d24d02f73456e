/* Prometheus remote write (protocol 1.0) from tasklens's points.
 *
 * Each point's numeric field becomes one series, named as VictoriaMetrics
 * names a line-protocol field it takes at /write -- `<measurement>_<field>`,
 * the point's tags as labels -- so the PromQL dashboards read the same
 * series through either door. Label names keep [a-zA-Z0-9_] (anything else
 * becomes `_`), sorted as the protocol asks; times go from ns to ms; string
 * fields and floats that are not finite are left out; booleans are 0 / 1.
 *
 * Only the measurements listed are sent (by default task_histogram,
 * workflow and tasklens): per-task points and per-window quantiles do not
 * belong in a Prometheus store (a series per task; quantiles that cannot be
 * merged). The runtime encodes only those for the sink (sinks/sink.h,
 * `measurements`).
 *
 * The body is the WriteRequest protobuf (written by hand: five messages,
 * two wire types) compressed with snappy's block format, as the protocol
 * requires. */
#ifndef TL_PROM_REMOTE_WRITE_H
#define TL_PROM_REMOTE_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "sinks/codec.h"
#include "sinks/net/wire.h"

#define TL_RW_DEFAULT_MEASUREMENTS "task_histogram,workflow,tasklens"

/* Points as remote-write series (sinks/codec.h): each point's series in a
 * frame the engine can count and cut between. */
extern const struct tl_codec tl_codec_remote_write;

/* Whether a batch holds frames (else line protocol an earlier tasklens
 * spooled), and its series with the frame headers dropped (appended). */
bool tl_rw_framed(const char *data, size_t len);
void tl_rw_unframe(const char *data, size_t len, struct tl_buf *out);

/* snappy block compression of in into out (replaced). */
enum tl_err tl_rw_snappy(const char *in, size_t len, struct tl_buf *out);

/* A spooled batch of line protocol from a tasklens before the point model
 * (legacy_spool.c): the series of its lines whose measurement is in
 * `measurements` (comma-separated), appended to out. */
void tl_rw_legacy_encode(const char *lp, size_t len, const char *measurements, struct tl_buf *out);

/* Remote write as the network engine's wire format (sinks/net/wire.h): the
 * prometheus sink's. Left out with the HTTP sinks (TL_HTTP_SINKS=OFF). */
extern const struct tl_wire tl_wire_remote_write;

#endif
