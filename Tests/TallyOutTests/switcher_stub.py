#!/usr/bin/python3
"""A switcher's HTTP API as far as a node's tally client reads it, for SwitcherTallyClientTests.

  switcher_stub.py PORTFILE TOKEN   serves on 127.0.0.1 (a free port, written to PORTFILE) until killed:
    GET /api/v1/status   {"program": {"tally": {"pc2/cam1": "program", "pc2/cam2": "preview"}}}
    GET /api/v1/events   the event stream's header and one tally event, then nothing at all (no
                         keepalive): a switcher gone silent
  Both need `Authorization: Bearer TOKEN`; otherwise 401, as the switcher answers. Each request's path
  and answer is appended to PORTFILE.requests, a line each.
"""
import socket
import sys
import threading
import time

STATUS = b'{"program": {"tally": {"pc2/cam1": "program", "pc2/cam2": "preview"}}}\n'
EVENT = b'data: {"event": {"kind": "tally", "details": {"program": "pc2/cam1", "preview": "pc2/cam2"}}}\n\n'


def note(path, code):
    with LOCK, open(REQUESTS, "a") as out:
        out.write("%s %d\n" % (path, code))


def serve(conn, token):
    with conn:
        request = b""
        while b"\r\n\r\n" not in request:
            chunk = conn.recv(4096)
            if not chunk:
                return
            request += chunk
        head = request.split(b"\r\n\r\n")[0].decode()
        path = head.split(" ")[1]
        if "authorization: bearer " + token.lower() not in head.lower():
            conn.sendall(b"HTTP/1.0 401 Unauthorized\r\nContent-Length: 0\r\n\r\n")
            note(path, 401)
            return
        note(path, 200)
        if path == "/api/v1/status":
            conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(STATUS) + STATUS)
        elif path == "/api/v1/events":
            conn.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/event-stream\r\n\r\n" + EVENT)
            time.sleep(3600)
        else:
            conn.sendall(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n")


LOCK = threading.Lock()
REQUESTS = None


def main():
    global REQUESTS
    port_file, token = sys.argv[1], sys.argv[2]
    REQUESTS = port_file + ".requests"
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    with open(port_file + ".tmp", "w") as out:
        out.write(str(listener.getsockname()[1]))
    import os
    os.rename(port_file + ".tmp", port_file)
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn, token), daemon=True).start()


if __name__ == "__main__":
    main()
