/* `tasklens top`: what the command (cmd_top.c: inputs, terminal, keys, the
 * run) and the screen (top_screen.c: one frame as text) share. */
#ifndef TL_CLI_TOP_H
#define TL_CLI_TOP_H

#include <stdbool.h>

#include "core/aggregate.h"
#include "core/buf.h"
#include "insights/live.h"

/* The columns a view sorts by (`s` cycles them). */
enum top_sort {
    TOP_SORT_SEEN, /* first seen first, as summary lists them */
    TOP_SORT_RUNNING,
    TOP_SORT_WAITING,
    TOP_SORT_DONE,
    TOP_SORT_FAILED,
    TOP_SORT_RATE,
    TOP_SORT_WALL_P95,
    TOP_SORT_MEM_P95,
    TOP_SORT_WASTE,
    TOP_NSORTS
};

struct top_view {
    enum tl_live_window window;
    enum top_sort sort;
    char filter[64];    /* categories containing it ("": all) */
    bool filtering;     /* the filter is being typed */
    bool paused;
    bool colour;        /* ANSI colours (a terminal, NO_COLOR unset) */
    bool screen;        /* full-screen: cursor home, clear to end of line */
    bool follow;        /* inputs followed (else read whole) */
    bool input_over;    /* read to their end */
    int width, height;  /* height 0: as long as it needs (--once) */
    const char *title;  /* the inputs, as given */
    const char *waiting_for; /* a followed input that does not exist yet, or NULL */
    char message[200];  /* the run's last message (a warning, a rejected line) */
};

/* One frame into out (replacing it): text lines, each at most width
 * visible columns; with screen, each line clears its rest and the frame
 * starts at the top-left corner. */
void top_render(struct tl_buf *out, struct tl_live *L, struct tl_agg *agg, const struct top_view *v);

#endif
