#define TL_CURL_API_IMPL
#include "sinks/net/curl_api.h"

#include <pthread.h>
#include <stdio.h>

#include "core/dynlib.h"

struct tl_curl_api tl_curl;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool loaded;
static char why[256];

static void load(void)
{
    void *h = tl_dynlib_open(TL_CURL_SONAME, why, sizeof why);
    if (!h) return;
#define TL_CURL_RESOLVE(f)                                                                         \
    if (!tl_dynlib_sym(h, TL_CURL_SONAME, #f, &tl_curl.f, why, sizeof why)) return;
    TL_CURL_FUNCS(TL_CURL_RESOLVE)
#undef TL_CURL_RESOLVE
    CURLcode rc = tl_curl.curl_global_init(CURL_GLOBAL_DEFAULT);
    if (rc != CURLE_OK) {
        snprintf(why, sizeof why, "curl_global_init failed (%d)", (int)rc);
        return;
    }
    loaded = true;
}

bool tl_curl_load(char *err, size_t cap)
{
    pthread_once(&once, load);
    if (!loaded && cap) snprintf(err, cap, "%s", why);
    return loaded;
}
