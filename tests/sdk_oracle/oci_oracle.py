"""The live OCI oracle: Sluice reads oci://BUCKET@NAMESPACE/... and
oci://BUCKET/... (namespace asked of the API) through a loopback fake of
Object Storage's native API, with a fresh API key in an OCI config profile;
the fake signs every request it receives again with the OCI SDK's own signer
(oci.signer.Signer.from_config(oci.config.from_file(...)), pinned in
requirements.txt), for the same method, URL, Host and Date, and answers only
when Sluice's Authorization header is exactly the SDK's. Each case writes one
object and checks the bytes read back, that every request matched, and that `sluice whoami` names the
profile's key id and never the key or its passphrase. A second profile, as
`oci session authenticate` writes one (security_token_file, no user), is
checked against the SDK's SecurityTokenSigner made the way Oracle's guide
makes it (the token file's text and load_private_key_from_file); whoami then
names the token's file and never the token.

Run it with the venv's Python (tests/sdk_oracle/run_oci.sh does, after
oci_vectors.py). Sluice runs in a child process of SLUICE_PYTHON (default
/usr/bin/python3) with PYTHONPATH=bindings/python and SLUICE_LIBRARY;
`sluice whoami` is SLUICE_CLI. Exits 1 when any case differs."""
import base64
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import oci
import requests

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMESPACE = 'oracletenancy'
OBJECTS = {'ds/index.json': b'{"version": 2}', 'ds/shards/shard.00000.mds': bytes(range(256)) * 50}
PASSPHRASE = 'oracle-passphrase'


class FakeObjectStorage(http.server.ThreadingHTTPServer):
    def __init__(self, signer):
        super().__init__(('127.0.0.1', 0), _Handler)
        self.signer = signer
        self.matched = 0
        self.mismatched = []
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
        if not any(n.lower() == 'content-length' for n, _ in headers):
            self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(data)

    def do_HEAD(self):
        self.do_GET()

    def do_PUT(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
        if not self._signed_as_the_sdk_signs():
            return
        base = f'/n/{NAMESPACE}/b/bkt/o/'
        if not self.path.startswith(base):
            return self._send(404, {'code': 'NotFound', 'message': self.path})
        OBJECTS[urllib.parse.unquote(self.path[len(base):])] = body
        return self._send(200, b'', [('ETag', 'e')])

    def _signed_as_the_sdk_signs(self):
        # The SDK signs the same request: method, URL (Host included), Date;
        # PutObject without its body's headers (enforce_content_headers=False).
        url = f'http://{self.headers["Host"]}{self.path}'
        again = requests.Request(self.command, url, headers={'date': self.headers.get('Date', '')})
        sign = (self.server.signer.without_content_headers if self.command == 'PUT'
                else self.server.signer)
        expected = sign(again.prepare()).headers['authorization']
        got = self.headers.get('Authorization', '')
        with self.server.lock:
            if got == expected:
                self.server.matched += 1
            else:
                self.server.mismatched.append(f'{self.command} {self.path}')
        if got != expected:
            self._send(401, {'code': 'NotAuthenticated', 'message': 'signature differs'})
        return got == expected

    def do_GET(self):
        if not self._signed_as_the_sdk_signs():
            return
        path, _, query = self.path.partition('?')
        if path == '/n/':
            return self._send(200, NAMESPACE)
        base = f'/n/{NAMESPACE}/b/bkt/o'
        if path == base:
            params = urllib.parse.parse_qs(query)
            prefix = params.get('prefix', [''])[0]
            return self._send(200, {'objects': [{'name': n, 'size': len(b)}
                                                for n, b in sorted(OBJECTS.items())
                                                if n.startswith(prefix)]})
        if path.startswith(base + '/'):
            name = urllib.parse.unquote(path[len(base) + 1:])
            if name not in OBJECTS:
                return self._send(404, {'code': 'ObjectNotFound', 'message': 'not found'})
            data = OBJECTS[name]
            rng = self.headers.get('Range')
            if rng and self.command == 'GET':
                first, _, last = rng[len('bytes='):].partition('-')
                first, last = int(first), min(int(last or len(data) - 1), len(data) - 1)
                return self._send(206, data[first:last + 1],
                                  [('Content-Range', f'bytes {first}-{last}/{len(data)}')])
            return self._send(200, data, [('Content-Length', str(len(data)))])
        return self._send(404, {'code': 'NotFound', 'message': path})


def read_and_whoami(fake, env, cases, cli, shown_ok):
    """Runs each (name, url) case in a child Sluice; returns how many differ."""
    failures = 0
    for name, url in cases:
        before = fake.matched
        written = f'written by {name}'.encode()
        run = subprocess.run(
            [os.environ.get('SLUICE_PYTHON', '/usr/bin/python3'), '-c',
             'import json, sys; from sluice.remote import remote_list, remote_read, remote_write; '
             f'remote_write("{url}", "out/{len(name)}.txt", {written!r}); '
             f'keys = remote_list("{url}"); '
             f'json.dump({{k: remote_read("{url}", k).hex() for k in keys}}, sys.stdout)'],
            env=env, capture_output=True, timeout=120)
        whoami = subprocess.run([cli, 'whoami', url], env=env, capture_output=True, timeout=60)
        shown = whoami.stdout.decode() + whoami.stderr.decode()
        problems = []
        want = {k[len('ds/'):]: v.hex() for k, v in OBJECTS.items()}
        if run.returncode != 0 or json.loads(run.stdout) != want:
            problems.append('read: ' + (run.stderr.decode().strip().splitlines() or [''])[-1])
        if fake.mismatched:
            problems.append(f'signatures differ from the SDK\'s: {fake.mismatched}')
        if not shown_ok(shown):
            problems.append('whoami: ' + shown.strip())
        failures += bool(problems)
        print(f'{"same" if not problems else "DIFFERENT"}  {name}  '
              f'({fake.matched - before} requests signed as the SDK signs them)'
              + ''.join('\n    ' + p for p in problems), flush=True)
        fake.mismatched.clear()
    return failures


def main():
    failures = 0
    cli = os.environ.get('SLUICE_CLI', os.path.join(ROOT, 'build', 'bindings', 'cli', 'sluice'))
    with tempfile.TemporaryDirectory(prefix='sluice-oci-oracle-') as folder:
        key = os.path.join(folder, 'api_key.pem')
        subprocess.run(['openssl', 'genpkey', '-algorithm', 'RSA', '-aes-256-cbc', '-pass',
                        'pass:' + PASSPHRASE, '-pkeyopt', 'rsa_keygen_bits:2048', '-out', key],
                       check=True, capture_output=True)
        # A session token as `oci session authenticate` stores it: a JWT
        # (its signature is the service's business).
        claims = json.dumps({'sub': 'ocid1.user.oc1..aaaaoracle', 'exp': int(time.time()) + 3600})
        token = '.'.join(base64.urlsafe_b64encode(p.encode()).decode().rstrip('=')
                         for p in ('{"alg": "RS256"}', claims, 'signature'))
        token_file = os.path.join(folder, 'token')
        with open(token_file, 'w') as f:
            f.write(token)
        config = os.path.join(folder, 'config')
        with open(config, 'w') as f:
            f.write('[DEFAULT]\nregion = us-phoenix-1\n'
                    'tenancy = ocid1.tenancy.oc1..aaaaoracle\n\n'
                    f'[loader]\nuser = ocid1.user.oc1..aaaaoracle\n'
                    f'fingerprint = 11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00\n'
                    f'key_file = {key}\npass_phrase = {PASSPHRASE}\n\n'
                    f'[session]\nfingerprint = 11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00\n'
                    f'key_file = {key}\npass_phrase = {PASSPHRASE}\n'
                    f'security_token_file = {token_file}\n')
        env = {k: v for k, v in os.environ.items() if not k.startswith(('OCI_', 'AWS_'))}
        env.update({'HOME': folder, 'OCI_CONFIG_FILE': config,
                    'PYTHONPATH': os.path.join(ROOT, 'bindings', 'python'),
                    'SLUICE_LIBRARY': os.environ.get('SLUICE_LIBRARY', os.path.join(
                        ROOT, 'build', 'bindings', 'c', 'libsluice.so'))})
        cases = (('namespace in the URL', f'oci://bkt@{NAMESPACE}/ds'),
                 ('namespace asked of the API', 'oci://bkt/ds'))

        profile = oci.config.from_file(config, 'loader')
        fake = FakeObjectStorage(oci.signer.Signer.from_config(profile))
        key_id = f'{profile["tenancy"]}/{profile["user"]}/{profile["fingerprint"]}'
        failures += read_and_whoami(
            fake, dict(env, OCI_CLI_PROFILE='loader',
                       SLUICE_OCI_OBJECT_STORAGE_ENDPOINT=fake.url), cases, cli,
            lambda shown: key_id in shown and PASSPHRASE not in shown and
            'PRIVATE KEY' not in shown)
        fake.shutdown()

        session = oci.config.from_file(config, 'session')
        with open(session['security_token_file']) as f:
            signer = oci.auth.signers.SecurityTokenSigner(
                f.read(), oci.signer.load_private_key_from_file(session['key_file'],
                                                                session['pass_phrase']))
        fake = FakeObjectStorage(signer)
        failures += read_and_whoami(
            fake, dict(env, OCI_CLI_PROFILE='session',
                       SLUICE_OCI_OBJECT_STORAGE_ENDPOINT=fake.url),
            [(f'session token, {name}', url) for name, url in cases], cli,
            lambda shown: token_file in shown and token not in shown and
            PASSPHRASE not in shown and 'PRIVATE KEY' not in shown)
        fake.shutdown()
    print(f'oci {oci.__version__}: {"all the same" if not failures else f"{failures} differ"}')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
