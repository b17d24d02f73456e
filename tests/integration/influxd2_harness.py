"""A real InfluxDB 2.7 for tests: the influxd that scripts/build-influxd2.sh
builds once per machine, started on 127.0.0.1 with a free port and temp
bolt/engine dirs, set up through /api/v2/setup (user, org, bucket, an
operator token), stopped and removed by the test.

    with Influxd2() as db:
        db.write(b"m f=1 1\\n")
        tables = db.flux('from(bucket: "tl") |> range(start: 0)')
        db.dbrp()                       # InfluxQL on the bucket as database "tl"
        rows = db.influxql('SELECT count(f) FROM m')

binary(): the path, or None when it was not built (tests then SKIP and say
how to build it).
"""
import csv
import io
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from influxd_harness import ServerProcess

VERSION = "2.7.12"


def binary():
    p = os.environ.get("TL_INFLUXD2") or os.path.join(
        os.environ.get("TL_INFLUXD2_CACHE") or os.path.expanduser("~/.cache/tasklens/influxdb-" + VERSION),
        "influxd")
    return p if os.access(p, os.X_OK) else None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HTTPError(Exception):
    def __init__(self, status, body):
        super().__init__("HTTP %d: %s" % (status, body[:300]))
        self.status = status
        self.body = body


class Influxd2(ServerProcess):
    stop_timeout = 20

    def __init__(self, org="tasklens", bucket="tl", token="tl-test-operator-token-0123456789"):
        self.bin = binary()
        if not self.bin:
            raise RuntimeError("influxd 2.x not built: bash scripts/build-influxd2.sh")
        self.dir = tempfile.mkdtemp(prefix="tl-influxd2-")
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.org, self.bucket, self.token = org, bucket, token
        self.org_id = self.bucket_id = None
        self.proc = None

    def start(self, timeout=60):
        self.launch(timeout)
        doc = self.request("POST", "/api/v2/setup", {
            "username": "tasklens", "password": "tasklens-password", "org": self.org,
            "bucket": self.bucket, "token": self.token, "retentionPeriodSeconds": 0}, auth=False)
        self.org_id = doc["org"]["id"]
        self.bucket_id = doc["bucket"]["id"]
        return self

    def launch(self, timeout=60):
        """Starts influxd on this instance's port and dirs; returns when /health answers."""
        self.log = open(os.path.join(self.dir, "influxd.log"), "ab")
        self.proc = subprocess.Popen(
            [self.bin, "--bolt-path", os.path.join(self.dir, "influxd.bolt"),
             "--engine-path", os.path.join(self.dir, "engine"),
             "--sqlite-path", os.path.join(self.dir, "influxd.sqlite"),
             "--http-bind-address", "127.0.0.1:%d" % self.port,
             "--reporting-disabled", "--ui-disabled", "--log-level", "error"],
            stdout=self.log, stderr=self.log)
        deadline = time.time() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError("influxd 2.x exited: see " + self.log.name)
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            if time.time() > deadline:
                raise RuntimeError("influxd 2.x did not answer /health")
            time.sleep(0.2)

    # ------------------------------------------------------------ HTTP
    def request(self, method, path, body=None, auth=True, raw=False, headers=None, token=None):
        data = None
        hdrs = dict(headers or {})
        if body is not None:
            if isinstance(body, (bytes, str)):
                data = body.encode() if isinstance(body, str) else body
            else:
                data = json.dumps(body).encode()
                hdrs.setdefault("Content-Type", "application/json")
        if auth:
            hdrs["Authorization"] = "Token " + (token or self.token)
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=hdrs)
        try:
            with urllib.request.urlopen(req, timeout=1800) as r:
                out = r.read()
        except urllib.error.HTTPError as e:
            raise HTTPError(e.code, e.read().decode(errors="replace")) from None
        if raw:
            return out
        return json.loads(out) if out else None

    def write(self, body, bucket=None, precision="ns"):
        q = urllib.parse.urlencode({"org": self.org, "bucket": bucket or self.bucket, "precision": precision})
        return self.request("POST", "/api/v2/write?" + q, body, raw=True)

    def create_bucket(self, name, retention_s=0):
        rules = [{"type": "expire", "everySeconds": retention_s}] if retention_s else []
        doc = self.request("POST", "/api/v2/buckets", {"orgID": self.org_id, "name": name, "retentionRules": rules})
        return doc["id"]

    def bucket_id_of(self, name):
        doc = self.request("GET", "/api/v2/buckets?" + urllib.parse.urlencode({"name": name, "orgID": self.org_id}))
        return doc["buckets"][0]["id"]

    def create_token(self, description="tasklens test"):
        """An all-access token of its own (to revoke in a test)."""
        perms = [{"action": a, "resource": {"type": t, "orgID": self.org_id}}
                 for t in ("buckets", "orgs") for a in ("read", "write")]
        doc = self.request("POST", "/api/v2/authorizations",
                           {"orgID": self.org_id, "description": description, "permissions": perms})
        return doc["id"], doc["token"]

    def flux(self, query):
        """Runs a Flux query; returns a list of tables, each a list of row dicts
        (values as strings, as the CSV carries them)."""
        text = self.request("POST", "/api/v2/query?" + urllib.parse.urlencode({"org": self.org}),
                            {"query": query, "type": "flux",
                             "dialect": {"header": True, "annotations": [], "delimiter": ","}},
                            raw=True).decode()
        tables = {}
        for bi, block in enumerate(text.replace("\r\n", "\n").split("\n\n")):
            if not block.strip():
                continue
            rows = list(csv.reader(io.StringIO(block)))
            head = rows[0]
            for r in rows[1:]:
                if not r or len(r) != len(head):
                    continue
                d = dict(zip(head, r))
                if "error" in d and "reference" in d:
                    raise RuntimeError("flux error: " + d["error"])
                tables.setdefault((bi, d.get("result"), d.get("table")), []).append(d)
        return list(tables.values())

    def dbrp(self, database=None, bucket=None):
        """Maps database (default: the bucket's name) / autogen to the bucket for InfluxQL."""
        bid = self.bucket_id if bucket is None else self.bucket_id_of(bucket)
        self.request("POST", "/api/v2/dbrps", {"orgID": self.org_id, "bucketID": bid,
                                                "database": database or bucket or self.bucket,
                                                "retention_policy": "autogen", "default": True})

    def influxql(self, q, db=None, epoch=None):
        params = {"q": q, "db": db or self.bucket}
        if epoch:
            params["epoch"] = epoch
        doc = self.request("POST", "/query", urllib.parse.urlencode(params),
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
        for res in doc.get("results", []):
            if "error" in res:
                raise RuntimeError(res["error"])
        return doc
