/* Logging through a handle (log.h). */
#include "core/log.h"
#include "core/term.h"

#include <stdarg.h>
#include <stdio.h>

void tl_say_line(void (*say)(void *ctx, const char *line), void *ctx, const char *line)
{
    if (say) say(ctx, line);
    else tl_eprintf("%s\n", line);
}

void tl_log(const struct tl_log *lg, enum tl_log_level lv, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (lg && lg->write) lg->write(lg->ctx, lv, msg);
    else tl_eprintf("tasklens: %s\n", msg); /* one line: a newline in it is escaped too */
}
