/* libFuzzer target: the metadata fast scanners against Jansson and libyaml.
 * The first byte picks JSON (even) or YAML (odd); whenever the fast scanner
 * accepts the rest, the library must accept it too and build the same tree
 * (md_agree.h). A difference aborts: the fast path would have changed a
 * record. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/md_agree.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    char *p = malloc(size); /* NUL-terminated, as the parser hands documents over */
    if (!p) return 0;
    memcpy(p, data + 1, size - 1);
    p[size - 1] = '\0';
    enum md_rc rc;
    if (!md_agree(!(data[0] & 1), p, size - 1, &rc)) abort();
    free(p);
    return 0;
}
