/* `tasklens top`: a live view of a run in the terminal.
 *
 *   tasklens top [--follow] [--once] INPUT...      files, directories, - (stdin)
 *   tasklens top -c CONFIG                         a run configuration's sources (Kafka too)
 *
 * The inputs go through the same door as `run` (pipeline/: sources,
 * parsers, the aggregator; no sinks): records feed the live model
 * (insights/live.c), and a view hook of the run loop draws a frame
 * (top_screen.c) at most once a second, reads the keys from the terminal
 * and asks the parsers what is open now. Nothing is parsed twice. The
 * whole-run figures are the aggregator's, which `summary` also uses, with
 * summary's exact limit, so the two agree on the same input. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "core/clock.h"
#include "core/term.h"
#include "cli/cli.h"
#include "cli/top.h"
#include "pipeline/pipeline.h"
#include "pipeline/source.h"

struct top {
    struct top_view v;
    struct tl_live *live;
    struct tl_buf frame;
    bool once, interactive;
    bool dirty;         /* redraw now (a key, a resize, the input's end) */
    bool records_since; /* records arrived since the last frame */
    bool stream_input;  /* a Kafka source: no end; caught up when quiet (view_tick) */
    int64_t last_record_ms, started_ms;
    int64_t last_draw_ms;
    int tty_fd;         /* keys (interactive), -1 none */
    struct termios saved_tio;
    bool tio_saved;
    int saved_stderr;   /* the real stderr while the run's messages go to log_fd */
    int log_fd;
    off_t log_read;
    char title[256];
    char *const *inputs; /* as given on the command line */
    int ninputs;
    char *groups[RUN_MAX_SOURCES]; /* Kafka groups made for top (owned) */
};

static volatile sig_atomic_t resized;
static void on_winch(int sig) { resized = 1; }

static void top_usage(FILE *out)
{
    fprintf(out,
            "usage: tasklens top [--follow] [--once] [OPTIONS] INPUT...\n"
            "       tasklens top -c CONFIG [OPTIONS]\n"
            "\n"
            "A live view of a run: per category what runs, waits, finished and failed, how\n"
            "fast, wall time and memory p50/p95 and waste against the allocation (over the\n"
            "last 5 minutes, the last hour or the whole run); the tasks running longest\n"
            "against their category's p95; failures as they happen; workers, cores and a\n"
            "time to done. INPUT: a file, a directory or - (stdin), in any format tasklens\n"
            "reads; -c: the sources of a run configuration (files, directories, Kafka).\n"
            "\n"
            "options:\n"
            "  --follow            follow the files as they grow (like tail -F)\n"
            "  --once              read what is there, print the table once, exit (scripts)\n"
            "  -c, --config FILE   a run configuration's sources (its sinks are not used;\n"
            "                      a Kafka source joins its group with \".top\" appended)\n"
            "  --format-in NAME    input format instead of auto-detection (see `tasklens formats`)\n"
            "  --window W          5m, 1h or run (default: 5m with --follow, else run)\n"
            "  --sort COL          seen (default), run, wait, done, fail, rate, wall, mem, waste\n"
            "  --filter TEXT       only categories containing TEXT\n"
            "  -h, --help          this help\n"
            "\n"
            "keys: q quit, s next sort column, f filter categories (Enter applies, Esc\n"
            "clears), w next window, p pause. No colour when NO_COLOR is set or the output\n"
            "is not a terminal; not a terminal: frames are printed one after another\n"
            "(--follow) or once at the end, as with --once.\n");
}

/* ---------------------------------------------------------------- the terminal */

static void terminal_size(struct top *T)
{
    struct winsize ws;
    if (ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
        T->v.width = ws.ws_col;
        T->v.height = ws.ws_row;
    }
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
            continue;
        }
        if (w <= 0) return;
        p += w;
        n -= (size_t)w;
    }
}

static enum tl_err terminal_open(struct top *T)
{
    T->tty_fd = open("/dev/tty", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (T->tty_fd >= 0 && tcgetattr(T->tty_fd, &T->saved_tio) == 0) {
        struct termios raw = T->saved_tio;
        raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO); /* keys one by one; ^C still signals */
        raw.c_cc[VMIN] = 0;
        raw.c_cc[VTIME] = 0;
        T->tio_saved = tcsetattr(T->tty_fd, TCSANOW, &raw) == 0;
    }
    struct sigaction sa = {.sa_handler = on_winch};
    sigaction(SIGWINCH, &sa, NULL);
    /* the run's messages would tear the screen: into a file, shown on the
     * last line, and on stderr again at the end */
    char path[] = "/tmp/tasklens-top.XXXXXX";
    T->log_fd = mkstemp(path);
    if (T->log_fd >= 0) {
        unlink(path);
        T->saved_stderr = dup(2);
        dup2(T->log_fd, 2);
    }
    terminal_size(T);
    static const char enter[] = "\x1b[?1049h\x1b[?25l\x1b[H\x1b[2J"; /* alternate screen, no cursor */
    write_all(1, enter, sizeof enter - 1);
    return TL_OK;
}

static void terminal_close(struct top *T)
{
    static const char leave[] = "\x1b[?25h\x1b[?1049l";
    write_all(1, leave, sizeof leave - 1);
    if (T->tio_saved) tcsetattr(T->tty_fd, TCSANOW, &T->saved_tio);
    if (T->tty_fd >= 0) close(T->tty_fd);
    if (T->log_fd >= 0) { /* what the run said, now where it belongs */
        dup2(T->saved_stderr, 2);
        close(T->saved_stderr);
        char buf[65536];
        ssize_t n;
        for (off_t at = 0; (n = pread(T->log_fd, buf, sizeof buf, at)) > 0; at += n)
            write_all(2, buf, (size_t)n);
        close(T->log_fd);
    }
}

/* The run's last message line, for the screen. */
static void read_messages(struct top *T)
{
    if (T->log_fd < 0) return;
    char buf[4096];
    ssize_t n;
    while ((n = pread(T->log_fd, buf, sizeof buf - 1, T->log_read)) > 0) {
        T->log_read += n;
        buf[n] = 0;
        char *end = buf + n;
        while (end > buf && (end[-1] == '\n' || end[-1] == '\r')) *--end = 0;
        char *last = strrchr(buf, '\n');
        last = last ? last + 1 : buf;
        if (!strncmp(last, "tasklens run: ", 14)) last += 14;
        if (*last) snprintf(T->v.message, sizeof T->v.message, "%.199s", last);
        T->dirty = true;
    }
}

/* ---------------------------------------------------------------- keys */

static void filter_key(struct top *T, char c)
{
    size_t n = strlen(T->v.filter);
    if (c == '\r' || c == '\n') T->v.filtering = false;
    else if (c == 27) T->v.filtering = false, T->v.filter[0] = 0;
    else if ((c == 127 || c == 8) && n) T->v.filter[n - 1] = 0;
    else if (c >= 32 && c < 127 && n + 1 < sizeof T->v.filter) T->v.filter[n] = c, T->v.filter[n + 1] = 0;
}

/* Reads what was typed; false when it says quit. */
static bool read_keys(struct top *T)
{
    char keys[64];
    if (T->tty_fd < 0) return true;
    /* the terminal hung up (an ssh connection dropped, tmux killed): quit,
     * or the loop would wake on its descriptor for ever (a read returns 0
     * when no key waits: VMIN 0) */
    struct pollfd pf = {T->tty_fd, POLLIN, 0};
    if (poll(&pf, 1, 0) > 0 && (pf.revents & (POLLHUP | POLLERR | POLLNVAL))) return false;
    ssize_t n = read(T->tty_fd, keys, sizeof keys);
    if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
    for (ssize_t i = 0; i < n; i++) {
        char c = keys[i];
        T->dirty = true;
        if (T->v.filtering) {
            filter_key(T, c);
            continue;
        }
        switch (c) {
        case 'q': case 'Q': return false;
        case 's': T->v.sort = (enum top_sort)((T->v.sort + 1) % TOP_NSORTS); break;
        case 'S': T->v.sort = (enum top_sort)((T->v.sort + TOP_NSORTS - 1) % TOP_NSORTS); break;
        case 'w': T->v.window = (enum tl_live_window)((T->v.window + 1) % TL_LIVE_NWINDOWS); break;
        case 'f': case '/': T->v.filtering = true; T->v.filter[0] = 0; break;
        case 'p': case ' ': T->v.paused = !T->v.paused; break;
        default: break;
        }
    }
    return true;
}

/* ---------------------------------------------------------------- the view */

static void view_record(void *ctx, const struct tl_record *r)
{
    struct top *T = ctx;
    tl_live_record(T->live, r);
    T->records_since = true;
    if (T->stream_input) T->last_record_ms = tl_mono_ms();
}

static void draw(struct top *T, struct tl_runtime *rt)
{
    struct tl_agg *agg = tl_rt_aggregator(rt);
    if (T->v.follow) tl_live_set_wall(T->live, tl_wall_ns());
    tl_rt_each_open_task(rt, tl_live_open_clock, T->live);
    tl_live_open_begin(T->live, agg);
    bool can_say = tl_rt_each_open_task(rt, tl_live_open_task, T->live);
    tl_live_open_end(T->live, can_say);
    if (T->interactive) terminal_size(T);
    T->v.waiting_for = NULL; /* a followed path not there yet is said, as tail -F says it */
    struct stat st;
    for (int i = 0; T->v.follow && !T->v.waiting_for && i < T->ninputs; i++)
        if (strcmp(T->inputs[i], "-") && stat(T->inputs[i], &st) != 0) T->v.waiting_for = T->inputs[i];
    top_render(&T->frame, T->live, agg, &T->v);
    if (!T->v.screen && T->last_draw_ms) write_all(1, "\n", 1); /* frames one after another */
    write_all(1, T->frame.data, T->frame.len);
    T->last_draw_ms = tl_mono_ms();
    T->dirty = T->records_since = false;
}

static bool view_tick(void *ctx, struct tl_runtime *rt, bool input_over, bool idle)
{
    struct top *T = ctx;
    /* files are followed even without --follow, so that what is open at
     * their end is still open (not closed as censored by the end of input):
     * without --follow, reaching their current end is the end */
    if (idle && !T->v.follow && !T->stream_input) input_over = true;
    /* a topic has no end: read what is there is 2 s without a record (after
     * the group assigned partitions and they were read), or 60 s of nothing */
    if (T->stream_input && T->once && idle) {
        int64_t now = tl_mono_ms();
        if ((T->last_record_ms && now - T->last_record_ms >= 2000) || now - T->started_ms >= 60000)
            input_over = true;
    }
    if (input_over && !T->v.input_over) T->v.input_over = T->dirty = true;
    if (T->once) {
        if (input_over) draw(T, rt);
        return !input_over;
    }
    if (!read_keys(T)) return false;
    if (resized) resized = 0, T->dirty = true;
    read_messages(T);
    int64_t now = tl_mono_ms();
    bool due = now - T->last_draw_ms >= 1000 && (T->interactive || T->records_since);
    if ((T->dirty || due) && (!T->v.paused || T->dirty)) draw(T, rt);
    /* not a terminal and nothing followed: one frame at the end */
    return T->interactive || !input_over;
}

/* ---------------------------------------------------------------- the run */

struct top_flags {
    const char *config, *format;
    bool follow;
};

/* One source per input: - is stdin, a directory its files, else a file. */
static enum tl_err add_inputs(struct run_config *cfg, char **inputs, int n, const struct top_flags *f,
                              char *err, size_t cap)
{
    for (int i = 0; i < n; i++) {
        struct stat st;
        bool is_stdin = !strcmp(inputs[i], "-");
        bool exists = !is_stdin && stat(inputs[i], &st) == 0;
        if (!is_stdin && !exists && !f->follow) { /* a mistyped path; --follow waits, as tail -F */
            snprintf(err, cap, "%s: %s", inputs[i], strerror(errno));
            return TL_ERR_OPEN;
        }
        bool is_dir = exists && S_ISDIR(st.st_mode);
        struct src_settings *s =
            run_config_add_source(cfg, tl_source_find(is_stdin ? "stdin" : is_dir ? "dir" : "file"));
        if (!s) return TL_ERR_LIMIT;
        tl_src_base(s)->path = is_stdin ? NULL : inputs[i];
        if (f->format) tl_src_base(s)->parser = f->format;
        /* a file is followed: the end of a read is the view's (view_tick) */
        if (!is_stdin && !is_dir &&
            (run_config_source_set(s, "follow", "true") || run_config_source_set(s, "from", "beginning")))
            return TL_ERR_INTERNAL;
    }
    return TL_OK;
}

/* A configuration's sources, without its sinks; a Kafka source joins its
 * own group (GROUP.top), so the daemon's partitions stay the daemon's. */
static enum tl_err from_config(struct top *T, struct run_config *cfg, const char *path, char *err,
                               size_t cap)
{
    enum tl_err rc = run_config_load(cfg, path, err, cap);
    if (rc) return rc;
    for (int i = 0; i < cfg->nsink; i++) tl_sink_conf_free(&cfg->sink[i]);
    cfg->nsink = 0;
    cfg->run.checkpoint_dir = NULL;
    for (int i = 0; i < cfg->nsrc; i++) {
        struct src_settings *s = &cfg->src[i];
        if (strcmp(s->type->name, "kafka")) continue;
        const char *group = run_config_source_get(s, "group");
        size_t n = strlen(group ? group : "tasklens") + 5;
        if (!(T->groups[i] = malloc(n))) return TL_ERR_NOMEM;
        snprintf(T->groups[i], n, "%s.top", group ? group : "tasklens");
        if (run_config_source_set(s, "group", T->groups[i]) || run_config_source_set(s, "state_topic", NULL))
            return TL_ERR_INTERNAL;
        T->stream_input = true;
    }
    return TL_OK;
}

static bool parse_choice(const char *arg, const char *const *names, int n, int *out)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(arg, names[i])) return *out = i, true;
    return false;
}

/* Flags into T and f; -1 to go on, else the exit status. */
static int top_flag(int c, const char *arg, struct top *T, struct top_flags *f)
{
    static const char *const windows[] = {"5m", "1h", "run"};
    static const char *const sorts[] = {"seen", "run", "wait", "done", "fail", "rate", "wall", "mem", "waste"};
    int k;
    switch (c) {
    case 'F': f->follow = true; return -1;
    case 'o': T->once = true; return -1;
    case 'c': f->config = arg; return -1;
    case 'i': f->format = arg; return -1;
    case 'w':
        if (!parse_choice(arg, windows, 3, &k)) break;
        T->v.window = (enum tl_live_window)k;
        return -1;
    case 's':
        if (!parse_choice(arg, sorts, TOP_NSORTS, &k)) break;
        T->v.sort = (enum top_sort)k;
        return -1;
    case 'f': snprintf(T->v.filter, sizeof T->v.filter, "%s", arg); return -1;
    case 'h': top_usage(stdout); return TL_EXIT_OK;
    default: break;
    }
    top_usage(stderr);
    return TL_EXIT_USAGE;
}

static void top_setup_view(struct top *T, int argc, char **argv, int first, const struct top_flags *f)
{
    bool tty = isatty(1);
    const char *no_colour = getenv("NO_COLOR");
    T->interactive = tty && !T->once;
    T->v.screen = T->interactive;
    T->v.colour = tty && !(no_colour && *no_colour);
    T->v.follow = f->follow && !T->once;
    /* followed: what happens now; read after the fact: the whole run */
    if (T->v.window == TL_LIVE_NWINDOWS) T->v.window = T->v.follow ? TL_LIVE_5MIN : TL_LIVE_RUN;
    if (!T->interactive && !T->v.follow) T->once = true; /* a pipe: the table once, at the end */
    T->v.width = 120;
    const char *cols = getenv("COLUMNS");
    if (cols && atoi(cols) >= 40) T->v.width = atoi(cols);
    if (tty) terminal_size(T);
    if (!T->interactive) T->v.height = 0;
    size_t at = 0;
    if (f->config) at = (size_t)snprintf(T->title, sizeof T->title, "%s", f->config);
    for (int i = first; i < argc && at < sizeof T->title; i++)
        at += (size_t)snprintf(T->title + at, sizeof T->title - at, "%s%s", at ? " " : "", argv[i]);
    T->v.title = T->title;
    T->inputs = argv + first;
    T->ninputs = argc - first;
    T->tty_fd = T->log_fd = T->saved_stderr = -1;
}

int tl_cmd_top(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"follow", no_argument, NULL, 'F'},     {"once", no_argument, NULL, 'o'},
        {"config", required_argument, NULL, 'c'}, {"format-in", required_argument, NULL, 'i'},
        {"window", required_argument, NULL, 'w'}, {"sort", required_argument, NULL, 's'},
        {"filter", required_argument, NULL, 'f'}, {"help", no_argument, NULL, 'h'},
        {0},
    };
    struct top T = {.v.window = TL_LIVE_NWINDOWS}; /* unset: see top_setup_view */
    struct top_flags f = {0};
    int status = -1, c;
    optind = 1;
    while (status < 0 && (c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1)
        status = top_flag(c, optarg, &T, &f);
    if (status < 0 && optind == argc && !f.config) {
        tl_eprintf("tasklens top: no input (give files, directories, - or -c CONFIG)\n");
        top_usage(stderr);
        status = TL_EXIT_USAGE;
    }
    if (status >= 0) return status;
    T.started_ms = tl_mono_ms();

    struct run_config cfg;
    char err[1024] = "";
    enum tl_err rc = TL_OK;
    if (f.config) rc = from_config(&T, &cfg, f.config, err, sizeof err);
    else run_config_init(&cfg);
    if (!rc) rc = add_inputs(&cfg, argv + optind, argc - optind, &f, err, sizeof err);
    if (T.stream_input) f.follow = true; /* a topic is live: its clock is the wall clock */
    top_setup_view(&T, argc, argv, optind, &f);
    cfg.view_only = true;
    cfg.run.quiet = true;
    cfg.agg.by = "category";
    cfg.agg.exact_limit = 1000000; /* summary's: the same quantiles on the same input */
    cfg.agg.histograms = false;
    if (!rc) rc = run_config_validate(&cfg, err, sizeof err);
    if (rc || !(T.live = tl_live_new())) {
        tl_eprintf("tasklens top: %s\n", err[0] ? err : "out of memory");
        run_config_free(&cfg);
        tl_live_free(T.live);
        for (int i = 0; i < RUN_MAX_SOURCES; i++) free(T.groups[i]);
        return rc == TL_ERR_OPEN ? TL_EXIT_INPUT : TL_EXIT_USAGE;
    }
    if (T.interactive) {
        /* ^C from here on reaches the run loop's signalfd (which takes the
         * pending signal), so the terminal is always given back */
        sigset_t mask;
        tl_pipeline_block_signals(&mask);
        terminal_open(&T);
    }
    struct tl_view view = {.ctx = &T, .fd = T.tty_fd, .record = view_record, .tick = view_tick};
    struct tl_pipeline_opts po = {.view = &view};
    int failed = tl_pipeline_run(&cfg, &po);
    if (T.interactive) terminal_close(&T);
    tl_live_free(T.live);
    tl_buf_free(&T.frame);
    for (int i = 0; i < RUN_MAX_SOURCES; i++) free(T.groups[i]);
    return failed ? TL_EXIT_INPUT : TL_EXIT_OK;
}
