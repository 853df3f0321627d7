#!/usr/bin/env python3
"""http-server.py - the receiving end for jobrun's http handler tests.

A real HTTP/1.1 server (keep-alive, optional TLS) on 127.0.0.1, ephemeral
port, that answers as the request path tells it, so one server serves every
case of a test file:

  /ok                       200 "ok"
  /status/CODE              CODE; ?body=TEXT  ?retry_after=VALUE (raw
                            Retry-After)  ?date=VALUE (Date header; "none"
                            drops it)  ?location=URL (Location header)
  /slow?seconds=N           sleeps N seconds, then 200 "slow"
  /held?file=PATH           200 "held answer": the status line, headers
                            and "held " at once, then makes PATH.sent;
                            the rest once PATH exists
  /drop                     closes the connection without an answer
  /junk?hex=HEX             writes the bytes HEX (no status line: not
                            HTTP at all) and closes the connection
  /trailer/CODE             CODE with a chunked body ?body=TEXT and the
                            trailer "Retry-After: ?retry_after=VALUE"
                            after it
  /interim?code=N           an interim 1xx answer N first, then 200 "ok"
  /big?bytes=N              200 (or &code=CODE) with N bytes of body that
                            start with "begin " (&fill=TEXT repeats TEXT)
  /repeat/CODE              CODE with the body HEAD + FILL x TIMES + TAIL,
                            from ?head= &fill= &times= &tail= (for bodies
                            too long for a URL)
  /raw/CODE                 CODE with the reason phrase ?reason_hex=HEX
                            (any bytes, as hex) x ?reason_times= (1) and
                            the body HEAD_HEX +
                            FILL_HEX x TIMES (?head_hex= &fill_hex= &times=):
                            bytes no well-behaved server would send
  /page/CODE                CODE with a web framework's HTML error page
  /echo-headers             500 with a debug page that shows the request's
                            headers as they came ("Name: value" lines) and
                            the bearer token of Authorization alone, after
                            ?pad=N bytes of filler, or as many as the job's
                            payload says ({"pad": N}) (as framework error
                            pages do, secrets included)

Every request is logged, when it arrives, as one JSON line: method, path,
headers (names lower-cased, values as UTF-8), body (as UTF-8, invalid
bytes replaced), body_b64 (the body's exact bytes, base64), conn (a
counter of accepted TCP connections, so keep-alive reuse is visible).  The port is
written to --port-file once the server listens.
"""
import argparse, base64, itertools, json, os, signal, ssl, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

conn_ids = itertools.count(1)
log_lock = threading.Lock()


# A web framework's error page: kilobytes of style around a title and a
# sentence (what /page/CODE answers, as text/html).
ERROR_PAGE = ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
              "<title>Server Error</title>\n<style>" +
              "body { font-family: sans-serif; color: #333 }\n" * 200 +
              "</style></head>\n<body><div class=\"flex\"><h1>500</h1>\n"
              "<p>SQLSTATE[HY000] [2002] Connection refused</p>"
              "<script>window.debug = {\"trace\": []};</script>"
              "</div></body></html>\n").encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # no 40 ms stall between headers and body

    def setup(self):
        self.conn_id = next(conn_ids)
        if isinstance(self.request, ssl.SSLSocket):
            # A slow client (valgrind on a loaded machine) may take
            # many seconds over its handshake.
            self.request.settimeout(120)
            self.request.do_handshake()  # here, not in the accept loop
            self.request.settimeout(None)
        super().setup()

    def log_message(self, fmt, *args):
        pass  # the JSON log is the record

    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data, size = b"", None
            while size != 0:
                size = int(self.rfile.readline().split(b";")[0], 16)
                data += self.rfile.read(size) + self.rfile.readline()[:0]
            return data
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def log_request_json(self, body):
        headers = {}
        for name, value in self.headers.items():
            value = value.encode("latin-1", "replace").decode("utf-8", "replace")
            name = name.lower()
            headers[name] = headers[name] + ", " + value if name in headers else value
        line = json.dumps({"method": self.command, "path": self.path,
                           "headers": headers, "conn": self.conn_id,
                           "body": body.decode("utf-8", "replace"),
                           "body_b64": base64.b64encode(body).decode()})
        with log_lock, open(self.server.log_file, "a") as f:
            f.write(line + "\n")

    def answer(self, code, body=b"", date=None, extra=(), content_type="text/plain; charset=utf-8"):
        self.send_response_only(code)
        if date != "none":
            self.send_header("Date", date or self.date_time_string())
        for name, value in extra:
            self.send_header(name, value)
        has_body = code >= 200 and code not in (204, 304)
        if has_body:
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if has_body and self.command != "HEAD":
            self.wfile.write(body)

    def answer_raw(self, code, reason, body):
        self.wfile.write(b"HTTP/1.1 %d %s\r\nContent-Length: %d\r\n\r\n" % (
            code, reason, len(body)) + body)

    def handle_any(self):
        body = self.read_body()
        self.log_request_json(body)
        url = urlsplit(self.path)
        q = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        parts = url.path.strip("/").split("/")
        try:
            if url.path == "/ok":
                self.answer(200, b"ok")
            elif parts[0] == "status" and len(parts) == 2:
                extra = [(name, q[arg]) for arg, name in
                         (("retry_after", "Retry-After"), ("location", "Location")) if arg in q]
                self.answer(int(parts[1]), q.get("body", "").encode(), q.get("date"), extra)
            elif url.path == "/slow":
                time.sleep(float(q.get("seconds", "5")))
                self.answer(200, b"slow")
            elif url.path == "/held":
                self.send_held(q["file"])
            elif url.path == "/drop":
                self.close_connection = True
            elif url.path == "/junk":
                self.wfile.write(bytes.fromhex(q.get("hex", "")))
                self.close_connection = True
            elif parts[0] == "trailer" and len(parts) == 2:
                self.send_trailer(int(parts[1]), q.get("body", "").encode(),
                                  q.get("retry_after", ""))
            elif url.path == "/interim":
                code = int(q.get("code", "102"))
                self.wfile.write(b"HTTP/1.1 %d %s\r\n\r\n" % (
                    code, self.responses.get(code, ("Interim",))[0].encode()))
                self.wfile.flush()
                self.answer(200, b"ok")
            elif url.path == "/big":
                self.send_big(int(q.get("code", "200")), int(q.get("bytes", "0")),
                              q.get("fill", "0123456789abcdef\n").encode())
            elif parts[0] == "repeat" and len(parts) == 2:
                self.answer(int(parts[1]), (q.get("head", "") +
                            q.get("fill", "") * int(q.get("times", "0")) +
                            q.get("tail", "")).encode())
            elif parts[0] == "raw" and len(parts) == 2:
                self.answer_raw(int(parts[1]), bytes.fromhex(q.get("reason_hex", "")) *
                                int(q.get("reason_times", "1")),
                                bytes.fromhex(q.get("head_hex", "")) +
                                bytes.fromhex(q.get("fill_hex", "")) * int(q.get("times", "0")))
            elif url.path == "/echo-headers":
                self.answer(500, self.debug_page(body, q))
            elif parts[0] == "page" and len(parts) == 2:
                self.answer(int(parts[1]), ERROR_PAGE, content_type="text/html; charset=UTF-8")
            else:
                self.answer(404, b"no such test path")
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True  # the client gave up: fine

    def debug_page(self, body, q):
        try:
            pad = int(q.get("pad") or json.loads(body)["payload"]["pad"])
        except (ValueError, KeyError, TypeError):
            pad = 0
        page = "Internal Server Error\n" + "." * pad + "\nRequest headers:\n"
        for name, value in self.headers.items():
            page += "%s: %s\n" % (name, value)
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Bearer "):
            page += "token: %s\n" % auth[7:]
        return page.encode("latin-1", "replace")

    def send_held(self, path):
        # The answer begun (status line, headers, its first bytes), then
        # PATH.sent made; the rest of the body once PATH exists.
        body = b"held answer"
        self.send_response_only(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body[:5])
        self.wfile.flush()
        open(path + ".sent", "w").close()
        deadline = time.time() + 300
        while not os.path.exists(path) and time.time() < deadline:
            time.sleep(0.01)
        self.wfile.write(body[5:])

    def send_trailer(self, code, body, retry_after):
        # Headers after the body: a chunked body, then a trailer.
        self.send_response(code)
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Trailer", "Retry-After")
        self.end_headers()
        if body:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(body), body))
        self.wfile.write(b"0\r\nRetry-After: %s\r\n\r\n" % retry_after.encode())

    def send_big(self, code, size, fill):
        self.send_response(code)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        chunk = fill * max(1, 65536 // len(fill))  # whole copies of fill
        data, sent = b"begin ", 0
        while sent < size:
            n = min(len(data), size - sent)
            self.wfile.write(data[:n])
            sent, data = sent + n, chunk

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = handle_any


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # dropped clients and failed TLS handshakes are part of the tests


def main():
    ap = argparse.ArgumentParser()
    for opt in ("--port-file", "--log", "--cert", "--key"):
        ap.add_argument(opt, required=opt in ("--port-file", "--log"))
    args = ap.parse_args()

    srv = Server(("127.0.0.1", 0), Handler)
    srv.log_file = args.log
    open(args.log, "a").close()
    if args.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True,
                                     do_handshake_on_connect=False)

    def on_term(signum, frame):
        raise SystemExit(0)  # leaves serve_forever; threads are daemons
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_term)

    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, args.port_file)  # readers never see half a number
    try:
        srv.serve_forever()
    finally:
        srv.server_close()


if __name__ == "__main__":
    main()
