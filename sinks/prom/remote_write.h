/* Prometheus remote write (protocol 1.0) from tasklens's own line protocol.
 *
 * The network sinks batch and spool line protocol whatever the store; a
 * remote-write client turns a batch into a WriteRequest only when it sends
 * it. Each point's numeric field becomes one series, named as
 * VictoriaMetrics names a line-protocol field it takes at /write --
 * `<measurement>_<field>`, the point's tags as labels -- so the PromQL
 * dashboards read the same series through either door. Label names keep
 * [a-zA-Z0-9_] (anything else becomes `_`), sorted as the protocol asks;
 * times go from ns to ms; string fields are left out; booleans are 0 / 1.
 *
 * Only the measurements listed are sent (by default task_histogram,
 * workflow and tasklens): per-task points and per-window quantiles do not
 * belong in a Prometheus store (a series per task; quantiles that cannot be
 * merged).
 *
 * The body is the WriteRequest protobuf (written by hand: five messages,
 * two wire types) compressed with snappy's block format, as the protocol
 * requires. */
#ifndef TL_PROM_REMOTE_WRITE_H
#define TL_PROM_REMOTE_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/error.h"
#include "sinks/net/wire.h"

#define TL_RW_DEFAULT_MEASUREMENTS "task_histogram,workflow,tasklens"

/* Appends the WriteRequest of the lines in lp[0, len) whose measurement is
 * in `measurements` (comma-separated) to out; *series counts the series
 * written, *skipped the points left out (other measurements) or unreadable.
 * TL_ERR_NOMEM when out could not grow. */
enum tl_err tl_rw_encode(const char *lp, size_t len, const char *measurements, struct tl_buf *out,
                         uint64_t *series, uint64_t *skipped);

/* snappy block compression of in into out (replaced). */
enum tl_err tl_rw_snappy(const char *in, size_t len, struct tl_buf *out);

/* Remote write as the network engine's wire format (sinks/net/wire.h): the
 * prometheus sink's. Left out with the HTTP sinks (TL_HTTP_SINKS=OFF). */
extern const struct tl_wire tl_wire_remote_write;

#endif
