/* An encoder of points (core/point.h) into one sink format: the bytes a
 * sink receives, batches, spools and sends.
 *
 * A sink type names its codec (tl_sink_type.codec); the runtime
 * (pipeline/output.c) encodes every point once per codec in use -- a file
 * and an InfluxDB sink share one line-protocol encoding -- and hands each
 * sink the bytes of its own. Line protocol lives beside the sinks that
 * speak it (sinks/lineproto.c); remote-write series in the prometheus sink's
 * folder (sinks/prom/remote_write.c). A codec also tells the network
 * engine (sinks/net/) how many points a batch holds and where a batch can
 * be cut in two, so the engine never reads a format.
 *
 * `point` is the one required encoder. `task` and `histogram` are optional
 * fast paths for the two kinds of point a run writes by the million: they
 * must write exactly what `point` writes of tl_point_task /
 * tl_point_histogram (tests/unit/test_lineproto.c checks it on real
 * records). */
#ifndef TL_SINKS_CODEC_H
#define TL_SINKS_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "core/aggregate.h"
#include "core/buf.h"
#include "core/point.h"
#include "core/record.h"

struct tl_codec {
    const char *name;
    /* The encoder's memory (memos, counters), zeroed to start; freed by
     * the runtime. */
    size_t state_size;
    /* Appends one point: returns the points written (0 when refused, which
     * the state counts). */
    int (*point)(struct tl_buf *out, const struct tl_point *p, void *state);
    /* Optional fast paths (see above). */
    int (*task)(struct tl_buf *out, const struct tl_record *r, void *state);
    int (*histogram)(struct tl_buf *out, const struct tl_agg_window *w, const char *const *by, int nby,
                     const char *window_label, const char *instance, void *state);
    /* Points refused so far, and why (for the run's closing message). */
    uint64_t (*refused)(const void *state);
    const char *refused_why;
    /* The points of an encoded batch, and where to cut one of two or more
     * points nearest its middle (the offset of a point's start). */
    uint32_t (*count)(const char *data, size_t len);
    size_t (*split)(const char *data, size_t len);
};

#endif
