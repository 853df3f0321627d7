#!/usr/bin/env python3
"""clear-server.py - a server in the middle that asks for the password in
clear text, for test/tls/check.

    clear-server.py PORT-FILE SOCKET LOG SECRET

Listens on a free TCP port of 127.0.0.1 (written to PORT-FILE once it
listens) and on the unix socket SOCKET.  To each client it speaks the
start of the MySQL protocol as a MariaDB server would: a handshake that
offers mysql_native_password and no TLS, then, whatever the client
answers, an authentication switch to mysql_clear_password, then an error
(access denied).  It appends one line per connection to LOG:

    tcp|unix password=yes|no switch_answer=yes|no

password=yes when SECRET was among the bytes the client sent, anywhere;
switch_answer=yes when the client answered the switch at all (a client
that refuses the plugin closes the connection instead).
"""
import os
import socket
import struct
import sys
import threading

port_file, sock_path, log_path, secret = sys.argv[1:5]
secret = secret.encode()
lock = threading.Lock()


def packet(seq, payload):
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


def read_packet(conn, seen):
    head = b""
    while len(head) < 4:
        b = conn.recv(4 - len(head))
        if not b:
            return None
        head += b
    n = head[0] | head[1] << 8 | head[2] << 16
    body = b""
    while len(body) < n:
        b = conn.recv(n - len(body))
        if not b:
            return None
        body += b
    seen.append(head + body)
    return head[3], body


def handshake():
    caps = (0x1 | 0x4 | 0x8 | 0x200 | 0x2000 | 0x8000 | 0x20000 |
            0x80000)
    scramble = b"abcdefghijklmnopqrst"
    return (b"\x0a" + b"5.5.5-10.11.0-clear-server\x00" +
            struct.pack("<I", 7) + scramble[:8] + b"\x00" +
            struct.pack("<H", caps & 0xFFFF) + b"\x21" +
            struct.pack("<H", 2) + struct.pack("<H", caps >> 16) +
            bytes([21]) + b"\x00" * 10 + scramble[8:] + b"\x00" +
            b"mysql_native_password\x00")


def serve(conn, kind):
    seen = []
    answered = False
    try:
        conn.settimeout(30)
        conn.sendall(packet(0, handshake()))
        got = read_packet(conn, seen)
        if got is not None:
            conn.sendall(packet(got[0] + 1, b"\xfe" +
                                b"mysql_clear_password\x00"))
            got = read_packet(conn, seen)
            if got is not None:
                answered = True
                msg = b"Access denied for user (clear-server)"
                conn.sendall(packet(got[0] + 1, b"\xff" +
                                    struct.pack("<H", 1045) +
                                    b"#28000" + msg))
    except OSError:
        pass
    finally:
        conn.close()
    with lock, open(log_path, "a") as log:
        log.write("%s password=%s switch_answer=%s\n" % (
            kind, "yes" if secret in b"".join(seen) else "no",
            "yes" if answered else "no"))


def listen(srv, kind):
    while True:
        conn, _ = srv.accept()
        threading.Thread(target=serve, args=(conn, kind),
                         daemon=True).start()


tcp = socket.socket()
tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
tcp.bind(("127.0.0.1", 0))
tcp.listen(8)
unix = socket.socket(socket.AF_UNIX)
unix.bind(sock_path)
unix.listen(8)
threading.Thread(target=listen, args=(unix, "unix"), daemon=True).start()
with open(port_file + ".tmp", "w") as f:
    f.write("%d\n" % tcp.getsockname()[1])
os.rename(port_file + ".tmp", port_file)
listen(tcp, "tcp")
