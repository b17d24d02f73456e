/* Names in the configuration languages `advise --emit` writes. A name is
 * bytes from an input; in a file that a workflow system loads, a line break
 * or a quote in it would end a comment or a string early and write a
 * statement, a key or a resource of the attacker's choosing. Each language
 * has its writer here, and a name a language cannot hold exactly is refused
 * (false), for the caller to leave out and say so:
 *
 *   YAML     double-quoted scalar: every C0/C1 control, DEL, line break
 *            code point (U+0085, U+2028, U+2029) and BOM escaped; PyYAML,
 *            ruamel and Snakemake read back exactly the name
 *   Groovy   single-quoted string (no interpolation): quote, backslash and
 *            every control escaped, non-ASCII as \uXXXX (Nextflow configs)
 *   comment  a name inside a # or // comment: visible escapes (term.h) with
 *            backslashes doubled, so no code point ends the comment and no
 *            \u becomes a unicode escape
 *
 * A name that is not well-formed UTF-8 is refused by every writer: a
 * replaced byte would name another category. */
#ifndef TL_QUOTE_H
#define TL_QUOTE_H

#include <stdbool.h>

#include "core/buf.h"

bool tl_utf8_valid(const char *s);
bool tl_quote_yaml(struct tl_buf *b, const char *s);
bool tl_quote_groovy(struct tl_buf *b, const char *s);
void tl_quote_comment(struct tl_buf *b, const char *s);

#endif
