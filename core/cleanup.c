/* Files removed when a signal ends a batch command (cleanup.h). */
#include "core/cleanup.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SLOTS 16

/* Written before `used` is set, read only by the handler: a slot is whole
 * when the handler sees it used. */
static char paths[SLOTS][4096];
static volatile sig_atomic_t used[SLOTS];
static bool installed;

static void on_signal(int sig)
{
    for (int i = SLOTS - 1; i >= 0; i--)
        if (used[i] && unlink(paths[i]) != 0) rmdir(paths[i]);
    signal(sig, SIG_DFL);
    raise(sig); /* ends the process as the signal would have */
}

static void install(void)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old, sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        for (size_t j = 0; j < sizeof sigs / sizeof *sigs; j++) sigaddset(&sa.sa_mask, sigs[j]);
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL) sigaction(sigs[i], &sa, NULL);
    }
    installed = true;
}

int tl_cleanup_add(const char *path)
{
    if (strlen(path) >= sizeof paths[0]) return -1;
    if (!installed) install();
    for (int i = 0; i < SLOTS; i++)
        if (!used[i]) {
            snprintf(paths[i], sizeof paths[i], "%s", path);
            used[i] = 1;
            return i;
        }
    return -1;
}

void tl_cleanup_forget(int slot)
{
    if (slot >= 0 && slot < SLOTS) used[slot] = 0;
}
