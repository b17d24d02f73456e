/* Every source type `tasklens run` knows, by the `type:` of a
 * configuration's sources entry. Adding one: its src_NAME.c and a line
 * here (and in CMakeLists.txt). */
#include <string.h>

#include "pipeline/source.h"

extern const struct tl_source_type tl_source_file, tl_source_dir, tl_source_stdin,
    tl_source_kafka, tl_source_fifo, tl_source_parsl;

const struct tl_source_type *const tl_source_types[] = {
    &tl_source_file, &tl_source_dir, &tl_source_stdin, &tl_source_kafka, &tl_source_fifo,
#ifdef TL_WITH_PARSL
    &tl_source_parsl,
#endif
    NULL,
};

const struct tl_source_type *tl_source_find(const char *name)
{
    for (int i = 0; tl_source_types[i]; i++)
        if (!strcmp(tl_source_types[i]->name, name)) return tl_source_types[i];
    return NULL;
}
