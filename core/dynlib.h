/* Libraries that only some commands need, opened when first used.
 *
 * libcurl (InfluxDB) and librdkafka (Kafka) bring about thirty shared
 * objects with them (TLS, SASL, Kerberos, LDAP, compression). Linked, every
 * start of tasklens maps and relocates them all, `tasklens summary` of a
 * small file included; opened on first use, only `run` and `lines` with a
 * server pay. The sonames are fixed at configure time (CMake cache:
 * TL_CURL_SONAME, TL_RDKAFKA_SONAME). */
#ifndef TL_DYNLIB_H
#define TL_DYNLIB_H

#include <stdbool.h>
#include <stddef.h>

/* dlopen(soname), or NULL with the loader's reason in err. */
void *tl_dynlib_open(const char *soname, char *err, size_t cap);
/* The address of name in h, or NULL with a message in err. Function
 * pointers come back through a copy, so no object-to-function cast. */
bool tl_dynlib_sym(void *h, const char *soname, const char *name, void *fnptr, char *err,
                   size_t cap);

#endif
