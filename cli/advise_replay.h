/* `advise --replay SYSTEM`: the settings, their candidates and their replay,
 * as a table or JSON. See advise_replay.c. */
#ifndef TL_CLI_ADVISE_REPLAY_H
#define TL_CLI_ADVISE_REPLAY_H

#include "cli/advise_emit.h"
#include "cli/insights_cli.h"

void advise_replay_write(struct tl_buf *b, enum fmt fmt, enum tl_system sys, const struct tl_task_rows *rs,
                         const struct advise_plan *p);

#endif
