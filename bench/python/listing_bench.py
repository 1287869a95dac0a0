"""How long listing a raw-file dataset takes over a link with S3's latency:
`sluice ls s3://...` (a tree of listings, 16 at once) beside boto3's
ListObjectsV2 paginator (one sequence of pages, what most loaders do),
both through bench/python/delay_proxy.py (15 ms before every response's
first byte) in front of an in-memory ListObjectsV2 server of this script's
own. s3rver is not used: it answers a delimited listing by reading every
key's metadata, which is no model of S3's cost.

    /usr/bin/python3 bench/python/listing_bench.py --sluice build/bindings/cli/sluice \\
        [--folders 1000] [--files 100] [--runs 3] [--delay-ms 15]

Default layout: train/<folder>/<file>.jpg, 1,000 folders of 100 files
(100,000 keys), plus index-like objects at the root. Prints, per lister,
the median, min and max seconds of R runs (interleaved), the requests
each sent, and checks that both saw exactly the same keys.
"""
import argparse
import bisect
import os
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.sax.saxutils import escape

from delay_proxy import DelayProxy

BUCKET = 'bkt'


class ListingServer:
    """GET /bkt?list-type=2&prefix=&delimiter=&max-keys=&continuation-token=
    over a sorted in-memory key list; every key has size len(key). Anything
    else is 404. Counts the listing requests it answers."""

    def __init__(self, keys):
        self.keys = sorted(keys)
        self.requests = 0
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def log_message(self, *args):
                pass

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                q = dict(urllib.parse.parse_qsl(url.query, keep_blank_values=True))
                if url.path.strip('/') != BUCKET or q.get('list-type') != '2':
                    self.reply(404, b'<Error><Code>NoSuchKey</Code></Error>')
                    return
                with server.lock:
                    server.requests += 1
                self.reply(200, server.page(q).encode())

            def do_HEAD(self):
                self.wfile.write(b'HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n')

            def reply(self, status, body):
                # One write: headers and body in separate small segments
                # would meet Nagle and the client's delayed ACK (40 ms).
                reason = 'OK' if status == 200 else 'Not Found'
                self.wfile.write(f'HTTP/1.1 {status} {reason}\r\nContent-Type: application/xml\r\n'
                                 f'Content-Length: {len(body)}\r\n\r\n'.encode() + body)

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # 5 by default: SYNs beyond it wait a 1 s retransmit
            daemon_threads = True

        self.httpd = Server(('127.0.0.1', 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def page(self, q):
        prefix, delimiter = q.get('prefix', ''), q.get('delimiter', '')
        max_keys = int(q.get('max-keys', '1000'))
        after = q.get('continuation-token', '')
        keys = self.keys
        i = bisect.bisect_left(keys, prefix)
        if after:
            i = max(i, bisect.bisect_right(keys, after))
            if after.endswith(delimiter or '\0'):  # a common prefix: skip its keys
                i = max(i, bisect.bisect_left(keys, after[:-1] + chr(ord(after[-1]) + 1)))
        contents, prefixes, last = [], [], ''
        while i < len(keys) and keys[i].startswith(prefix) and len(contents) + len(prefixes) < max_keys:
            rest = keys[i][len(prefix):]
            cut = rest.find(delimiter) if delimiter else -1
            if cut >= 0:
                common = prefix + rest[:cut + 1]
                prefixes.append(common)
                last = common
                i = bisect.bisect_left(keys, common[:-1] + chr(ord(common[-1]) + 1))
            else:
                contents.append(keys[i])
                last = keys[i]
                i += 1
        truncated = i < len(keys) and keys[i].startswith(prefix)
        out = ['<?xml version="1.0" encoding="UTF-8"?><ListBucketResult>',
               f'<Name>{BUCKET}</Name><Prefix>{escape(prefix)}</Prefix>',
               f'<KeyCount>{len(contents) + len(prefixes)}</KeyCount>',
               f'<MaxKeys>{max_keys}</MaxKeys>',
               f'<IsTruncated>{"true" if truncated else "false"}</IsTruncated>']
        if truncated:
            out.append(f'<NextContinuationToken>{escape(last)}</NextContinuationToken>')
        for k in contents:
            out.append(f'<Contents><Key>{escape(k)}</Key><Size>{len(k)}</Size></Contents>')
        for p in prefixes:
            out.append(f'<CommonPrefixes><Prefix>{escape(p)}</Prefix></CommonPrefixes>')
        out.append('</ListBucketResult>')
        return ''.join(out)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def s3_env(port):
    return dict(os.environ, AWS_ENDPOINT_URL=f'http://127.0.0.1:{port}', AWS_ACCESS_KEY_ID='bench',
                AWS_SECRET_ACCESS_KEY='bench-secret', AWS_REGION='us-east-1',
                AWS_EC2_METADATA_DISABLED='true')


def run_sluice(binary, port, prefix):
    t = time.perf_counter()
    out = subprocess.run([binary, 'ls', f's3://{BUCKET}/{prefix}'], env=s3_env(port),
                         capture_output=True, text=True)
    seconds = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    keys = [line.split('\t', 1)[1] for line in out.stdout.splitlines() if '\t' in line]
    return seconds, sorted(f'{prefix}/{k}' for k in keys)


BOTO3_CHILD = r'''
import sys, time
import boto3
from botocore.config import Config
port, prefix = sys.argv[1], sys.argv[2]
t = time.perf_counter()
s3 = boto3.client('s3', endpoint_url='http://127.0.0.1:' + port, region_name='us-east-1',
                  aws_access_key_id='bench', aws_secret_access_key='bench-secret',
                  config=Config(s3={'addressing_style': 'path'}))
keys = []
for page in s3.get_paginator('list_objects_v2').paginate(Bucket='bkt', Prefix=prefix + '/'):
    keys += [o['Key'] for o in page.get('Contents', [])]
print(time.perf_counter() - t)
print('\n'.join(keys))
'''


def run_boto3(port, prefix):
    t = time.perf_counter()
    out = subprocess.run([sys.executable, '-c', BOTO3_CHILD, str(port), prefix],
                         capture_output=True, text=True, env=s3_env(port))
    seconds = time.perf_counter() - t
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    lines = out.stdout.splitlines()
    # Leave out names Sluice's datasets skip ('_' or '.' leading a part).
    keys = [k for k in lines[1:]
            if not any(p.startswith(('_', '.')) for p in k[len(prefix) + 1:].split('/'))]
    return seconds, sorted(keys)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--sluice', required=True, help='the sluice command to time')
    ap.add_argument('--folders', type=int, default=1000)
    ap.add_argument('--files', type=int, default=100, help='files per folder')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--delay-ms', type=float, default=15)
    args = ap.parse_args()
    prefix = 'imgs'
    keys = [f'{prefix}/train/n{f:08d}/img{i:06d}.jpg' for f in range(args.folders)
            for i in range(args.files)]
    keys += [f'{prefix}/labels.txt', f'{prefix}/_SUCCESS']
    server = ListingServer(keys)
    proxy = DelayProxy(server.port, delay_ms=args.delay_ms)
    try:
        listers = {'sluice ls': lambda: run_sluice(args.sluice, proxy.port, prefix),
                   'boto3 paginator': lambda: run_boto3(proxy.port, prefix)}
        times = {name: [] for name in listers}
        requests = {}
        seen = {}
        for _ in range(args.runs):
            for name, run in listers.items():
                before = server.requests
                seconds, got = run()
                times[name].append(seconds)
                requests[name] = server.requests - before
                seen.setdefault(name, got)
        if seen['sluice ls'] != seen['boto3 paginator']:
            raise RuntimeError(f"listings differ: sluice {len(seen['sluice ls'])} keys, "
                               f"boto3 {len(seen['boto3 paginator'])}")
        print(f'{len(keys)} keys in {args.folders} folders, {args.delay_ms:g} ms before each '
              f'response, {args.runs} runs')
        base = statistics.median(times['boto3 paginator'])
        for name, ts in times.items():
            m = statistics.median(ts)
            print(f'{name:16} median {m:7.3f} s  (min {min(ts):.3f}, max {max(ts):.3f})  '
                  f'{requests[name]:5d} requests  {base / m:5.2f}x boto3')
    finally:
        proxy.close()
        server.close()


if __name__ == '__main__':
    main()
