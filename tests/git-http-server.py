#!/usr/bin/env python3
"""Smart HTTP for git on 127.0.0.1, for the tests: git http-backend as CGI.

Serves every repository under --root (GIT_HTTP_EXPORT_ALL) on an ephemeral
port, printed alone on the first line of stdout. Exits by itself after
--max-seconds, or on SIGTERM/SIGINT, so a test that dies leaves nothing
running. Requests are logged to stderr. With --auth USER:PASSWORD every
request needs those Basic credentials, as a private repository's does.
With --silent it reads each request and never answers, as a hung server.
"""
import argparse
import base64
import http.server
import os
import subprocess
import sys
import threading
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ beside the tests
from testserver import exit_on_signals  # noqa: E402

MAX_BODY = 64 << 20


def read_chunked(rfile):
    body = bytearray()
    while True:
        size = int(rfile.readline().split(b";")[0].strip() or b"0", 16)
        if size == 0:
            rfile.readline()
            return bytes(body)
        if len(body) + size > MAX_BODY:
            raise ValueError("request body too large")
        body += rfile.read(size)
        rfile.readline()


class Handler(http.server.BaseHTTPRequestHandler):
    root = None
    auth = None
    silent = False
    # Set by nothing: a silent answer waits on it until the server exits.
    never = threading.Event()

    def do_GET(self):
        self.cgi()

    def do_POST(self):
        self.cgi()

    def cgi(self):
        if self.silent:
            self.log_message("silent: %s %s", self.command, self.path)
            self.never.wait()
            return
        if self.auth and self.headers.get("Authorization") != self.auth:
            # Basic authentication, as a private repository's host asks it.
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        url = urllib.parse.urlsplit(self.path)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = read_chunked(self.rfile)
        else:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self.send_error(413)
                return
            body = self.rfile.read(length) if length else b""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": self.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "GATEWAY_INTERFACE": "CGI/1.1",
            "SERVER_PROTOCOL": self.request_version,
            "REQUEST_METHOD": self.command,
            "PATH_INFO": urllib.parse.unquote(url.path),
            "QUERY_STRING": url.query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": self.client_address[0],
        }
        for name in ("Content-Encoding", "Git-Protocol"):
            if name in self.headers:
                env["HTTP_" + name.upper().replace("-", "_")] = self.headers[name]
        proc = subprocess.run(["git", "http-backend"], input=body, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if proc.stderr:
            sys.stderr.write(proc.stderr.decode(errors="replace"))
        out = proc.stdout
        ends = [(i, n) for i, n in ((out.find(b"\r\n\r\n"), 4), (out.find(b"\n\n"), 2))
                if i >= 0]
        if not ends:
            self.send_error(500, "http-backend exited %d without headers"
                            % proc.returncode)
            return
        sep, skip = min(ends)
        status, headers = 200, []
        for line in out[:sep].decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        payload = out[sep + skip:]
        self.send_response(status)
        for name, value in headers:
            if name.lower() != "content-length":
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", required=True)
    ap.add_argument("--max-seconds", type=int, default=120)
    ap.add_argument("--auth", metavar="USER:PASSWORD",
                    help="answer 401 to any request without these Basic credentials")
    ap.add_argument("--silent", action="store_true",
                    help="read each request and never answer")
    args = ap.parse_args()

    exit_on_signals(args.max_seconds)
    Handler.root = os.path.abspath(args.root)
    Handler.silent = args.silent
    if args.auth:
        Handler.auth = "Basic " + base64.b64encode(args.auth.encode()).decode()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
