#include "core/error.h"

const char *tl_strerror(enum tl_err e)
{
    switch (e) {
    case TL_OK: return "ok";
    case TL_ERR_NOMEM: return "out of memory";
    case TL_ERR_USAGE: return "usage error";
    case TL_ERR_OPEN: return "cannot open input";
    case TL_ERR_IO: return "input/output error";
    case TL_ERR_DECODE: return "corrupt or truncated compressed data";
    case TL_ERR_FORMAT: return "unrecognized input format";
    case TL_ERR_LIMIT: return "limit reached";
    case TL_ERR_CORRUPT: return "corrupt or truncated serialized data";
    case TL_ERR_INTERNAL: return "internal error";
    case TL_ERR_COUNT: break;
    }
    return "unknown error";
}
