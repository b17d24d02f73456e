#!/usr/bin/env python3
"""`tasklens run -c` and `tasklens check -c`: configuration files.

1. Each kind of mistake gives one message naming file:line and the key.
2. ${VAR} substitution; a secret never appears in any message.
3. --help-config lists every setting from the option tables.
4. `check` against a real influxd: a good sink, a wrong URL, a missing
   database -- each says which sink and why.
5. SIGHUP reloads the file: a sink that changed is reopened, and the
   followed file goes on where it was (nothing lost or repeated).
6. A `dir` source: files present at start and files that appear later are
   each read once, hidden and .tmp files never; a restart reads none again.

usage: run_config.py TASKLENS DEMO_LOG
"""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

try:
    from influxd_harness import Influxd, free_port  # noqa: E402
    HAVE_INFLUXD = shutil.which("influxd") is not None
except ImportError:
    HAVE_INFLUXD = False

GOOD = """\
sources:
  - type: file
    path: {log}
sinks:
  - type: file
    path: {out}
"""

# (name, config text, expected fragments of the message)
MISTAKES = [
    ("unknown top-level key", "flush_intervall: 5\n" + GOOD,
     [":1:", "unknown key 'flush_intervall'", "known:", "flush_interval"]),
    ("wrong type", GOOD + "flush_interval: fast\n",
     [":7:", "flush_interval", "'fast' is not an integer"]),
    ("unknown key in a source", GOOD.replace("    path: {log}", "    path: {log}\n    folow: true"),
     [":4:", "sources[0] (file)", "unknown key 'folow'", "follow"]),
    ("source without path", "sources:\n  - type: file\n    follow: true\nsinks:\n  - type: file\n    path: x\n",
     [":2:", "sources[0] (file)", "`path` is required"]),
    ("unknown source type", "sources:\n  - type: kafkaa\n    path: x\nsinks:\n  - type: file\n    path: x\n",
     [":2:", "sources[0]", "type 'kafkaa'", "file, dir, stdin"]),
    ("unset variable", GOOD + "  - type: influxdb\n    db: x\n    token: ${{TL_UNSET_VARIABLE}}\n",
     [":9:", "token", "TL_UNSET_VARIABLE is not set"]),
    ("not YAML", GOOD + "sinks: [unclosed\n",
     [":8:", "started on line 7"]),
    ("key given twice", GOOD + "flush_interval: 5\nflush_interval: 6\n",
     [":8:", "flush_interval", "given twice", "line 7"]),
    ("unknown parser", GOOD.replace("    path: {log}", "    path: {log}\n    parser: wqq"),
     [":4:", "parser", "'wqq' is not a known format"]),
    ("list for a single value", GOOD + "flush_interval: [1, 2]\n",
     [":7:", "flush_interval", "takes a single value"]),
    ("influxdb without database", GOOD + "  - type: influxdb\n    url: http://127.0.0.1:1\n",
     [":7:", "sinks[1] (influxdb)", "`db`", "bucket"]),
    ("value out of range", GOOD + "flush_interval: 1\n",
     ["flush_interval", "outside 10.."]),
    ("parser option of the wrong type",
     GOOD.replace("    path: {log}", "    path: {log}\n    parser: wq\n    options:\n      max_line: huge"),
     [":6:", "max_line", "'huge' is not a size"]),
    ("not a mapping", "- just\n- a list\n", [":1:", "top level must be a mapping"]),
    # a request that never times out would hang `check` and `run` for ever
    ("zero timeout", GOOD + "  - type: influxdb\n    db: x\n    timeout: 0\n",
     [":7:", "sinks[1].timeout", "0 is outside 100..600000"]),
    ("empty source path", GOOD.replace("    path: {log}", "    path: ''"),
     [":2:", "sources[0].path: empty"]),
    ("spool smaller than a batch", GOOD + "  - type: influxdb\n    db: x\n    spool_max: 1K\n",
     [":7:", "sinks[1].spool_max", "outside 65536.."]),
    ("list where one path goes", GOOD.replace("    path: {log}", "    path: [a.log, b.log]"),
     [":3:", "path", "takes a single value"]),
    # a parser's own checks run as the file is read (issue 60: parsers validate, as sinks do)
    ("parser option outside its values",
     GOOD.replace("    path: {log}", "    path: {log}\n    parser: spark\n    options:\n      category: stages"),
     [":6:", "sources[0] (file) options", "spark.category is stage or description, not 'stages'"]),
    # each source's settings are its own (issue 60): Kafka's are no file's, not even silently
    ("another source type's setting", GOOD.replace("    path: {log}", "    path: {log}\n    properties:\n      a: b"),
     [":4:", "sources[0] (file)", "unknown key 'properties'"]),
    ("a mapping given a single value", "sources:\n  - type: kafka\n    brokers: b:9092\n    topics: t\n"
     "    properties: plaintext\nsinks:\n  - type: file\n    path: x\n",
     [":5:", "sources[0] (kafka)", "'properties' takes a mapping"]),
]


def run(args, timeout=60, **kw):
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, **kw)


def mistakes(tasklens, tmp):
    for name, text, want in MISTAKES:
        cfg = os.path.join(tmp, "bad.yaml")
        with open(cfg, "w") as f:
            f.write(text.format(log=os.path.join(tmp, "x.log"), out=os.path.join(tmp, "x.lp")))
        for cmd in ("run", "check"):
            p = run([tasklens, cmd, "-c", cfg])
            msg = p.stderr.strip().splitlines()[0] if p.stderr.strip() else ""
            ok = p.returncode == 2 and cfg in msg and all(w in msg for w in want)
            check(ok, "%s: %s: exit %d, %r" % (cmd, name, p.returncode, msg))


def secrets_and_help(tasklens, tmp):
    cfg = os.path.join(tmp, "secret.yaml")
    with open(cfg, "w") as f:
        f.write(GOOD.format(log=os.path.join(tmp, "x.log"), out=os.path.join(tmp, "x.lp")))
        f.write("  - type: influxdb\n    url: http://127.0.0.1:1\n    db: ${TL_TEST_DB}\n"
                "    user: me\n    password: ${TL_TEST_SECRET}\n    timeout: soon\n")
    env = dict(os.environ, TL_TEST_SECRET="hunter2-very-secret", TL_TEST_DB="fromenv")
    p = run([tasklens, "check", "-c", cfg], env=env)
    check(p.returncode == 2 and "'soon' is not an integer" in p.stderr,
          "a type error next to a secret is reported: %r" % p.stderr.strip())
    with open(cfg) as f:
        text = f.read().replace("    timeout: soon\n", "")
    with open(cfg, "w") as f:
        f.write(text)
    p = run([tasklens, "check", "-c", cfg], env=env)
    out = p.stdout + p.stderr
    check("hunter2" not in out, "the password never appears in check's output")
    check("password set" in out and "fromenv" in out,
          "${VAR} substituted: database from the environment, password reported as set")
    check(p.returncode == 1 and "sinks[1] influxdb: not reachable" in out,
          "check on a wrong URL names the sink and says why (exit %d)" % p.returncode)
    p = run([tasklens, "run", "--help-config"])
    keys = ["checkpoint_dir", "checkpoint_interval", "flush_interval", "spool_drop_oldest", "token",
            "max_line", "recursive", "window", "alpha", "properties"]
    check(p.returncode == 0 and all(k in p.stdout for k in keys),
          "--help-config lists the settings of every table (%d lines)" % len(p.stdout.splitlines()))


def check_influx(tasklens, tmp):
    if not HAVE_INFLUXD:
        print("SKIP: influxd not installed; `check` against a server not tried")
        return
    with Influxd() as db:
        db.query("CREATE DATABASE there")
        cfg = os.path.join(tmp, "influx.yaml")
        for dbname, port, want_rc, want in (
                ("there", None, 0, "database there accepts writes"),
                ("missing", None, 1, "a write is refused (HTTP 404)"),
                ("there", free_port(), 1, "not reachable")):
            url = db.url if port is None else "http://127.0.0.1:%d" % port
            with open(cfg, "w") as f:
                f.write(GOOD.format(log=os.path.join(tmp, "x.log"), out=os.path.join(tmp, "x.lp")))
                f.write("  - type: influxdb\n    url: %s\n    db: %s\n    spool_dir: %s\n"
                        % (url, dbname, os.path.join(tmp, "spool")))
                f.write("checkpoint_dir: %s\n" % os.path.join(tmp, "ck"))
            p = run([tasklens, "check", "-c", cfg])
            check(p.returncode == want_rc and want in p.stdout,
                  "check, %s at %s: exit %d, says %r" % (dbname, "a wrong port" if port else "influxd",
                                                          p.returncode, want))
        rows = db.rows("SELECT count(*) FROM /.*/", "there")
        check(not rows, "check wrote nothing into the database")


def sighup_reload(tasklens, demo, tmp):
    log, out1, out2 = (os.path.join(tmp, n) for n in ("hup.log", "hup1.lp", "hup2.lp"))
    cfg = os.path.join(tmp, "hup.yaml")
    lines = open(demo, encoding="utf-8").read().splitlines(keepends=True)
    half = len(lines) // 2
    with open(log, "w") as f:
        f.writelines(lines[:half])
    with open(cfg, "w") as f:
        f.write(GOOD.format(log=log, out=out1) + "flush_interval: 100\naggregate: {window: 0}\n")
    p = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    with open(cfg, "w") as f:
        f.write(GOOD.format(log=log, out=out2) + "flush_interval: 100\naggregate: {window: 0}\n")
    p.send_signal(signal.SIGHUP)
    time.sleep(0.7)
    with open(log, "a") as f:
        f.writelines(lines[half:])
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    check(p.returncode == 0 and "configuration reloaded" in err,
          "SIGHUP: reloaded, exit %d (%s)" % (p.returncode, err.strip()[-200:]))
    t1 = [x for x in open(out1, encoding="utf-8") if x.startswith("task,")]
    t2 = [x for x in open(out2, encoding="utf-8") if x.startswith("task,")]
    ref = run([tasklens, "lines", demo]).stdout
    want = [x for x in ref.splitlines(keepends=True) if x.startswith("task,")]
    check(len(t1) > 0 and len(t2) > 0 and sorted(t1 + t2) == sorted(want),
          "SIGHUP: %d points before into the old sink, %d after into the new one, %d in all "
          "(want %d, none lost or repeated)" % (len(t1), len(t2), len(t1) + len(t2), len(want)))


def dir_source(tasklens, demo, tmp):
    d = os.path.join(tmp, "meta")
    os.makedirs(os.path.join(d, "sub"))
    out, cfg, ck = (os.path.join(tmp, n) for n in ("dir.lp", "dir.yaml", "dir-ck"))
    shutil.copy(demo, os.path.join(d, "a.log"))
    shutil.copy(demo, os.path.join(d, "sub", "b.log"))
    with open(os.path.join(d, ".hidden"), "w") as f:
        f.write("not read\n")
    with open(os.path.join(d, "sub", "notes.txt"), "w") as f:
        f.write("not a log: not matched\n")
    with open(cfg, "w") as f:
        f.write("sources:\n  - type: dir\n    path: %s\n    parser: wq\n    match: '*.log'\nsinks:\n  - type: file\n"
                "    path: %s\ncheckpoint_dir: %s\nflush_interval: 100\naggregate: {window: 0}\n" % (d, out, ck))
    per_file = sum(1 for x in run([tasklens, "lines", demo]).stdout.splitlines() if x.startswith("task,"))

    def tasks():
        return sum(1 for x in open(out, encoding="utf-8") if x.startswith("task,")) if os.path.exists(out) else 0

    p = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)  # files settle for 1 s before they are read
    n_two = tasks()
    shutil.copy(demo, os.path.join(d, "sub", "c.log.tmp"))
    os.rename(os.path.join(d, "sub", "c.log.tmp"), os.path.join(d, "sub", "c.log"))  # appears whole
    time.sleep(2.5)
    n_three = tasks()
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    check("notes.txt" not in err, "dir: names not matching `match` are not read")
    check(p.returncode == 0 and n_two == 2 * per_file and n_three == 3 * per_file,
          "dir: the two files at start (%d task points), then the new one (%d), want %d and %d (%s)"
          % (n_two, n_three, 2 * per_file, 3 * per_file, err.strip()[-200:]))
    # a restart reads nothing twice: the checkpoint remembers the files
    p = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=30)
    check(tasks() == 3 * per_file, "dir: after a restart no file is read again (%d task points)" % tasks())


def aggregate_change(tasklens, demo, tmp):
    """A reload cannot regroup sketches: it says the new aggregate settings
    apply at the next start, and that start applies them (the cumulative
    quantiles start over) instead of refusing the checkpoint."""
    ck, out1, out2, cfg = (os.path.join(tmp, n) for n in ("agg-ck", "agg1.lp", "agg2.lp", "agg.yaml"))
    log = os.path.join(tmp, "agg.log")
    lines = open(demo, encoding="utf-8").read().splitlines(keepends=True)
    with open(log, "w") as f:
        f.writelines(lines[:len(lines) // 2])

    def write(out, by):
        with open(cfg, "w") as f:
            f.write(GOOD.format(log=log, out=out) + "flush_interval: 100\ncheckpoint_dir: %s\n"
                    "aggregate: {window: 0, by: '%s'}\n" % (ck, by))
    write(out1, "source,category")
    p = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    write(out1, "source,host")
    p.send_signal(signal.SIGHUP)
    time.sleep(0.7)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    check(p.returncode == 0 and "apply at the next start" in err, "SIGHUP with a new aggregate.by: says it "
          "applies at the next start: %r" % err.strip()[-200:])
    write(out2, "source,host")
    p = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    with open(log, "a") as f:
        f.writelines(lines[len(lines) // 2:])
    time.sleep(1.5)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    lines = open(out2, encoding="utf-8").read().splitlines()
    q = [x for x in lines if x.startswith("task_quantiles,") and "window=cumulative" in x]
    check(p.returncode == 0 and "start over" in err and q and all(",host=" in x and "category=" not in x for x in q)
          and len([x for x in lines if x.startswith("task,")]) == sum(
              1 for x in run([tasklens, "lines", demo]).stdout.splitlines() if x.startswith("task,")) - sum(
              1 for x in open(out1, encoding="utf-8") if x.startswith("task,")),
          "the next start applies it: exit %d, %d cumulative points grouped by host, each task once: %r" % (
              p.returncode, len(q), err.strip()[-200:]))


def as_nobody(tasklens):
    """The command prefix that runs tasklens as nobody, so a file's mode can
    stop it: setpriv when root, nothing otherwise; None when nobody cannot
    reach the binary (a private build tree)."""
    if os.getuid() != 0:
        return []
    prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    if subprocess.run(prefix + [tasklens, "--version"], capture_output=True).returncode:
        return None
    return prefix


def nobody_config(tmp, d, name, path, extra=""):
    """A run configuration following `path` (a file or a glob) into a file
    sink, in directories nobody can reach: (output, config) paths."""
    out, cfg = os.path.join(tmp, name + ".lp"), os.path.join(tmp, name + ".yaml")
    for x in (tmp, d):
        os.chmod(x, 0o777)
    with open(cfg, "w") as f:
        f.write("sources:\n  - type: file\n    path: %s\n    parser: wq\nsinks:\n  - type: file\n"
                "    path: %s\nflush_interval: 100\naggregate: {window: 0}\n%s" % (path, out, extra))
    os.chmod(cfg, 0o644)
    return out, cfg


def dir_faults(tasklens, demo, tmp):
    """A directory source counts each file once: a symlink to a parent is no
    loop (it multiplied every file 17 times), a touched file is not read
    again (it was, whole), and an unreadable file is said once and read when
    it can be (it never was, even after chmod and a restart). Runs as nobody
    (setpriv) when root, so that a file's mode can stop it."""
    d = os.path.join(tmp, "dirf")
    os.makedirs(os.path.join(d, "sub"))
    for rel in ("a.log", "sub/b.log", "c.log"):
        shutil.copy(demo, os.path.join(d, rel))
    os.symlink("..", os.path.join(d, "sub", "up"))
    os.chmod(os.path.join(d, "c.log"), 0)
    out, ck, cfg = (os.path.join(tmp, n) for n in ("dirf.lp", "dirf-ck", "dirf.yaml"))
    for x in (tmp, d, os.path.join(d, "sub")):
        os.chmod(x, 0o777)
    with open(cfg, "w") as f:
        f.write("sources:\n  - type: dir\n    path: %s\n    parser: wq\n    match: '*.log'\nsinks:\n"
                "  - type: file\n    path: %s\ncheckpoint_dir: %s\nflush_interval: 100\naggregate: {window: 0}\n"
                % (d, out, ck))
    os.chmod(cfg, 0o644)
    as_user = as_nobody(tasklens)
    modes_bind = as_user is not None
    if not modes_bind:
        # run as root, for whom a mode stops nothing; the unreadable case then
        # waits for its chmod without being unreadable
        print("note: nobody cannot run %s; the unreadable-file part runs as root and checks less" % tasklens)
        as_user = []
    per_file = sum(1 for x in run([tasklens, "lines", demo]).stdout.splitlines() if x.startswith("task,"))

    def tasks():
        return sum(1 for x in open(out, encoding="utf-8") if x.startswith("task,")) if os.path.exists(out) else 0
    p = subprocess.Popen(as_user + [tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    time.sleep(7)  # past a rescan: the unreadable file is tried again, quietly
    first = tasks()
    os.chmod(os.path.join(d, "c.log"), 0o644)
    os.utime(os.path.join(d, "a.log"))  # touched: the same document
    time.sleep(7)
    second = tasks()
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    said = err.count("c.log")
    p = subprocess.Popen(as_user + [tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    time.sleep(2)
    p.send_signal(signal.SIGTERM)
    p.communicate(timeout=30)
    third = tasks()
    if not modes_bind:
        first, said = 2 * per_file, 1
    check(first == 2 * per_file and second == 3 * per_file and third == second and said == 1,
          "dir source with a symlink to its parent, an unreadable file and a touched one: %d task points "
          "(want %d: a and sub/b once), %d after the chmod and the touch (want %d), %d after a restart; "
          "the unreadable file said %d time(s)" % (first, 2 * per_file, second, 3 * per_file, third, said))


def glob_unreadable(tasklens, demo, tmp):
    """One unreadable file in a glob of followed files stops only itself: the
    others are read, it is said once and tried again, and read when it can be
    (it stopped the whole run: exit 1). As nobody when root (setpriv)."""
    d = os.path.join(tmp, "globu")
    os.makedirs(d)
    for n in ("a", "b", "c"):
        shutil.copy(demo, os.path.join(d, n + ".log"))
    os.chmod(os.path.join(d, "b.log"), 0)
    out, cfg = nobody_config(tmp, d, "globu", d + "/*.log")
    as_user = as_nobody(tasklens)
    if as_user is None:
        print("SKIP glob_unreadable: nobody cannot run %s here" % tasklens)
        return
    per_file = sum(1 for x in run([tasklens, "lines", demo]).stdout.splitlines() if x.startswith("task,"))

    def tasks():
        return sum(1 for x in open(out, encoding="utf-8") if x.startswith("task,")) if os.path.exists(out) else 0
    p = subprocess.Popen(as_user + [tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    time.sleep(7)  # past one retry
    first, alive = tasks(), p.poll() is None
    os.chmod(os.path.join(d, "b.log"), 0o644)
    time.sleep(7)
    second = tasks()
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    check(alive and first == 2 * per_file and second == 3 * per_file and err.count("b.log") == 2
          and "readable now" in err,
          "a glob with an unreadable file: the run goes on with %d task points (want %d), %d once it is "
          "readable (want %d); said once, then 'readable now': %r" % (first, 2 * per_file, second, 3 * per_file,
                                                                      err.strip()[-300:]))


def rotated_unreadable(tasklens, demo, tmp):
    """A followed log rotated into a file that cannot be read: said once,
    counted (self-metric open_errors), read when it can be -- it was a
    silent stall. As nobody when root (setpriv)."""
    d = os.path.join(tmp, "rotu")
    os.makedirs(d)
    lines = open(demo, encoding="utf-8").read().splitlines(keepends=True)
    half = len(lines) // 2
    log = os.path.join(d, "w.log")
    with open(log, "w") as f:
        f.writelines(lines[:half])
    os.chmod(log, 0o644)
    out, cfg = nobody_config(tmp, d, "rotu", log, "cumulative_interval: 1\n")
    as_user = as_nobody(tasklens)
    if as_user is None:
        print("SKIP rotated_unreadable: nobody cannot run %s here" % tasklens)
        return
    p = subprocess.Popen(as_user + [tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    time.sleep(1.5)
    os.rename(log, log + ".1")
    fd = os.open(log, os.O_CREAT | os.O_WRONLY, 0)  # unreadable from its first moment
    with os.fdopen(fd, "w") as f:
        f.writelines(lines[half:])
    time.sleep(3)
    os.chmod(log, 0o644)
    time.sleep(3)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=30)
    text = open(out, encoding="utf-8").read()
    tasks = sum(1 for x in text.splitlines() if x.startswith("task,"))
    want = sum(1 for x in run([tasklens, "lines", demo]).stdout.splitlines() if x.startswith("task,"))
    check(err.count("cannot be read") == 1 and "readable again" in err and "open_errors=" in text and tasks == want,
          "rotated into an unreadable file: said once, open_errors counted, then read: %d of %d task points %r" % (
              tasks, want, err.strip()[-300:]))


def same_input_other_name(tasklens, demo, tmp):
    """A checkpoint belongs to its inputs, not to how they are written: the log
    named a.log, then by its absolute path, then through a symlink, is one
    input -- nothing is read or counted twice (it doubled every cumulative
    count, saying only "restored")."""
    d = os.path.join(tmp, "names")
    os.makedirs(d)
    shutil.copy(demo, os.path.join(d, "a.log"))
    os.symlink(os.path.join(d, "a.log"), os.path.join(d, "link.log"))
    out, ck, cfg = (os.path.join(d, n) for n in ("o.lp", "ck", "c.yaml"))
    counts = []
    for name in ("a.log", os.path.join(d, "a.log"), "./link.log"):
        with open(cfg, "w") as f:
            f.write("sources:\n  - type: file\n    path: %s\n    parser: wq\nsinks:\n  - type: file\n    path: %s\n"
                    "checkpoint_dir: %s\nflush_interval: 100\naggregate: {window: 0}\n" % (name, out, ck))
        p = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True, cwd=d)
        time.sleep(1.5)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
        lines = open(out, encoding="utf-8").read().splitlines()
        tasks = sum(1 for x in lines if x.startswith("task,"))
        cum = [x for x in lines if x.startswith("task_quantiles,") and "window=cumulative" in x
               and "metric=wall_time_s" in x and "category=compute" in x]
        n = int(cum[-1].split("count=")[1].split(",")[0].rstrip("i")) if cum else -1
        counts.append((tasks, n, p.returncode, "not in the checkpoint" in err))
    want = sum(1 for x in run([tasklens, "lines", demo]).stdout.splitlines() if x.startswith("task,"))
    check(all(c == (want, counts[0][1], 0, False) for c in counts) and counts[0][1] > 0,
          "a.log, then its absolute path, then a symlink: one input (task points, cumulative count of "
          "compute, exit, 'new input' said): %s, want %d task points" % (counts, want))


def many_files(tasklens, demo, tmp):
    """A glob of 600 followed files (past the old 64-section checkpoint and
    512-source caps, and past a 1024-descriptor soft limit's half): every
    interval's checkpoint is written, and a restart reads nothing twice."""
    d, out, ck, cfg = (os.path.join(tmp, n) for n in ("many", "many.lp", "many-ck", "many.yaml"))
    os.makedirs(d)
    head = "".join(open(demo, encoding="utf-8").read().splitlines(keepends=True)[:300])
    for i in range(600):
        with open(os.path.join(d, "w%03d.log" % i), "w") as f:
            f.write(head)
    with open(cfg, "w") as f:
        f.write("sources:\n  - type: file\n    path: %s/*.log\n    parser: wq\nsinks:\n  - type: file\n"
                "    path: %s\ncheckpoint_dir: %s\ncheckpoint_interval: 1\nflush_interval: 100\n"
                "aggregate: {window: 0}\n" % (d, out, ck))
    p = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    time.sleep(4)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    first = sum(1 for x in open(out, encoding="utf-8") if x.startswith("task,"))
    c = run([tasklens, "check", "-c", cfg])
    check(p.returncode == 0 and "checkpoint failed" not in err and "601 sections" in c.stdout and first > 0,
          "600 followed files: checkpoints written (%s), %d task points, exit %d %s" % (
              [x.strip() for x in c.stdout.splitlines() if "checkpoint" in x], first, p.returncode,
              err.strip()[-200:]))
    p = subprocess.Popen([tasklens, "run", "-c", cfg], stderr=subprocess.PIPE, text=True)
    time.sleep(3)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    second = sum(1 for x in open(out, encoding="utf-8") if x.startswith("task,"))
    check(p.returncode == 0 and second == first, "a restart over the 600 files reads nothing twice (%d task "
          "points, then %d) %s" % (first, second, err.strip()[-200:]))


def unfollowable(tasklens, demo, tmp):
    """A `type: file` source that is compressed or not a regular file is
    refused with what to use instead, by `run` (exit 1 at once, where it used
    to read 0 of 207 tasks from a .gz and exit 0, or stall on a FIFO) and by
    `check`."""
    gz, zst, fifo = (os.path.join(tmp, n) for n in ("demo.log.gz", "demo.log.zst", "fifo"))
    with open(gz, "wb") as f:
        f.write(subprocess.run(["gzip", "-c", demo], stdout=subprocess.PIPE, check=True).stdout)
    with open(zst, "wb") as f:
        f.write(subprocess.run(["zstd", "-q", "-c", demo], stdout=subprocess.PIPE, check=True).stdout)
    os.mkfifo(fifo)
    for path, want in ((gz, "gzip-compressed"), (zst, "zstd-compressed"), (fifo, "not a regular file (a FIFO)")):
        cfg = os.path.join(tmp, "unf.yaml")
        with open(cfg, "w") as f:
            f.write(GOOD.format(log=path, out=os.path.join(tmp, "unf.lp")))
        r = run([tasklens, "run", "-c", cfg], timeout=10)
        c = run([tasklens, "check", "-c", cfg], timeout=10)
        check(r.returncode == 1 and want in r.stderr and ("type: dir" in r.stderr or "type: stdin" in r.stderr),
              "run with a %s file source: exit %d, %r" % (want, r.returncode, r.stderr.strip()[:160]))
        check(c.returncode == 1 and want in c.stdout, "check says so too: %r" % c.stdout.strip()[:200])


def main():
    tasklens, demo = sys.argv[1:3]
    with tempfile.TemporaryDirectory(prefix="tl-cfg-") as tmp:
        mistakes(tasklens, tmp)
        secrets_and_help(tasklens, tmp)
        check_influx(tasklens, tmp)
        sighup_reload(tasklens, demo, tmp)
        dir_source(tasklens, demo, tmp)
        unfollowable(tasklens, demo, tmp)
        aggregate_change(tasklens, demo, tmp)
        many_files(tasklens, demo, tmp)
        same_input_other_name(tasklens, demo, tmp)
        dir_faults(tasklens, demo, tmp)
        glob_unreadable(tasklens, demo, tmp)
        rotated_unreadable(tasklens, demo, tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
