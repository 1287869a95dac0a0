"""A Databricks runtime's own token (sluice.databricks_runtime): inside a
runtime (DATABRICKS_RUNTIME_VERSION) the package reads the workspace's host
and token from the notebook's Python objects as databricks-sdk does and
hands them to the engine, which reads dbfs:/Volumes/... with that token as
the bearer. A fake `dbruntime` package on sys.path stands for the runtime's;
a loopback fake of the Files API (plain HTTP, or TLS with a certificate of
the test's own for the REPL context's https:// host) checks the bearer.
Each case runs in a child process (the package registers its provider at
import)."""
import functools
import http.server
import json
import os
import pathlib
import ssl
import subprocess
import sys
import textwrap
import threading
import urllib.parse

import pytest

import sluice

VOLUME = '/Volumes/main/default/vol/ds'
TOKEN = 'dkea-runtime-token-0042'
OAUTH_TOKEN = 'oauth-exchanged-token-0043'

CHILD = '''
import sys
sys.path.insert(0, sys.argv[1])
import sluice
try:
    ds = sluice.StreamingDataset(remote='dbfs:{volume}', local=sys.argv[2], batch_size=4)
    print(sorted(s['id'] for s in ds))
except Exception as e:
    print(type(e).__name__ + ': ' + str(e))
'''.format(volume=VOLUME)


class FilesApi(http.server.BaseHTTPRequestHandler):
    """GET/HEAD /api/2.0/fs/files/Volumes/...: the folder's files, to a
    request whose bearer is TOKEN (else 401); every bearer seen is kept."""

    def log_message(self, *args):
        pass

    def _answer(self, body):
        auth = self.headers.get('Authorization', '')
        with self.server.lock:
            self.server.bearers.append(auth)
        prefix = '/api/2.0/fs/files' + VOLUME + '/'
        if auth != f'Bearer {self.server.accepted}':
            self.send_response(401)
            self.send_header('Content-Length', '0')
            self.end_headers()
            return
        path = self.server.root / self.path[len(prefix):] if self.path.startswith(prefix) else None
        if path is None or not path.is_file():
            self.send_response(404)
            self.send_header('Content-Length', '0')
            self.end_headers()
            return
        data = path.read_bytes()
        status = 200
        rng = self.headers.get('Range')
        if rng and rng.startswith('bytes='):
            first, _, last = rng[len('bytes='):].partition('-')
            last = int(last) if last else len(data) - 1
            first = int(first)
            whole = len(data)
            data = data[first:last + 1]
            status = 206
        self.send_response(status)
        if status == 206:
            self.send_header('Content-Range', f'bytes {first}-{first + len(data) - 1}/{whole}')
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        if body:
            self.wfile.write(data)

    def do_GET(self):
        self._answer(True)

    def do_POST(self):
        """The workspace's token endpoint: the runtime's token (runtime-oauth)
        exchanged for OAUTH_TOKEN, the form checked field by field."""
        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers.get('Content-Length', '0'))).decode())
        with self.server.lock:
            self.server.exchanges.append(form)
        asked = {'grant_type': ['urn:ietf:params:oauth:grant-type:token-exchange'], 'subject_token': [TOKEN],
                 'subject_token_type': ['urn:databricks:params:oauth:token-type:personal-access-token'],
                 'requested_token_type': ['urn:ietf:params:oauth:token-type:access_token'],
                 'scope': ['all-apis sql']}
        good = self.path == '/oidc/v1/token' and form == asked and not self.headers.get('Authorization')
        body = json.dumps({'access_token': OAUTH_TOKEN, 'token_type': 'Bearer', 'expires_in': 3600} if good
                          else {'error': 'invalid_request'}).encode()
        self.send_response(200 if good else 400)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_HEAD(self):
        self._answer(False)


def serve(root, context=None):
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), FilesApi)
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.root, server.bearers, server.lock = root, [], threading.Lock()
    server.accepted, server.exchanges = TOKEN, []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def volume(tmp_path):
    root = tmp_path / 'volume'
    with sluice.MDSWriter(out=str(root), columns={'id': 'int'}, size_limit=1 << 8) as w:
        for i in range(12):
            w.write({'id': i})
    return root


def fake_dbruntime(folder, modules):
    package = folder / 'dbruntime'
    package.mkdir(parents=True)
    (package / '__init__.py').write_text('')
    for name, text in modules.items():
        (package / f'{name}.py').write_text(textwrap.dedent(text))
    return folder


def run_child(tmp_path, fakes, extra_env):
    env = {k: v for k, v in os.environ.items() if not k.startswith('DATABRICKS_')}
    env.update({'HOME': str(tmp_path / 'home'), 'DATABRICKS_RUNTIME_VERSION': '15.4',
                'DATABRICKS_CLI_PATH': '/nonexistent/databricks', 'NO_PROXY': '127.0.0.1'}, **extra_env)
    out = subprocess.run([sys.executable, '-c', CHILD, str(fakes), str(tmp_path / 'cache')],
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_native_auth_token_reads_the_volume_multiprocess(tmp_path, volume):
    server = serve(volume)
    try:
        fakes = fake_dbruntime(tmp_path / 'fakes', {'sdk_credential_provider': f'''
            def init_runtime_native_auth():
                return 'http://127.0.0.1:{server.server_port}', lambda: {{
                    'Authorization': 'Bearer {TOKEN}'}}
            '''})
        assert run_child(tmp_path, fakes, {}) == str(list(range(12)))
        assert server.bearers and set(server.bearers) == {f'Bearer {TOKEN}'}
    finally:
        server.shutdown()
        server.server_close()


def test_with_scopes_the_runtimes_token_is_exchanged_and_reads_multiprocess(tmp_path, volume):
    """runtime-oauth (before runtime): a profile's scopes make the engine
    exchange the runtime's token at the runtime's host; only the exchanged
    token reads the volume."""
    server = serve(volume)
    server.accepted = OAUTH_TOKEN
    try:
        fakes = fake_dbruntime(tmp_path / 'fakes', {'sdk_credential_provider': f'''
            def init_runtime_native_auth():
                return 'http://127.0.0.1:{server.server_port}', lambda: {{
                    'Authorization': 'Bearer {TOKEN}'}}
            '''})
        (tmp_path / 'home').mkdir()
        (tmp_path / 'home' / '.databrickscfg').write_text('[DEFAULT]\nscopes = sql, all-apis\n')
        assert run_child(tmp_path, fakes, {}) == str(list(range(12)))
        assert server.bearers and set(server.bearers) == {f'Bearer {OAUTH_TOKEN}'}
        assert len(server.exchanges) == 1  # one token for the whole read (expires in 3600 s)
    finally:
        server.shutdown()
        server.server_close()


def test_repl_context_token_reads_over_https_multiprocess(tmp_path, volume):
    key, cert = tmp_path / 'tls.key', tmp_path / 'tls.pem'
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
                    '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
                    '-keyout', str(key), '-out', str(cert)], check=True, capture_output=True)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    server = serve(volume, context)
    try:
        fakes = fake_dbruntime(tmp_path / 'fakes', {'databricks_repl_context': f'''
            class _Context:
                workspaceUrl = '127.0.0.1:{server.server_port}'
                apiToken = '{TOKEN}'

            def get_context():
                return _Context()
            '''})
        assert run_child(tmp_path, fakes, {'SSL_CERT_FILE': str(cert)}) == str(list(range(12)))
        assert server.bearers and set(server.bearers) == {f'Bearer {TOKEN}'}
    finally:
        server.shutdown()
        server.server_close()


def test_without_a_runtime_context_the_refusal_says_what_was_tried(tmp_path):
    empty = tmp_path / 'nothing'
    empty.mkdir()
    tried = ("in a Databricks runtime, but the Databricks runtime's token provider: no "
             "Databricks runtime context: tried "
             "dbruntime.sdk_credential_provider.init_runtime_native_unified (not importable); "
             "dbruntime.sdk_credential_provider.init_runtime_native_auth (not importable); "
             "dbruntime.databricks_repl_context (not importable); dbutils (no host)")
    cache = tmp_path / 'cache'
    assert run_child(tmp_path, empty, {}) == (
        f'PermissionError: permission denied: stream 0 ({cache}): downloading dbfs:{VOLUME}/'
        f'index.json to {cache}/index.json: no Databricks workspace for dbfs:{VOLUME}: set '
        'DATABRICKS_HOST, or a host in a profile of ~/.databrickscfg (DATABRICKS_CONFIG_FILE); '
        + tried)
