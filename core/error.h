/* One error enum for the whole program, with a string for each (like curl's
 * CURLcode). Functions that can fail return enum tl_err; TL_OK is zero so
 * `if (rc)` reads naturally. */
#ifndef TL_ERROR_H
#define TL_ERROR_H

enum tl_err {
    TL_OK = 0,
    TL_ERR_NOMEM,    /* allocation failed */
    TL_ERR_USAGE,    /* bad command line or option value */
    TL_ERR_OPEN,     /* an input could not be opened */
    TL_ERR_IO,       /* read or write failed */
    TL_ERR_DECODE,   /* compressed input is corrupt or truncated */
    TL_ERR_FORMAT,   /* input format could not be detected */
    TL_ERR_LIMIT,    /* a configured limit was reached */
    TL_ERR_CORRUPT,  /* serialized state is corrupt or truncated */
    TL_ERR_INTERNAL, /* a bug: an invariant did not hold */
    TL_ERR_COUNT
};

const char *tl_strerror(enum tl_err e);

#endif
