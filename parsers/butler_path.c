/* Data IDs from a butler datastore path: see butler_path.h. */
#include "parsers/butler_path.h"

#include <stdbool.h>
#include <string.h>

const char *const tl_bid_names[TL_BID_COUNT] = {
    "label", "run", "instrument", "tract", "patch", "band", "physical_filter", "visit", "detector",
    "skymap",
};

enum { MAX_COMPONENTS = 128, MAX_VALUES = 16 };

static bool ends_with(const char *s, size_t n, const char *suffix)
{
    size_t k = strlen(suffix);
    return n >= k && !memcmp(s + n - k, suffix, k);
}

static bool all_digits(const char *s, size_t n)
{
    if (!n) return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9') return false;
    return true;
}

static size_t digits_at(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9') i++;
    return i;
}

/* Length of the detector full name that starts s, or 0: LSST R22_S11
 * (and the corner rafts' R00_SG0, R04_SW1), HSC 1_53, DECam N4 / S29. */
static size_t detector_at(const char *s, size_t n)
{
    if (n >= 7 && s[0] == 'R' && digits_at(s + 1, 2) == 2 && s[3] == '_' && s[4] == 'S') {
        size_t i = 5;
        if (i < n && (s[i] == 'G' || s[i] == 'W')) i++;
        size_t d = digits_at(s + i, n - i);
        if (d) return i + d;
    }
    size_t a = digits_at(s, n);
    if (a && a <= 3 && a < n && s[a] == '_') {
        size_t b = digits_at(s + a + 1, n - a - 1);
        if (b && b <= 3) return a + 1 + b;
    }
    if (n >= 2 && (s[0] == 'N' || s[0] == 'S')) {
        size_t d = digits_at(s + 1, n - 1);
        if (d && d <= 2) return 1 + d;
    }
    return 0;
}

/* s[pos..] starts with v, followed by '_' or the end */
static bool token_at(const char *s, size_t n, size_t pos, const char *v, size_t vn)
{
    return pos + vn <= n && !memcmp(s + pos, v, vn) && (pos + vn == n || s[pos + vn] == '_');
}

static void set(struct tl_span ids[], enum tl_bid id, const char *p, size_t n)
{
    if (n && !ids[id].p) ids[id] = (struct tl_span){p, n};
}

/* The file name without its extension(s): .yaml / .json / .boost, and a
 * compression suffix after them. */
static size_t stem_length(const char *s, size_t n)
{
    static const char *const packed[] = {".gz", ".zst", ".bz2", ".xz"};
    for (size_t i = 0; i < sizeof packed / sizeof *packed; i++)
        if (ends_with(s, n, packed[i])) {
            n -= strlen(packed[i]);
            break;
        }
    for (size_t i = n; i > 0; i--) {
        if (s[i - 1] == '.') return n - i <= 8 ? i - 1 : n;
        if (s[i - 1] == '_' || n - i > 8) break;
    }
    return n;
}

/* The run: the longest run of directories before the dataset type (comp
 * [0, D)) whose '_'-joined names end the file name's rest; *mlen: what of
 * rest stands before it. false when none does (not the default template:
 * no safe split). */
static bool find_run(const char *const *comp, const size_t *clen, int D, const char *rest,
                     size_t rlen, struct tl_span ids[TL_BID_COUNT], size_t *mlen)
{
    for (int i = 0; i < D; i++) {
        size_t total = (size_t)(D - 1 - i);
        for (int j = i; j < D; j++) total += clen[j];
        if (total > rlen) continue;
        const char *tail = rest + rlen - total;
        if (tail != rest && tail[-1] != '_') continue;
        const char *t = tail;
        bool ok = true;
        for (int j = i; j < D && ok; j++) {
            ok = !memcmp(t, comp[j], clen[j]);
            t += clen[j];
            if (ok && j + 1 < D) ok = *t++ == '_';
        }
        if (!ok) continue;
        set(ids, TL_BID_RUN, comp[i], (size_t)(comp[D - 1] + clen[D - 1] - comp[i]));
        *mlen = tail == rest ? 0 : (size_t)(tail - rest - 1);
        return true;
    }
    return false;
}

/* What the name holds after its directory values: the detector's full
 * name, then the skymap when the quantum has a tract. Without a tract, a
 * detector name ending it (R22_S11, 1_53, a number) is the detector, and
 * what stands before it is left untagged: values the layout did not put
 * in directories, which cannot be told apart without the dimensions. */
static void tail_ids(const char *rem, size_t remn, bool tract, struct tl_span ids[TL_BID_COUNT])
{
    if (!remn) return;
    size_t det = detector_at(rem, remn);
    if (tract) {
        if (det == remn) set(ids, TL_BID_DETECTOR, rem, remn);
        else if (det && rem[det] == '_') { /* detector, then skymap */
            set(ids, TL_BID_DETECTOR, rem, det);
            set(ids, TL_BID_SKYMAP, rem + det + 1, remn - det - 1);
        } else {
            set(ids, TL_BID_SKYMAP, rem, remn);
        }
        return;
    }
    for (size_t at = 0; at < remn; at++) {
        if (at && rem[at - 1] != '_') continue;
        size_t n = remn - at;
        if (detector_at(rem + at, n) == n || (at == 0 && all_digits(rem, n))) {
            set(ids, TL_BID_DETECTOR, rem + at, n);
            return;
        }
    }
}

void tl_butler_path_ids(const char *path, struct tl_span ids[TL_BID_COUNT])
{
    for (int i = 0; i < TL_BID_COUNT; i++) ids[i] = (struct tl_span){NULL, 0};
    const char *comp[MAX_COMPONENTS];
    size_t clen[MAX_COMPONENTS];
    int nc = 0;
    for (const char *p = path; *p && nc < MAX_COMPONENTS;) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n) {
            comp[nc] = p;
            clen[nc++] = n;
        }
        if (!e) break;
        p = e + 1;
    }
    if (nc < 2) return;
    int file = nc - 1, D = -1;
    for (int i = file - 1; i >= 0 && D < 0; i--)
        if (clen[i] > 9 && ends_with(comp[i], clen[i], "_metadata")) D = i;
    if (D < 0) return;
    set(ids, TL_BID_LABEL, comp[D], clen[D] - 9);
    const char *stem = comp[file];
    size_t slen = stem_length(stem, clen[file]);
    if (!(slen > clen[D] + 1 && !memcmp(stem, comp[D], clen[D]) && stem[clen[D]] == '_')) {
        /* Gen2: <pointing>/<filter>/<label>_metadata/<visit>[-<ccd>].boost */
        size_t d = digits_at(stem, slen);
        if (d && (d == slen || stem[d] == '-')) set(ids, TL_BID_VISIT, stem, d);
        if (D >= 1 && !all_digits(comp[D - 1], clen[D - 1]))
            set(ids, TL_BID_PHYSICAL_FILTER, comp[D - 1], clen[D - 1]);
        return;
    }
    const char *rest = stem + clen[D] + 1;
    size_t rlen = slen - clen[D] - 1;
    size_t mlen = 0;
    if (!find_run(comp, clen, D, rest, rlen, ids, &mlen)) return; /* not the default template */
    const char *mid = rest;
    int first = D + 1, last = file; /* the directory values: [first, last) */
    size_t pos = 0;
    bool dir_first = false;
    for (int j = first; j < last && !dir_first; j++) dir_first = token_at(mid, mlen, 0, comp[j], clen[j]);
    if (!dir_first && mlen) { /* the instrument has no directory of its own */
        const char *u = memchr(mid, '_', mlen);
        size_t n = u ? (size_t)(u - mid) : mlen;
        set(ids, TL_BID_INSTRUMENT, mid, n);
        pos = u ? n + 1 : mlen;
    }
    int in_name[MAX_VALUES], nin = 0;
    for (int j = first; j < last && nin < MAX_VALUES; j++) {
        if (!token_at(mid, mlen, pos, comp[j], clen[j])) continue; /* day_obs, subfilter */
        in_name[nin++] = j;
        pos += clen[j];
        if (pos < mlen) pos++;
    }
    const char *rem = mid + pos;
    size_t remn = pos < mlen ? mlen - pos : 0;
    /* A skymap comes only with a tract (its first directory, a number
     * before any word): never a guess from what is left. */
    bool tract = nin && all_digits(comp[in_name[0]], clen[in_name[0]]);
    tail_ids(rem, remn, tract, ids);
    /* tract, patch, band, physical_filter, visit, obs_id: in that order */
    int words = 0;
    for (int k = 0; k < nin; k++) {
        const char *v = comp[in_name[k]];
        size_t n = clen[in_name[k]];
        if (all_digits(v, n)) {
            if (!words && tract && !ids[TL_BID_TRACT].p) set(ids, TL_BID_TRACT, v, n);
            else if (!words && tract && !ids[TL_BID_PATCH].p) set(ids, TL_BID_PATCH, v, n);
            else set(ids, TL_BID_VISIT, v, n);
        } else if (words++ == 0) {
            set(ids, TL_BID_BAND, v, n);
        } else if (words == 2) {
            set(ids, TL_BID_PHYSICAL_FILTER, v, n);
        } /* the third is the exposure's obs_id: not a tag */
    }
}
