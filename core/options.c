#include "core/options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static enum tl_err parse_value(const struct tl_option *o, void *cfg, const char *v)
{
    char *field = (char *)cfg + o->offset;
    char *end;
    errno = 0;
    switch (o->type) {
    case TL_OPT_BOOL:
        if (!strcasecmp(v, "true") || !strcmp(v, "1") || !strcasecmp(v, "yes") ||
            !strcasecmp(v, "on"))
            *(bool *)field = true;
        else if (!strcasecmp(v, "false") || !strcmp(v, "0") || !strcasecmp(v, "no") ||
                 !strcasecmp(v, "off"))
            *(bool *)field = false;
        else
            return TL_ERR_USAGE;
        return TL_OK;
    case TL_OPT_INT: {
        long long x = strtoll(v, &end, 10);
        if (errno || end == v || *end) return TL_ERR_USAGE;
        *(long long *)field = x;
        return TL_OK;
    }
    case TL_OPT_SIZE: {
        if (*v == '-') return TL_ERR_USAGE;
        unsigned long long x = strtoull(v, &end, 10);
        if (errno || end == v) return TL_ERR_USAGE;
        unsigned long long mult = 1;
        if (*end == 'K' || *end == 'k') mult = 1ULL << 10, end++;
        else if (*end == 'M' || *end == 'm') mult = 1ULL << 20, end++;
        else if (*end == 'G' || *end == 'g') mult = 1ULL << 30, end++;
        if (*end == 'i') end++;
        if (*end == 'B') end++;
        if (*end || x > (~0ULL) / mult) return TL_ERR_USAGE;
        *(size_t *)field = (size_t)(x * mult);
        return TL_OK;
    }
    case TL_OPT_DOUBLE: {
        double x = strtod(v, &end);
        if (errno || end == v || *end) return TL_ERR_USAGE;
        *(double *)field = x;
        return TL_OK;
    }
    case TL_OPT_STRING:
    case TL_OPT_LIST:
        *(const char **)field = v;
        return TL_OK;
    case TL_OPT_MAP: /* a mapping is no text (core/config.c sets it) */
        return TL_ERR_USAGE;
    }
    return TL_ERR_INTERNAL;
}

enum tl_err tl_options_defaults(const struct tl_option *table, void *cfg)
{
    for (const struct tl_option *o = table; o && o->name; o++)
        if (o->def && parse_value(o, cfg, o->def)) return TL_ERR_INTERNAL;
    return TL_OK;
}

enum tl_err tl_options_set(const struct tl_option *table, void *cfg, const char *name,
                           const char *value, char *err, size_t errlen)
{
    static const char *const type_names[] = {"a boolean", "an integer", "a size (e.g. 64K, 1M)",
                                             "a number", "a string", "a list", "a mapping"};
    _Static_assert(sizeof type_names / sizeof *type_names == TL_OPT_MAP + 1, "a name per type");
    for (const struct tl_option *o = table; o && o->name; o++) {
        if (strcmp(o->name, name)) continue;
        if (parse_value(o, cfg, value)) {
            snprintf(err, errlen, "option '%s': '%s' is not %s", name, value,
                     type_names[o->type]);
            return TL_ERR_USAGE;
        }
        return TL_OK;
    }
    snprintf(err, errlen, "unknown option '%s'", name);
    return TL_ERR_USAGE;
}

void tl_help_line(FILE *out, const char *left, int left_width, const char *text)
{
    fprintf(out, "  %-*s", left_width, left);
    int indent = 2 + left_width, col = 2 + (int)strlen(left);
    if (col < indent) col = indent;
    const char *w = text;
    while (*w) {
        while (*w == ' ') w++;
        int len = (int)strcspn(w, " ");
        if (!len) break;
        if (col > indent && col + 1 + len > TL_HELP_WIDTH) {
            fprintf(out, "\n%*s", indent + 1, "");
            col = indent + 1;
        } else {
            fputc(' ', out);
            col++;
        }
        fwrite(w, 1, (size_t)len, out);
        col += len;
        w += len;
    }
    fputc('\n', out);
}

void tl_options_help(const struct tl_option *table, const char *prefix, FILE *out)
{
    for (const struct tl_option *o = table; o && o->name; o++) {
        char left[128], text[1024];
        snprintf(left, sizeof left, "%s%s", prefix, o->name);
        snprintf(text, sizeof text, "%s (default: %s)", o->help, o->def && *o->def ? o->def : "none");
        tl_help_line(out, left, 22, text);
    }
}

int tl_parse_key_list(char *list, const char **out, int max)
{
    int n = 0;
    for (char *save = NULL, *k = strtok_r(list, ",", &save); k; k = strtok_r(NULL, ",", &save)) {
        if (n == max || !*k) return 0;
        out[n++] = k;
    }
    return n;
}
