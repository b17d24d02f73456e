#include "core/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

void *tl_dynlib_open(const char *soname, char *err, size_t cap)
{
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!h && cap) {
        const char *why = dlerror();
        snprintf(err, cap, "cannot load %s (%s)", soname, why ? why : "unknown reason");
    }
    return h;
}

bool tl_dynlib_sym(void *h, const char *soname, const char *name, void *fnptr, char *err,
                   size_t cap)
{
    void *s = dlsym(h, name);
    if (!s) {
        if (cap) snprintf(err, cap, "%s has no %s (too old?)", soname, name);
        return false;
    }
    memcpy(fnptr, &s, sizeof s);
    return true;
}
