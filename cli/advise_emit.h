/* `advise --emit`: recommendations in the files workflow systems read (BPS
 * submit YAML, Work Queue / TaskVine category JSON, Makeflow CATEGORY
 * blocks, a Nextflow config, a Snakemake profile). See advise_emit.c. */
#ifndef TL_CLI_ADVISE_EMIT_H
#define TL_CLI_ADVISE_EMIT_H

#include <stdbool.h>

#include "core/buf.h"
#include "insights/insights.h"

enum advise_emit { EMIT_NONE, EMIT_BPS, EMIT_WQ, EMIT_MAKEFLOW, EMIT_NEXTFLOW, EMIT_SNAKEMAKE };

/* "bps", "wq", "makeflow", "nextflow" or "snakemake"; false for anything else. */
bool advise_emit_parse(const char *name, enum advise_emit *out);
/* Categories left out because the language cannot hold their names
 * exactly (said in the file too): how many, the first and why. */
struct advise_refusals {
    size_t n;
    const char *first, *why;
};
/* ca: the advice of every category of rs, in its order; inputs: as given. */
void advise_emit(struct tl_buf *b, enum advise_emit e, const struct tl_task_rows *rs,
                 const struct tl_cat_advice *ca, const struct tl_advise_opts *o,
                 char *const *inputs, int ninputs, struct advise_refusals *rf);

#endif
