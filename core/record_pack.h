/* A record packed into bytes and back, for the records that cross from a
 * parsing thread to the thread that uses them (pipeline/batch_pool.c).
 *
 * The packed form keeps only what the record holds: its present metrics
 * (the presence mask, then their values in metric order) and its strings
 * (NULL stays NULL), so a Work Queue task of 20 metrics takes ~300 bytes,
 * not the 1,100 of struct tl_record. Unpacking gives every field its
 * packed value and absent metrics 0; strings point into the packed bytes
 * and stay valid while they do. Same machine, same build: no byte order. */
#ifndef TL_RECORD_PACK_H
#define TL_RECORD_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/record.h"

/* Appends r's packed form to out (out->oom when it cannot grow). */
void tl_record_pack(struct tl_buf *out, const struct tl_record *r);

/* Unpacks the record at p (written by tl_record_pack) into r; returns
 * where the next packed thing starts. */
const char *tl_record_unpack(const char *p, struct tl_record *r);

#endif
