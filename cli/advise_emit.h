/* `advise --emit`: recommendations in the files workflow systems read (BPS
 * submit YAML, Work Queue / TaskVine category JSON, Makeflow CATEGORY
 * blocks, a Nextflow config, a Snakemake profile), each category with its
 * rule, the candidates it was chosen from and its replay. See advise_emit.c. */
#ifndef TL_CLI_ADVISE_EMIT_H
#define TL_CLI_ADVISE_EMIT_H

#include <stdbool.h>

#include "core/buf.h"
#include "insights/allocate.h"

/* "bps", "wq", "makeflow", "nextflow" or "snakemake"; false for anything else. */
bool advise_system_parse(const char *name, enum tl_system *out);
/* Categories left out because the language cannot hold their names
 * exactly (said in the file too): how many, the first and why. */
struct advise_refusals {
    size_t n;
    const char *first, *why;
};
/* What the file is made of, per category of rs in its order. */
struct advise_plan {
    const struct tl_cat_advice *ca;
    const struct tl_settings *st;
    const struct tl_replay *rp;
};
/* inputs: as given. */
void advise_emit(struct tl_buf *b, enum tl_system sys, const struct tl_task_rows *rs,
                 const struct advise_plan *p, const struct tl_advise_opts *o, char *const *inputs,
                 int ninputs, struct advise_refusals *rf);
/* A byte count as a system's MB (MiB), rounded up. */
long long advise_mb(double bytes);

#endif
