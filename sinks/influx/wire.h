/* InfluxDB's write APIs as wire formats (wire.c): the influxdb sink picks
 * 1.x when a database is set, else 2.x. */
#ifndef TL_INFLUX_WIRE_H
#define TL_INFLUX_WIRE_H

#include "sinks/net/wire.h"

extern const struct tl_wire tl_wire_influx1;
extern const struct tl_wire tl_wire_influx2;

#endif
