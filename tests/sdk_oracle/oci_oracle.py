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
names the token's file and never the token. Then a resource principal
(OCI_RESOURCE_PRINCIPAL_VERSION 2.2, token and key in files) against the
SDK's get_resource_principals_signer(), and an instance principal against
loopback fakes of the instance metadata service and the auth service's X.509
federation (its request checked against the SDK's AuthTokenRequestSigner,
the reads against the session key its token was issued for), with the SDK's
InstancePrincipalsSecurityTokenSigner put through the same fakes. Last, the
resource principal versions that buy their token (2.1, 2.1.1, 2.1.2, 1.1,
3.0) against a loopback fake of the RPT and identity services that checks
each request against the SDK's own signer, with the SDK's
get_resource_principals_signer() put through the same fakes. Nothing leaves
127.0.0.1 (loopback_only.py).

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

from loopback_only import loopback_only

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NAMESPACE = 'oracletenancy'
OBJECTS = {'ds/index.json': b'{"version": 2}', 'ds/shards/shard.00000.mds': bytes(range(256)) * 50}
PASSPHRASE = 'oracle-passphrase'
RP_PASSPHRASE = 'oracle-rp-passphrase'


class FakeObjectStorage(http.server.ThreadingHTTPServer):
    """Answers requests signed exactly as `signer` (an SDK signer) signs
    them again, or, given `verify` instead (for session keys the fake never
    holds), the requests `verify(handler)` accepts."""

    def __init__(self, signer=None, verify=None):
        super().__init__(('127.0.0.1', 0), _Handler)
        self.signer = signer
        self.verify = verify
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
        if self.server.verify is not None:
            same = self.server.verify(self)
        else:
            # The SDK signs the same request: method, URL (Host included), Date;
            # PutObject without its body's headers (enforce_content_headers=False).
            url = f'http://{self.headers["Host"]}{self.path}'
            again = requests.Request(self.command, url,
                                     headers={'date': self.headers.get('Date', '')})
            sign = (self.server.signer.without_content_headers if self.command == 'PUT'
                    else self.server.signer)
            same = self.headers.get('Authorization', '') == sign(again.prepare()).headers['authorization']
        with self.server.lock:
            if same:
                self.server.matched += 1
            else:
                self.server.mismatched.append(f'{self.command} {self.path}')
        if not same:
            self._send(401, {'code': 'NotAuthenticated', 'message': 'signature differs'})
        return same

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


class FakeOciIdentity(http.server.ThreadingHTTPServer):
    """The instance metadata service (/opc/v2/...) and the auth service's
    X.509 federation endpoint (/v1/x509) on one loopback port. A federation
    request is answered only when it carries the leaf certificate and the
    intermediate, and its Authorization header is exactly the one the SDK's
    own AuthTokenRequestSigner makes for the same request (and verifies with
    the leaf certificate's public key). Each token issued is remembered with
    the session public key it was issued for."""

    def __init__(self, tenancy, region, leaf_cert, leaf_key, intermediate):
        super().__init__(('127.0.0.1', 0), _IdentityHandler)
        self.tenancy, self.region = tenancy, region
        self.leaf_cert, self.leaf_key, self.intermediate = leaf_cert, leaf_key, intermediate
        self.tokens = {}  # token -> session public key (cryptography object)
        self.federations = []  # 'same' or why not, per federation request
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f'http://127.0.0.1:{self.server_address[1]}'


class _LeafKey:
    """What AuthTokenRequestSigner asks of a certificate retriever."""

    def __init__(self, pem):
        self.pem = pem

    def get_private_key(self):
        return oci.signer.load_private_key(self.pem, None)


def _pem_body(pem):
    return ''.join(l for l in pem.splitlines() if not l.startswith('-----'))


class _IdentityHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def _send(self, status, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(status)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        srv = self.server
        if self.headers.get('Authorization') != 'Bearer Oracle':
            return self._send(401, b'unauthorized')
        answers = {'/opc/v2/instance/region': srv.region,
                   '/opc/v2/instance/id': 'OCID1.INSTANCE.OC1..ORACLE\n',
                   '/opc/v2/identity/cert.pem': srv.leaf_cert,
                   '/opc/v2/identity/key.pem': srv.leaf_key,
                   '/opc/v2/identity/intermediate.pem': srv.intermediate}
        if self.path not in answers:
            return self._send(404, b'Not Found')
        return self._send(200, answers[self.path].encode())

    def do_POST(self):
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from oci.auth.federation_client import AuthTokenRequestSigner
        srv = self.server
        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
        cert = x509.load_pem_x509_certificate(srv.leaf_cert.encode())
        fingerprint = ':'.join(f'{b:02X}' for b in cert.fingerprint(hashes.SHA1()))
        signer = AuthTokenRequestSigner(srv.tenancy, fingerprint, _LeafKey(srv.leaf_key))
        again = requests.Request('POST', f'http://{self.headers["Host"]}{self.path}', data=body,
                                 headers={'date': self.headers.get('Date', ''),
                                          'content-type': self.headers.get('Content-Type', '')})
        expected = signer(again.prepare()).headers['authorization']
        payload = json.loads(body)
        why = []
        if self.headers.get('Authorization') != expected:
            why.append('Authorization differs from the SDK\'s AuthTokenRequestSigner')
        if payload.get('certificate') != _pem_body(srv.leaf_cert):
            why.append('certificate')
        if payload.get('intermediateCertificates') != [_pem_body(srv.intermediate)]:
            why.append('intermediateCertificates')
        with srv.lock:
            srv.federations.append('; '.join(why) or 'same')
        if why:
            return self._send(401, {'code': 'NotAuthenticated', 'message': ', '.join(why)})
        public = serialization.load_der_public_key(base64.b64decode(payload['publicKey']))
        claims = json.dumps({'sub': 'ocid1.instance.oc1..oracle', 'opc-tenant': srv.tenancy,
                             'exp': int(time.time()) + 3600, 'n': len(srv.tokens) + 1})
        token = '.'.join(base64.urlsafe_b64encode(p.encode()).decode().rstrip('=')
                         for p in ('{"alg": "RS256"}', claims, 'signature'))
        with srv.lock:
            srv.tokens[token] = public
        return self._send(200, {'token': token})


def session_key_verifier(identity):
    """Accepts a request signed with key id ST$<a token `identity` issued>
    over the headers the SDK's SecurityTokenSigner signs, verified with the
    session public key that token was issued for."""
    def verify(handler):
        key_id = _auth_fields(handler.headers.get('Authorization')).get('keyId', '')
        public = identity.tokens.get(key_id[len('ST$'):]) if key_id.startswith('ST$') else None
        return public is not None and session_key_verifier_for(public)(handler)
    return verify


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

        failures += region_cases(folder, key, env, cli)
        failures += resource_principal_cases(folder, env, cases, cli)
        failures += instance_principal_cases(folder, env, cases, cli)
        failures += rp_exchange_cases(folder, env, cases, cli)
    print(f'oci {oci.__version__}: {"all the same" if not failures else f"{failures} differ"}')
    return 1 if failures else 0


def region_cases(folder, key, env, cli):
    """The Object Storage host of a profile's region: every short code the
    SDK knows ("phx"), names of other realms and one newer than the SDK's
    table, as `sluice whoami` shows it and oci.regions.endpoint_for
    ('object_storage', region) builds it; a short code the SDK does not know
    (it would send to objectstorage.zzq.oraclecloud.com) is refused by Sluice
    naming the region and the profile."""
    regions = sorted(oci.regions.REGIONS_SHORT_NAMES) + [
        'us-phoenix-1', 'US-ASHBURN-1', 'us-langley-1', 'uk-gov-london-1', 'eu-frankfurt-2',
        'ap-chiyoda-1', 'xx-newregion-7']
    config = os.path.join(folder, 'regions-config')
    differ = []
    for region in regions + ['zzq']:
        with open(config, 'w') as f:
            f.write(f'[DEFAULT]\nregion = {region}\ntenancy = ocid1.tenancy.oc1..aaaaoracle\n'
                    'user = ocid1.user.oc1..aaaaoracle\n'
                    'fingerprint = 11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff:00\n'
                    f'key_file = {key}\npass_phrase = {PASSPHRASE}\n')
        shown = subprocess.run([cli, 'whoami', f'oci://bkt@{NAMESPACE}/ds'],
                               env=dict(env, OCI_CONFIG_FILE=config), capture_output=True,
                               timeout=60)
        text = shown.stdout.decode() + shown.stderr.decode()
        if region == 'zzq':
            want = (f"OCI region 'zzq' from the region of profile DEFAULT in {config} is neither "
                    "a region name (such as us-phoenix-1) nor a known short code (such as phx)")
        else:
            want = (f'  endpoint: {oci.regions.endpoint_for("object_storage", region)} '
                    '(native Object Storage API)\n')
        if want not in text:
            differ.append(f'{region}: {text.strip()} (the SDK: {want.strip()})')
    ok = not differ
    print(f'{"same" if ok else "DIFFERENT"}  the Object Storage host of {len(regions)} regions '
          f'(short codes, other realms, a newer one) and the refusal of an unknown short code'
          + ''.join('\n    ' + d for d in differ), flush=True)
    return 0 if ok else 1


def resource_principal_cases(folder, env, cases, cli):
    """OCI_RESOURCE_PRINCIPAL_VERSION 2.2 with the token and key in files (as
    OCI Functions provides them): the fake re-signs with the SDK's
    get_resource_principals_signer() made from the same environment."""
    key = os.path.join(folder, 'rp_key.pem')
    subprocess.run(['openssl', 'genpkey', '-algorithm', 'RSA', '-pkeyopt',
                    'rsa_keygen_bits:2048', '-out', key], check=True, capture_output=True)
    claims = json.dumps({'sub': 'ocid1.fnfunc.oc1..oracle', 'res_tenant': 'ocid1.tenancy.oc1..oracle',
                         'res_compartment': 'ocid1.compartment.oc1..oracle',
                         'exp': int(time.time()) + 3600})
    rpst = '.'.join(base64.urlsafe_b64encode(p.encode()).decode().rstrip('=')
                    for p in ('{"alg": "RS256"}', claims, 'signature'))
    rpst_file = os.path.join(folder, 'rpst')
    with open(rpst_file, 'w') as f:
        f.write(rpst)
    rp_env = {'OCI_RESOURCE_PRINCIPAL_VERSION': '2.2', 'OCI_RESOURCE_PRINCIPAL_RPST': rpst_file,
              'OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM': key,
              'OCI_RESOURCE_PRINCIPAL_REGION': 'us-phoenix-1'}
    saved = {k: os.environ.get(k) for k in rp_env}
    os.environ.update(rp_env)
    try:
        signer = oci.auth.signers.get_resource_principals_signer()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    fake = FakeObjectStorage(signer)
    failures = read_and_whoami(
        fake, dict(env, OCI_CONFIG_FILE=os.path.join(folder, 'no-config'),
                   SLUICE_OCI_OBJECT_STORAGE_ENDPOINT=fake.url, **rp_env),
        [(f'resource principal 2.2, {name}', url) for name, url in cases], cli,
        lambda shown: 'resource principal' in shown and rpst not in shown and
        'PRIVATE KEY' not in shown)
    fake.shutdown()
    return failures


def instance_principal_cases(folder, env, cases, cli):
    """OCI_CLI_AUTH=instance_principal against FakeOciIdentity: Sluice's
    X.509 federation request must carry the Authorization header the SDK's
    AuthTokenRequestSigner makes for it, and its reads the session key its
    token was issued for; the SDK's InstancePrincipalsSecurityTokenSigner,
    pointed at the same fakes, must pass the same checks."""
    tenancy = 'ocid1.tenancy.oc1..oracleip'
    made = {}
    for name, subject in (('leaf', f'/CN=ocid1.instance.oc1..oracle/OU=opc-tenant:{tenancy}'),
                          ('intermediate', '/CN=PKISVC Identity Intermediate oracle')):
        cert, key = (os.path.join(folder, f'{name}.{ext}') for ext in ('crt', 'key'))
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
                        '-subj', subject, '-keyout', key, '-out', cert],
                       check=True, capture_output=True)
        made[name] = tuple(open(p).read() for p in (cert, key))
    identity = FakeOciIdentity(tenancy, 'us-phoenix-1', made['leaf'][0], made['leaf'][1],
                               made['intermediate'][0])
    fake = FakeObjectStorage(verify=session_key_verifier(identity))
    failures = read_and_whoami(
        fake, dict(env, OCI_CLI_AUTH='instance_principal',
                   OCI_METADATA_BASE_URL=identity.url + '/opc/v2',
                   SLUICE_OCI_FEDERATION_ENDPOINT=identity.url + '/v1/x509',
                   SLUICE_OCI_OBJECT_STORAGE_ENDPOINT=fake.url),
        [(f'instance principal, {name}', url) for name, url in cases], cli,
        lambda shown: 'OCI instance principal' in shown and tenancy in shown and
        not any(t in shown for t in identity.tokens) and 'PRIVATE KEY' not in shown)
    sluice_federations = list(identity.federations)
    if not sluice_federations or any(f != 'same' for f in sluice_federations):
        failures += 1
        print(f'DIFFERENT  instance principal federation requests: {sluice_federations}')
    else:
        print(f'same  instance principal federation requests ({len(sluice_federations)} signed '
              'as AuthTokenRequestSigner signs them)')

    # The SDK itself against the same fakes: OCI_METADATA_BASE_URL is its
    # override too (read when the signer is made; with it set, no other
    # metadata address is tried).
    before = len(identity.federations)
    saved = os.environ.get('OCI_METADATA_BASE_URL')
    os.environ['OCI_METADATA_BASE_URL'] = identity.url + '/opc/v2'
    try:
        sdk = oci.auth.signers.InstancePrincipalsSecurityTokenSigner(
            federation_endpoint=identity.url + '/v1/x509')
    finally:
        if saved is None:
            os.environ.pop('OCI_METADATA_BASE_URL')
        else:
            os.environ['OCI_METADATA_BASE_URL'] = saved
    answer = requests.get(fake.url + '/n/', auth=sdk)
    sdk_ok = (answer.status_code == 200 and identity.federations[before:] == ['same'] and
              not fake.mismatched and sdk.region == 'us-phoenix-1')
    failures += not sdk_ok
    print(f'{"same" if sdk_ok else "DIFFERENT"}  the SDK\'s InstancePrincipalsSecurityTokenSigner '
          f'on the same fakes (federation: {identity.federations[before:]}, '
          f'GET /n/: {answer.status_code})')
    fake.shutdown()
    identity.shutdown()
    return failures


def _jwt(claims):
    return '.'.join(base64.urlsafe_b64encode(p.encode()).decode().rstrip('=')
                    for p in ('{"alg": "RS256"}', json.dumps(claims), 'signature'))


def _auth_fields(header):
    import re
    return dict(re.findall(r'(\w+)="([^"]*)"', header or ''))


class FakeRpService(http.server.ThreadingHTTPServer):
    """The RPT service (any GET) and the identity service's POST
    /v1/resourcePrincipalSessionToken on one loopback port. A request is
    answered when its Authorization header is exactly the one the SDK's own
    signer makes for it (KeyPairSigner for "resource/v2.1..." key ids,
    SecurityTokenSigner for a token whose session key the oracle holds), or,
    for a key it does not hold (an instance principal's session key), when
    the signature verifies over the headers the SDK signs. Tokens it issues
    are remembered with their session key; `log` has one line per request:
    method, path, key id kind, and 'same' or why not."""

    def __init__(self, identity=None):
        super().__init__(('127.0.0.1', 0), _RpHandler)
        self.identity = identity
        self.signers = {}   # key id -> an SDK signer
        self.sessions = {}  # token -> (public key, private key or None)
        self.rpts = {}
        self.parents = {}
        self.log = []
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return f'http://127.0.0.1:{self.server_address[1]}'

    def add_session(self, token, private_key):
        self.sessions[token] = (private_key.public_key(), private_key)

    def kind(self, key_id):
        if key_id.startswith('ST$'):
            token = key_id[3:]
            order = list(self.sessions)
            if token in order:
                return f'ST$<token {order.index(token) + 1}>'
            if self.identity and token in self.identity.tokens:
                return 'ST$<instance principal token>'
        return key_id

    def check(self, handler, body):
        """'same' when `handler`'s request is signed as the SDK signs it."""
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding
        fields = _auth_fields(handler.headers.get('Authorization'))
        key_id = fields.get('keyId', '')
        post = handler.command == 'POST'
        signer = self.signers.get(key_id)
        token = key_id[3:] if key_id.startswith('ST$') else None
        if signer is None and token in self.sessions and self.sessions[token][1] is not None:
            signer = oci.auth.signers.SecurityTokenSigner(token, self.sessions[token][1])
        if signer is not None:
            headers = {'date': handler.headers.get('Date', '')}
            if post:
                headers['content-type'] = handler.headers.get('Content-Type', '')
            again = requests.Request(handler.command, f'http://{handler.headers["Host"]}{handler.path}',
                                     headers=headers, data=body if post else None).prepare()
            expected = signer(again).headers['authorization']
            return 'same' if handler.headers.get('Authorization') == expected else \
                'Authorization differs from the SDK signer\'s'
        public = None
        if token in self.sessions:
            public = self.sessions[token][0]
        elif self.identity and token in self.identity.tokens:
            public = self.identity.tokens[token]
        if public is None:
            return f'unknown key id {self.kind(key_id)[:40]}'
        names = 'date (request-target) host' + (' content-length content-type x-content-sha256' if post else '')
        if fields.get('headers') != names:
            return 'signed headers differ'
        signing = (f'date: {handler.headers.get("Date", "")}\n(request-target): '
                   f'{handler.command.lower()} {handler.path}\nhost: {handler.headers["Host"]}')
        if post:
            import hashlib
            if handler.headers.get('x-content-sha256') != base64.b64encode(hashlib.sha256(body).digest()).decode():
                return 'x-content-sha256 is not the body\'s'
            signing += (f'\ncontent-length: {handler.headers.get("Content-Length")}\ncontent-type: '
                        f'{handler.headers.get("Content-Type")}\nx-content-sha256: '
                        f'{handler.headers.get("x-content-sha256")}')
        try:
            public.verify(base64.b64decode(fields.get('signature', '')), signing.encode(),
                          padding.PKCS1v15(), hashes.SHA256())
            return 'same'
        except Exception:
            return 'signature does not verify'


class _RpHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def _send(self, status, body, headers=()):
        data = json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _logged(self, body):
        srv = self.server
        verdict = srv.check(self, body)
        key_id = _auth_fields(self.headers.get('Authorization')).get('keyId', '')
        line = f'{self.command} {self.path} {srv.kind(key_id)}'
        if self.headers.get('security-context'):
            line += f' security-context={self.headers["security-context"]}'
        with srv.lock:
            srv.log.append((line, verdict))
        if verdict != 'same':
            self._send(401, {'code': 'NotAuthenticated', 'message': verdict})
        return verdict == 'same'

    def do_GET(self):
        if not self._logged(b''):
            return
        srv = self.server
        with srv.lock:
            n = len(srv.rpts) + 1
            srv.rpts[f'rpt-{n}'] = f'spst-{n}'
        headers = [('opc-parent-rpt-url', srv.parents[self.path])] if self.path in srv.parents else []
        self._send(200, {'resourcePrincipalToken': f'rpt-{n}', 'servicePrincipalSessionToken': f'spst-{n}'},
                   headers)

    def do_POST(self):
        from cryptography.hazmat.primitives import serialization
        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
        if self.path != '/v1/resourcePrincipalSessionToken':
            return self._send(404, {'code': 'NotFound', 'message': self.path})
        if not self._logged(body):
            return
        srv = self.server
        payload = json.loads(body)
        if srv.rpts.get(payload.get('resourcePrincipalToken')) != payload.get('servicePrincipalSessionToken'):
            return self._send(401, {'code': 'NotAuthenticated', 'message': 'unknown RPT'})
        public = serialization.load_der_public_key(base64.b64decode(payload['sessionPublicKey']))
        with srv.lock:
            token = _jwt({'sub': 'ocid1.resource.oc1..oracle', 'res_tenant': 'ocid1.tenancy.oc1..oracle',
                          'exp': int(time.time()) + 3600, 'n': len(srv.sessions) + 1})
            private = None
            for _, (known_public, known_private) in list(srv.sessions.items()):
                if known_private is not None and known_public.public_numbers() == public.public_numbers():
                    private = known_private
            for held in srv.held_keys if hasattr(srv, 'held_keys') else ():
                if held.public_key().public_numbers() == public.public_numbers():
                    private = held
            srv.sessions[token] = (public, private)
        self._send(200, {'token': token})


def rp_storage_verifier(rp):
    """Object Storage accepts ST$<a token `rp` issued>: re-signed exactly by
    the SDK's SecurityTokenSigner when the session key is held, else verified
    with its public key."""
    def verify(handler):
        fields = _auth_fields(handler.headers.get('Authorization'))
        key_id = fields.get('keyId', '')
        if not key_id.startswith('ST$') or key_id[3:] not in rp.sessions:
            return False
        public, private = rp.sessions[key_id[3:]]
        if private is not None:
            signer = oci.auth.signers.SecurityTokenSigner(key_id[3:], private)
            again = requests.Request(handler.command, f'http://{handler.headers["Host"]}{handler.path}',
                                     headers={'date': handler.headers.get('Date', '')}).prepare()
            sign = signer.without_content_headers if handler.command == 'PUT' else signer
            return handler.headers.get('Authorization') == sign(again).headers['authorization']
        return session_key_verifier_for(public)(handler)
    return verify


def session_key_verifier_for(public):
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding

    def verify(handler):
        fields = _auth_fields(handler.headers.get('Authorization'))
        if fields.get('headers') != 'date (request-target) host':
            return False
        signing = (f'date: {handler.headers.get("Date", "")}\n(request-target): '
                   f'{handler.command.lower()} {handler.path}\nhost: {handler.headers["Host"]}')
        try:
            public.verify(base64.b64decode(fields.get('signature', '')), signing.encode(),
                          padding.PKCS1v15(), hashes.SHA256())
            return True
        except Exception:
            return False
    return verify


def _with_environment(variables, make):
    """make() with os.environ holding `variables` (None: unset), restored after."""
    saved = {k: os.environ.get(k) for k in variables}
    for k, v in variables.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    try:
        return make()
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _one_purchase(lines):
    """Request lines with the tokens a purchase bought named by kind (the
    leaf's, registered first, and the parents'), and a pair of requests that
    repeats the pair before it dropped: the SDK's 3.0 signer for a further
    parent refreshes the first parent's token when it is made, buying it
    twice where Sluice buys it once (the same requests, signed alike)."""
    import re
    named = [re.sub(r'ST\$<token (\d+)>', lambda m: 'ST$<leaf token>' if m.group(1) == '1'
                    else 'ST$<parent token>', line) for line in lines]
    out = []
    for pair in zip(named[::2], named[1::2]):
        if out[-2:] != list(pair):
            out.extend(pair)
    return out


class _passphrase_file_read_as_bytes:
    """oci 2.189.0's FileBasedSessionKeySupplier (a resource principal's key
    given as a path, 2.1.x and 2.2) opens the passphrase file with mode "b",
    which Python refuses (ValueError: Must have exactly one of
    create/read/write/append mode), so an encrypted key file with a
    passphrase file fails in the SDK as released. Within this context the
    supplier reads the file's bytes as the SDK means to, and loads the key
    with them; nothing else of the SDK is changed."""

    def __enter__(self):
        from oci.auth.signers import ephemeral_resource_principals_signer as module
        self.cls = module.FileBasedSessionKeySupplier
        self.saved = self.cls.refresh

        def refresh(supplier):
            secret = None
            if supplier.passphrase_file is not None:
                with open(supplier.passphrase_file, 'rb') as f:
                    secret = f.read()
            supplier.private_key = oci.signer.load_private_key_from_file(supplier.private_key_file, secret)
            supplier.public_key = supplier.private_key.public_key()
        self.cls.refresh = refresh
        return self

    def __exit__(self, *exc):
        self.cls.refresh = self.saved
        return False


def rp_exchange_cases(folder, env, cases, cli):
    """The versions that buy their token: 2.1, 2.1.1, 2.1.2 (with its RPT
    path and security context), an encrypted key with its passphrase (2.1:
    both in files; 2.1.1: both in the variables), 1.1 (the instance principal signs) and 3.0
    (a 2.2 leaf buys its parent's token, which buys a further parent's).
    Sluice reads through them and the fake checks each token request against
    the SDK's signer; then the SDK's get_resource_principals_signer(), made
    from the same environment, goes through the same fakes and must send the
    same requests as Sluice's first purchase, each signed as the fake
    expects."""
    from cryptography.hazmat.primitives import serialization
    failures = 0
    key_file = os.path.join(folder, 'rp21_key.pem')
    subprocess.run(['openssl', 'genpkey', '-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048',
                    '-out', key_file], check=True, capture_output=True)
    with open(key_file, 'rb') as f:
        key = serialization.load_pem_private_key(f.read(), None)
    tenancy_ip = 'ocid1.tenancy.oc1..oraclerp11'
    made = {}
    for name, subject in (('leaf', f'/CN=ocid1.instance.oc1..oracle/OU=opc-tenant:{tenancy_ip}'),
                          ('intermediate', '/CN=PKISVC Identity Intermediate oracle')):
        cert, ckey = (os.path.join(folder, f'rp11-{name}.{ext}') for ext in ('crt', 'key'))
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
                        '-subj', subject, '-keyout', ckey, '-out', cert], check=True, capture_output=True)
        made[name] = tuple(open(p).read() for p in (cert, ckey))
    identity = FakeOciIdentity(tenancy_ip, 'us-phoenix-1', made['leaf'][0], made['leaf'][1],
                               made['intermediate'][0])
    leaf_rpst = _jwt({'sub': 'ocid1.leaf.oc1..oracle', 'exp': int(time.time()) + 3600})
    leaf_rpst_file = os.path.join(folder, 'leaf_rpst')
    with open(leaf_rpst_file, 'w') as f:
        f.write(leaf_rpst)

    rid = 'ocid1.datasciencejob.oc1..oracle'
    ten = 'ocid1.tenancy.oc1..oracle'
    v21 = {'OCI_RESOURCE_PRINCIPAL_RESOURCE_ID': rid, 'OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM': key_file,
           'OCI_RESOURCE_PRINCIPAL_REGION': 'us-ashburn-1'}
    # The same key encrypted: in a file with its passphrase in another (the
    # SDK's file mode: a key path makes the passphrase a path), and both in
    # the variables themselves.
    encrypted_file = os.path.join(folder, 'rp21_key_encrypted.pem')
    subprocess.run(['openssl', 'pkey', '-in', key_file, '-aes-256-cbc', '-passout', 'pass:' + RP_PASSPHRASE,
                    '-out', encrypted_file], check=True, capture_output=True)
    passphrase_file = os.path.join(folder, 'rp21_passphrase')
    with open(passphrase_file, 'w') as f:
        f.write(RP_PASSPHRASE)  # no newline: the SDK takes the file's bytes as they are
    with open(encrypted_file) as f:
        encrypted_pem = f.read()
    versions = [
        ('2.1', dict(v21), {f'resource/v2.1/{rid}': ('2.1', None)}),
        ('2.1.1', dict(v21, OCI_RESOURCE_PRINCIPAL_TENANCY_ID=ten), {f'resource/v2.1.1/{ten}/{rid}': ('2.1.1', ten)}),
        ('2.1.2', dict(v21, OCI_RESOURCE_PRINCIPAL_TENANCY_ID=ten,
                       OCI_RESOURCE_PRINCIPAL_RPT_PATH='/custom/rpt/{}',
                       OCI_RESOURCE_PRINCIPAL_SECURITY_CONTEXT='oracle-context'),
         {f'resource/v2.1.2/{ten}/{rid}': ('2.1.2', ten)}),
        ('2.1 (encrypted key file, passphrase file)',
         dict(v21, OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM=encrypted_file,
              OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE=passphrase_file),
         {f'resource/v2.1/{rid}': ('2.1', None)}),
        ('2.1.1 (encrypted key and passphrase in the variables)',
         dict(v21, OCI_RESOURCE_PRINCIPAL_TENANCY_ID=ten, OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM=encrypted_pem,
              OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_PASSPHRASE=RP_PASSPHRASE),
         {f'resource/v2.1.1/{ten}/{rid}': ('2.1.1', ten)}),
        ('1.1', {}, {}),
        ('3.0', {'OCI_RESOURCE_PRINCIPAL_VERSION_FOR_LEAF_RESOURCE': '2.2',
                 'OCI_RESOURCE_PRINCIPAL_RPST_FOR_LEAF_RESOURCE': leaf_rpst_file,
                 'OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM_FOR_LEAF_RESOURCE': key_file,
                 'OCI_RESOURCE_PRINCIPAL_REGION_FOR_LEAF_RESOURCE': 'eu-frankfurt-1'}, {}),
    ]
    all_names = set()
    for _, variables, _ in versions:
        all_names.update(variables)
    for label, variables, key_ids in versions:
        version = label.split(' ')[0]
        for sdk_run in (False, True):
            rp = FakeRpService(identity)
            rp.held_keys = [key]
            for key_id, (kv, kt) in key_ids.items():
                rp.signers[key_id] = oci.auth.signers.KeyPairSigner(kv, rid, kt, key)
            rp.add_session(leaf_rpst, key)
            rp_env = dict(variables, OCI_RESOURCE_PRINCIPAL_VERSION=version,
                          OCI_RESOURCE_PRINCIPAL_RPT_ENDPOINT=rp.url,
                          OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT=rp.url)
            if version == '1.1':
                rp_env.update(OCI_METADATA_BASE_URL=identity.url + '/opc/v2',
                              SLUICE_OCI_FEDERATION_ENDPOINT=identity.url + '/v1/x509')
            grandparent = None
            if version == '3.0':
                # The SDK takes the parent's RPT URL as a client endpoint,
                # which may have no path: the parents are two fakes' roots
                # (one state; the first names the second as its parent).
                grandparent = FakeRpService(identity)
                for shared in ('signers', 'sessions', 'rpts', 'log', 'lock'):
                    setattr(grandparent, shared, getattr(rp, shared))
                grandparent.held_keys = rp.held_keys
                rp.parents['/'] = grandparent.url
                rp_env.update(OCI_RESOURCE_PRINCIPAL_RPT_URL_FOR_PARENT_RESOURCE=rp.url,
                              OCI_RESOURCE_PRINCIPAL_RPST_ENDPOINT_FOR_PARENT_RESOURCE=rp.url)
            fake = FakeObjectStorage(verify=rp_storage_verifier(rp))
            if not sdk_run:
                failures += read_and_whoami(
                    fake, dict(env, OCI_CONFIG_FILE=os.path.join(folder, 'no-config'),
                               SLUICE_OCI_OBJECT_STORAGE_ENDPOINT=fake.url, **rp_env),
                    [(f'resource principal {label}, {name}', url) for name, url in cases[:1]], cli,
                    lambda shown: 'resource principal' in shown and
                    not any(t in shown for t in rp.sessions) and 'PRIVATE KEY' not in shown
                    and RP_PASSPHRASE not in shown)
                sluice_log = list(rp.log)
            else:
                def make():
                    from oci.auth.signers import instance_principals_security_token_signer as ip
                    real_base, real_endpoint_for = (ip.InstancePrincipalsSecurityTokenSigner.METADATA_URL_BASE,
                                                    oci.regions.endpoint_for)
                    # The SDK's 1.1 asks the metadata service by its class
                    # attribute and federates at the region's auth host:
                    # both pointed at the fakes.
                    ip.InstancePrincipalsSecurityTokenSigner.METADATA_URL_BASE = identity.url + '/opc/v2'
                    oci.regions.endpoint_for = lambda service, region, *a, **k: (
                        identity.url if service == 'auth' else real_endpoint_for(service, region, *a, **k))
                    try:
                        return oci.auth.signers.get_resource_principals_signer()
                    finally:
                        ip.InstancePrincipalsSecurityTokenSigner.METADATA_URL_BASE = real_base
                        oci.regions.endpoint_for = real_endpoint_for
                unset = {k: None for k in all_names if k not in rp_env}
                released = None
                if 'PASSPHRASE' in ''.join(variables) and os.path.isabs(
                        variables['OCI_RESOURCE_PRINCIPAL_PRIVATE_PEM']):
                    # The SDK as released fails here (said below); the case
                    # is then checked with only its file mode put right.
                    try:
                        _with_environment(dict(rp_env, **unset), make)
                        released = 'works as released'
                    except Exception as e:
                        released = f'as released: {type(e).__name__}: {e}'
                try:
                    if released is not None:
                        with _passphrase_file_read_as_bytes():
                            signer = _with_environment(dict(rp_env, **unset), make)
                    else:
                        signer = _with_environment(dict(rp_env, **unset), make)
                    answer = requests.get(fake.url + '/n/', auth=signer).status_code
                except Exception as e:  # the SDK's own failure, reported
                    answer = f'{type(e).__name__}: {str(e)[:120]}'
                sdk_log = list(rp.log)
                sdk_lines = _one_purchase([l for l, _ in sdk_log])
                # Sluice bought a token per store it opened: its first purchase
                # is compared.
                sluice_lines = _one_purchase([l for l, _ in sluice_log])[:len(sdk_lines)]
                same_requests = bool(sdk_lines) and sdk_lines == sluice_lines
                ok = (answer == 200 and all(v == 'same' for _, v in sdk_log) and same_requests
                      and all(v == 'same' for _, v in sluice_log))
                failures += not ok
                print(f'{"same" if ok else "DIFFERENT"}  resource principal {label} token requests: '
                      f'Sluice {sluice_lines}, the SDK\'s {"the same" if same_requests else sdk_lines}'
                      + (f' (the SDK with its passphrase file read in mode "rb"; {released})'
                         if released else '')
                      + ('' if ok else f'\n    verdicts: Sluice {[v for _, v in sluice_log]}, '
                                       f'SDK {[v for _, v in sdk_log]}, SDK GET /n/: {answer}'), flush=True)
            fake.shutdown()
            rp.shutdown()
            if grandparent is not None:
                grandparent.shutdown()
    identity.shutdown()
    return failures


if __name__ == '__main__':
    loopback_only()
    sys.exit(main())
