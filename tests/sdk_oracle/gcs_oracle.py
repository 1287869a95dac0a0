"""The SDK oracle for GCS credentials: for each source of Application
Default Credentials, google-auth (pinned in requirements.txt)
and Sluice are given the same environment and files and pointed at the same
loopback fake of Google's endpoints (OAuth2, STS, IAM Credentials, the
metadata server, and GCS's XML API for the object). The fake derives each
token from the request that asked for it (grant, fields, scope, the bearer
that authorized it; never the time), so two clients get the same token only
when they asked the same thing. Each case checks that both obtained the same
token and read the same bytes with it.

google-auth sends three requests to fixed Google hosts, whatever the file
says: authorized_user refreshes at oauth2.googleapis.com (it ignores a file's
token_uri), impersonated_service_account calls iamcredentials.googleapis.com
(it ignores the host of service_account_impersonation_url), and
google.auth.default() looks up an external account's project at
cloudresourcemanager.googleapis.com. Sluice uses the URLs of the file (gcloud
writes Google's own there), so the oracle points those three module
constants at the fake and writes the fake's URLs into the files.

Run it with the venv's Python (tests/sdk_oracle/run_gcs.sh does); Sluice runs in
a child process of SLUICE_PYTHON (default /usr/bin/python3) with
PYTHONPATH=bindings/python and SLUICE_LIBRARY (default
build/bindings/c/libsluice.so). Prints one line per case; exits 1 when any
differs."""
import base64
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

import google.auth
import google.auth.external_account
import google.auth.iam
import google.auth.transport.requests
import google.oauth2.credentials
import requests

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
READ_WRITE = 'https://www.googleapis.com/auth/devstorage.read_write'
OBJECT = b'the same bytes for both clients\n'
EXPECT = {
    'client_id': 'client-123.apps.googleusercontent.com',
    'client_secret': 'client-secret',
    'refresh_token': '1//refresh-token',
    'audience': '//iam.googleapis.com/projects/123/locations/global/'
                'workloadIdentityPools/pool/providers/p',
    'subject_token': 'eyJ.subject-token.sig',
    'subject_token_type': 'urn:ietf:params:oauth:token-type:jwt',
}
TARGET = 'loader@proj.iam.gserviceaccount.com'


def _token(kind, what):
    digest = hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:24]
    return f'ya29.{kind}-{digest}'


def _jwt_claims(jwt):
    part = jwt.split('.')[1]
    return json.loads(base64.urlsafe_b64decode(part + '=' * (-len(part) % 4)))


class FakeGoogle(http.server.ThreadingHTTPServer):
    """Google's credential endpoints and one object, on 127.0.0.1."""

    def __init__(self):
        super().__init__(('127.0.0.1', 0), _Handler)
        self.issued = {}  # token -> what it was issued for
        self.object_bearers = []
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f'http://127.0.0.1:{self.server_address[1]}'

    def issue(self, kind, what):
        token = _token(kind, what)
        with self.lock:
            self.issued[token] = what
        return token

    def explain(self, token):
        """What `token` was issued for, following the bearers it was bought with."""
        what = self.issued.get(token)
        if what is None:
            return 'not issued here'
        bearer = what.get('bearer') or what.get('authorization') or ''
        if bearer.startswith('Bearer ') and bearer[7:] in self.issued:
            return f'{what} <- {self.explain(bearer[7:])}'
        return str(what)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def _send(self, status, body, headers=()):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(data)

    def _bearer_ok(self):
        auth = self.headers.get('Authorization', '')
        return auth.startswith('Bearer ') and auth[7:] in self.server.issued

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path, _, query = self.path.partition('?')
        params = urllib.parse.parse_qs(query)
        if path in ('', '/'):  # google-auth's ping of the metadata server
            return self._send(200, b'', [('Metadata-Flavor', 'Google')])
        if path.startswith('/computeMetadata/'):
            if self.headers.get('Metadata-Flavor') != 'Google':
                return self._send(403, b'Missing Metadata-Flavor:Google header.')
            flavor = [('Metadata-Flavor', 'Google'), ('Content-Type', 'application/json')]
            if path == '/computeMetadata/v1/instance/service-accounts/default/':
                return self._send(200, {'email': TARGET, 'scopes': [READ_WRITE],
                                        'aliases': ['default']}, flavor)
            if path.endswith('/token'):
                token = self.server.issue('metadata', {'path': path,
                                                       'scopes': params.get('scopes')})
                return self._send(200, {'access_token': token, 'expires_in': 3600,
                                        'token_type': 'Bearer'}, flavor)
            return self._send(404, b'not found')
        if path.startswith('/v1/projects/') and '/serviceAccounts/' not in path:
            # Cloud Resource Manager: google.auth.default()'s project lookup.
            if not self._bearer_ok():
                return self._send(401, {'error': {'status': 'UNAUTHENTICATED'}})
            return self._send(200, {'projectId': 'proj'})
        if path == '/subject':
            if self.headers.get('Metadata') != 'True':
                return self._send(400, b'missing Metadata header')
            return self._send(200, {'id_token': EXPECT['subject_token']})
        if path.startswith('/bkt/'):
            with self.server.lock:
                self.server.object_bearers.append(self.headers.get('Authorization', ''))
            if not self._bearer_ok():
                return self._send(401, b'<Error><Code>AuthenticationRequired</Code></Error>')
            if path == '/bkt/data/a.txt':
                return self._send(200, OBJECT)
            return self._send(404, b'<Error><Code>NoSuchKey</Code></Error>')
        return self._send(404, b'no such fake endpoint')

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', 0))).decode()
        path = self.path.partition('?')[0]
        form = {k: v[0] for k, v in urllib.parse.parse_qs(body).items()}
        if path == '/token':
            grant = form.get('grant_type')
            if grant == 'refresh_token':
                if (form.get('client_id'), form.get('client_secret'), form.get('refresh_token')) != (
                        EXPECT['client_id'], EXPECT['client_secret'], EXPECT['refresh_token']):
                    return self._send(400, {'error': 'invalid_grant'})
                token = self.server.issue('user', form)
            elif grant == 'urn:ietf:params:oauth:grant-type:jwt-bearer':
                claims = _jwt_claims(form['assertion'])
                token = self.server.issue('sa', {k: claims.get(k)
                                                 for k in ('iss', 'scope', 'aud', 'sub')})
            else:
                return self._send(400, {'error': 'unsupported_grant_type'})
            return self._send(200, {'access_token': token, 'expires_in': 3600,
                                    'token_type': 'Bearer'})
        if path == '/v1/token':
            if (form.get('grant_type') != 'urn:ietf:params:oauth:grant-type:token-exchange'
                    or form.get('audience') != EXPECT['audience']
                    or form.get('subject_token') != EXPECT['subject_token']
                    or form.get('subject_token_type') != EXPECT['subject_token_type']):
                return self._send(400, {'error': 'invalid_grant'})
            what = dict(form, authorization=self.headers.get('Authorization'))
            token = self.server.issue('sts', what)
            return self._send(200, {'access_token': token, 'expires_in': 3600,
                                    'issued_token_type':
                                        'urn:ietf:params:oauth:token-type:access_token',
                                    'token_type': 'Bearer'})
        if path.endswith(':generateAccessToken'):
            if not self._bearer_ok():
                return self._send(401, {'error': {'status': 'UNAUTHENTICATED'}})
            request = json.loads(body)
            what = {'path': path, 'bearer': self.headers['Authorization'],
                    'delegates': request.get('delegates') or [],
                    'scope': request.get('scope'), 'lifetime': request.get('lifetime')}
            token = self.server.issue('impersonated', what)
            seconds = int(request['lifetime'].rstrip('s'))
            expire = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(time.time() + seconds))
            return self._send(200, {'accessToken': token, 'expireTime': expire})
        return self._send(404, b'no such fake endpoint')


def _service_account_key(folder, fake):
    pem = os.path.join(folder, 'sa.pem')
    subprocess.run(['openssl', 'genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048',
                    '-out', pem], check=True, capture_output=True)
    with open(pem) as f:
        private_key = f.read()
    return {'type': 'service_account', 'project_id': 'proj', 'private_key_id': 'kid1',
            'private_key': private_key, 'client_email': 'sa@proj.iam.gserviceaccount.com',
            'client_id': '1', 'token_uri': fake.url + '/token'}


def _cases(folder, fake):
    """(name, credentials file or None, extra environment) of each source."""
    user = {'type': 'authorized_user', 'client_id': EXPECT['client_id'],
            'client_secret': EXPECT['client_secret'],
            'refresh_token': EXPECT['refresh_token'], 'token_uri': fake.url + '/token'}
    key = _service_account_key(folder, fake)
    subject_file = os.path.join(folder, 'subject.jwt')
    with open(subject_file, 'w') as f:
        f.write(EXPECT['subject_token'])
    subject_json = os.path.join(folder, 'subject.json')
    with open(subject_json, 'w') as f:
        json.dump({'token': EXPECT['subject_token']}, f)
    script = os.path.join(folder, 'token.sh')
    with open(script, 'w') as f:
        f.write('#!/bin/sh\nprintf \'{"version": 1, "success": true, "token_type": '
                '"urn:ietf:params:oauth:token-type:jwt", "id_token": "%s", '
                '"expiration_time": %d}\' "' + EXPECT['subject_token'] +
                '" $(( $(date +%s) + 600 ))\n')
    os.chmod(script, 0o700)
    impersonation = f'{fake.url}/v1/projects/-/serviceAccounts/{TARGET}:generateAccessToken'

    def external(source, **extra):
        return dict({'type': 'external_account', 'audience': EXPECT['audience'],
                     'subject_token_type': EXPECT['subject_token_type'],
                     'token_url': fake.url + '/v1/token', 'credential_source': source}, **extra)

    return [
        ('service_account', key, {}),
        ('authorized_user', user, {}),
        ('authorized_user (gcloud file)', ('gcloud', user), {}),
        ('external_account file (text)', external({'file': subject_file}), {}),
        ('external_account file (json)',
         external({'file': subject_json,
                   'format': {'type': 'json', 'subject_token_field_name': 'token'}}), {}),
        ('external_account url (headers, json)',
         external({'url': fake.url + '/subject', 'headers': {'Metadata': 'True'},
                   'format': {'type': 'json', 'subject_token_field_name': 'id_token'}}), {}),
        ('external_account executable',
         external({'executable': {'command': script, 'timeout_millis': 5000}}),
         {'GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES': '1'}),
        ('external_account client auth',
         external({'file': subject_file}, client_id='cid', client_secret='csecret'), {}),
        ('external_account impersonation',
         external({'file': subject_file}, service_account_impersonation_url=impersonation,
                  service_account_impersonation={'token_lifetime_seconds': 1800}), {}),
        ('impersonated_service_account (user source)',
         {'type': 'impersonated_service_account',
          'service_account_impersonation_url': impersonation,
          'delegates': ['mid@proj.iam.gserviceaccount.com'], 'source_credentials': user}, {}),
        ('impersonated_service_account (service account source)',
         {'type': 'impersonated_service_account',
          'service_account_impersonation_url': impersonation, 'source_credentials': key}, {}),
        ('metadata server', None,
         {'GCE_METADATA_HOST': fake.url[7:], 'GCE_METADATA_IP': fake.url[7:]}),
    ]


def _environment(folder, fake, name, credentials, extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('GOOGLE_', 'GCE_', 'GCS_', 'CLOUDSDK_'))}
    case_dir = os.path.join(folder, hashlib.sha256(name.encode()).hexdigest()[:12])
    gcloud = os.path.join(case_dir, 'gcloud')
    os.makedirs(gcloud)
    env['CLOUDSDK_CONFIG'] = gcloud
    env['GCS_ENDPOINT_URL'] = fake.url
    # Neither client may reach a real metadata server.
    env.setdefault('GCE_METADATA_HOST', '127.0.0.1:9')
    env['GCE_METADATA_IP'] = '127.0.0.1:9'
    env.update(extra)
    if isinstance(credentials, tuple):
        path = os.path.join(gcloud, 'application_default_credentials.json')
        credentials = credentials[1]
    else:
        path = os.path.join(case_dir, 'credentials.json')
        if credentials is not None:
            env['GOOGLE_APPLICATION_CREDENTIALS'] = path
    if credentials is not None:
        with open(path, 'w') as f:
            json.dump(credentials, f)
    if name != 'metadata server':
        env.pop('GCE_METADATA_HOST')  # off GCE: only files apply
    return env


def _google_auth(env, fake):
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        credentials, _ = google.auth.default(scopes=[READ_WRITE])
        credentials.refresh(google.auth.transport.requests.Request())
        token = credentials.token
    finally:
        os.environ.clear()
        os.environ.update(saved)
    got = requests.get(fake.url + '/bkt/data/a.txt',
                       headers={'Authorization': 'Bearer ' + token}, timeout=10)
    return token, got.content


def _sluice(env, fake):
    child = dict(env)
    child['PYTHONPATH'] = os.path.join(ROOT, 'bindings', 'python')
    child.setdefault('SLUICE_LIBRARY',
                     os.path.join(ROOT, 'build', 'bindings', 'c', 'libsluice.so'))
    before = len(fake.object_bearers)
    run = subprocess.run(
        [os.environ.get('SLUICE_PYTHON', '/usr/bin/python3'), '-c',
         'import sys; from sluice.remote import remote_read; '
         'sys.stdout.buffer.write(remote_read("gs://bkt/data", "a.txt"))'],
        env=child, capture_output=True, timeout=120)
    if run.returncode != 0:
        return None, run.stderr.decode(errors='replace').strip().splitlines()[-1:]
    bearers = fake.object_bearers[before:]
    token = bearers[-1][len('Bearer '):] if bearers else ''
    return token, run.stdout


def _point_google_auth_at(fake):
    google.oauth2.credentials._GOOGLE_OAUTH2_TOKEN_ENDPOINT = fake.url + '/token'
    google.auth.iam._IAM_ENDPOINT = (fake.url +
                                     '/v1/projects/-/serviceAccounts/{}:generateAccessToken')
    google.auth.external_account._CLOUD_RESOURCE_MANAGER = fake.url + '/v1/projects/'


def main():
    fake = FakeGoogle()
    _point_google_auth_at(fake)
    failures = 0
    with tempfile.TemporaryDirectory(prefix='sluice-gcs-oracle-') as folder:
        for name, credentials, extra in _cases(folder, fake):
            env = _environment(folder, fake, name, credentials, extra)
            start = time.monotonic()
            try:
                sdk_token, sdk_bytes = _google_auth(env, fake)
            except Exception as e:  # the SDK's own failure is the case's result
                sdk_token, sdk_bytes = None, repr(e)
            sluice_token, sluice_bytes = _sluice(env, fake)
            same = (sdk_token is not None and sdk_token == sluice_token
                    and sdk_bytes == sluice_bytes == OBJECT)
            failures += not same
            print(f'{"same" if same else "DIFFERENT"}  {name}  ({time.monotonic() - start:.1f} s)'
                  + ('' if same else
                     f'\n    google-auth: {sdk_token} {sdk_bytes!r}\n      {fake.explain(sdk_token)}'
                     f'\n    sluice:      {sluice_token} {sluice_bytes!r}'
                     f'\n      {fake.explain(sluice_token or "")}'),
                  flush=True)
    print(f'google-auth {google.auth.__version__}: '
          f'{"all the same" if not failures else f"{failures} differ"}')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
