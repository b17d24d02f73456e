#!/usr/bin/env python3
"""`report` at many categories (issue 55 point 6): 30,000 categories (a
generated Nextflow trace) make a page of a few MB: the summary and the
failures each show the top 20, one "others" row with the sums of all the
rest, the next 1,000 collapsed, and a note saying how many more are left
off and which command lists them (the page used to hold every category:
58 MB here, 1.6 GB at a million). So do the comparison with a baseline,
the energy table (codecarbon projects) and the workflows (a directory of
trace files). Time against `summary` is measured in bench/RESULTS.md
(bench/category_scale.py), not here.

usage: report_scale.py TASKLENS
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

TL = sys.argv[1]
N = 30000
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("TL_SHARED_DIR") or os.path.join(os.path.dirname(REPO), "shared")
SPARK = os.path.join(SHARED, "spark", "samples", "local-1795570335358")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        trace = os.path.join(tmp, "trace.txt")
        with open(trace, "w") as f:
            f.write("task_id\thash\tname\tstatus\texit\tsubmit\tduration\trealtime\t%cpu\tpeak_rss\tprocess\n")
            for i in range(N):
                f.write("%d\taa/%06x\tP%d (1)\t%s\t%d\t2020-03-26 13:32:23.000\t%dms\t%dms\t95.0%%\t%d MB\tP%d\n"
                        % (i + 1, i, i, "FAILED" if i % 3 == 0 else "COMPLETED", 1 if i % 3 == 0 else 0,
                           1000 + i % 977, 900 + i % 977, 100 + i % 500, i))
        page = os.path.join(tmp, "run.html")
        r = subprocess.run([TL, "report", "-q", "-o", page, trace], capture_output=True, text=True, timeout=600)
        if not check(r.returncode == 0, "report writes the page (%s)" % r.stderr.strip()[-200:]):
            return finish()
        html = open(page, encoding="utf-8").read()
        size = os.path.getsize(page)
        a, b = html.find('<section id="tasks"'), html.find("</section>", html.find('<section id="tasks"'))
        tasks = len(html[a:b].encode()) if a >= 0 else 0
        check(a >= 0 and size - tasks < 5e6,
              "the page of %d categories is %.1f MB (under 5) beside the task table of its %d attempts (%.1f MB)"
              % (N, (size - tasks) / 1e6, N, tasks / 1e6))
        more = re.search(r'<p class="note" data-more="(\d+)">(.*?)</p>', html[:html.find('id="inputs"')])
        check(more and int(more.group(1)) == N - 10 and "tasklens advise</code> lists every one" in more.group(2),
              "the first screen ranks 10 and says the %d others are in `tasklens advise`, not that the page "
              "draws them (%s)" % (N - 10, more.group(0)[:160] if more else None))
        for table, cmd in (("summary", "tasklens summary --format csv"), ("failures", "tasklens summary --format json")):
            at = html.find('data-table="%s"' % table)
            end = html.find("</details>", at)
            part = html[at:end]
            others = re.search(r'data-others="(\d+)"', part)
            rows = part.count('<tr data-g="')
            left = re.search(r'data-left-out="(\d+)"', part)
            total = N  # the failures table lists every category, most failures first
            check(others and int(others.group(1)) == total - 20,
                  "%s: one others row for the %d categories past the top 20 (%s)"
                  % (table, total - 20, others.group(1) if others else None))
            check(rows == 20 + 1000, "%s: 20 rows and 1,000 collapsed (%d)" % (table, rows))
            check(left and int(left.group(1)) == total - 1020 and cmd in part[left.start():left.start() + 400],
                  "%s: %d more said to be left off, with the command that lists them" % (table, total - 1020))
        baseline_checks(tmp, trace, page)
        energy_checks(tmp)
        workflow_checks(tmp)
        stage_checks(tmp)
    return finish()


def section_of(what, args, page, start):
    """`report ARGS -o PAGE`, and the page's section from `start` to the end
    of its collapsed part; None (said) when the report fails."""
    r = subprocess.run([TL, "report", "-q", "-o", page] + args, capture_output=True, text=True, timeout=600)
    if not check(r.returncode == 0, "%s: report writes the page (%s)" % (what, r.stderr.strip()[-200:])):
        return None, None
    html = open(page, encoding="utf-8").read()
    at = html.find(start)
    return html, html[at:html.find("</details>", at)]


def collapsed_checks(what, rows, part, total, cmd, noun=""):
    """rows drawn: the top 20 and 1,000 collapsed; the rest of total said to
    be left off, with cmd, the command that lists them."""
    left = re.search(r'data-left-out="(\d+)">[^<]*%s' % noun, part)
    check(rows == 20 + 1000, "%s: 20 %s and 1,000 collapsed (%d)" % (what, "categories" if what == "baseline"
                                                                       else "rows", rows))
    check(left and int(left.group(1)) == total - 1020 and cmd in part[left.start():],
          "%s: %d more said to be left off, with the command that lists them" % (what, total - 1020))


def stage_checks(tmp):
    """The real Spark sample's first stage, copied 1,100 times under as many
    call sites: the stage table shows the 20 with most run time, 1,000
    collapsed, and says how many it leaves off."""
    if not os.path.exists(SPARK):
        print("skip: stages: %s is absent (../shared not beside the repository)" % SPARK)
        return
    events = [json.loads(line) for line in open(SPARK)]
    kept = ("SparkListenerLogStart", "SparkListenerResourceProfileAdded", "SparkListenerBlockManagerAdded",
            "SparkListenerEnvironmentUpdate", "SparkListenerApplicationStart", "SparkListenerExecutorAdded")
    stage = ("SparkListenerStageSubmitted", "SparkListenerTaskStart", "SparkListenerTaskEnd",
             "SparkListenerStageCompleted")
    first = [e for e in events if e["Event"] in stage and
             (e.get("Stage ID") == 0 or e.get("Stage Info", {}).get("Stage ID") == 0)]
    log = os.path.join(tmp, "spark-1100")
    run_ms = {}
    with open(log, "w") as f:
        def put(e):
            f.write(json.dumps(e, separators=(",", ":")) + "\n")
        for e in events:
            if e["Event"] in kept:
                put(e)
        for k in range(1100):
            name = "stage%d at job.py:%d" % (k, k)
            for e in first:
                e = json.loads(json.dumps(e))
                if "Stage Info" in e:
                    e["Stage Info"].update({"Stage ID": 1000 + k, "Stage Name": name})
                else:
                    e["Stage ID"] = 1000 + k
                    e["Task Info"]["Task ID"] += 100000 + 10 * k
                    if e["Event"] == "SparkListenerTaskEnd":  # run time apart per stage
                        e["Task Metrics"]["Executor Run Time"] = 1000 + (k * 389) % 1100
                        run_ms[name] = run_ms.get(name, 0) + e["Task Metrics"]["Executor Run Time"]
                put(e)
        for e in events:
            if e["Event"] == "SparkListenerApplicationEnd":
                put(e)
    html, part = section_of("stages", [log], os.path.join(tmp, "spark.html"), '<h2 id="stages"')
    if html is None:
        return
    top = re.findall(r'<tr><td class="n"[^>]*>([^<]*)</td>', part[:part.find("</table>")])
    want = sorted(run_ms, key=lambda k: -run_ms[k])[:20]
    check(top == want, "stages: the 20 with most run time first (%s vs %s)" % (top[:3], want[:3]))
    collapsed_checks("stages", part.count('data-k="skew"'), part, 1100, "tasklens summary", "stages")


def workflow_checks(tmp):
    """A directory of 1,100 trace files is 1,100 workflows: the table shows
    the 20 that hold the most wall-hours, 1,000 collapsed, and says the 80
    it leaves off are in `tasklens summary --by source,workflow`."""
    d = os.path.join(tmp, "runs")
    os.mkdir(d)
    hours = {}
    for w in range(1100):
        realtime = 900 + (w * 389) % 1100
        hours["run%04d_trace.txt" % w] = realtime
        with open(os.path.join(d, "run%04d_trace.txt" % w), "w") as f:
            f.write("task_id\thash\tname\tstatus\texit\tsubmit\tduration\trealtime\t%cpu\tpeak_rss\tprocess\n")
            f.write("1\taa/%06x\tP (1)\tCOMPLETED\t0\t2020-03-26 13:32:23.000\t%dms\t%dms\t95.0%%\t10 MB\tP\n"
                    % (w, realtime + 100, realtime))
    html, part = section_of("workflows", [d], os.path.join(tmp, "runs.html"), '<h2 id="workflows"')
    if html is None:
        return
    first = re.findall(r'<tr data-wf="nextflow\|([^"]*)"', part[:part.find("</table>")])
    want = sorted(hours, key=lambda k: -hours[k])[:20]
    check(first == want, "workflows: the 20 that hold the most wall-hours first (%s vs %s)" % (first[:3], want[:3]))
    collapsed_checks("workflows", part.count("<tr data-wf="), part, 1100, "--by source,workflow", "workflows")
    note = re.search(r'<p class="note" data-runs="(\d+)">([^<]*)</p>', html)
    drawn = html.count('<section class="run"')
    heads = re.findall(r'<section class="run"[^>]*><h3>[^<]*<small>\(([^)]*)\)</small>', html)
    check(note and "1,100 runs" in note.group(2) and "the %d with most tasks are drawn apart" % drawn in note.group(2)
          and int(note.group(1)) == drawn and heads and set(heads) == {"1 task"},
          "timeline: says the 1,100 runs and which of them it draws (%s; %d drawn, heads %s)"
          % (note.group(2) if note else None, drawn, sorted(set(heads))))


def energy_checks(tmp):
    """codecarbon rows of 30,000 projects: the energy table shows the 20 that
    used most (as their energy_consumed says), 1,000 collapsed, and leaves
    the rest to `tasklens energy` (it held every one)."""
    csv = os.path.join(tmp, "emissions.csv")
    kwh = {}
    with open(csv, "w") as f:
        f.write("timestamp,project_name,run_id,experiment_id,duration,emissions,emissions_rate,cpu_power,"
                "gpu_power,ram_power,cpu_energy,gpu_energy,ram_energy,energy_consumed\n")
        for i in range(N):
            e = (i * 7919 % 30011 + 1) * 1e-7
            kwh["proj%d" % i] = e
            f.write("2026-11-26T14:%02d:%02d,proj%d,%08x-0000-4000-8000-000000000000,"
                    "5b0fa12a-3dd7-45bb-9766-cc326314d9f1,%.3f,%.6e,1e-7,4.0,0.0,20.0,%.6e,0.0,%.6e,%r\n"
                    % (i // 60 % 60, i % 60, i, i, 2.0 + i % 10, e * 0.056, e / 3, e * 2 / 3, e))
    html, part = section_of("energy", [csv], os.path.join(tmp, "energy.html"), 'data-table="energy"')
    if html is None:
        return
    first = part[:part.find("</table>")]
    names = re.findall(r'<tr><td class="n"[^>]*>([^<]*)</td>', first)
    joules = [float(x) for x in re.findall(r'data-k="measured_j" data-v="([^"]+)"', first)]
    want = sorted(kwh, key=lambda k: -kwh[k])[:20]
    check(names == want and all(abs(j - kwh[k] * 3.6e6) <= 1e-9 * j for j, k in zip(joules, want)),
          "energy: the 20 projects that used most, by their energy_consumed, first (%s vs %s)"
          % (names[:3], want[:3]))
    collapsed_checks("energy", len(re.findall(r'data-k="measured_j"', part)), part, N, "tasklens energy")


def baseline_checks(tmp, trace, page):
    """--baseline at 30,000 categories: the comparison shows the top 20 and
    1,000 collapsed, says how many more it leaves off, and counts the
    categories that shifted over all of them (the table held every one:
    40 MB at 20,000)."""
    base = os.path.join(tmp, "base.txt")
    changed = 0
    with open(trace) as f, open(base, "w") as g:
        for i, line in enumerate(f):
            c = line.split("\t")
            if i and (i - 1) % 7 == 0:  # a third of the time in the baseline: this run took 3x
                c[6], c[7] = "%dms" % (int(c[6][:-2]) // 3), "%dms" % (int(c[7][:-2]) // 3)
                changed += 1
            g.write("\t".join(c))
    html, part = section_of("baseline", ["--baseline", base, trace], page, '<h2 id="baseline"')
    if html is None:
        return
    collapsed_checks("baseline", len(set(re.findall(r'<tr data-g="([^"]*)"', part))), part, N,
                     "tasklens summary --format csv")
    shifted = re.search(r'data-shifted="(\d+)" data-missing="(\d+)"', part)
    check(shifted and (int(shifted.group(1)), int(shifted.group(2))) == (changed, 0),
          "baseline: %d of %d categories counted as shifted (the ones made 3x slower), none missing (%s)"
          % (changed, N, shifted.groups() if shifted else None))
    details = part[part.find("<details>"):]
    collapsed = re.findall(r'<tr data-g="([^"]*)">(?:(?!</tr>).)*</tr>', details)
    marked = set(re.findall(r'<tr data-g="([^"]*)">(?:(?!</tr>).)*data-hl="1"', details))
    check(collapsed and set(collapsed) == marked,
          "baseline: the 1,000 collapsed are those that shifted first (%d of %d marked)"
          % (len(marked), len(set(collapsed))))
    check(len(part.encode()) < 3e6, "baseline: its section is %.1f MB (under 3)" % (len(part.encode()) / 1e6))


if __name__ == "__main__":
    sys.exit(main())
