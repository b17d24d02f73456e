/* The code of profiled lines (report.h, issue 58 point 4): a .lprof pickle
 * holds timings only, and line_profiler shows a line's code by reading the
 * function's source file when it renders. tasklens does the same where the
 * file can be found: the function names it ("matrix_ops.py:5:matmul" ->
 * matrix_ops.py, a relative name as kernprof wrote it), looked up beside the
 * input, one and two folders up, and in the working directory -- the places
 * a profile and its program sit. The page says which files it read, and
 * when one changed after the profile was written (its code may not be what
 * ran). A file is read whole up to SOURCE_MAX bytes; a line past its end,
 * or a file not found, keeps no code, said on the page. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/intern.h"
#include "report/report.h"

#define SOURCE_MAX ((long)16 << 20) /* bytes read of one source file */
#define SOURCE_FILES 64             /* distinct files looked up */

/* The file part of "<file>:<first line>:<name>" into out; false when the
 * name has no such shape. */
static bool function_file(const char *function, char *out, size_t cap)
{
    const char *b = strrchr(function, ':');
    if (!b || b == function) return false;
    const char *a = b - 1;
    while (a > function && *a != ':') a--;
    if (a == function || (size_t)(a - function) >= cap) return false;
    memcpy(out, function, (size_t)(a - function));
    out[a - function] = '\0';
    return true;
}

/* dir of path ("." when none), up levels folders up, into out. */
static void folder_of(const char *path, int up, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    int n = slash ? (int)(slash - path) : 0;
    if (!slash) snprintf(out, cap, ".");
    else snprintf(out, cap, "%.*s", n ? n : 1, path);
    for (int i = 0; i < up; i++) strncat(out, "/..", cap - strlen(out) - 1);
}

/* The whole file, NUL-terminated, or NULL. */
static char *read_whole(const char *path, long *len, time_t *mtime)
{
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode) || st.st_size > SOURCE_MAX) return NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc((size_t)st.st_size + 1);
    size_t got = buf ? fread(buf, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (!buf) return NULL;
    buf[got] = '\0';
    *len = (long)got;
    *mtime = st.st_mtime;
    return buf;
}

/* Finds file among the places; the text and where it was, or NULL. */
static char *find_source(const char *file, const struct tl_report_page *pg, char *where, size_t cap, long *len,
                         time_t *mtime)
{
    if (file[0] == '/') {
        snprintf(where, cap, "%s", file);
        return read_whole(file, len, mtime);
    }
    for (size_t i = 0; i < pg->ninputs; i++)
        for (int up = 0; up < 3; up++) {
            char dir[4096];
            folder_of(pg->inputs[i].path, up, dir, sizeof dir);
            if (snprintf(where, cap, "%s/%s", dir, file) >= (int)cap) continue;
            char *text = read_whole(where, len, mtime);
            if (text) return text;
        }
    snprintf(where, cap, "%s", file); /* the working directory */
    return read_whole(file, len, mtime);
}

/* Line lineno (1-based) of text, interned; NULL past the end. */
static const char *line_of(const char *text, long len, long lineno, struct tl_intern *store)
{
    const char *p = text, *end = text + len;
    for (long k = 1; k < lineno && p < end; k++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) return NULL;
        p = nl + 1;
    }
    if (p >= end && lineno > 1) return NULL;
    const char *e = memchr(p, '\n', (size_t)(end - p));
    size_t n = e ? (size_t)(e - p) : (size_t)(end - p);
    if (n && p[n - 1] == '\r') n--;
    int32_t id = tl_intern(store, p, n);
    return id >= 0 ? tl_intern_str(store, id) : NULL;
}

static time_t newest_input(const struct tl_report_page *pg)
{
    time_t t = 0;
    struct stat st;
    for (size_t i = 0; i < pg->ninputs; i++)
        if (!stat(pg->inputs[i].path, &st) && st.st_mtime > t) t = st.st_mtime;
    return t;
}

/* One function's lines [l, l + n) given code from its file, if found. */
static void attach(struct tl_report_line *l, size_t n, const struct tl_report_page *pg, struct tl_intern *store,
                   struct tl_report_sources *src)
{
    char file[4096], where[4096];
    if (!function_file(l[0].function, file, sizeof file)) return;
    long len = 0;
    time_t mtime = 0;
    char *text = find_source(file, pg, where, sizeof where, &len, &mtime);
    if (!text) {
        src->missing++;
        return;
    }
    for (size_t i = 0; i < n; i++)
        if (!l[i].code) l[i].code = line_of(text, len, l[i].lineno, store);
    free(text);
    if (src->nfiles < TL_REPORT_SOURCE_FILES) {
        char *real = realpath(where, NULL); /* "a/b/../f.py" said as the file it is */
        if (real && strlen(real) < sizeof where) snprintf(where, sizeof where, "%s", real);
        free(real);
        int32_t id = tl_intern(store, where, strlen(where));
        for (size_t i = 0; i < src->nfiles; i++)
            if (!strcmp(src->files[i], where)) return;
        if (id >= 0) src->files[src->nfiles++] = tl_intern_str(store, id);
    }
    src->changed += mtime > newest_input(pg);
}

void tl_report_line_sources(struct tl_report_line *lines, size_t n, const struct tl_report_page *pg,
                            struct tl_intern *store, struct tl_report_sources *src)
{
    memset(src, 0, sizeof *src);
    size_t looked = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        bool any_missing = false;
        while (j < n && lines[j].function == lines[i].function) any_missing |= !lines[j++].code;
        if (any_missing && looked++ < SOURCE_FILES) attach(lines + i, j - i, pg, store, src);
        i = j;
    }
}
