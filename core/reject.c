#include "core/reject.h"

static const struct {
    const char *key;
    const char *text;
} reject_names[TL_REJ_COUNT] = {
    [TL_REJ_LINE_TOO_LONG] = {"line_too_long", "line too long"},
    [TL_REJ_NUL_BYTE] = {"nul_byte", "binary data (NUL byte) in line"},
    [TL_REJ_BAD_PREFIX] = {"bad_prefix", "line does not start with <timestamp> <pid>"},
    [TL_REJ_UNKNOWN] = {"unknown_record", "unknown record type"},
    [TL_REJ_BAD_FIELDS] = {"bad_fields", "missing or malformed fields"},
    [TL_REJ_BAD_JSON] = {"bad_json", "malformed JSON"},
    [TL_REJ_TRUNCATED] = {"truncated", "input ends inside a record"},
    [TL_REJ_LIMIT] = {"limit", "memory limit reached"},
    [TL_REJ_BAD_DOCUMENT] = {"bad_document", "document does not parse"},
    [TL_REJ_NO_RESOURCES] = {"no_resources", "document lacks the resource usage keys"},
    [TL_REJ_TOO_LARGE] = {"too_large", "document over the size or depth limit"},
    [TL_REJ_BAD_VALUE] = {"bad_value", "impossible resource value"},
};

const char *tl_reject_str(enum tl_reject r)
{
    return (unsigned)r < TL_REJ_COUNT ? reject_names[r].text : "?";
}

const char *tl_reject_key(enum tl_reject r)
{
    return (unsigned)r < TL_REJ_COUNT ? reject_names[r].key : "?";
}
