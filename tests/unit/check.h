/* Minimal test helpers: CHECK records a failure and goes on, so one run
 * shows every broken expectation; main returns failures ? 1 : 0. Exit code
 * 77 tells ctest the test was skipped (SKIP_RETURN_CODE). */
#ifndef TL_CHECK_H
#define TL_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;
static int check_count;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        check_count++;                                                                             \
        if (!(cond)) {                                                                             \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);              \
        }                                                                                          \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                                         \
    do {                                                                                           \
        long long va_ = (long long)(a), vb_ = (long long)(b);                                      \
        check_count++;                                                                             \
        if (va_ != vb_) {                                                                          \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__, __LINE__, #a,    \
                    va_, #b, vb_);                                                                 \
        }                                                                                          \
    } while (0)

#define CHECK_STR(a, b)                                                                            \
    do {                                                                                           \
        const char *sa_ = (a), *sb_ = (b);                                                         \
        check_count++;                                                                             \
        if (!sa_ || !sb_ || strcmp(sa_, sb_)) {                                                    \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: %s is \"%s\", expected \"%s\"\n", __FILE__, __LINE__, #a,      \
                    sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)");                                   \
        }                                                                                          \
    } while (0)

/* |a-b| <= rel * max(|a|,|b|) (or both tiny) */
#define CHECK_NEAR(a, b, rel)                                                                      \
    do {                                                                                           \
        double da_ = (a), db_ = (b);                                                               \
        check_count++;                                                                             \
        double tol_ = (rel) * fmax(fabs(da_), fabs(db_));                                          \
        if (!(fabs(da_ - db_) <= tol_ || (da_ == db_))) {                                          \
            check_failures++;                                                                      \
            fprintf(stderr, "%s:%d: %s == %.17g, expected %.17g (rel %g)\n", __FILE__, __LINE__,   \
                    #a, da_, db_, (double)(rel));                                                  \
        }                                                                                          \
    } while (0)

static inline int check_done(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}

static inline void check_skip(const char *why)
{
    printf("SKIP: %s\n", why);
    exit(77);
}

#endif
