"""A TCP proxy on 127.0.0.1 that makes loopback look like a link to a remote
object store: every response's first byte is held until `delay` seconds
after its request arrived (S3's time to first byte is ~15 ms), and each
connection carries at most `rate` bytes/s towards the client (one S3
connection gives ~100 MB/s). This kernel has no netem, so it is done here,
in user space; the bytes pass through unchanged (S3 signatures included).

Response boundaries are not parsed: the HTTP/1.1 clients measured here never
pipeline, so the first bytes the server sends after a request arrives are
that request's response.

    /usr/bin/python3 bench/python/delay_proxy.py --upstream 127.0.0.1:PORT \\
        [--delay-ms 15] [--rate-mbps 100]

prints "listening PORT" once ready, then runs until killed. Or, in a bench
script: `with DelayProxy(port) as proxy: ... proxy.port ...` (a child process
of its own, so its threads do not compete with the caller's for the GIL).
"""
import argparse
import os
import socket
import subprocess
import sys
import threading
import time

CHUNK = 256 << 10
BURST = 0.002  # seconds


class Connection:
    def __init__(self, client, upstream, delay, rate):
        self.client, self.upstream = client, upstream
        self.delay, self.rate = delay, rate
        self.lock = threading.Lock()
        self.request_at = None  # when the request still waiting for its response arrived

    def on_request(self, data):
        """Called (under the lock) with the first bytes of each request; for a
        subclass that logs them (parquet_first_row_timeline.py)."""

    def on_answer(self, n, first):
        """Called before `n` bytes of the current answer go to the client,
        `first` for its first bytes."""

    def requests(self):
        """Client -> server: notes when each request starts."""
        try:
            while True:
                data = self.client.recv(CHUNK)
                if not data:
                    break
                with self.lock:
                    if self.request_at is None:
                        self.request_at = time.monotonic()
                        self.on_request(data)
                self.upstream.sendall(data)
        except OSError:
            pass
        finally:
            shutdown(self.upstream)

    def responses(self):
        """Server -> client: holds each response's first byte, then paces."""
        buf = bytearray(CHUNK)
        view = memoryview(buf)
        free_at = 0.0  # when the link is free to send again at `rate`
        try:
            while True:
                n = self.upstream.recv_into(buf)
                if not n:
                    break
                with self.lock:
                    started, self.request_at = self.request_at, None
                now = time.monotonic()
                if started is not None:
                    # A new response: its first byte leaves `delay` after
                    # the request came in; the pacing starts over from there.
                    now = wait_until(started + self.delay)
                    free_at = now
                # Sleeps overshoot; up to BURST of lag is made up by
                # sending early, so the mean rate stays `rate`.
                free_at = max(free_at, now - BURST) + n / self.rate
                self.on_answer(n, started is not None)
                self.client.sendall(view[:n])
                if free_at - time.monotonic() > BURST:
                    wait_until(free_at)
        except OSError:
            pass
        finally:
            shutdown(self.client)


def wait_until(t):
    now = time.monotonic()
    if t > now:
        time.sleep(t - now)
        now = time.monotonic()
    return now


def shutdown(sock):
    try:
        sock.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def serve(listener, upstream_port, delay, rate):
    while True:
        client, _ = listener.accept()
        upstream = socket.create_connection(('127.0.0.1', upstream_port))
        for s in (client, upstream):
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = Connection(client, upstream, delay, rate)
        threads = [threading.Thread(target=conn.requests, daemon=True),
                   threading.Thread(target=conn.responses, daemon=True)]
        for t in threads:
            t.start()
        threading.Thread(target=close_after, args=(threads, client, upstream), daemon=True).start()


def start_in_thread(upstream_port, delay=0.015, rate=100e6):
    """The proxy in front of 127.0.0.1:`upstream_port` on a daemon thread of
    this process (a free loopback port; `Connection` as the caller set it,
    e.g. a logging subclass): its base URL, http://127.0.0.1:PORT."""
    listener = socket.socket()
    listener.bind(('127.0.0.1', 0))
    listener.listen(64)
    threading.Thread(target=serve, daemon=True, args=(listener, upstream_port, delay, rate)).start()
    return f'http://127.0.0.1:{listener.getsockname()[1]}'


def close_after(threads, *socks):
    for t in threads:
        t.join()
    for s in socks:
        s.close()


class DelayProxy:
    """This file as a child process in front of 127.0.0.1:`upstream_port`."""

    def __init__(self, upstream_port, delay_ms=15.0, rate_mbps=100.0):
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), '--upstream', f'127.0.0.1:{upstream_port}',
             '--delay-ms', str(delay_ms), '--rate-mbps', str(rate_mbps)],
            stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().split()
        if len(line) != 2 or line[0] != 'listening':
            self.proc.kill()
            raise RuntimeError(f'delay proxy did not start (said {line!r})')
        self.port = int(line[1])

    def close(self):
        self.proc.terminate()
        self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--upstream', required=True, help='127.0.0.1:PORT of the server')
    ap.add_argument('--port', type=int, default=0, help='port to listen on (0: any free one)')
    ap.add_argument('--delay-ms', type=float, default=15.0)
    ap.add_argument('--rate-mbps', type=float, default=100.0, help='per connection, 1 MB = 1e6 B')
    args = ap.parse_args()
    host, port = args.upstream.rsplit(':', 1)
    if host != '127.0.0.1':
        sys.exit('delay_proxy: the upstream must be on 127.0.0.1')
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(('127.0.0.1', args.port))
    listener.listen(512)
    print('listening', listener.getsockname()[1], flush=True)
    serve(listener, int(port), args.delay_ms / 1e3, args.rate_mbps * 1e6)


if __name__ == '__main__':
    main()
