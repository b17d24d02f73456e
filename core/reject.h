/* Why an input line (or event, or document) was rejected.
 *
 * Bad input never stops a run and is never silently dropped: every parser
 * reports each rejected unit through tl_emit.reject with one of these reasons
 * and the line number, and counts it. The CLI prints the first few as
 * `file:line: reason (detail)` and totals per reason. */
#ifndef TL_REJECT_H
#define TL_REJECT_H

enum tl_reject {
    TL_REJ_LINE_TOO_LONG, /* longer than the parser's max_line limit */
    TL_REJ_NUL_BYTE,      /* binary data: a NUL byte inside the line */
    TL_REJ_BAD_PREFIX,    /* no "<timestamp> <pid>" at the start */
    TL_REJ_UNKNOWN,       /* record type this parser does not know */
    TL_REJ_BAD_FIELDS,    /* record type known, fields missing or wrong */
    TL_REJ_BAD_JSON,      /* a JSON object that does not parse */
    TL_REJ_TRUNCATED,     /* input ended in the middle of a unit */
    TL_REJ_LIMIT,         /* a memory bound (open tasks, names) was reached */
    TL_REJ_BAD_DOCUMENT,  /* a whole document (YAML/JSON file) that does not parse */
    TL_REJ_NO_RESOURCES,  /* a document that parses but lacks what a record needs */
    TL_REJ_TOO_LARGE,     /* a document over the size or depth limit */
    TL_REJ_BAD_VALUE,     /* a resource value no measurement has: negative, or past the double range */
    TL_REJ_COUNT /* new reasons go last: checkpointed counters are read by index */
};

const char *tl_reject_str(enum tl_reject r);
/* Short machine name, used as a JSON key and InfluxDB field suffix. */
const char *tl_reject_key(enum tl_reject r);

#endif
