#!/usr/bin/env python3
"""A small hostile HTTP/1.1 server on 127.0.0.1, written apart from the library (plain sockets), for
measuring `trust get` side by side with curl (see the TrustHTTP article "Performance and robustness",
Sources/TrustHTTP/TrustHTTP.docc/Performance.md).

Usage: Scripts/hostile-http-server.py BEHAVIOUR PORT
  endless-chunked   200, then chunked data forever
  trickled-head     the response head one byte every 200 ms
  huge-headers      16 MB of response header fields
  continue-flood    100,000 "100 Continue" interim responses, then 200 with a short body
Serves connections one after another until killed.
"""
import socket
import sys
import time

behaviour, port = sys.argv[1], int(sys.argv[2])


def serve(connection):
    connection.recv(65536)
    if behaviour == "endless-chunked":
        connection.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        chunk = b"%x\r\n%s\r\n" % (65536, b"x" * 65536)
        while True:
            connection.sendall(chunk)
    elif behaviour == "trickled-head":
        for byte in b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-slow: " + b"a" * 10000:
            connection.sendall(bytes([byte]))
            time.sleep(0.2)
    elif behaviour == "huge-headers":
        connection.sendall(b"HTTP/1.1 200 OK\r\n")
        line = b"x-filler: " + b"a" * 1000 + b"\r\n"
        for _ in range(16 * 1024):
            connection.sendall(line)
        connection.sendall(b"content-length: 2\r\n\r\nok")
    elif behaviour == "continue-flood":
        connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n" * 100_000)
        connection.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nok\n")
    else:
        sys.exit("unknown behaviour " + behaviour)


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", port))
listener.listen(16)
while True:
    connection, _ = listener.accept()
    try:
        serve(connection)
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        connection.close()
