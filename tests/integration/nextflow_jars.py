"""Nextflow's jars from Maven Central (tests/nextflow/pom.xml), fetched once
per machine into ~/.cache/tasklens, for the tests that read what tasklens
writes for Nextflow with Nextflow's own code (its ConfigParser)."""
import os
import re
import subprocess

NF_VERSION = "24.10.0"
CACHE = os.path.expanduser("~/.cache/tasklens")

# Prints, as JSON, every withName selector of a config and its settings as
# Nextflow reads them (memory in bytes, time in ms), and the config's other
# top-level keys, so a test sees any key a name managed to add. A closure
# (memory = { ... task.attempt }, errorStrategy = { ... task.exitStatus })
# is run as Nextflow runs it, with a task of each attempt up to maxRetries + 1
# (memory_by_attempt) and of exit statuses 137 and 1 (errorStrategy_by_exit).
READ_CONFIG = r"""
import nextflow.config.ConfigParser
import nextflow.util.MemoryUnit
import nextflow.util.Duration
import groovy.json.JsonOutput
def cfg = new ConfigParser().parse(new File(args[0]))
def run = { vv, attempt, exit ->
    if (!(vv instanceof Closure)) return vv
    def c = vv.clone()
    c.delegate = [task: [attempt: attempt, exitStatus: exit]]
    c.resolveStrategy = Closure.DELEGATE_FIRST
    c.call()
}
def out = [:]
def other = []
cfg.each { k, v -> if (k != 'process') other << k.toString() }
cfg.process.each { k, v ->
    if (!k.startsWith('withName:')) { other << 'process.' + k; return }
    def m = [:]
    def tries = (v.maxRetries ?: 0) + 1
    v.each { kk, vv ->
        def first = run(vv, 1, 0)
        m[kk] = kk == 'memory' ? new MemoryUnit(first.toString()).toBytes()
              : kk == 'time' ? Duration.of(first.toString()).toMillis() : first
        if (kk == 'memory' && vv instanceof Closure)
            m.memory_by_attempt = (1..tries).collect { new MemoryUnit(run(vv, it, 137).toString()).toBytes() }
        if (kk == 'errorStrategy' && vv instanceof Closure)
            m.errorStrategy_by_exit = ['137': run(vv, 1, 137), '1': run(vv, 1, 1)]
    }
    out[k.substring(9)] = m
}
println JsonOutput.toJson([selectors: out, other: other])
"""


def jars(repo):
    """The directory of Nextflow's jars, or None (said) when Maven cannot
    fetch them."""
    jdir = os.path.join(CACHE, "nextflow-" + NF_VERSION, "jars")
    done = os.path.join(CACHE, "nextflow-" + NF_VERSION, "complete")
    if not os.path.exists(done):
        os.makedirs(jdir, exist_ok=True)
        print("fetching Nextflow %s's jars from Maven Central into %s" % (NF_VERSION, jdir), flush=True)
        r = subprocess.run(["mvn", "-q", "-B", "-f", os.path.join(repo, "tests", "nextflow", "pom.xml"),
                            "dependency:copy-dependencies", "-DoutputDirectory=" + jdir,
                            "-DincludeScope=runtime"], capture_output=True, text=True)
        if r.returncode:
            print("SKIP part: mvn could not fetch Nextflow: " + (r.stdout + r.stderr)[-400:])
            return None
        open(done, "w").close()
    return jdir


def read_config(jdir, tmp, cfg):
    """Nextflow's ConfigParser on cfg: (returncode, parsed JSON or None, stdout+stderr)."""
    import json
    script = os.path.join(tmp, "read.groovy")
    with open(script, "w") as f:
        f.write(READ_CONFIG)
    r = subprocess.run(["java", "-cp", os.path.join(jdir, "*"), "groovy.ui.GroovyMain", script, cfg],
                       capture_output=True, text=True, timeout=300)
    got = None
    if r.returncode == 0 and r.stdout.strip():
        got = json.loads(r.stdout.strip().splitlines()[-1])
    return r.returncode, got, r.stdout + r.stderr


# "Caused by:" then a Java class: Nextflow's own exception, not a task's
# (a task's failure reads "Process exceeded running time limit", "Process
# terminated with an error exit status"). Seen twice on loaded CI runs:
# java.lang.IndexOutOfBoundsException while the local executor submitted.
NEXTFLOW_INSIDE = re.compile(r"Caused by:\s*\n\s*java\.")


def launch(jdir, work, args, outputs=(), timeout=600):
    """`nextflow run main.nf ARGS` in work with the jars of jdir. When
    Nextflow fails inside (its own Java exception, not a task's), the
    workflow was not run as written: said, its outputs removed, and run
    once more. Returns the CompletedProcess."""
    env = dict(os.environ, NXF_HOME=os.path.join(work, "home"), NXF_ANSI_LOG="false")
    cmd = ["java", "-cp", os.path.join(jdir, "*"), "nextflow.cli.Launcher", "run", "main.nf"] + list(args)
    r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
    said = r.stdout + r.stderr
    if r.returncode != 0 and NEXTFLOW_INSIDE.search(said):
        cause = NEXTFLOW_INSIDE.search(said)
        print("note: Nextflow failed inside (%s): the run is made once more"
              % said[cause.end() - 5:].splitlines()[0], flush=True)
        for p in outputs:
            if os.path.exists(os.path.join(work, p)):
                os.remove(os.path.join(work, p))
        r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
    return r
