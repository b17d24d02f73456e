/* The sinks' quick flags, from their option tables. See sink_flags.h. */
#include "cli/sink_flags.h"
#include "core/term.h"

#include <ctype.h>
#include <string.h>

enum tl_err tl_sink_flags_init(struct tl_sink_flags *f, const struct option *own)
{
    memset(f, 0, sizeof *f);
    size_t n = 0;
    while (own[n].name) f->longopts[n] = own[n], n++;
    for (int t = 0; tl_sink_types[t]; t++) {
        const struct tl_sink_type *type = tl_sink_types[t];
        bool has = false;
        for (const struct tl_option *o = type->options; o->name; o++) has |= o->flag != NULL;
        if (!has) continue;
        if (f->nconf == (int)(sizeof f->conf / sizeof *f->conf)) return TL_ERR_LIMIT;
        enum tl_err rc = tl_sink_conf_init(&f->conf[f->nconf], type);
        if (rc) return rc;
        for (const struct tl_option *o = type->options; o->name; o++) {
            if (!o->flag) continue;
            if (f->nflags == TL_SINK_FLAGS_MAX || n + 2 > sizeof f->longopts / sizeof *f->longopts)
                return TL_ERR_LIMIT;
            f->flag[f->nflags].conf = f->nconf;
            f->flag[f->nflags].opt = o;
            f->longopts[n++] = (struct option){o->flag,
                                               o->type == TL_OPT_BOOL ? no_argument
                                                                      : required_argument,
                                               NULL, TL_SINK_FLAG_BASE + f->nflags};
            f->nflags++;
        }
        f->nconf++;
    }
    f->longopts[n] = (struct option){0};
    return TL_OK;
}

void tl_sink_flags_free(struct tl_sink_flags *f)
{
    for (int i = 0; i < f->nconf; i++) tl_sink_conf_free(&f->conf[i]);
    f->nconf = 0;
}

int tl_sink_flag(struct tl_sink_flags *f, int c, const char *arg, const char *cmd)
{
    int i = c - TL_SINK_FLAG_BASE;
    if (i < 0 || i >= f->nflags) return 0;
    const struct tl_option *o = f->flag[i].opt;
    struct tl_sink_conf *k = &f->conf[f->flag[i].conf];
    /* a bool's flag sets the opposite of its default: --no-gzip, --influx-insecure */
    const char *value = o->type == TL_OPT_BOOL ? (o->def && !strcmp(o->def, "true") ? "false" : "true")
                                               : arg;
    char err[256];
    if (tl_options_set(k->type->options, k->config, o->name, value, err, sizeof err)) {
        tl_eprintf("%s: --%s: %s\n", cmd, o->flag, err);
        return -1;
    }
    return 1;
}

int tl_sink_flags_configured(const struct tl_sink_flags *f, const struct tl_sink_conf **out,
                             int max)
{
    int n = 0;
    for (int i = 0; i < f->nconf && n < max; i++)
        if (f->conf[i].type->configured && f->conf[i].type->configured(f->conf[i].config))
            out[n++] = &f->conf[i];
    return n;
}

/* The placeholder of a flag's value: the option's name in capitals (URL,
 * SPOOL_DIR), N for numbers, SIZE for sizes. */
static void placeholder(const struct tl_option *o, char *out, size_t cap)
{
    if (o->type == TL_OPT_BOOL) *out = '\0';
    else if (o->type == TL_OPT_SIZE) snprintf(out, cap, " SIZE");
    else if (o->type != TL_OPT_STRING) snprintf(out, cap, " N");
    else {
        size_t n = snprintf(out, cap, " %s", o->name);
        for (size_t i = 0; i < n && i < cap; i++) out[i] = (char)toupper((unsigned char)out[i]);
    }
}

void tl_sink_flags_help(FILE *out)
{
    for (int t = 0; tl_sink_types[t]; t++)
        for (const struct tl_option *o = tl_sink_types[t]->options; o->name; o++) {
            if (!o->flag) continue;
            char arg[64], left[96], text[512];
            placeholder(o, arg, sizeof arg);
            snprintf(left, sizeof left, "--%s%s", o->flag, arg);
            bool off = o->type == TL_OPT_BOOL && o->def && !strcmp(o->def, "true");
            snprintf(text, sizeof text, "%s%s%s%s%s", off ? "turn off: " : "", o->help,
                     o->def && o->type != TL_OPT_BOOL ? " (default " : "",
                     o->def && o->type != TL_OPT_BOOL ? o->def : "",
                     o->def && o->type != TL_OPT_BOOL ? ")" : "");
            tl_help_line(out, left, 24, text);
        }
}
