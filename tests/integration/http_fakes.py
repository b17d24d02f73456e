"""Loopback HTTP stand-ins for the InfluxDB answers a real server will not
give on demand (a 429 with Retry-After, a 403, a 503 for as long as a test
wants). The tests that can use a real influxd use one."""
import gzip
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Server:
    """An InfluxDB write endpoint on 127.0.0.1 that records each request
    (time, path, auth header, gzip, body, the status it answered)."""

    def __init__(self, answers=(), refuse=None):
        self.answers = list(answers)  # (status, headers()) for the first requests, then 204
        self.refuse = refuse  # a 400 for every body that holds this text (2.x: nothing written)
        self.down = False  # while set: 503 to everything
        self.bad_request = None  # while set: 400 with this message to everything (2.x: the request, not a line)
        self.requests = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                with outer.lock:
                    status, headers = outer.answers.pop(0) if outer.answers else (204, dict)
                    if outer.refuse and outer.refuse in body.decode():
                        status, headers = 400, dict
                    if outer.down:
                        status, headers = 503, dict
                    bad_request = outer.bad_request
                    if bad_request:
                        status, headers = 400, dict
                    headers = headers()
                    outer.requests.append({"t": time.monotonic(), "path": self.path,
                                           "auth": self.headers.get("Authorization"),
                                           "gzip": self.headers.get("Content-Encoding") == "gzip",
                                           "body": body.decode(errors="replace"), "status": status})
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                msg = (('{"code":"invalid","message":"%s"}' % bad_request).encode() if bad_request else
                       b'{"code":"invalid","message":"unable to parse \'x\': invalid field format"}'
                       if status == 400 else
                       b'{"code":"too many requests","message":"slow down"}' if status >= 400 else b"")
                self.send_header("Content-Length", str(len(msg)))
                self.end_headers()
                self.wfile.write(msg)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


    def written(self):
        """The bodies InfluxDB would have stored (answered 2xx), joined."""
        with self.lock:
            return "".join(r["body"] for r in self.requests if r["status"] < 300)

    def refused(self):
        with self.lock:
            return sum(1 for r in self.requests if r["status"] >= 300)
