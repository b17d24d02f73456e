#!/usr/bin/env python3
"""A real Parsl run that leaves a monitoring.db for the `parsl` parser's
test (issue 33 point 4): a HighThroughputExecutor on localhost (two
workers), monitoring into SQLite with resource samples every second, and a
few apps: some that sleep, some that hold memory, one that always fails and
is retried once.

usage: parsl_workflow.py RUN_DIR   (with a Python that has parsl[monitoring])
"""
import os
import sys

import parsl
from parsl import python_app
from parsl.config import Config
from parsl.executors import HighThroughputExecutor
from parsl.monitoring.monitoring import MonitoringHub
from parsl.providers import LocalProvider


@python_app
def sleepy(seconds):
    import time
    time.sleep(seconds)
    return seconds


@python_app
def hungry(mb, seconds):
    import time
    block = bytearray(mb << 20)
    for i in range(0, len(block), 4096):  # touch every page: resident
        block[i] = 1
    time.sleep(seconds)
    return len(block)


@python_app
def flaky():
    raise ValueError("this app always fails")


def main():
    run_dir = os.path.abspath(sys.argv[1])
    os.makedirs(run_dir, exist_ok=True)
    db = os.path.join(run_dir, "monitoring.db")
    config = Config(
        executors=[HighThroughputExecutor(
            label="htex_local", address="127.0.0.1", max_workers_per_node=2, cores_per_worker=1,
            provider=LocalProvider(init_blocks=1, max_blocks=1))],
        monitoring=MonitoringHub(hub_address="127.0.0.1", resource_monitoring_interval=1,
                                 logging_endpoint="sqlite:///" + db),
        retries=1,
        run_dir=os.path.join(run_dir, "runinfo"),
    )
    with parsl.load(config):
        futures = [sleepy(1.5) for _ in range(3)] + [hungry(200, 3), hungry(100, 2.5)] + [flaky()]
        for f in futures:
            try:
                f.result()
            except Exception:
                pass
    print(db)


if __name__ == "__main__":
    main()
