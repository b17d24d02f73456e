#!/usr/bin/env python3
"""Names are data on a terminal (issue 55 point 1): in a real terminal
(tmux), names holding OSC 52 (set the clipboard), OSC 8 (a link), CSI
(clear the screen, move the cursor, colour), a bidi override and a bare
carriage return are shown as visible escapes by

1. `summary` (its table on stdout),
2. `top --once` (its frame),
3. the messages on stderr: a rejected line in a file whose name holds the
   same sequences (file:line), and advise's note on a name it left out;
   the tables of advise, energy and plan,
4. `check` on a configuration whose source path holds them;

and the terminal acted on none: tmux's clipboard (its paste buffers, with
set-clipboard on) stays empty, no hyperlink was opened, the screen was not
cleared (the first line printed is still there) and every sequence shows
as text (\\x1b]52;...).

usage: names_terminal.py TASKLENS
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

TL = sys.argv[1]
SOCK = "tasklens-names-%d" % os.getpid()
OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"           # base64 of "rm -rf ~\n"
OSC8 = "\x1b]8;;https://example.invalid/\x1b\\link\x1b]8;;\x1b\\"
NAMES = ["clip" + OSC52 + "board", "wipe\x1b[2J\x1b[Hscreen", "link" + OSC8, "bidi\u202eevil",
         "cr\rforged", "red\x1b[31mtext", "ok_name"]


def tmux(*args, check_rc=True):
    return subprocess.run(["tmux", "-L", SOCK] + list(args), capture_output=True, text=True, check=check_rc)


def write_inputs(tmp):
    d = os.path.join(tmp, "in")
    os.makedirs(d)
    for i, n in enumerate(NAMES):
        s = {"command": "x", "category": n, "host": "node" + OSC52, "exit_status": 0,
             "exit_type": "normal", "start": [1700000000 + i, "s"], "end": [1700000010 + i, "s"],
             "wall_time": [10 + i, "s"], "cpu_time": [5, "s"], "memory": [100 + i, "MB"],
             "cores": [1, "cores"]}
        with open(os.path.join(d, "t%d.summary" % i), "w") as f:
            json.dump(s, f)
    bad = os.path.join(tmp, "bad" + OSC52 + "\x1b[2J.summary")
    with open(bad, "w") as f:  # a summary cut short: rejected with file:line
        f.write('{\n  "executable_type":"dynamic",\n  "monitor_version":"8.0.0.",\n  "command":"x",\n'
                '  "exit_status":0,\n  "start":\n    [\n')
    # top reads what runs and ends from a trace
    trace = os.path.join(tmp, "trace.txt")
    with open(trace, "w") as f:
        f.write("task_id\thash\tnative_id\tname\tstatus\texit\tsubmit\tduration\trealtime\t%cpu\t"
                "peak_rss\tcpus\tmemory\tprocess\n")
        for i, n in enumerate(NAMES):
            f.write("%d\taa/%04d\t1\tp (1)\tCOMPLETED\t0\t2020-03-26 13:32:%02d.000\t30s\t30s\t95.0%%\t"
                    "300 MB\t1\t2 GB\t%s\n" % (i + 1, i, i, n.replace("\t", " ")))
    return d, bad, trace


def run_in_terminal(tmp, script):
    """Runs script in a tmux pane (200x60, set-clipboard on); the screen and
    the paste buffers when it is done."""
    done = os.path.join(tmp, "done")
    sh = os.path.join(tmp, "run.sh")
    with open(sh, "w") as f:
        f.write("echo FIRST-LINE\n" + script + "\ntouch %s\nsleep 600\n" % done)
    tmux("-f", "/dev/null", "new-session", "-d", "-s", "n", "-x", "200", "-y", "60", "bash --norc " + sh)
    tmux("set-option", "-g", "set-clipboard", "on")
    tmux("set-option", "-g", "history-limit", "5000")
    for _ in range(300):
        if os.path.exists(done):
            break
        time.sleep(0.1)
    time.sleep(0.3)
    screen = tmux("capture-pane", "-p", "-S", "-", "-t", "n").stdout
    buffers = tmux("list-buffers", check_rc=False).stdout
    tmux("kill-server", check_rc=False)
    return os.path.exists(done), screen, buffers


def main():
    if not shutil.which("tmux"):
        print("SKIP: tmux is absent")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        d, bad, trace = write_inputs(tmp)
        cfg = os.path.join(tmp, "run.yaml")
        with open(cfg, "w") as f:
            f.write("sources:\n  - type: file\n    path: %s\nsinks:\n  - type: file\n    path: \"-\"\n"
                    % json.dumps(os.path.join(tmp, "src" + OSC52 + ".log")))
        q = lambda p: "'" + p.replace("'", "'\\''") + "'"  # noqa: E731
        script = "\n".join([
            "%s summary %s %s" % (TL, q(d), q(bad)),
            "echo SUMMARY-DONE",
            "%s summary --by host %s" % (TL, q(d)),
            "%s top --once %s" % (TL, q(trace)),
            "echo TOP-DONE",
            "%s advise --emit snakemake -o %s %s" % (TL, q(os.path.join(tmp, "p.yaml")), q(d)),
            "%s advise %s" % (TL, q(d)),
            "%s energy %s" % (TL, q(d)),
            "%s plan --node cores=8,mem=16G %s" % (TL, q(d)),
            "%s check -c %s" % (TL, q(cfg)),
            "echo CHECK-DONE",
        ])
        finished, screen, buffers = run_in_terminal(tmp, script)
        check(finished, "the commands ran to the end in the terminal")
        check(buffers.strip() == "", "the terminal's clipboard is untouched (tmux buffers: %r)" % buffers[:200])
        check(screen.lstrip().startswith("FIRST-LINE"), "the screen was never cleared: the first line "
              "printed is still at the top (%r)" % screen[:200])
        for marker in ("SUMMARY-DONE", "TOP-DONE", "CHECK-DONE"):
            check(marker in screen, "%s is on the screen" % marker)
        summary = screen[:screen.find("SUMMARY-DONE")]
        check("category=clip\\x1b]52;c;cm0gLXJmIH4K\\x07board" in summary,
              "summary: an OSC 52 name shows as text (\\x1b]52;...\\x07)")
        check("category=wipe\\x1b[2J\\x1b[Hscreen" in summary, "summary: a CSI name shows as text")
        check("category=link\\x1b]8;;https://example.invalid/\\x1b\\link" in summary,
              "summary: an OSC 8 link shows as text")
        check("category=bidi\\u202eevil" in summary, "summary: a bidi override shows as \\u202e")
        check("category=cr\\rforged" in summary, "summary: a carriage return shows as \\r")
        check("bad\\x1b]52;c;cm0gLXJmIH4K\\x07\\x1b[2J.summary:1: input ends inside a record" in summary,
              "stderr: a rejected line's file:line shows its name's escapes as text")
        check("host=node\\x1b]52;" in screen, "summary --by host: a host name shows as text")
        top = screen[screen.find("SUMMARY-DONE"):screen.find("TOP-DONE")]
        check("clip\\x1b]52" in top or "clip\\x1b" in top, "top: an OSC 52 name shows as text (%r)"
              % [ln for ln in top.splitlines() if "clip" in ln][:1])
        check("bidi\\u202e" in top, "top: a bidi override shows as \\u202e")
        rest = screen[screen.find("TOP-DONE"):]
        check("left out of the file: 'clip\\x1b]52" in rest or "left out of the file: 'bidi\\u202e" in rest
              or "left out of the file: 'cr\\r" in rest or "left out of the file: 'link" in rest
              or "left out of the file: 'red\\x1b" in rest or "left out of the file: 'wipe\\x1b" in rest,
              "advise: the name it left out is said in visible escapes")
        check("src\\x1b]52;c;cm0gLXJmIH4K\\x07.log" in rest, "check: a source path shows as text")
        check("category=clip\\x1b]52;" in rest, "advise: its table shows an OSC 52 name as text")
        check(rest.count("clip\\x1b]52;") >= 3, "advise, energy and plan tables show the name as text "
              "(%d)" % rest.count("clip\\x1b]52;"))
        check("\x1b" not in screen and "\u202e" not in screen, "nothing on the screen is a raw ESC or "
              "bidi override")
    return finish()


if __name__ == "__main__":
    sys.exit(main())
