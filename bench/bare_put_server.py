#!/usr/bin/env python3
"""The least a server can do to take a PUT of a large body: the ceiling for a PUT on this machine.

    bare_put_server.py DIR PORT_FILE [--md5]

Listens on 127.0.0.1 (a port of the kernel's choosing, written to PORT_FILE once listening) and
answers every PUT, one connection at a time, by writing its body to a file in DIR (replaced by the
next) with O_DIRECT on a thread of its own while the next 16 MiB are received, then fdatasync:
no authentication, no store, no checksums. With --md5 it also takes the body's MD5, as S3 must
for the ETag of a PutObject, on a third thread, so the MD5 never holds up the receiving and
writing. bench/s3_upload_ab.sh (CLIENT=curl CEILING=1) sends it the same file with
the same curl as the PUTs through the S3 API.
"""
import hashlib
import mmap
import os
import queue
import sys
import threading

from bare_server import listen_on_loopback, read_head

PIECE = 16 << 20


def take_body(conn, length, rest, path, with_md5):
    # Three stages, each on its own thread, handed 16 MiB pieces: this thread receives, a writer
    # writes with O_DIRECT (no copy into the page cache, as the S3 server writes its blobs), and
    # with --md5 a hasher hashes. A piece goes back to the pool when every stage is done with it.
    pool = queue.Queue()
    for _ in range(4):
        pool.put(mmap.mmap(-1, PIECE))  # page-aligned, as O_DIRECT needs
    users = {}
    lock = threading.Lock()

    def done_with(buf):
        with lock:
            users[id(buf)] -= 1
            if users[id(buf)] == 0:
                pool.put(buf)

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o644)
    results = {}

    def write_pieces(work):
        try:
            while (item := work.get()) is not None:
                buf, n = item
                padded = (n + 4095) // 4096 * 4096  # O_DIRECT writes whole pages; cut after
                view = memoryview(buf)[:padded]
                written = 0
                while written < padded:
                    written += os.write(fd, view[written:])
                view.release()
                done_with(buf)
        except OSError as e:
            results["error"] = e
            while (item := work.get()) is not None:
                done_with(item[0])

    def hash_pieces(work):
        md5 = hashlib.md5()
        while (item := work.get()) is not None:
            buf, n = item
            view = memoryview(buf)[:n]
            md5.update(view)
            view.release()
            done_with(buf)
        results["md5"] = md5.hexdigest()

    stages = [(queue.Queue(), write_pieces)]
    if with_md5:
        stages.append((queue.Queue(), hash_pieces))
    threads = [threading.Thread(target=f, args=(q,)) for q, f in stages]
    for t in threads:
        t.start()
    try:
        left = length
        while left > 0:
            buf = pool.get()
            view = memoryview(buf)
            want = min(left, PIECE)
            n = min(len(rest), want)
            view[:n] = rest[:n]
            rest = rest[n:]
            while n < want:
                got = conn.recv_into(view[n:want])
                if got == 0:
                    raise ConnectionError("the body ended early")
                n += got
            view.release()
            left -= n
            with lock:
                users[id(buf)] = len(stages)
            for q, _ in stages:
                q.put((buf, n))
    finally:
        for q, _ in stages:
            q.put(None)
        for t in threads:
            t.join()
    try:
        if "error" in results:
            raise results["error"]
        os.ftruncate(fd, length)
        os.fdatasync(fd)
    finally:
        os.close(fd)
    return results.get("md5", "")


def serve(directory, port_file, with_md5):
    listener = listen_on_loopback(port_file)
    while True:
        conn, _ = listener.accept()
        with conn:
            lines, rest = read_head(conn)
            if not lines:
                continue
            headers = {k.strip().lower(): v.strip()
                       for k, _, v in (line.partition(":") for line in lines[1:])}
            if "content-length" not in headers:
                conn.sendall(b"HTTP/1.1 411 Length Required\r\nContent-Length: 0\r\n\r\n")
                continue
            if headers.get("expect", "").lower() == "100-continue":
                conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            try:
                md5 = take_body(conn, int(headers["content-length"]), rest,
                                os.path.join(directory, "body"), with_md5)
            except (ConnectionError, OSError) as e:
                print("bare_put_server: %s" % e, file=sys.stderr)
                continue
            conn.sendall(b'HTTP/1.1 200 OK\r\nETag: "%s"\r\nContent-Length: 0\r\n'
                         b"Connection: close\r\n\r\n" % md5.encode())


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--md5"]
    if len(args) != 2:
        sys.exit("usage: bare_put_server.py DIR PORT_FILE [--md5]")
    serve(args[0], args[1], "--md5" in sys.argv[1:])
