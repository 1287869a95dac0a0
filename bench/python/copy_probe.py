"""Where a cold download's CPU goes, copy by copy: every shard of a dataset
fetched from a loopback nginx by 4 threads (one connection each, HTTP/1.1
GETs), with the body
  discard   received into a 2 MiB buffer and dropped (curl into /dev/null:
            the socket's one copy)
  write     received into a 2 MiB buffer, written at its offset into a file
            in 16 KiB pwrite calls (base/file.h's kPageCacheWriteBlock; what
            the engine's download does: two copies, socket -> buffer -> page
            cache)
  splice    spliced socket -> pipe -> file (os.splice: the socket's pages
            move into the pipe and are copied once, into the page cache; the
            process never holds the bytes)
  direct    received into a page-aligned 2 MiB buffer, written with O_DIRECT
            (the page cache is bypassed: the device takes the bytes; a tail
            that is not a whole 4 KiB is written through the page cache)
--blocks adds write rows with other pwrite sizes (e.g. 4096,65536: "write
64 KiB"), to weigh kPageCacheWriteBlock. Rows are interleaved, medians of R runs; CPU is this process's user +
system seconds per GB received (nginx's is not counted: it is the same for
every row). Files go to a fresh folder under --dir and are deleted after
each run (their page cache with them), so every run writes fresh pages.

    SLUICE_LIBRARY=build/bindings/c/libsluice.so PYTHONPATH=bindings/python \\
        /usr/bin/python3 bench/python/copy_probe.py [--samples N] [--size BYTES] [--runs R]
            [--blocks BYTES,...]
"""
import argparse
import fcntl
import mmap
import os
import resource
import shutil
import socket
import statistics
import tempfile
import threading
import time

from cold_first_sample import start_nginx, write

BUFFER = 2 << 20
BLOCK = 16 << 10
F_SETPIPE_SZ = 1031


def get(port, path):
    """A connected socket past the response head of GET path, and the body
    bytes read with the head, and the body's length."""
    s = socket.create_connection(('127.0.0.1', port))
    s.sendall(f'GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'.encode())
    head = b''
    while b'\r\n\r\n' not in head:
        chunk = s.recv(65536)
        if not chunk:
            raise RuntimeError(f'{path}: connection closed in the head')
        head += chunk
    head, _, rest = head.partition(b'\r\n\r\n')
    lines = head.decode('latin-1').split('\r\n')
    if ' 200 ' not in lines[0] + ' ':
        raise RuntimeError(f'{path}: {lines[0]}')
    length = next(int(h.split(':', 1)[1]) for h in lines[1:]
                  if h.lower().startswith('content-length:'))
    return s, rest, length


def fetch(mode, port, path, out, block=BLOCK):
    s, rest, length = get(port, path)
    with s:
        left = length - len(rest)
        if mode == 'discard':
            buf = memoryview(bytearray(BUFFER))
            while left:
                n = s.recv_into(buf, min(BUFFER, left))
                if n == 0:
                    raise RuntimeError(f'{path}: short body')
                left -= n
            return length
        if mode == 'direct':
            return fetch_direct(s, rest, left, out, path)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.pwrite(fd, rest, 0)
            at = len(rest)
            if mode == 'write':
                buf = memoryview(bytearray(BUFFER))
                while left:
                    fill = 0
                    while fill < BUFFER and left:
                        n = s.recv_into(buf[fill:], min(BUFFER - fill, left))
                        if n == 0:
                            raise RuntimeError(f'{path}: short body')
                        fill += n
                        left -= n
                    for o in range(0, fill, block):
                        os.pwrite(fd, buf[o:min(fill, o + block)], at + o)
                    at += fill
            else:
                r, w = os.pipe()
                try:
                    fcntl.fcntl(w, F_SETPIPE_SZ, 1 << 20)
                    while left:
                        n = os.splice(s.fileno(), w, min(1 << 20, left))
                        if n == 0:
                            raise RuntimeError(f'{path}: short body')
                        left -= n
                        while n:
                            m = os.splice(r, fd, n, offset_dst=at)
                            at += m
                            n -= m
                finally:
                    os.close(r)
                    os.close(w)
        finally:
            os.close(fd)
        return length


def fetch_direct(s, rest, left, out, path):
    """The direct row: whole 2 MiB buffers (the last one's whole 4 KiB
    pages) through O_DIRECT, the rest of the tail through the page cache."""
    length = len(rest) + left
    buf = mmap.mmap(-1, BUFFER)  # page-aligned, as O_DIRECT needs
    view = memoryview(buf)
    view[:len(rest)] = rest
    fill, at = len(rest), 0
    fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o644)
    try:
        while True:
            while fill < BUFFER and left:
                n = s.recv_into(view[fill:], min(BUFFER - fill, left))
                if n == 0:
                    raise RuntimeError(f'{path}: short body')
                fill += n
                left -= n
            whole = fill - fill % 4096
            if whole:
                os.pwrite(fd, view[:whole], at)
            if not left:
                break
            at += whole
            view[:fill - whole] = view[whole:fill]
            fill -= whole
    finally:
        os.close(fd)
    if fill % 4096:
        with open(out, 'r+b') as f:
            f.seek(at + whole)
            f.write(view[whole:fill])
    view.release()
    buf.close()
    return length


def run(mode, port, names, folder, parallel=4, block=BLOCK):
    """(seconds, CPU seconds, bytes) of every shard by `parallel` threads."""
    todo = list(enumerate(names))
    lock = threading.Lock()
    total = [0]
    errors = []

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                i, name = todo.pop(0)
            try:
                n = fetch(mode, port, f'/data/{name}', os.path.join(folder, f'{i}.bin'), block)
            except Exception as e:  # reported after the join
                errors.append(e)
                return
            with lock:
                total[0] += n

    r0 = resource.getrusage(resource.RUSAGE_SELF)
    t = time.perf_counter()
    threads = [threading.Thread(target=worker) for _ in range(parallel)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    seconds = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    if errors:
        raise errors[0]
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return seconds, cpu, total[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--samples', type=int, default=8000)
    ap.add_argument('--size', type=int, default=256 << 10)
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--blocks', default='',
                    help='comma-separated pwrite sizes for extra write rows')
    ap.add_argument('--dir', default=None, help='where the files go (default: a temporary folder)')
    args = ap.parse_args()
    modes = [(m, BLOCK) for m in ('discard', 'write', 'splice', 'direct')]
    modes += [('write', int(b)) for b in args.blocks.split(',') if b]
    work = tempfile.mkdtemp(prefix='sluice-copy-probe-', dir=args.dir)
    try:
        data = os.path.join(work, 'www', 'data')
        write(data, args.samples, args.size)
        names = sorted(n for n in os.listdir(data) if n.endswith('.mds'))
        nginx, port = start_nginx(os.path.join(work, 'www'), work)
        try:
            rows = {}
            for _ in range(args.runs):
                for mode, block in modes:
                    folder = tempfile.mkdtemp(dir=work)
                    name = mode if block == BLOCK else f'{mode} {block >> 10} KiB'
                    rows.setdefault(name, []).append(run(mode, port, names, folder, block=block))
                    shutil.rmtree(folder)
        finally:
            nginx.terminate()
            nginx.wait()
        print(f'{len(names)} shards, {args.samples} x {args.size} B, 4 connections, '
              f'medians of {args.runs}')
        for mode, xs in rows.items():
            secs = statistics.median(x[0] for x in xs)
            gb = xs[0][2] / 1e9
            cpu = statistics.median(x[1] / (x[2] / 1e9) for x in xs)
            print(f'  {mode:14s} {secs:7.3f} s  {gb / secs:6.2f} GB/s  {cpu:5.2f} CPU s/GB')
    finally:
        shutil.rmtree(work)


if __name__ == '__main__':
    main()
