#!/usr/bin/env python3
"""sql-proxy.py - a unix-socket relay to the test server that loses COMMITs.

  sql-proxy.py --listen PATH --server SOCKET --log FILE --when W
               [--lose N] [--armed-by FILE]

Relays every client connection made to PATH to the server's SOCKET, byte
for byte, and reads the client's packets (the MariaDB protocol: a 3-byte
length, a sequence number, the payload) to find its text queries
(COM_QUERY).  The first N COMMITs (1), counted over all connections and
only once FILE exists if --armed-by is given, are lost on the way, as a
network or a host would lose them:

  --when before   the COMMIT never reaches the server; both sockets are
                  closed, so the server rolls the transaction back
  --when after    the COMMIT reaches the server and is answered, and the
                  answer is dropped; both sockets are closed, so the
                  client cannot know that the server kept it

Each lost COMMIT is logged as a line "lost COMMIT (W)" before its
sockets are closed, so a client that has seen its connection lost finds
the line.  Prepared statements and their results pass as they are.  A
connection over a unix socket carries no TLS, so every packet reads.
"""
import argparse, os, socket, threading

lock = threading.Lock()
COM_QUERY = 3


def note(path, line):
    with lock, open(path, "a") as f:
        f.write(line + "\n")


class Relay:
    def __init__(self, client, args, budget):
        self.client, self.args, self.budget = client, args, budget
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.connect(args.server)
        self.drop_answer = threading.Event()

    def close(self):
        for s in (self.client, self.server):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def lose(self):
        """Whether this COMMIT is one of the N to lose."""
        armed = self.args.armed_by
        if armed is not None and not os.path.exists(armed):
            return False
        with lock:
            if self.budget[0] <= 0:
                return False
            self.budget[0] -= 1
            return True

    def client_to_server(self):
        buf = b""
        try:
            while True:
                data = self.client.recv(65536)
                if not data:
                    break
                buf += data
                # Whole packets only: a query's text is judged whole.
                while len(buf) >= 4:
                    size = int.from_bytes(buf[:3], "little")
                    if len(buf) < 4 + size:
                        break
                    packet, buf = buf[:4 + size], buf[4 + size:]
                    payload = packet[4:]
                    if (payload[:1] == bytes([COM_QUERY]) and
                            payload[1:].strip().upper() == b"COMMIT" and
                            self.lose()):
                        if self.args.when == "before":
                            note(self.args.log, "lost COMMIT (before)")
                            self.close()
                            return
                        self.drop_answer.set()
                    self.server.sendall(packet)
        except OSError:
            pass
        self.close()

    def server_to_client(self):
        try:
            while True:
                data = self.server.recv(65536)
                if not data:
                    break
                if self.drop_answer.is_set():
                    # The COMMIT's answer (an OK packet): the server has
                    # kept the transaction; the client never hears it.
                    note(self.args.log, "lost COMMIT (after)")
                    self.close()
                    return
                self.client.sendall(data)
        except OSError:
            pass
        self.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--listen", required=True)
    ap.add_argument("--server", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--lose", type=int, default=1)
    ap.add_argument("--when", choices=("before", "after"), required=True)
    ap.add_argument("--armed-by")
    args = ap.parse_args()
    budget = [args.lose]
    tmp = args.listen + ".tmp"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(tmp)
    srv.listen(64)
    os.rename(tmp, args.listen)  # clients never find it before it listens
    while True:
        client, _ = srv.accept()
        relay = Relay(client, args, budget)
        for fn in (relay.client_to_server, relay.server_to_client):
            threading.Thread(target=fn, daemon=True).start()


if __name__ == "__main__":
    main()
