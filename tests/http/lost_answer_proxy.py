"""Runs a command through an HTTP proxy that loses the answer to one kind of request.

    lost_answer_proxy.py UPSTREAM METHOD PATH MODE -- COMMAND...

Every request goes on to UPSTREAM (http://host:port) and its answer comes back, except those of
METHOD to PATH: with MODE "after" the request reaches UPSTREAM and its answer is dropped (the
connection closed instead), as when a connection fails after the server did the work; with
MODE "before" it is dropped without reaching UPSTREAM. In COMMAND, "{proxy}" is the proxy's
URL. Prints the command's output and exits with its status; says on stderr how many requests it
dropped.
"""

import http.client
import http.server
import subprocess
import sys
import threading
import urllib.parse

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-authorization", "proxy-authenticate"}


def main():
    if len(sys.argv) < 7 or sys.argv[5] != "--" or sys.argv[4] not in ("after", "before"):
        sys.exit(__doc__)
    upstream = urllib.parse.urlsplit(sys.argv[1])
    method, path, mode = sys.argv[2], sys.argv[3], sys.argv[4]
    dropped = []

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def relay(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            lose = self.command == method and self.path.split("?")[0] == path
            if lose and mode == "before":
                dropped.append(self.path)
                self.close_connection = True
                return
            conn = http.client.HTTPConnection(upstream.hostname, upstream.port, timeout=600)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            conn.request(self.command, self.path, body=body, headers=headers)
            answer = conn.getresponse()
            content = answer.read()
            conn.close()
            if lose:
                dropped.append(self.path)
                self.close_connection = True
                return
            self.send_response_only(answer.status, answer.reason)
            head = self.command == "HEAD"  # its Content-Length is the object's, not this body's
            for k, v in answer.getheaders():
                if k.lower() not in HOP_BY_HOP and (head or k.lower() != "content-length"):
                    self.send_header(k, v)
            if not head:
                self.send_header("Content-Length", str(len(content)))
            self.end_headers()
            self.wfile.write(content)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = relay

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d" % server.server_address[1]
    command = [arg.replace("{proxy}", url) for arg in sys.argv[6:]]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    server.shutdown()
    sys.stdout.buffer.write(done.stdout)
    print("lost_answer_proxy: dropped %d %s %s" % (len(dropped), method, path), file=sys.stderr)
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
