/* Files a batch command must not leave behind when a signal ends it: a
 * private copy of a database (Parsl's, 100 MB and more) is made in $TMPDIR
 * for the few seconds it is read, and SIGINT or SIGTERM in those seconds
 * used to leave it there. A path registered here is removed by the signal
 * handler (unlink, or rmdir for a directory: both async-signal-safe), in
 * the reverse order of registration, before the signal ends the process as
 * it would have. The handlers are installed at the first registration and
 * only where the signal's action is still the default (`run` blocks and
 * reads its signals: it removes its copies itself). */
#ifndef TL_CLEANUP_H
#define TL_CLEANUP_H

/* A slot for path (copied), or -1 when every slot is taken or the path is
 * too long: the caller goes on (the copy is removed the normal way). */
int tl_cleanup_add(const char *path);
/* The path was removed the normal way: forget it. */
void tl_cleanup_forget(int slot);

#endif
