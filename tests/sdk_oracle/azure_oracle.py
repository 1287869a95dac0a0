"""The Azure credential oracle: azure-identity's DefaultAzureCredential and
Sluice, given the same environment and files and pointed at the same fake
endpoints (Entra ID over TLS, IMDS, App Service, Azure ML), must obtain the
same token for each source, by requests the fakes record alike; given the
same stand-in `az` on PATH, they must run it alike and take its token.

Run with any Python 3: it creates a virtual environment with the pinned SDK
(requirements.txt) in $SLUICE_SDK_ORACLE_VENV, else a temporary folder,
and re-runs itself there. Sluice is the `sluice` command
($SLUICE_CLI, default build/bindings/cli/sluice), asked `sluice whoami`.
Nothing leaves 127.0.0.1: the fakes listen there, and this process refuses
any other connection (so an SDK that would call out fails loudly).
"""
import base64
import hashlib
import json
import os
import pathlib
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SCOPE = 'https://storage.azure.com/.default'
RESOURCE = 'https://storage.azure.com'
TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47'
CLIENT = '0f1e2d3c-aaaa-bbbb-cccc-123456789abc'
SECRET = 'oracle-client-secret'
FEDERATED = 'eyJhbGciOiJSUzI1NiJ9.oracle-federated.sig'
IDENTITY_HEADER = 'oracle-identity-header'


def ensure_sdk():
    """Re-runs this script in a venv with the pinned SDK unless it has it."""
    try:
        import azure.identity  # noqa: F401
        return
    except ImportError:
        pass
    if os.environ.get('SLUICE_SDK_ORACLE_REEXEC'):
        sys.exit('the oracle venv has no azure-identity')
    venv = os.environ.get('SLUICE_SDK_ORACLE_VENV')
    cleanup = {}
    if not venv:
        venv = tempfile.mkdtemp(prefix='sluice_azure_oracle_venv_')
        cleanup = {'SLUICE_SDK_ORACLE_REMOVE_VENV': venv}  # the re-run removes it
    python = pathlib.Path(venv) / 'bin' / 'python'
    if not python.exists():
        subprocess.run([sys.executable, '-m', 'venv', venv], check=True)
    subprocess.run([str(python), '-m', 'pip', 'install', '-q', '-r',
                    str(HERE / 'requirements.txt')], check=True)
    env = dict(os.environ, SLUICE_SDK_ORACLE_REEXEC='1', **cleanup)
    os.execve(str(python), [str(python), __file__] + sys.argv[1:], env)


def loopback_only():
    real_connect = socket.socket.connect

    def connect(self, address):
        host = address[0] if isinstance(address, tuple) else address
        if host not in ('127.0.0.1', 'localhost', '::1'):
            raise OSError(f'azure oracle: refusing a connection to {host} (only 127.0.0.1)')
        return real_connect(self, address)
    socket.socket.connect = connect
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host, *args, **kwargs):  # not even a DNS query
        if host not in ('127.0.0.1', 'localhost', '::1'):
            raise OSError(f'azure oracle: refusing to resolve {host} (only 127.0.0.1)')
        return real_getaddrinfo(host, *args, **kwargs)
    socket.getaddrinfo = getaddrinfo


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + '=' * (-len(text) % 4))


def verify_assertion(assertion, cert_pem, audience):
    """Checks an RS256 client assertion with the certificate's public key
    (openssl, so no Python crypto package is needed); returns its fields."""
    try:
        head, claims, sig = assertion.split('.')
        header = json.loads(b64url_decode(head))
        body = json.loads(b64url_decode(claims))
    except ValueError:
        return ['not a JWT'], {}
    with tempfile.TemporaryDirectory() as d:
        d = pathlib.Path(d)
        (d / 'cert.pem').write_text(cert_pem)
        (d / 'data').write_bytes(f'{head}.{claims}'.encode())
        (d / 'sig').write_bytes(b64url_decode(sig))
        pub = subprocess.run(['openssl', 'x509', '-in', d / 'cert.pem', '-pubkey', '-noout'],
                             check=True, capture_output=True).stdout
        (d / 'pub.pem').write_bytes(pub)
        ok = subprocess.run(['openssl', 'dgst', '-sha256', '-verify', d / 'pub.pem',
                             '-signature', d / 'sig', d / 'data'], capture_output=True).returncode
        der = subprocess.run(['openssl', 'x509', '-in', d / 'cert.pem', '-outform', 'DER'],
                             check=True, capture_output=True).stdout
    x5t = base64.urlsafe_b64encode(hashlib.sha1(der).digest()).rstrip(b'=').decode()
    problems = []
    if ok != 0:
        problems.append('signature')
    if header.get('alg') != 'RS256':
        problems.append('alg')
    # MSAL pads its x5t with '='; JWS (and Sluice) do not.
    if header.get('x5t', '').rstrip('=') != x5t:
        problems.append('x5t')
    if body.get('aud') != audience or body.get('iss') != CLIENT or body.get('sub') != CLIENT:
        problems.append('aud/iss/sub')
    if not body.get('exp', 0) > time.time():
        problems.append('exp')
    shape = {'header': sorted(header), 'claims': sorted(body)}
    return problems, shape


def token_for(*identity):
    """The token a fake hands to an identity: the same for whoever asks."""
    return 'oracle-' + hashlib.sha256('|'.join(identity).encode()).hexdigest()[:32]


class Fakes:
    def __init__(self, folder, cert_pem):
        self.folder = folder
        self.cert_pem = cert_pem
        self.records = []  # (client, summary, token)
        self.lock = threading.Lock()

    def record(self, headers, summary, token):
        ua = headers.get('User-Agent', '')
        client = 'sdk' if 'azsdk-python' in ua or 'python' in ua.lower() else 'sluice'
        with self.lock:
            self.records.append((client, summary, token))

    def handler(self, tls):
        fakes = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def reply(self, status, doc):
                body = json.dumps(doc).encode()
                self.send_response(status)
                self.send_header('Content-Type', 'application/json')
                self.send_header('Content-Length', str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def base(self):
                return f'https://127.0.0.1:{self.server.server_address[1]}'

            def do_GET(self):
                url = urllib.parse.urlsplit(self.path)
                q = dict(urllib.parse.parse_qsl(url.query))
                if url.path == f'/{TENANT}/v2.0/.well-known/openid-configuration':
                    b = self.base()
                    return self.reply(200, {
                        'token_endpoint': f'{b}/{TENANT}/oauth2/v2.0/token',
                        'authorization_endpoint': f'{b}/{TENANT}/oauth2/v2.0/authorize',
                        'device_authorization_endpoint': f'{b}/{TENANT}/oauth2/v2.0/devicecode',
                        'issuer': f'{b}/{TENANT}/v2.0'})
                if url.path == '/metadata/identity/oauth2/token':
                    if self.headers.get('Metadata') != 'true':
                        return self.reply(400, {'error': 'invalid_request',
                                                'error_description': 'Metadata header'})
                    kind, version, client_param = 'imds', '2018-02-01', 'client_id'
                elif url.path == '/msi/token' and self.headers.get('X-IDENTITY-HEADER'):
                    if self.headers['X-IDENTITY-HEADER'] != IDENTITY_HEADER:
                        return self.reply(401, {'error': 'bad header'})
                    kind, version, client_param = 'app service', '2019-08-01', 'client_id'
                elif url.path == '/msi/token' and self.headers.get('secret'):
                    if self.headers['secret'] != IDENTITY_HEADER:
                        return self.reply(401, {'error': 'bad secret'})
                    kind, version, client_param = 'azure ml', '2017-09-01', 'clientid'
                else:
                    return self.reply(404, {'error': 'not_found', 'error_description': self.path})
                if q.get('api-version') != version or q.get('resource') != RESOURCE:
                    return self.reply(400, {'error': 'invalid_request',
                                            'error_description': f'query {sorted(q)}'})
                token = token_for(kind, q.get(client_param, ''))
                summary = {'kind': kind, 'query': sorted(q.items())}
                fakes.record(self.headers, summary, token)
                doc = {'access_token': token, 'resource': RESOURCE, 'token_type': 'Bearer'}
                expires_on = int(time.time()) + 3600
                if kind == 'imds':
                    doc.update(expires_in='3600', expires_on=str(expires_on))
                elif kind == 'app service':
                    doc.update(expires_on=str(expires_on))
                else:
                    doc.update(expires_on=expires_on)
                return self.reply(200, doc)

            def do_POST(self):
                url = urllib.parse.urlsplit(self.path)
                length = int(self.headers.get('Content-Length', 0))
                form = dict(urllib.parse.parse_qsl(self.rfile.read(length).decode()))
                if url.path != f'/{TENANT}/oauth2/v2.0/token':
                    return self.reply(404, {'error': 'not_found'})
                audience = f'{self.base()}{url.path}'
                if (form.get('grant_type') != 'client_credentials' or form.get('client_id') != CLIENT
                        or set(form.get('scope', '').split()) - {'offline_access', 'openid', 'profile'}
                        != {SCOPE}):
                    return self.reply(400, {'error': 'invalid_request',
                                            'error_description': f'fields {sorted(form)}'})
                if 'client_secret' in form:
                    if form['client_secret'] != SECRET:
                        return self.reply(401, {'error': 'invalid_client'})
                    kind = 'secret'
                elif form.get('client_assertion') == FEDERATED:
                    kind = 'federated'
                elif 'client_assertion' in form:
                    problems, shape = verify_assertion(form['client_assertion'], fakes.cert_pem,
                                                       audience)
                    if problems:
                        return self.reply(401, {'error': 'invalid_client',
                                                'error_description': f'assertion: {problems}'})
                    kind = 'certificate'
                else:
                    return self.reply(401, {'error': 'invalid_client'})
                token = token_for(kind, CLIENT, SCOPE)
                summary = {'kind': kind, 'fields': sorted(
                    k for k in form if k not in ('client_info', 'x-client-sku', 'x-client-ver',
                                                 'x-client-os', 'x-client-cpu', 'x-ms-lib-capability',
                                                 'claims'))}
                if kind == 'certificate':
                    summary['assertion'] = shape
                fakes.record(self.headers, summary, token)
                return self.reply(200, {'token_type': 'Bearer', 'expires_in': 3600,
                                        'ext_expires_in': 3600, 'access_token': token})

        return Handler


def serve(handler, context=None):
    server = ThreadingHTTPServer(('127.0.0.1', 0), handler)
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def make_certificate(folder, name, san):
    key, cert = folder / f'{name}.key', folder / f'{name}.pem'
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
                    '-subj', f'/CN={name}', '-addext', f'subjectAltName={san}',
                    '-keyout', key, '-out', cert], check=True, capture_output=True)
    return key, cert


def sdk_token(env, with_cli=False, with_powershell=False, with_azd=False):
    """DefaultAzureCredential's token under `env` (as os.environ); the Azure
    CLI source only `with_cli`, Azure PowerShell's only `with_powershell`,
    the Azure Developer CLI's only `with_azd`."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        from azure.identity import DefaultAzureCredential
        # Instance discovery would ask login.microsoftonline.com about the
        # fake authority; Sluice does none.
        credential = DefaultAzureCredential(disable_instance_discovery=True,
                                            exclude_shared_token_cache_credential=True,
                                            exclude_visual_studio_code_credential=True,
                                            exclude_cli_credential=not with_cli,
                                            exclude_powershell_credential=not with_powershell,
                                            exclude_developer_cli_credential=not with_azd)
        return credential.get_token(SCOPE).token
    finally:
        os.environ.clear()
        os.environ.update(saved)


def sluice_token(env, cli, fakes):
    before = len(fakes.records)
    out = subprocess.run([cli, 'whoami', 'azure://oracle'], env=env, capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError(f'sluice whoami failed: {out.stderr.strip()}')
    got = [r for r in fakes.records[before:] if r[0] == 'sluice']
    if len(got) != 1:
        raise AssertionError(f'sluice made {len(got)} token requests: {out.stdout}')
    line = next(l for l in out.stdout.splitlines() if l.startswith('  credentials:'))
    return got[0][2], line.strip()


# A stand-in for the Azure CLI: logs each call's arguments and
# AZURE_CORE_NO_COLOR to the log and prints a token numbered by the calls.
FAKE_AZ = """#!/bin/sh
echo "$* NO_COLOR=$AZURE_CORE_NO_COLOR" >> '{log}'
n=$(wc -l < '{log}')
printf '{{"accessToken": "cli-token-%s", "expiresOn": "2099-01-01 00:00:00.000000", \
"expires_on": 4070908800, "subscription": "oracle-sub", "tenant": "{tenant}", \
"tokenType": "Bearer"}}' "$n"
"""


FAKE_AZD = """#!/bin/sh
echo "$* NO_COLOR=$NO_COLOR" >> '{log}'
n=$(wc -l < '{log}')
printf '{{"token": "azd-token-%s", "expiresOn": "2099-01-01T00:00:00Z"}}' "$n"
"""


# A stand-in for PowerShell 7 (pwsh): the script it is given
# (-EncodedCommand, base64 of UTF-16LE) is azure-identity's or Sluice's own,
# worded differently, so it logs the flags and what the script asks for
# (module and version, resource, tenant, the not-installed marker, the
# SecureString range, the output line) rather than its text. MODE: "ok"
# prints a token numbered by the calls; "no-module", "signed-out" and
# "failing" act as pwsh does without Az.Accounts, signed out, or broken.
FAKE_PWSH = """#!{python}
import base64, re, sys
args = sys.argv[1:]
script = base64.b64decode(args[-1]).decode('utf-16-le') if len(args) == 4 else ''
def first(pattern, missing='-'):
    m = re.search(pattern, script)
    return m.group(m.lastindex) if m else missing
facts = [' '.join(args[:3]),
         'module=' + ('Az.Accounts' if re.search(r'Import-Module (-Name )?Az\\.Accounts', script) else '-'),
         'minimum=' + first(r"\\[version\\]\\$minimumVersion = '([^']*)'|-MinimumVersion '([^']*)'"),
         'marker=' + ('NO_AZ_ACCOUNT_MODULE' if 'NO_AZ_ACCOUNT_MODULE' in script else '-'),
         'resource=' + first(r"'?ResourceUrl'? = '([^']*)'"),
         'tenant=' + first(r"\\$tenantId = '([^']*)'", ''),
         'secure=' + ('2.17.0..5.0.0' if "[version]'2.17.0'" in script and "-lt [version]'5.0.0'" in script else '-'),
         'cmdlet=' + ('Get-AzAccessToken' if 'Get-AzAccessToken @' in script else '-'),
         'line=' + ('azsdk' if 'azsdk%' in script and 'ToUnixTimeSeconds()' in script else '-')]
with open('{log}', 'a') as log:
    log.write(' | '.join(facts) + '\\n')
with open('{log}') as log:
    n = len(log.read().splitlines())
mode = '{mode}'
if mode == 'no-module':
    print('NO_AZ_ACCOUNT_MODULE')
elif mode == 'signed-out':
    sys.stderr.write('Get-AzAccessToken: Run Connect-AzAccount to login.\\n')
    sys.exit(1)
elif mode == 'failing':
    sys.stderr.write('Get-AzAccessToken: AADSTS7000215: Invalid client secret provided.\\n')
    sys.exit(1)
else:
    print('WARNING: Upcoming breaking changes in the cmdlet')
    print('')
    print('azsdk%ps-token-' + str(n) + '%4070908800')
"""


def powershell_case(base, cli, tmp, mode):
    """Azure PowerShell: DefaultAzureCredential (PowerShell and azd left to
    apply) and Sluice run the same fake pwsh with the same flags and a
    script asking for the same things; signed in, both take its token;
    without Az.Accounts, signed out or failing, both go on to azd's."""
    bin_dir = tmp / f'pwsh-{mode}-bin'
    bin_dir.mkdir()
    log = tmp / f'pwsh-{mode}.log'
    fake = bin_dir / 'pwsh'
    fake.write_text(FAKE_PWSH.format(python=sys.executable, log=log, mode=mode))
    fake.chmod(0o755)
    azd = bin_dir / 'azd'
    azd.write_text(FAKE_AZD.format(log=tmp / f'azd-after-pwsh-{mode}.log'))
    azd.chmod(0o755)
    env = dict(base, PATH=f'{bin_dir}:{base["PATH"]}')
    sdk = sdk_token(env, with_powershell=True, with_azd=True)
    calls = log.read_text().splitlines()
    out = subprocess.run([cli, 'whoami', 'azure://oracle'], env=env, capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError(f'sluice whoami failed: {out.stderr.strip()}')
    after = log.read_text().splitlines()
    if len(calls) != 1 or len(after) != 2:
        raise AssertionError(f'pwsh calls {len(calls)} then {len(after)}')
    if after[1] != calls[0] or any(f.endswith('=-') for f in calls[0].split(' | ')):
        raise AssertionError(f'different calls: SDK {calls[0]!r}, Sluice {after[1]!r}')
    token, source = (('ps-token-1', 'Azure PowerShell (pwsh Get-AzAccessToken)') if mode == 'ok'
                     else ('azd-token-1', 'Azure Developer CLI (azd auth token)'))
    line = next(l for l in out.stdout.splitlines() if l.startswith('  credentials:')).strip()
    if sdk != token or source not in line:
        raise AssertionError(f'SDK token {sdk[:12]}..., Sluice {line}')
    return f'same call ({calls[0]}); SDK and Sluice took {token}; {line}'


def program_case(base, cli, tmp, program, script, sdk_source, token, source):
    """A login program's source (the Azure CLI, azd): DefaultAzureCredential
    (only that source left to apply, `sdk_source` its with_ flag) and Sluice
    run the same fake `program` the same way, and both take its `token`;
    whoami names `source`."""
    bin_dir = tmp / f'{program}-bin'
    bin_dir.mkdir()
    log = tmp / f'{program}.log'
    fake = bin_dir / program
    fake.write_text(script.format(log=log, tenant=TENANT))
    fake.chmod(0o755)
    env = dict(base, PATH=f'{bin_dir}:{base["PATH"]}')
    sdk = sdk_token(env, **{sdk_source: True})
    calls = log.read_text().splitlines()
    out = subprocess.run([cli, 'whoami', 'azure://oracle'], env=env, capture_output=True,
                         text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError(f'sluice whoami failed: {out.stderr.strip()}')
    after = log.read_text().splitlines()
    if sdk != token or len(calls) != 1 or len(after) != 2:
        raise AssertionError(f'SDK token {sdk[:12]}..., calls {len(calls)} then {len(after)}')
    if after[1] != calls[0]:
        raise AssertionError(f'different calls: SDK {calls[0]!r}, Sluice {after[1]!r}')
    line = next(l for l in out.stdout.splitlines() if l.startswith('  credentials:')).strip()
    if source not in line:
        raise AssertionError(f'Sluice did not take the {program} token: {line}')
    return f'same call ({calls[0]}); {line}'


def main():
    ensure_sdk()
    loopback_only()
    cli = os.environ.get('SLUICE_CLI', str(ROOT / 'build' / 'bindings' / 'cli' / 'sluice'))
    started = time.time()
    with tempfile.TemporaryDirectory(prefix='sluice_azure_oracle_') as tmp:
        tmp = pathlib.Path(tmp)
        tls_key, tls_cert = make_certificate(tmp, 'entra', 'IP:127.0.0.1')
        principal_key, principal_cert = make_certificate(tmp, 'principal', 'DNS:principal')
        (tmp / 'principal-bundle.pem').write_text(principal_cert.read_text() + principal_key.read_text())
        (tmp / 'federated').write_text(FEDERATED)  # as the kubelet writes it: no newline
        (tmp / 'home').mkdir()
        fakes = Fakes(tmp, principal_cert.read_text())
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls_cert, tls_key)
        entra = serve(fakes.handler(True), context)
        plain = serve(fakes.handler(False))
        authority = f'https://127.0.0.1:{entra.server_address[1]}'
        local = f'http://127.0.0.1:{plain.server_address[1]}'
        base = {
            'PATH': os.environ.get('PATH', '/usr/bin:/bin'), 'HOME': str(tmp / 'home'),
            'SSL_CERT_FILE': str(tls_cert), 'REQUESTS_CA_BUNDLE': str(tls_cert),
            'AZURE_AUTHORITY_HOST': authority, 'AZURE_ACCOUNT_NAME': 'oracle',
            'AZURE_BLOB_ENDPOINT': f'{local}/oracle', 'SLUICE_AZURE_METADATA_DISABLED': 'true',
            'NO_PROXY': '127.0.0.1,localhost'}
        identity = {'AZURE_TENANT_ID': TENANT, 'AZURE_CLIENT_ID': CLIENT}
        cases = [
            ('environment, client secret', dict(identity, AZURE_CLIENT_SECRET=SECRET)),
            ('environment, certificate',
             dict(identity, AZURE_CLIENT_CERTIFICATE_PATH=str(tmp / 'principal-bundle.pem'))),
            ('workload identity', dict(identity, AZURE_FEDERATED_TOKEN_FILE=str(tmp / 'federated'))),
            ('managed identity, App Service',
             {'IDENTITY_ENDPOINT': f'{local}/msi/token', 'IDENTITY_HEADER': IDENTITY_HEADER}),
            ('managed identity, Azure ML (user-assigned)',
             {'MSI_ENDPOINT': f'{local}/msi/token', 'MSI_SECRET': IDENTITY_HEADER,
              'AZURE_CLIENT_ID': CLIENT}),
            ('managed identity, IMDS', {'AZURE_POD_IDENTITY_AUTHORITY_HOST': local}),
            ('managed identity, IMDS (user-assigned)',
             {'AZURE_POD_IDENTITY_AUTHORITY_HOST': local, 'AZURE_CLIENT_ID': CLIENT}),
        ]
        failures = 0
        for name, extra in cases:
            env = dict(base, **extra)
            try:
                before = len(fakes.records)
                sdk = sdk_token(env)
                sdk_requests = [r[1] for r in fakes.records[before:] if r[0] == 'sdk']
                ours, line = sluice_token(env, cli, fakes)
                sluice_requests = [r[1] for r in fakes.records[before:] if r[0] == 'sluice']
                if sdk != ours:
                    raise AssertionError(f'different tokens: SDK {sdk[:14]}..., Sluice {ours[:14]}...')
                if sdk_requests[-1:] != sluice_requests:
                    raise AssertionError(f'requests differ: SDK {sdk_requests}, Sluice {sluice_requests}')
                print(f'ok   {name}: same token; {line}')
            except Exception as e:  # report every case, then fail
                failures += 1
                print(f'FAIL {name}: {e}')
        try:
            print('ok   Azure CLI: ' + program_case(
                base, cli, tmp, 'az', FAKE_AZ, 'with_cli', 'cli-token-1',
                'Azure CLI (az account get-access-token)'))
        except Exception as e:
            failures += 1
            print(f'FAIL Azure CLI: {e}')
        try:
            print('ok   Azure Developer CLI: ' + program_case(
                base, cli, tmp, 'azd', FAKE_AZD, 'with_azd', 'azd-token-1',
                'Azure Developer CLI (azd auth token)'))
        except Exception as e:
            failures += 1
            print(f'FAIL Azure Developer CLI: {e}')
        for mode in ('ok', 'no-module', 'signed-out', 'failing'):
            try:
                print(f'ok   Azure PowerShell, {mode}: ' + powershell_case(base, cli, tmp, mode))
            except Exception as e:
                failures += 1
                print(f'FAIL Azure PowerShell, {mode}: {e}')
        total = len(cases) + 6
        print(f'{total - failures}/{total} sources agree in {time.time() - started:.1f} s')
        return 1 if failures else 0


if __name__ == '__main__':
    try:
        code = main()
    finally:
        if os.environ.get('SLUICE_SDK_ORACLE_REMOVE_VENV'):
            shutil.rmtree(os.environ['SLUICE_SDK_ORACLE_REMOVE_VENV'], ignore_errors=True)
    sys.exit(code)
