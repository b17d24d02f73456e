#!/usr/bin/env python3
"""`check` says why (issue 46 point 11), against a real Kafka 3.9 broker
with a SASL/PLAIN listener (the project's harness):

1. A wrong SASL password: `check` fails naming librdkafka's own reason
   ("Authentication failed: Invalid username or password"), not only
   "Broker transport failure" as for a dead broker; neither password is
   shown. The right password passes. A dead broker still reads as no answer.
2. A configuration file others may read that holds a secret as it is:
   `check` (and --config-only) says so with the key and line, never the
   value; with ${VAR} or mode 600 it says nothing.

usage: check_reasons.py TASKLENS DEMO_LOG
"""
import os
import socket
import stat
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kafka_harness  # noqa: E402
from checks import check, finish  # noqa: E402

TL, DEMO = sys.argv[1:3]
RIGHT, WRONG = "r1ght-%d" % os.getpid(), "wr0ng-%d" % os.getpid()


def config(path, brokers, password):
    with open(path, "w") as f:
        f.write(f"""sources:
  - type: kafka
    brokers: {brokers}
    topics: t
    group: g
    parser: wq
    properties:
      security.protocol: SASL_PLAINTEXT
      sasl.mechanism: PLAIN
      sasl.username: admin
      sasl.password: ${{TL_TEST_SASL}}
sinks:
  - type: file
    path: {os.path.dirname(path)}/out.lp
""")
    os.chmod(path, 0o600)
    return subprocess.run([TL, "check", "-c", path], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, TL_TEST_SASL=password))


def sasl(tmp):
    with kafka_harness.Kafka(partitions=1, sasl_password=RIGHT) as k:
        cfg = os.path.join(tmp, "k.yaml")
        r = config(cfg, k.sasl_bootstrap, WRONG)
        out = r.stdout + r.stderr
        check(r.returncode == 1 and "Invalid username or password" in out and WRONG not in out and RIGHT not in out,
              "a wrong SASL password: check fails with librdkafka's reason, no password shown: %s"
              % [l for l in out.splitlines() if "FAIL" in l][:1])
        r = config(cfg, k.sasl_bootstrap, RIGHT)
        check(r.returncode == 0 and RIGHT not in r.stdout + r.stderr,
              "the right password: check passes (exit %d)" % r.returncode)
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        dead = "127.0.0.1:%d" % s.getsockname()[1]
    r = config(os.path.join(tmp, "k.yaml"), dead, WRONG)
    out = r.stdout + r.stderr
    check(r.returncode == 1 and "no answer from" in out and "refused the connection" not in out,
          "a dead broker still reads as no answer: %s" % [l for l in out.splitlines() if "FAIL" in l][:1])


def literal(tmp):
    path = os.path.join(tmp, "lit.yaml")
    body = ("sources:\n  - type: file\n    path: %s\nsinks:\n  - type: influxdb\n    url: http://127.0.0.1:9\n"
            "    db: d\n    password: \"%s\"\n" % (DEMO, RIGHT))
    with open(path, "w") as f:
        f.write(body)
    os.chmod(path, 0o644)
    r = subprocess.run([TL, "check", "--config-only", "-c", path], capture_output=True, text=True)
    check("readable by others" in r.stdout and "`password` at line 8" in r.stdout and RIGHT not in r.stdout,
          "a literal secret in a file others may read is said, key and line, not the value: %s"
          % [l for l in r.stdout.splitlines() if "readable" in l][:1])
    os.chmod(path, 0o600)
    r2 = subprocess.run([TL, "check", "--config-only", "-c", path], capture_output=True, text=True)
    with open(path, "w") as f:
        f.write(body.replace('"%s"' % RIGHT, "${INFLUX_PASSWORD}"))
    os.chmod(path, 0o644)
    r3 = subprocess.run([TL, "check", "--config-only", "-c", path], capture_output=True, text=True)
    check("readable by others" not in r2.stdout + r3.stdout,
          "nothing said for mode 600, nor for ${VAR} in a readable file")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        literal(tmp)
        sasl(tmp)
    return finish()


if __name__ == "__main__":
    sys.exit(main())
