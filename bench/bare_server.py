"""What the do-nothing servers of the S3 benchmarks (sendfile_server.py, bare_put_server.py)
share: a listening socket on loopback whose port is written to a file, and a request's head."""
import os
import socket


def listen_on_loopback(port_file):
    """A socket listening on 127.0.0.1, on a port of the kernel's choosing written to
    port_file (whole, by a rename) once it listens."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(listener.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    return listener


def read_head(conn):
    """The request's head lines and the bytes read past it; (None, b"") if the client left."""
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = conn.recv(65536)
        if not chunk:
            return None, b""
        head += chunk
    head, rest = head.split(b"\r\n\r\n", 1)
    return head.decode("latin-1").split("\r\n"), rest
