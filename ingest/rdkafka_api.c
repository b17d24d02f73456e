#define TL_RDKAFKA_API_IMPL
#include "ingest/rdkafka_api.h"

#include <pthread.h>
#include <stdio.h>

#include "core/dynlib.h"

struct tl_rdkafka_api tl_rdkafka;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static char why[256];

static void load(void)
{
    void *h = tl_dynlib_open(TL_RDKAFKA_SONAME, why, sizeof why);
    if (!h) return;
#define TL_RDKAFKA_RESOLVE(f)                                                                      \
    if (!tl_dynlib_sym(h, TL_RDKAFKA_SONAME, #f, &tl_rdkafka.f, why, sizeof why)) return;
    TL_RDKAFKA_FUNCS(TL_RDKAFKA_RESOLVE)
#undef TL_RDKAFKA_RESOLVE
    loaded = true;
}

bool tl_rdkafka_load(char *err, size_t cap)
{
    pthread_once(&once, load);
    if (!loaded && cap) snprintf(err, cap, "%s", why);
    return loaded;
}
