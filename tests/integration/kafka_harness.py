"""A real Apache Kafka broker for tests: KRaft, one node (broker and
controller), on 127.0.0.1 with free ports and a temp log dir, started and
stopped by the test.

The jars come from Maven Central (tests/kafka/pom.xml: kafka_2.13 and its
runtime dependencies) through `mvn dependency:copy-dependencies`, once per
machine, into $TL_KAFKA_CACHE (default ~/.cache/tasklens/kafka-<version>).

    with Kafka() as k:
        k.produce("topic", [b"line"], key=b"m1")
"""
import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
POM = os.path.join(HERE, "..", "kafka", "pom.xml")
VERSION = "3.9.1"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def jars():
    cache = os.environ.get("TL_KAFKA_CACHE") or os.path.expanduser("~/.cache/tasklens/kafka-" + VERSION)
    jdir = os.path.join(cache, "jars")
    if not os.path.exists(os.path.join(cache, "complete")):
        os.makedirs(cache, exist_ok=True)
        print("kafka harness: fetching the broker jars from Maven Central into", cache, flush=True)
        r = subprocess.run(["mvn", "-q", "-B", "-f", POM, "dependency:copy-dependencies",
                            "-DoutputDirectory=" + jdir, "-DincludeScope=runtime"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode:
            raise RuntimeError("mvn failed:\n" + r.stdout[-3000:])
        open(os.path.join(cache, "complete"), "w").close()
    return jdir


class Kafka:
    def __init__(self, partitions=3, sasl_password=None):
        """sasl_password: also a SASL_PLAINTEXT listener (mechanism PLAIN,
        user admin with this password) at self.sasl_bootstrap."""
        self.dir = tempfile.mkdtemp(prefix="tl-kafka-")
        self.port = free_port()
        self.cport = free_port()
        self.bootstrap = "127.0.0.1:%d" % self.port
        self.sasl_password = sasl_password
        self.sport = free_port() if sasl_password else None
        self.sasl_bootstrap = "127.0.0.1:%d" % self.sport if sasl_password else None
        self.partitions = partitions
        self.proc = None

    def __enter__(self):
        jdir = jars()
        props = os.path.join(self.dir, "server.properties")
        sasl_l = ",SASL_PLAINTEXT://127.0.0.1:%d" % self.sport if self.sport else ""
        sasl_map = ",SASL_PLAINTEXT:SASL_PLAINTEXT" if self.sport else ""
        sasl_conf = ("sasl.enabled.mechanisms=PLAIN\nlistener.name.sasl_plaintext.plain.sasl.jaas.config="
                     "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" "
                     "password=\"%s\" user_admin=\"%s\";\n" % (self.sasl_password, self.sasl_password)
                     if self.sport else "")
        with open(props, "w") as f:
            f.write(sasl_conf + f"""process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:{self.cport}
listeners=PLAINTEXT://127.0.0.1:{self.port},CONTROLLER://127.0.0.1:{self.cport}{sasl_l}
advertised.listeners=PLAINTEXT://127.0.0.1:{self.port}{sasl_l}
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT{sasl_map}
inter.broker.listener.name=PLAINTEXT
log.dirs={self.dir}/logs
num.partitions={self.partitions}
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
log.flush.interval.messages=1
""")
        log4j = os.path.join(self.dir, "log4j.properties")
        with open(log4j, "w") as f:
            f.write("log4j.rootLogger=WARN, f\nlog4j.appender.f=org.apache.log4j.FileAppender\n"
                    f"log4j.appender.f.File={self.dir}/broker.log\n"
                    "log4j.appender.f.layout=org.apache.log4j.PatternLayout\n"
                    "log4j.appender.f.layout.ConversionPattern=%d %p %c: %m%n\n")
        java = ["java", "-Xmx512m", "-Xms128m", "-XX:+UseSerialGC", "-Dlog4j.configuration=file:" + log4j,
                "-cp", os.path.join(jdir, "*")]
        # Kafka's own Uuid.randomUuid() redraws ids that start with '-': the
        # storage tool's argument parser reads such an id as an option.
        cluster = "-"
        while cluster.startswith("-"):
            cluster = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        r = subprocess.run(java + ["kafka.tools.StorageTool", "format", "-t", cluster, "-c", props],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode:
            raise RuntimeError("kafka storage format failed:\n" + r.stdout[-3000:])
        self.java, self.props = java, props
        return self._start()

    def _start(self):
        self.out = open(os.path.join(self.dir, "stdout.log"), "a")
        self.proc = subprocess.Popen(self.java + ["kafka.Kafka", self.props], stdout=self.out,
                                     stderr=subprocess.STDOUT)
        deadline = time.time() + 90
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("kafka exited: " + open(os.path.join(self.dir, "stdout.log")).read()[-3000:])
            r = subprocess.run(["kcat", "-b", self.bootstrap, "-L", "-m", "2"],
                               capture_output=True, text=True)
            if r.returncode == 0 and "1 brokers" in r.stdout:
                return self
            time.sleep(0.5)
        self.stop()
        raise RuntimeError("kafka did not answer on " + self.bootstrap)

    def produce(self, topic, messages, key=None, compression=None, partition=None, headers=None):
        """messages: bytes values, sent with one kcat run (key and headers apply to all)."""
        # idempotent: a produce request whose answer is lost in a broker
        # restart is retried without writing its messages twice
        cmd = ["kcat", "-P", "-b", self.bootstrap, "-t", topic, "-K", "\x1e", "-D", "\x1d",
               "-X", "linger.ms=5", "-X", "enable.idempotence=true"]
        for name, value in (headers or {}).items():
            cmd += ["-H", "%s=%s" % (name, value)]
        if compression:
            cmd += ["-z", compression]
        if partition is not None:
            cmd += ["-p", str(partition)]
        k = (key or b"") + b"\x1e"
        data = b"".join(k + m + b"\x1d" for m in messages)
        subprocess.run(cmd, input=data, check=True, stderr=subprocess.PIPE)

    def produce_binary(self, topic, messages, key=b"", partition=None):
        """messages of any bytes (no delimiter can stand in them): each
        written to a file, and kcat sends a file as one message."""
        with tempfile.TemporaryDirectory(prefix="tl-kcat-") as d:
            paths = []
            for i, m in enumerate(messages):
                paths.append(os.path.join(d, "%06d" % i))
                with open(paths[-1], "wb") as f:
                    f.write(m)
            cmd = ["kcat", "-P", "-b", self.bootstrap, "-t", topic, "-k", key.decode(),
                   "-X", "enable.idempotence=true"]
            if partition is not None:
                cmd += ["-p", str(partition)]
            subprocess.run(cmd + paths, check=True, stderr=subprocess.PIPE)

    def consume(self, topic):
        """Every message of topic, as (key, partition, offset, value) in
        offset order per partition (values decoded as UTF-8)."""
        out = subprocess.run(["kcat", "-C", "-b", self.bootstrap, "-t", topic, "-e", "-q", "-J"],
                             capture_output=True, text=True, check=True).stdout
        msgs = [json.loads(line) for line in out.splitlines() if line.strip()]
        return sorted(((m["key"], m["partition"], m["offset"], m["payload"]) for m in msgs),
                      key=lambda t: (t[1], t[2]))

    def restart(self, down_s=2.0):
        """Stops the broker (SIGTERM, as an operator would) and starts it again
        on the same ports and log dir after down_s seconds."""
        self._halt()
        time.sleep(down_s)
        return self._start()

    def _halt(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        shutil.rmtree(self.dir, ignore_errors=True)

    def __exit__(self, *exc):
        self.stop()
