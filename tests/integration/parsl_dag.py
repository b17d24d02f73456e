#!/usr/bin/env python3
"""A real Parsl run with dependencies, for `tasklens path`'s test (issue 59
point 3): a HighThroughputExecutor on localhost with two workers, so ready
tasks wait for one; a fan-out of `prepare` tasks, `align` tasks that each
take a `prepare` future, a `merge` that takes every `align`, one straggling
`align`, one app that fails once and is retried (its second try succeeds),
and a `report` after the merge.

usage: parsl_dag.py RUN_DIR   (with a Python that has parsl[monitoring])
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
def prepare(i, seconds):
    import time
    time.sleep(seconds)
    return i


@python_app
def align(x, seconds):
    import time
    time.sleep(seconds)
    return x * 2


@python_app
def flaky_once(marker, seconds):
    """Fails on its first try (it leaves a marker file), succeeds on the
    second."""
    import os
    import time
    time.sleep(seconds)
    if not os.path.exists(marker):
        open(marker, "w").close()
        raise RuntimeError("first try fails")
    return 1


@python_app
def merge(*parts):
    import time
    time.sleep(0.5)
    return sum(parts)


@python_app
def report(total):
    import time
    time.sleep(0.3)
    return total


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
        preps = [prepare(i, 0.4) for i in range(4)]
        aligns = [align(p, 2.5 if i == 2 else 0.6) for i, p in enumerate(preps)]
        flaky = flaky_once(os.path.join(run_dir, "flaky-marker"), 0.3)
        total = merge(*aligns, flaky)
        report(total).result()


if __name__ == "__main__":
    main()
