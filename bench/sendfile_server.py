#!/usr/bin/env python3
"""The least a server can do to answer a GET of one file: the ceiling for a GET on this machine.

    sendfile_server.py FILE PORT_FILE

Listens on 127.0.0.1 (a port of the kernel's choosing, written to PORT_FILE once listening) and
answers every request, one connection at a time, with FILE's whole content sent by sendfile:
no authentication, no store, no checksums. The GET benchmarks (bench/s3_get_ab.sh, CEILING=1)
fetch it with the same curl as the S3 GETs, so that a GET through the S3 API can be read against
what any server could do with the same client on the same cores.
"""
import os
import sys

from bare_server import listen_on_loopback, read_head


def serve(path, port_file):
    listener = listen_on_loopback(port_file)
    while True:
        conn, _ = listener.accept()
        with conn:
            lines, _ = read_head(conn)
            if not lines:
                continue
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n"
                             b"Content-Type: application/octet-stream\r\n"
                             b"Connection: close\r\n\r\n" % size)
                offset = 0
                while offset < size:
                    sent = os.sendfile(conn.fileno(), f.fileno(), offset, size - offset)
                    if sent == 0:
                        break
                    offset += sent


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: sendfile_server.py FILE PORT_FILE")
    serve(sys.argv[1], sys.argv[2])
