/* Calendar times as workflow tools write them (ISO 8601 with a T or a
 * space, fractions, an offset or none), shared by the parsers that read
 * them: LSST metadata, Nextflow traces, codecarbon. */
#ifndef TL_PARSERS_CIVIL_TIME_H
#define TL_PARSERS_CIVIL_TIME_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar; a
 * day past the month's end counts on into the next, as timegm does. */
static inline int64_t tl_days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static inline bool tl_two_digits(const char *s, int *v)
{
    if ((unsigned)(s[0] - '0') > 9 || (unsigned)(s[1] - '0') > 9) return false;
    *v = (s[0] - '0') * 10 + (s[1] - '0');
    return true;
}

/* "2026-02-05T17:52:57.668196+00:00", or with a space for the T, or naive
 * (read as UTC), or with Z: ns since the epoch. NUL-terminated. */
static inline bool tl_parse_iso_time(const char *s, int64_t *ns)
{
    int y, mo, d, h, mi, sec, n = 0, c, yl;
    /* the form every writer uses, without sscanf; anything else through it */
    if (tl_two_digits(s, &c) && tl_two_digits(s + 2, &yl) && s[4] == '-' && tl_two_digits(s + 5, &mo) &&
        s[7] == '-' && tl_two_digits(s + 8, &d) && (s[10] == 'T' || s[10] == ' ') &&
        tl_two_digits(s + 11, &h) && s[13] == ':' && tl_two_digits(s + 14, &mi) && s[16] == ':' &&
        tl_two_digits(s + 17, &sec)) {
        y = c * 100 + yl;
        n = 19;
    } else if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6 &&
               sscanf(s, "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &n) != 6) {
        return false;
    }
    /* 1970..2200: differences of two times fit in int64 nanoseconds */
    if (y < 1970 || y > 2200 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 24 ||
        mi < 0 || mi > 59 || sec < 0 || sec > 61)
        return false;
    int64_t frac = 0;
    const char *p = s + n;
    if (*p == '.') {
        int digits = 0;
        for (p++; *p >= '0' && *p <= '9'; p++)
            if (digits < 9) {
                frac = frac * 10 + (*p - '0');
                digits++;
            }
        while (digits++ < 9) frac *= 10;
    }
    int64_t off = 0; /* +HH:MM: the tools drop it (it is always +00:00) */
    if ((*p == '+' || *p == '-') && strlen(p) >= 6) {
        int oh = (p[1] - '0') * 10 + (p[2] - '0'), om = (p[4] - '0') * 10 + (p[5] - '0');
        off = (*p == '+' ? 1 : -1) * ((int64_t)oh * 3600 + om * 60);
    }
    int64_t t = tl_days_from_civil(y, mo, d) * 86400 + (int64_t)h * 3600 + mi * 60 + sec;
    *ns = (t - off) * 1000000000 + frac;
    return true;
}

#endif
