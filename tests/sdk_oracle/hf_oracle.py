"""The SDK oracle for the Hugging Face Hub: for each token source and for
revisions and subfolders, huggingface_hub's HfFileSystem (pinned in
requirements.txt) and Sluice are given the same environment and files and
pointed (HF_ENDPOINT) at the same loopback fake of the Hub's API, which
redirects downloads of large files to a fake CDN on another port. Each case
checks that both listed the same files with the same sizes, read the same
bytes, sent the Hub the same token (or none), and that neither sent a token to
the CDN. `sluice whoami` must name the source and never print the token.

Run it with the venv's Python (tests/sdk_oracle/run_hf.sh does). Both clients
run in child processes, since huggingface_hub reads HF_ENDPOINT, HF_HOME and
HF_TOKEN_PATH when it is imported. Sluice runs under SLUICE_PYTHON (default
/usr/bin/python3) with PYTHONPATH=bindings/python and SLUICE_LIBRARY (default
build/bindings/c/libsluice.so), and `sluice whoami` is SLUICE_CLI (default
build/bindings/cli/sluice). Prints one line per case; exits 1 when any
differs."""
import hashlib
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import huggingface_hub

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOKEN = 'hf_oracleSecretToken0123456789'
LFS_THRESHOLD = 100  # files at least this large are served by the CDN
PAGE_SIZE = 3        # tree entries per page, so that listings page
REPO = ('datasets', 'org', 'name')
FILES = {
    'main': {
        'index.json': b'{"version": 2, "shards": []}',
        'train/shard.00000.mds': bytes(range(256)) * 40,
        'train/shard.00001.mds': b'\x01\x02' * 3000,
        'train/sub/notes.txt': b'small',
        'val/shard.00000.mds': b'v' * 777,
    },
    'refs/convert/parquet': {
        'default/train/0000.parquet': b'PAR1' + b'p' * 500 + b'PAR1',
        'default/validation/0000.parquet': b'PAR1' + b'q' * 90 + b'PAR1',
    },
}


class FakeHub(http.server.ThreadingHTTPServer):
    """The Hub's tree, paths-info, revision and resolve endpoints; with
    `private`, every request needs the token."""

    def __init__(self, cdn):
        super().__init__(('127.0.0.1', 0), _HubHandler)
        self.cdn = cdn
        self.private = False
        self.authorizations = []
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f'http://127.0.0.1:{self.server_address[1]}'


class FakeCdn(http.server.ThreadingHTTPServer):
    def __init__(self):
        super().__init__(('127.0.0.1', 0), _CdnHandler)
        self.blobs = {}
        self.authorizations = []
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f'http://127.0.0.1:{self.server_address[1]}'


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def _send(self, status, body, headers=()):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if not any(name.lower() == 'content-length' for name, _ in headers):
            self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(data)

    def _serve_bytes(self, data, headers=()):
        headers = list(headers)
        rng = self.headers.get('Range')
        if not rng or self.command == 'HEAD':
            return self._send(200, data, headers + [('Content-Length', str(len(data)))])
        first, _, last = rng[len('bytes='):].partition('-')
        first = int(first)
        last = min(int(last) if last else len(data) - 1, len(data) - 1)
        if first >= len(data):
            return self._send(416, b'')
        return self._send(206, data[first:last + 1],
                          headers + [('Content-Range', f'bytes {first}-{last}/{len(data)}')])

    def do_HEAD(self):
        self.do_GET()


class _CdnHandler(_Handler):
    def do_GET(self):
        with self.server.lock:
            if self.headers.get('Authorization'):
                self.server.authorizations.append(self.headers['Authorization'])
        path, _, query = self.path.partition('?')
        if query != 'X-Amz-Signature=cdn-signed' or path not in self.server.blobs:
            return self._send(403, b'<Error><Code>AccessDenied</Code></Error>')
        return self._serve_bytes(self.server.blobs[path])


def _hub_error(handler, status, code, message):
    return handler._send(status, {'error': message},
                         [('X-Error-Code', code), ('X-Error-Message', message),
                          ('Content-Type', 'application/json')])


class _HubHandler(_Handler):
    def _authorized(self):
        auth = self.headers.get('Authorization', '')
        with self.server.lock:
            self.server.authorizations.append(auth)
        if auth and auth != 'Bearer ' + TOKEN:
            _hub_error(self, 401, '', 'Invalid credentials in Authorization header')
            return False
        if self.server.private and not auth:
            _hub_error(self, 401, 'RepositoryNotFound', 'Repository not found')
            return False
        return True

    def _repo(self, segments):
        """(files of the revision, rest of the path) or None after an error."""
        if tuple(segments[:3]) != REPO:
            _hub_error(self, 404, 'RepositoryNotFound', 'Repository not found')
            return None
        revision = urllib.parse.unquote(segments[4]) if len(segments) > 4 else 'main'
        if revision not in FILES:
            _hub_error(self, 404, 'RevisionNotFound', f'Invalid rev id: {revision}')
            return None
        rest = '/'.join(urllib.parse.unquote(s) for s in segments[5:])
        return revision, FILES[revision], rest

    def do_GET(self):
        if not self._authorized():
            return
        path, _, query = self.path.partition('?')
        params = urllib.parse.parse_qs(query)
        segments = path.strip('/').split('/')
        if segments[0] == 'api':
            segments = segments[1:]
            if len(segments) == 3 or len(segments) >= 4 and segments[3] == 'revision':
                return self._send(200, {'id': 'org/name', 'sha': 'a' * 40, 'private': False,
                                        'siblings': []})
            if len(segments) >= 4 and segments[3] == 'tree':
                found = self._repo(segments)
                if found is not None:
                    self._tree(found[0], found[1], found[2], params, path, query)
                return
            return self._send(404, b'no such fake API')
        if len(segments) >= 4 and segments[3] == 'resolve':
            found = self._repo(segments)
            if found is None:
                return
            revision, files, name = found
            if name not in files:
                return _hub_error(self, 404, 'EntryNotFound', 'Entry not found')
            data = files[name]
            etag = hashlib.sha256(data).hexdigest()
            common = [('X-Repo-Commit', 'a' * 40), ('ETag', f'"{etag}"')]
            if len(data) < LFS_THRESHOLD:
                return self._serve_bytes(data, common)
            blob = '/blob/' + etag
            self.server.cdn.blobs[blob] = data
            return self._send(302, b'', common + [
                ('Location', f'{self.server.cdn.url}{blob}?X-Amz-Signature=cdn-signed'),
                ('X-Linked-Size', str(len(data))), ('X-Linked-Etag', f'"{etag}"'),
                ('Content-Length', '0')])
        return self._send(404, b'no such fake page')

    def do_POST(self):
        """paths-info: what HfFileSystem.info() asks for a path not listed yet."""
        if not self._authorized():
            return
        path = self.path.partition('?')[0]
        segments = path.strip('/').split('/')
        length = int(self.headers.get('Content-Length', '0'))
        body = self.rfile.read(length).decode()
        if segments[0] != 'api' or len(segments) < 6 or segments[4] != 'paths-info':
            return self._send(404, b'no such fake API')
        found = self._repo(segments[1:4] + ['x', segments[5]])
        if found is None:
            return
        _, files, _ = found
        try:
            asked = json.loads(body)['paths']
        except ValueError:
            asked = urllib.parse.parse_qs(body).get('paths', [])
        out = []
        for p in asked:
            p = p.strip('/')
            if p in files:
                out.append({'type': 'file', 'oid': 'f', 'size': len(files[p]), 'path': p})
            elif any(name.startswith(p + '/') for name in files) or p == '':
                out.append({'type': 'directory', 'oid': 'd', 'path': p})
        return self._send(200, out, [('Content-Type', 'application/json')])

    def _tree(self, revision, files, folder, params, path, query):
        prefix = folder + '/' if folder else ''
        entries, dirs = [], set()
        recursive = params.get('recursive', ['false'])[0].lower() == 'true'
        for name in sorted(files):
            if not name.startswith(prefix):
                continue
            rest = name[len(prefix):]
            parts = rest.split('/')
            for depth in range(1, len(parts)):
                d = prefix + '/'.join(parts[:depth])
                if d not in dirs and (recursive or depth == 1):
                    dirs.add(d)
                    entries.append({'type': 'directory', 'oid': 'd', 'path': d})
            if recursive or len(parts) == 1:
                entries.append({'type': 'file', 'oid': 'f', 'size': len(files[name]),
                                'path': name})
        if folder and not entries:
            return _hub_error(self, 404, 'EntryNotFound',
                              f'{folder} does not exist on "{revision}"')
        start = int(params.get('cursor', ['0'])[0])
        page = entries[start:start + PAGE_SIZE]
        headers = [('Content-Type', 'application/json')]
        if start + PAGE_SIZE < len(entries):
            kept = urllib.parse.urlencode([(k, v) for k, vs in params.items() if k != 'cursor'
                                           for v in vs])
            headers.append(('Link', f'<{self.server.url_base}{path}?{kept}&cursor='
                                    f'{start + PAGE_SIZE}>; rel="next"'))
        return self._send(200, page, headers)


SDK_SCRIPT = r'''
import json, sys
from huggingface_hub import HfFileSystem
root = sys.argv[1]
fs = HfFileSystem()
found = fs.find(root, detail=True)
out = {}
for path, info in sorted(found.items()):
    if info['type'] != 'file':
        continue
    rel = path[len(fs._strip_protocol(root)):].lstrip('/')
    data = fs.cat_file(path)
    out[rel] = [info['size'], data.hex()]
json.dump(out, sys.stdout)
'''

SLUICE_SCRIPT = r'''
import json, sys
from sluice.remote import remote_list, remote_read
root = sys.argv[1]
out = {}
for key in remote_list(root):
    data = remote_read(root, key)
    out[key] = [len(data), data.hex()]
json.dump(out, sys.stdout)
'''


def _run(command, env):
    run = subprocess.run(command, env=env, capture_output=True, timeout=120)
    if run.returncode != 0:
        return None, run.stderr.decode(errors='replace').strip().splitlines()[-3:]
    return run.stdout.decode(), None


def _cases(folder):
    token_file = os.path.join(folder, 'token-path')
    with open(token_file, 'w') as f:
        f.write(TOKEN + '\n')
    hf_home = os.path.join(folder, 'hf-home')
    os.makedirs(hf_home)
    with open(os.path.join(hf_home, 'token'), 'w') as f:
        f.write(TOKEN)
    home = os.path.join(folder, 'home')
    os.makedirs(os.path.join(home, '.cache', 'huggingface'))
    with open(os.path.join(home, '.cache', 'huggingface', 'token'), 'w') as f:
        f.write(TOKEN)
    main = 'hf://datasets/org/name'
    return [
        # name, URL, private repository, environment, whoami's expected source line
        ('HF_TOKEN', main, True, {'HF_TOKEN': TOKEN}, 'token: environment (HF_TOKEN)'),
        ('HUGGING_FACE_HUB_TOKEN', main, True, {'HUGGING_FACE_HUB_TOKEN': TOKEN},
         'token: environment (HUGGING_FACE_HUB_TOKEN)'),
        ('HF_TOKEN_PATH', main, True, {'HF_TOKEN_PATH': token_file},
         f'token: token file {token_file}'),
        ('HF_HOME token file', main, True, {'HF_HOME': hf_home},
         f'token: token file {hf_home}/token'),
        ('~/.cache/huggingface/token', main, True, {'HOME': home},
         f'token: token file {home}/.cache/huggingface/token'),
        ('anonymous (public repository)', main, False, {}, 'requests: anonymous'),
        ('subfolder at main', main + '@main/train', True, {'HF_TOKEN': TOKEN},
         'token: environment (HF_TOKEN)'),
        ('refs/convert/parquet', main + '@refs%2Fconvert%2Fparquet/default', True,
         {'HF_TOKEN': TOKEN}, 'token: environment (HF_TOKEN)'),
    ]


def _environment(folder, hub, extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('HF_', 'HUGGING', 'XDG_CACHE'))}
    empty_home = os.path.join(folder, 'empty-home')
    os.makedirs(empty_home, exist_ok=True)
    env['HOME'] = empty_home
    env['HF_ENDPOINT'] = hub.url
    env['HF_HUB_DISABLE_TELEMETRY'] = '1'
    env['HF_HUB_CACHE'] = os.path.join(folder, 'hub-cache')
    env.update(extra)
    return env


def main():
    cdn = FakeCdn()
    hub = FakeHub(cdn)
    hub.url_base = hub.url
    failures = 0
    sluice_env = {
        'PYTHONPATH': os.path.join(ROOT, 'bindings', 'python'),
        'SLUICE_LIBRARY': os.environ.get(
            'SLUICE_LIBRARY', os.path.join(ROOT, 'build', 'bindings', 'c', 'libsluice.so')),
    }
    cli = os.environ.get('SLUICE_CLI', os.path.join(ROOT, 'build', 'bindings', 'cli', 'sluice'))
    with tempfile.TemporaryDirectory(prefix='sluice-hf-oracle-') as folder:
        for name, url, private, extra, source in _cases(folder):
            start = time.monotonic()
            hub.private = private
            env = _environment(folder, hub, extra)
            hub.authorizations.clear()
            sdk, sdk_error = _run([sys.executable, '-c', SDK_SCRIPT, url], env)
            sdk_auth = set(hub.authorizations)
            hub.authorizations.clear()
            ours, our_error = _run([os.environ.get('SLUICE_PYTHON', '/usr/bin/python3'), '-c',
                                    SLUICE_SCRIPT, url], dict(env, **sluice_env))
            our_auth = set(hub.authorizations)
            whoami, whoami_error = _run([cli, 'whoami', url], env)
            problems = []
            if sdk is None or ours is None:
                problems.append(f'huggingface_hub: {sdk_error}  sluice: {our_error}')
            elif json.loads(sdk) != json.loads(ours):
                problems.append(f'listings differ:\n      huggingface_hub {sorted(json.loads(sdk))}'
                                f'\n      sluice          {sorted(json.loads(ours))}')
            elif not json.loads(ours):
                problems.append('no files listed')
            if sdk_auth != our_auth:
                problems.append(f'tokens sent differ: huggingface_hub {len(sdk_auth)} kinds, '
                                f'sluice {len(our_auth)} kinds')
            if cdn.authorizations:
                problems.append('the CDN received an Authorization header')
            if whoami is None or source not in whoami or TOKEN in whoami:
                problems.append(f'whoami: {whoami or whoami_error}')
            if ours is not None and TOKEN in ours or our_error and TOKEN in str(our_error):
                problems.append('the token appeared in output')
            failures += bool(problems)
            files = len(json.loads(ours)) if ours else 0
            print(f'{"same" if not problems else "DIFFERENT"}  {name}  ({files} files, '
                  f'{time.monotonic() - start:.1f} s)'
                  + ''.join('\n    ' + p for p in problems), flush=True)
    print(f'huggingface_hub {huggingface_hub.__version__}: '
          f'{"all the same" if not failures else f"{failures} differ"}')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
