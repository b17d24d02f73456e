/* libcurl through function pointers, filled when the first InfluxDB client
 * is made (core/dynlib.h: why). Include instead of <curl/curl.h>; calls are
 * written as usual. libcurl's compile-time option type checks
 * (typecheck-gcc.h) do not apply through the pointers. */
#ifndef TL_CURL_API_H
#define TL_CURL_API_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>

#define TL_CURL_FUNCS(X)                                                                           \
    X(curl_easy_cleanup) X(curl_easy_escape) X(curl_easy_getinfo) X(curl_easy_init)                \
    X(curl_easy_perform) X(curl_easy_setopt) X(curl_easy_strerror) X(curl_free) X(curl_getdate)    \
    X(curl_global_init) X(curl_slist_append) X(curl_slist_free_all)

struct tl_curl_api {
#define TL_CURL_PTR(f) __typeof__(f) *f;
    TL_CURL_FUNCS(TL_CURL_PTR)
#undef TL_CURL_PTR
};
extern struct tl_curl_api tl_curl;

/* Loads libcurl and runs curl_global_init, once (thread-safe); false with
 * the reason in err. */
bool tl_curl_load(char *err, size_t cap);

#ifndef TL_CURL_API_IMPL
#undef curl_easy_setopt
#undef curl_easy_getinfo
#define curl_easy_cleanup(...) (tl_curl.curl_easy_cleanup)(__VA_ARGS__)
#define curl_easy_escape(...) (tl_curl.curl_easy_escape)(__VA_ARGS__)
#define curl_easy_getinfo(...) (tl_curl.curl_easy_getinfo)(__VA_ARGS__)
#define curl_easy_init(...) (tl_curl.curl_easy_init)(__VA_ARGS__)
#define curl_easy_perform(...) (tl_curl.curl_easy_perform)(__VA_ARGS__)
#define curl_easy_setopt(...) (tl_curl.curl_easy_setopt)(__VA_ARGS__)
#define curl_easy_strerror(...) (tl_curl.curl_easy_strerror)(__VA_ARGS__)
#define curl_free(...) (tl_curl.curl_free)(__VA_ARGS__)
#define curl_getdate(...) (tl_curl.curl_getdate)(__VA_ARGS__)
#define curl_global_init(...) (tl_curl.curl_global_init)(__VA_ARGS__)
#define curl_slist_append(...) (tl_curl.curl_slist_append)(__VA_ARGS__)
#define curl_slist_free_all(...) (tl_curl.curl_slist_free_all)(__VA_ARGS__)
#endif

#endif
