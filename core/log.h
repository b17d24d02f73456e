/* Logging through a handle, as curl's failf/infof do: a library part (a
 * sink, the spool) never decides where its messages go. `run` hands its
 * runtime's logger (level, -q, "tasklens run: " prefix); batch commands
 * hand one that writes "tasklens: message" to stderr. */
#ifndef TL_LOG_H
#define TL_LOG_H

#include <stdbool.h>

enum tl_log_level { TL_LOG_ERROR, TL_LOG_WARN, TL_LOG_INFO, TL_LOG_DEBUG };

struct tl_log {
    /* one message, without newline; NULL: stderr, prefixed "tasklens: " */
    void (*write)(void *ctx, enum tl_log_level lv, const char *msg);
    void *ctx;
};

/* `tasklens check`: one line per finding, a verdict each (a bool works:
 * false FAIL, true ok), or a note. */
enum { TL_CHECK_FAIL = 0, TL_CHECK_OK = 1, TL_CHECK_NOTE = 2 };
typedef void tl_check_say(void *ctx, int verdict, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A line for a "say" handle (a reject budget's): say(ctx, line), or with
 * say NULL the line on stderr as it is -- where such lines go by default is
 * decided here, as tl_log decides for messages. */
void tl_say_line(void (*say)(void *ctx, const char *line), void *ctx, const char *line);

/* lg may be NULL (stderr). */
void tl_log(const struct tl_log *lg, enum tl_log_level lv, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
