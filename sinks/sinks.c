/* The sinks' registry: which sink types exist (`type:` in a configuration's
 * sinks entry), and a type's config with its defaults. */
#include "sinks/sink.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/path.h"

extern const struct tl_sink_type tl_sink_file;
extern const struct tl_sink_type tl_sink_influxdb;
extern const struct tl_sink_type tl_sink_ndjson;
extern const struct tl_sink_type tl_sink_prometheus;

const struct tl_sink_type *const tl_sink_types[] = {
    &tl_sink_influxdb,
    &tl_sink_file,
    &tl_sink_ndjson,
    &tl_sink_prometheus,
    NULL,
};

const struct tl_sink_type *tl_sink_find(const char *name)
{
    for (int i = 0; tl_sink_types[i]; i++)
        if (!strcmp(tl_sink_types[i]->name, name)) return tl_sink_types[i];
    return NULL;
}

enum tl_err tl_sink_conf_init(struct tl_sink_conf *c, const struct tl_sink_type *type)
{
    memset(c, 0, sizeof *c);
    c->type = type;
    if (!(c->config = calloc(1, type->config_size ? type->config_size : 1))) return TL_ERR_NOMEM;
    return tl_options_defaults(type->options, c->config);
}

void tl_sink_conf_free(struct tl_sink_conf *c)
{
    free(c->config);
    memset(c, 0, sizeof *c);
}

enum tl_err tl_sink_path_required(const char *path, const char **key, char *err, size_t errlen)
{
    if (path && *path) return TL_OK;
    *key = path ? "path" : NULL;
    snprintf(err, errlen, path ? "empty" : "`path` is required");
    return TL_ERR_USAGE;
}

void tl_sink_check_path(const char *type, const char *path, int index, tl_check_say *say, void *ctx)
{
    char why[512];
    bool ok = tl_dir_writable(path, false, why, sizeof why);
    say(ctx, ok, "sinks[%d] %s %s: %s", index, type, path, ok ? "writable" : why);
}
