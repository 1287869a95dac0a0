"""The SDK oracle for Databricks unified authentication: for each way a user
configures it (the environment, ~/.databrickscfg profiles, OAuth M2M for a
service principal, OIDC token federation from a variable, a file or GitHub
Actions, an Azure workspace's Entra ID service principal or Azure CLI
login, a Google service account's key, or one impersonated through
Application Default Credentials, the VS Code extension's metadata service, a
user's `databricks auth login`, a Databricks runtime's own token exchanged
for an OAuth token of the profile's scopes, an Azure DevOps pipeline's ID
token, GitHub's ID token as an Entra ID client assertion, Model Serving's
mounted token, the Python SDK's cached browser login, an account-level
host), databricks-sdk's Config() (pinned in requirements.txt)
and Sluice are given the same environment and config file and pointed at the
same loopback fake of a workspace: its host metadata
(/.well-known/databricks-config), OIDC discovery and token endpoint (client
credentials and token exchange), GitHub Actions' ID token endpoint, Google's
OAuth2 endpoint (the JWT grant's signature checked), IAM Credentials'
generateIdToken and generateAccessToken, and the
Files API for one file of a volume; the Azure CLI and the Databricks CLI are
scripts on PATH. The
fake derives each token from the request that asked for it (client,
secret, grant, scope, subject token; the CLI's arguments; GitHub's
audience), so the two get the same token only when they asked the same
thing. Each case checks that the
headers Config().authenticate() gives (Authorization, and on Azure the
management token and resource id) are the ones Sluice sent to read the file, that both read the same bytes, and that `sluice whoami` names
the strategy and never a secret.

Run it with the venv's Python (tests/sdk_oracle/run_databricks.sh does).
Sluice runs in a child process of SLUICE_PYTHON (default /usr/bin/python3)
with PYTHONPATH=bindings/python and SLUICE_LIBRARY (default
build/bindings/c/libsluice.so); `sluice whoami` is SLUICE_CLI (default
build/bindings/cli/sluice). Prints one line per case; exits 1 when any
differs."""
import base64
import dataclasses
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

import databricks.sdk
import requests
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from databricks.sdk import environments
from databricks.sdk.config import Config

from loopback_only import loopback_only

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAT = 'dapi0123456789abcdef-oracle'
CLIENT_ID = 'sp-oracle-client'
CLIENT_SECRET = 'dose-oracle-secret-value'
AZURE_CLIENT = '0f5c2a1e-oracle-sp'
AZURE_SECRET = 'entra-oracle-secret-value'
TENANT = '72f988bf-oracle-tenant'
RESOURCE_ID = '/subscriptions/s1/resourceGroups/g/providers/Microsoft.Databricks/workspaces/w'
# The headers a request to the workspace is authorized by (Azure adds two,
# Google one).
AUTH_HEADERS = ('Authorization', 'X-Databricks-Azure-SP-Management-Token',
                'X-Databricks-Azure-Workspace-Resource-Id', 'X-Databricks-GCP-SA-Access-Token')
GOOGLE_ACCOUNT = 'reader@oracle-proj.iam.gserviceaccount.com'
IMPERSONATED = 'workspace-user@oracle-proj.iam.gserviceaccount.com'


def _b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b'=').decode()
VOLUME = '/Volumes/main/default/vol/ds'
ID_TOKEN = 'idtok-oracle-workload'
GITHUB_REQUEST_TOKEN = 'gh-oracle-request-secret'
# Azure DevOps: the pipeline's access token, and its ID token endpoint's path
# under the fake (SYSTEM_TEAMFOUNDATIONCOLLECTIONURI = host + '/ado/').
ADO_ACCESS_TOKEN = 'ado-oracle-system-access-secret'
ADO_TOKEN_PATH = ('/ado/proj-oracle/_apis/distributedtask/hubs/build/plans/plan-oracle/jobs/job-oracle/oidctoken')
# Databricks Model Serving's mounted token (the file the platform writes).
SERVING_TOKEN = 'serving-oracle-dependencies-token'
# The refresh token of a user's browser login the Python SDK cached
# (external-browser), and that login's expired access token.
BROWSER_REFRESH_TOKEN = 'rt-oracle-browser-login'
# The account of the account-level host (a second fake, FakeWorkspace(account)).
ACCOUNT = 'acc-oracle-0c1d'
FEDERATED_CLIENT = 'wif-oracle-client'
# A Databricks runtime's own token, and the fake `dbruntime` package both
# databricks-sdk and Sluice's Python package read it from (the runtime's
# host and token from SLUICE_ORACLE_RUNTIME_HOST and _TOKEN).
RUNTIME_TOKEN = 'dkea-oracle-runtime-token'
FAKE_DBRUNTIME = {
    # A runtime's namespace (empty): without it databricks.sdk.runtime,
    # imported by the runtime strategies, makes its remote dbutils, whose
    # Config() recurses into them.
    '__init__.py':
        'class UserNamespaceInitializer:\n'
        '    @classmethod\n'
        '    def getOrCreate(cls):\n'
        '        return cls()\n\n'
        '    def get_namespace_globals(self):\n'
        '        return {}\n',
    'sdk_credential_provider.py':
        'import os\n\n\n'
        'def init_runtime_native_auth():\n'
        '    host = os.environ.get("SLUICE_ORACLE_RUNTIME_HOST")\n'
        '    if host is None:\n'
        '        return None, None\n'
        '    return host, lambda: {"Authorization": "Bearer " + os.environ["SLUICE_ORACLE_RUNTIME_TOKEN"]}\n',
}
# The Azure CLI: prints a token derived from its arguments, and logs it (the
# fake workspace accepts what it logged); `account show` is a service
# principal's login.
FAKE_AZ = """#!/bin/sh
if [ "$2" = show ]; then
  echo '{"user": {"name": "0c1d-oracle-sp", "type": "servicePrincipal"}}'; exit 0
fi
t=azcli-$(printf '%s' "$*" | sha256sum | cut -c1-24)
echo "$t" >> "$SLUICE_ORACLE_AZ_LOG"
now=$(date +%s)
printf '{"accessToken": "%s", "expiresOn": "%s", "expires_on": %s, "tokenType": "Bearer"}' \
  "$t" "$(date -d @$((now + 3600)) '+%Y-%m-%d %H:%M:%S.000000')" $((now + 3600))
"""
# The Databricks CLI (`databricks auth login` done): prints the version of
# SLUICE_ORACLE_DBCLI_VERSION ("major minor patch") and, for `auth token`, a
# token derived from its arguments, logged as the Azure CLI's are, with an
# expiry an hour ahead as the Go CLI prints it (RFC 3339, UTC).
FAKE_DATABRICKS_CLI = """#!/bin/sh
if [ "$1" = version ]; then
  set -- $SLUICE_ORACLE_DBCLI_VERSION
  printf '{"Version": "%s.%s.%s", "Major": %s, "Minor": %s, "Patch": %s}' "$1" "$2" "$3" "$1" "$2" "$3"; exit 0
fi
t=dbcli-$(printf '%s' "$*" | sha256sum | cut -c1-24)
echo "$t" >> "$SLUICE_ORACLE_AZ_LOG"
printf '{"access_token": "%s", "token_type": "Bearer", "expiry": "%s"}' \
  "$t" "$(date -u -d @$(($(date +%s) + 3600)) '+%Y-%m-%dT%H:%M:%S.%NZ')"
"""
OBJECT = b'the same bytes for both clients\n'
# The metadata service of the VS Code extension: its URL's path is its key
# (a secret); the fake serves it beside the workspace.
METADATA_KEY = '/vscode-metadata/5d1e-oracle-metadata-key'


class FakeWorkspace(http.server.ThreadingHTTPServer):
    def __init__(self, account=None, shared=None):
        """`account`: an account-level host of that account (its metadata's
        OIDC endpoint has {account_id}, no workspace_id), sharing `shared`'s
        issued tokens and reads."""
        super().__init__(('127.0.0.1', 0), _Handler)
        self.account = account
        self.issued = shared.issued if shared else set()
        self.file_bearers = shared.file_bearers if shared else []
        self.lock = shared.lock if shared else threading.Lock()
        self.az_log = None  # the file the fake Azure CLI logs its tokens to
        # A Google service account's key (google-credentials), and the expiry
        # of every ID token issued (fixed, so that the same request gets the
        # same token).
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.google_private_pem = key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()).decode()
        self.google_public_key = key.public_key()
        self.id_token_exp = int(time.time()) + 3600
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def cli_issued(self):
        if not self.az_log or not os.path.exists(self.az_log):
            return set()
        with open(self.az_log) as f:
            return set(f.read().split())

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
        self.send_header('Content-Length', str(len(data)))
        self.end_headers()
        if self.command != 'HEAD':
            self.wfile.write(data)

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path = self.path.partition('?')[0]
        url = self.server.url
        js = [('Content-Type', 'application/json')]
        if path == '/.well-known/databricks-config' and self.server.account:
            return self._send(200, {'oidc_endpoint': url + '/oidc/accounts/{account_id}', 'cloud': 'aws'}, js)
        if self.server.account and path == f'/oidc/accounts/{self.server.account}/.well-known/oauth-authorization-server':
            return self._send(200, {'issuer': url + f'/oidc/accounts/{self.server.account}',
                                    'token_endpoint': url + f'/oidc/accounts/{self.server.account}/v1/token'}, js)
        if path == '/oidc/oauth2/v2.0/authorize':  # an Azure workspace's sign-in: its tenant's Entra ID
            return self._send(302, b'', [('Location', f'{url}/entra/{TENANT}/oauth2/v2.0/authorize?client_id=x')])
        if path == '/.well-known/databricks-config':
            return self._send(200, {'oidc_endpoint': url + '/oidc', 'workspace_id': '123',
                                    'cloud': 'aws'}, js)
        if path == '/oidc/.well-known/oauth-authorization-server':
            return self._send(200, {'issuer': url + '/oidc',
                                    'authorization_endpoint': url + '/oidc/v1/authorize',
                                    'token_endpoint': url + '/oidc/v1/token'}, js)
        if path == '/github/token':  # GitHub Actions: an ID token for the audience asked
            query = self.path.partition('?')[2]
            if self.headers.get('Authorization') != 'Bearer ' + GITHUB_REQUEST_TOKEN:
                return self._send(401, {'message': 'bad request token'}, js)
            audience = query.partition('&audience=')[2]
            return self._send(200, {'count': 1, 'value': 'idtok-github-' +
                                    hashlib.sha256(audience.encode()).hexdigest()[:16]}, js)
        if path == METADATA_KEY:  # metadata-service: a token for the host the headers name
            if self.headers.get('X-Databricks-Metadata-Version') != '1':
                return self._send(400, {'error': 'bad version'}, js)
            token = 'mds-' + hashlib.sha256(self.headers.get('X-Databricks-Host', '').encode()).hexdigest()[:24]
            with self.server.lock:
                self.server.issued.add(token)
            return self._send(200, {'access_token': token, 'token_type': 'Bearer',
                                    'expires_on': int(time.time()) + 3600}, js)
        if path == '/aad/auth':  # an Azure workspace's sign-in: names its tenant
            return self._send(302, b'', [('Location', f'https://login.microsoftonline.com/{TENANT}'
                                                      '/oauth2/authorize?client_id=x')])
        if path == '/api/2.0/fs/files' + VOLUME + '/index.json':
            auth = self.headers.get('Authorization', '')
            with self.server.lock:
                self.server.file_bearers.append(
                    {h: self.headers[h] for h in AUTH_HEADERS if self.headers.get(h) is not None})
                issued = self.server.issued | self.server.cli_issued()
                # The runtime's own token is accepted too (the runtime
                # strategy sends it); runtime-oauth's case still differs if
                # Sluice sent it where the SDK sent the exchanged token.
                known = (auth in ('Bearer ' + PAT, 'Bearer ' + RUNTIME_TOKEN, 'Bearer ' + SERVING_TOKEN) or
                         auth[len('Bearer '):] in issued)
                # Azure: the management token must be one Entra ID issued too.
                mgmt = self.headers.get('X-Databricks-Azure-SP-Management-Token')
                known = known and (mgmt is None or mgmt in issued)
                gcp = self.headers.get('X-Databricks-GCP-SA-Access-Token')
                known = known and (gcp is None or gcp in issued)
            if not known:
                return self._send(401, {'error_code': 'UNAUTHENTICATED'}, js)
            return self._send(200, OBJECT)
        return self._send(404, {'error_code': 'NOT_FOUND', 'message': path}, js)

    def do_POST(self):
        path = self.path.partition('?')[0]
        length = int(self.headers.get('Content-Length', '0'))
        raw = self.rfile.read(length)
        if path.startswith('/iam/v1/projects/-/serviceAccounts/'):
            return self._iam(path, raw)
        form = urllib.parse.parse_qs(raw.decode())
        if path == ADO_TOKEN_PATH + '' and self.path.endswith('?api-version=7.2-preview.1'):
            # Azure DevOps: an ID token for the pipeline's access token, an empty body
            if self.headers.get('Authorization') != 'Bearer ' + ADO_ACCESS_TOKEN or raw:
                return self._send(401, {'message': 'bad access token'})
            return self._send(200, {'oidcToken': 'idtok-oracle-ado'}, [('Content-Type', 'application/json')])
        if path == f'/entra/{TENANT}/oauth2/token' and 'client_assertion' in form:
            # Entra ID v1, a federated credential: GitHub's ID token for Entra's audience
            github = 'idtok-github-' + hashlib.sha256(b'api://AzureADTokenExchange').hexdigest()[:16]
            if (form.get('client_id') != [AZURE_CLIENT] or form.get('client_assertion') != [github] or
                    form.get('client_assertion_type') != ['urn:ietf:params:oauth:client-assertion-type:jwt-bearer']
                    or 'client_secret' in form):
                return self._send(401, {'error': 'invalid_client'}, [('Content-Type', 'application/json')])
            asked = {k: form.get(k) for k in ('client_id', 'grant_type', 'scope', 'resource', 'client_assertion')}
            token = 'entra-gh-' + hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()[:24]
            with self.server.lock:
                self.server.issued.add(token)
            return self._send(200, {'access_token': token, 'token_type': 'Bearer', 'expires_in': '3599'},
                              [('Content-Type', 'application/json')])
        if path == f'/entra/{TENANT}/oauth2/token':  # Entra ID v1, the client in the form
            if form.get('client_id') != [AZURE_CLIENT] or form.get('client_secret') != [AZURE_SECRET]:
                return self._send(401, {'error': 'invalid_client'})
            asked = {k: form.get(k) for k in ('client_id', 'grant_type', 'scope', 'resource')}
            token = 'entra-' + hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()[:24]
            with self.server.lock:
                self.server.issued.add(token)
            return self._send(200, {'access_token': token, 'token_type': 'Bearer',
                                    'expires_in': '3599', 'resource': form.get('resource', [''])[0]},
                              [('Content-Type', 'application/json')])
        if path == '/google/token':  # Google's OAuth2 endpoint: a service account's JWT grant
            return self._google_token(form)
        token_path = f'/oidc/accounts/{self.server.account}/v1/token' if self.server.account else '/oidc/v1/token'
        if path != token_path:
            return self._send(404, {'error': 'not_found'})
        if form.get('subject_token_type') == ['urn:databricks:params:oauth:token-type:personal-access-token']:
            # runtime-oauth: the runtime's own token exchanged, no client
            # authentication.
            if (self.headers.get('Authorization') or form.get('subject_token') != [RUNTIME_TOKEN] or
                    form.get('grant_type') != ['urn:ietf:params:oauth:grant-type:token-exchange']):
                return self._send(400, {'error': 'invalid_request'}, [('Content-Type', 'application/json')])
            asked = {k: form.get(k) for k in ('client_id', 'grant_type', 'scope', 'subject_token', 'subject_token_type',
                                               'requested_token_type', 'authorization_details', 'assume_group')}
            token = 'rtx-' + hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()[:24]
            with self.server.lock:
                self.server.issued.add(token)
            return self._send(200, {'access_token': token, 'token_type': 'Bearer', 'expires_in': 3600},
                              [('Content-Type', 'application/json')])
        if form.get('grant_type') == ['urn:ietf:params:oauth:grant-type:token-exchange']:
            # OIDC federation: no client authentication, a known ID token.
            subject = form.get('subject_token', [''])[0]
            if self.headers.get('Authorization') or not subject.startswith(('idtok-oracle', 'idtok-github-')):
                return self._send(401, {'error': 'invalid_grant'}, [('Content-Type', 'application/json')])
            asked = {k: form.get(k) for k in ('client_id', 'grant_type', 'scope', 'subject_token',
                                               'subject_token_type', 'client_secret', 'assume_group',
                                               'authorization_details')}
            token = 'wif-' + hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()[:24]
            with self.server.lock:
                self.server.issued.add(token)
            return self._send(200, {'access_token': token, 'token_type': 'Bearer', 'expires_in': 3600},
                              [('Content-Type', 'application/json')])
        if form.get('grant_type') == ['refresh_token']:
            # external-browser: the cached login's refresh token, the public
            # client databricks-cli, no secret
            if (form.get('refresh_token') != [BROWSER_REFRESH_TOKEN] or form.get('client_id') != ['databricks-cli']
                    or 'client_secret' in form or self.headers.get('Authorization')):
                return self._send(400, {'error': 'invalid_grant'}, [('Content-Type', 'application/json')])
            token = 'u2m-' + hashlib.sha256(json.dumps(form, sort_keys=True).encode()).hexdigest()[:24]
            with self.server.lock:
                self.server.issued.add(token)
            return self._send(200, {'access_token': token, 'token_type': 'Bearer', 'expires_in': 3600},
                              [('Content-Type', 'application/json')])
        auth = self.headers.get('Authorization', '')
        client = base64.b64decode(auth[len('Basic '):]).decode() if auth.startswith('Basic ') else ''
        if client != f'{CLIENT_ID}:{CLIENT_SECRET}':
            return self._send(401, {'error': 'invalid_client'})
        asked = {'client': client, 'grant_type': form.get('grant_type'), 'scope': form.get('scope'),
                 'assume_group': form.get('assume_group'), 'authorization_details': form.get('authorization_details')}
        token = 'm2m-' + hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()[:24]
        with self.server.lock:
            self.server.issued.add(token)
        return self._send(200, {'access_token': token, 'token_type': 'Bearer',
                                'expires_in': 3600, 'scope': 'all-apis'},
                          [('Content-Type', 'application/json')])

    def _iam(self, path, raw):
        """IAM Credentials (google-id): generateIdToken and generateAccessToken
        for IMPERSONATED, authorized by a token this fake issued; the token
        derived from the account, the request and the caller's token (no
        delegates, null or [], are one to IAM)."""
        js = [('Content-Type', 'application/json')]
        account, _, method = path[len('/iam/v1/projects/-/serviceAccounts/'):].partition(':')
        auth = self.headers.get('Authorization', '')
        with self.server.lock:
            known = auth.startswith('Bearer ') and auth[len('Bearer '):] in self.server.issued
        if account != IMPERSONATED or not known:
            return self._send(403, {'error': {'code': 403, 'status': 'PERMISSION_DENIED'}}, js)
        body = json.loads(raw)
        body['delegates'] = body.get('delegates') or []
        asked = json.dumps([account, method, body, auth], sort_keys=True)
        digest = hashlib.sha256(asked.encode()).hexdigest()[:24]
        if method == 'generateIdToken':
            token = (_b64url(b'{"alg":"RS256","typ":"JWT"}') + '.' +
                     _b64url(json.dumps({'aud': body.get('audience'), 'sub': digest,
                                         'exp': self.server.id_token_exp}).encode()) + '.' + _b64url(digest.encode()))
            answer = {'token': token}
        elif method == 'generateAccessToken':
            token = 'ya29.impersonated-' + digest
            expire = time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime(self.server.id_token_exp))
            answer = {'accessToken': token, 'expireTime': expire}
        else:
            return self._send(404, {'error': {'code': 404, 'status': 'NOT_FOUND'}}, js)
        with self.server.lock:
            self.server.issued.add(token)
        return self._send(200, answer, js)

    def _google_token(self, form):
        js = [('Content-Type', 'application/json')]
        assertion = form.get('assertion', [''])[0]
        if form.get('grant_type') != ['urn:ietf:params:oauth:grant-type:jwt-bearer'] or assertion.count('.') != 2:
            return self._send(400, {'error': 'invalid_grant'}, js)
        signed, _, signature = assertion.rpartition('.')
        try:  # signed with the account's key, as Google checks
            self.server.google_public_key.verify(base64.urlsafe_b64decode(signature + '=' * (-len(signature) % 4)),
                                                 signed.encode(), padding.PKCS1v15(), hashes.SHA256())
        except Exception:
            return self._send(400, {'error': 'invalid_grant', 'error_description': 'bad signature'}, js)
        part = signed.split('.')[1]
        claims = json.loads(base64.urlsafe_b64decode(part + '=' * (-len(part) % 4)))
        if claims.get('iss') != GOOGLE_ACCOUNT or claims.get('aud') != 'https://oauth2.googleapis.com/token':
            return self._send(400, {'error': 'invalid_grant'}, js)
        asked = {k: claims.get(k) for k in ('iss', 'aud', 'scope', 'target_audience')}
        digest = hashlib.sha256(json.dumps(asked, sort_keys=True).encode()).hexdigest()[:24]
        if claims.get('target_audience'):  # an ID token for the audience
            token = (_b64url(b'{"alg":"RS256","typ":"JWT"}') + '.' +
                     _b64url(json.dumps({'aud': claims['target_audience'], 'sub': digest,
                                         'exp': self.server.id_token_exp}).encode()) + '.' + _b64url(digest.encode()))
            body = {'id_token': token}
        else:
            token = 'ya29.oracle-' + digest
            body = {'access_token': token, 'expires_in': 3599, 'token_type': 'Bearer'}
        with self.server.lock:
            self.server.issued.add(token)
        return self._send(200, body, js)


def _cases(fake):
    host = fake.url
    account_host = fake.account_fake.url
    m2m = {'DATABRICKS_HOST': host, 'DATABRICKS_CLIENT_ID': CLIENT_ID,
           'DATABRICKS_CLIENT_SECRET': CLIENT_SECRET}
    return [
        # name, config file text or None, environment, whoami's expected credentials line
        ('environment PAT', None, {'DATABRICKS_HOST': host, 'DATABRICKS_TOKEN': PAT},
         'personal access token from DATABRICKS_TOKEN'),
        ('[DEFAULT] profile PAT', f'[DEFAULT]\nhost = {host}\ntoken = {PAT}\n', {},
         'personal access token from profile DEFAULT'),
        ('DATABRICKS_CONFIG_PROFILE', f'[DEFAULT]\nhost = https://wrong.example\ntoken = wrong\n\n'
         f'[work]\nhost = {host}\ntoken = {PAT}\n', {'DATABRICKS_CONFIG_PROFILE': 'work'},
         'personal access token from profile work'),
        ('[__settings__] default_profile', f'[__settings__]\ndefault_profile = work\n\n'
         f'[work]\nhost = {host}\ntoken = {PAT}\n', {},
         'personal access token from profile work'),
        ('profile host, environment token', f'[work]\nhost = {host}\n',
         {'DATABRICKS_CONFIG_PROFILE': 'work', 'DATABRICKS_TOKEN': PAT},
         'personal access token from DATABRICKS_TOKEN'),
        ('environment OAuth M2M', None, m2m, 'OAuth M2M for client ' + CLIENT_ID),
        ('profile OAuth M2M', f'[sp]\nhost = {host}\nclient_id = {CLIENT_ID}\n'
         f'client_secret = {CLIENT_SECRET}\n', {'DATABRICKS_CONFIG_PROFILE': 'sp'},
         'OAuth M2M for client ' + CLIENT_ID),
        ('DATABRICKS_AUTH_TYPE=oauth-m2m beside a token', None,
         dict(m2m, DATABRICKS_TOKEN='dapi-unused', DATABRICKS_AUTH_TYPE='oauth-m2m'),
         'OAuth M2M for client ' + CLIENT_ID),
        # Azure: the SDK is given the fake as its Entra ID (_sdk), Sluice
        # through SLUICE_DATABRICKS_ENTRA_ENDPOINT.
        ('environment Azure service principal, tenant from /aad/auth', None,
         {'DATABRICKS_HOST': host, 'ARM_CLIENT_ID': AZURE_CLIENT, 'ARM_CLIENT_SECRET': AZURE_SECRET,
          'SLUICE_DATABRICKS_ENTRA_ENDPOINT': host + '/entra/'},
         f'Azure service principal {AZURE_CLIENT} of tenant {TENANT} (from ARM_CLIENT_ID)'),
        ('profile Azure service principal with tenant and resource id',
         f'[az]\nhost = {host}\nazure_client_id = {AZURE_CLIENT}\nazure_client_secret = {AZURE_SECRET}\n'
         f'azure_tenant_id = {TENANT}\nazure_workspace_resource_id = {RESOURCE_ID}\n',
         {'DATABRICKS_CONFIG_PROFILE': 'az', 'SLUICE_DATABRICKS_ENTRA_ENDPOINT': host + '/entra/'},
         f'Azure service principal {AZURE_CLIENT} of tenant {TENANT} (from profile az'),
        # OIDC federation: account-wide (no client id) and a service
        # principal's policy (its client id).
        ('env-oidc, account-wide', None, {'DATABRICKS_HOST': host, 'DATABRICKS_OIDC_TOKEN': ID_TOKEN},
         'OIDC token federation of the account (ID token from DATABRICKS_OIDC_TOKEN)'),
        ('env-oidc of a service principal', None,
         {'DATABRICKS_HOST': host, 'DATABRICKS_CLIENT_ID': FEDERATED_CLIENT, 'DATABRICKS_OIDC_TOKEN': ID_TOKEN},
         f'OIDC token federation of client {FEDERATED_CLIENT} (ID token from DATABRICKS_OIDC_TOKEN)'),
        # (DATABRICKS_OIDC_TOKEN_ENV is a kind of its own for the SDK: with a
        # client id, DATABRICKS_AUTH_TYPE would have to choose.)
        ('env-oidc from DATABRICKS_OIDC_TOKEN_ENV', None,
         {'DATABRICKS_HOST': host, 'DATABRICKS_OIDC_TOKEN_ENV': 'MY_ID_TOKEN', 'MY_ID_TOKEN': ID_TOKEN + '-mine'},
         'OIDC token federation of the account (ID token from MY_ID_TOKEN)'),
        ('file-oidc chosen by DATABRICKS_AUTH_TYPE', None,
         {'DATABRICKS_HOST': host, 'DATABRICKS_CLIENT_ID': FEDERATED_CLIENT, 'DATABRICKS_AUTH_TYPE': 'file-oidc',
          'DATABRICKS_OIDC_TOKEN_FILEPATH': '{case}/id-token', 'DATABRICKS_OIDC_TOKEN': ID_TOKEN + '-env'},
         f'OIDC token federation of client {FEDERATED_CLIENT} (ID token from {{case}}/id-token)'),
        ('github-oidc', None,
         {'DATABRICKS_HOST': host, 'DATABRICKS_CLIENT_ID': FEDERATED_CLIENT,
          'ACTIONS_ID_TOKEN_REQUEST_URL': host + '/github/token?api-version=2.0',
          'ACTIONS_ID_TOKEN_REQUEST_TOKEN': GITHUB_REQUEST_TOKEN},
         f'OIDC token federation of client {FEDERATED_CLIENT} (ID token from GitHub Actions)'),
        # A Google service account's key, the JSON itself and a file's path.
        ('google-credentials JSON', None,
         {'DATABRICKS_HOST': host, 'GOOGLE_CREDENTIALS': json.dumps(_google_key(fake))},
         f'Google service account {GOOGLE_ACCOUNT} (ID token; key from GOOGLE_CREDENTIALS)'),
        ('google-credentials file', None,
         {'DATABRICKS_HOST': host, 'GOOGLE_CREDENTIALS': '{case}/sa.json'},
         f'Google service account {GOOGLE_ACCOUNT} (ID token; key from GOOGLE_CREDENTIALS)'),
        # google-id: Application Default Credentials (the key's file)
        # impersonate an account through IAM Credentials (the SDK's module
        # constants pointed at the fake in _sdk).
        ('google-id', None,
         {'DATABRICKS_HOST': host, 'DATABRICKS_GOOGLE_SERVICE_ACCOUNT': IMPERSONATED,
          'GOOGLE_APPLICATION_CREDENTIALS': '{case}/sa.json', 'SLUICE_GCP_IAM_CREDENTIALS_ENDPOINT': host + '/iam'},
         f'Google service account {IMPERSONATED} (ID token, impersonated by service account {GOOGLE_ACCOUNT}; '
         'from DATABRICKS_GOOGLE_SERVICE_ACCOUNT)'),
        # The Azure CLI on PATH, the tenant from /aad/auth, the subscription
        # of the resource id.
        # The runtime's token exchanged for an OAuth token of the profile's
        # scopes (runtime-oauth, before runtime); both read the runtime from
        # the fake dbruntime package. `sluice whoami` (the CLI, no Python)
        # has no runtime context: its credentials line is not checked.
        ('runtime-oauth in a Databricks runtime, scopes from the profile', '[DEFAULT]\nscopes = sql, all-apis\n',
         {'DATABRICKS_RUNTIME_VERSION': '15.4', 'SLUICE_ORACLE_RUNTIME_HOST': host,
          'SLUICE_ORACLE_RUNTIME_TOKEN': RUNTIME_TOKEN},
         None),
        ('runtime in a Databricks runtime (no scopes)', None,
         {'DATABRICKS_RUNTIME_VERSION': '15.4', 'SLUICE_ORACLE_RUNTIME_HOST': host,
          'SLUICE_ORACLE_RUNTIME_TOKEN': RUNTIME_TOKEN},
         None),
        ('profile OAuth M2M with scopes', f'[sp]\nhost = {host}\nclient_id = {CLIENT_ID}\n'
         f'client_secret = {CLIENT_SECRET}\nscopes = sql,all-apis sql\n', {'DATABRICKS_CONFIG_PROFILE': 'sp'},
         'OAuth M2M for client ' + CLIENT_ID),
        # The VS Code extension's metadata service, from the environment and
        # from a profile; the fake's token is derived from the host asked for.
        ('metadata-service', None, {'DATABRICKS_HOST': host, 'DATABRICKS_METADATA_SERVICE_URL': host + METADATA_KEY},
         f'the metadata service {host} (from DATABRICKS_METADATA_SERVICE_URL)'),
        ('profile metadata-service chosen by auth_type beside a token',
         f'[vscode]\nhost = {host}\ntoken = dapi-unused\nmetadata_service_url = {host}{METADATA_KEY}\n'
         'auth_type = metadata-service\n', {'DATABRICKS_CONFIG_PROFILE': 'vscode'},
         f'the metadata service {host} (from profile vscode'),
        # A user's `databricks auth login`: the CLI on PATH asked for the
        # profile's token (0.300.0: --profile, --force-refresh), or, an older
        # CLI and no profile, the host's.
        ('databricks-cli login of a profile', f'[work]\nhost = {host}\nauth_type = databricks-cli\n',
         {'DATABRICKS_CONFIG_PROFILE': 'work', 'SLUICE_ORACLE_DBCLI_VERSION': '0 300 0',
          'PATH': '{case}:' + os.environ.get('PATH', '')},
         'Databricks CLI login ({case}/databricks auth token --profile work --force-refresh)'),
        ('databricks-cli by host, an old CLI', None,
         {'DATABRICKS_HOST': host, 'SLUICE_ORACLE_DBCLI_VERSION': '0 200 0',
          'PATH': '{case}:' + os.environ.get('PATH', '')},
         f'Databricks CLI login ({{case}}/databricks auth token --host {host})'),
        # DATABRICKS_GROUP_ID: a group's token (assume_group) with the
        # profile's authorization_details; a token beside it is passed over.
        ('OAuth M2M of a group with authorization_details',
         f'[grp]\nhost = {host}\nclient_id = {CLIENT_ID}\nclient_secret = {CLIENT_SECRET}\n'
         'authorization_details = [{"type": "workspace_permission", "object_type": "workspace"}]\n',
         {'DATABRICKS_CONFIG_PROFILE': 'grp', 'DATABRICKS_GROUP_ID': 'g-oracle-42'},
         'OAuth M2M for client ' + CLIENT_ID),
        ('env-oidc of a group, a token passed over', f'[grp]\nhost = {host}\ntoken = dapi-passed-over\n',
         {'DATABRICKS_CONFIG_PROFILE': 'grp', 'DATABRICKS_GROUP_ID': 'g-oracle-42', 'DATABRICKS_OIDC_TOKEN': ID_TOKEN},
         'OIDC token federation of the account (ID token from DATABRICKS_OIDC_TOKEN)'),
        # The strategies databricks-sdk 0.162.0 added: an Azure DevOps
        # pipeline's ID token, GitHub's ID token as an Entra ID client
        # assertion, Model Serving's mounted token (host from the serving
        # environment), and an account-level host (OIDC endpoints of the
        # account, the account id as GitHub's audience).
        ('azure-devops-oidc', None,
         {'DATABRICKS_HOST': host, 'DATABRICKS_CLIENT_ID': FEDERATED_CLIENT, 'SYSTEM_ACCESSTOKEN': ADO_ACCESS_TOKEN,
          'SYSTEM_TEAMFOUNDATIONCOLLECTIONURI': host + '/ado/', 'SYSTEM_TEAMPROJECTID': 'proj-oracle',
          'SYSTEM_PLANID': 'plan-oracle', 'SYSTEM_JOBID': 'job-oracle', 'SYSTEM_HOSTTYPE': 'build'},
         f'OIDC token federation of client {FEDERATED_CLIENT} (ID token from Azure DevOps)'),
        ('github-oidc-azure, tenant from the workspace sign-in', None,
         {'DATABRICKS_HOST': host, 'ARM_CLIENT_ID': AZURE_CLIENT, 'SLUICE_DATABRICKS_ENTRA_ENDPOINT': host + '/entra/',
          'ACTIONS_ID_TOKEN_REQUEST_URL': host + '/github/token?api-version=2.0',
          'ACTIONS_ID_TOKEN_REQUEST_TOKEN': GITHUB_REQUEST_TOKEN},
         f"GitHub Actions' ID token for Azure client {AZURE_CLIENT} of tenant {TENANT} (from ARM_CLIENT_ID)"),
        ('model-serving, host from the serving environment', None,
         {'IS_IN_DB_MODEL_SERVING_ENV': 'true', 'SERVING_CREDENTIALS_DIR': '{case}',
          'DATABRICKS_MODEL_SERVING_HOST_URL': host},
         "Databricks Model Serving's token ({case}/model-dependencies-oauth-token)"),
        ('github-oidc on an account host', None,
         {'DATABRICKS_HOST': account_host, 'DATABRICKS_ACCOUNT_ID': ACCOUNT, 'DATABRICKS_CLIENT_ID': FEDERATED_CLIENT,
          'ACTIONS_ID_TOKEN_REQUEST_URL': account_host + '/github/token?api-version=2.0',
          'ACTIONS_ID_TOKEN_REQUEST_TOKEN': GITHUB_REQUEST_TOKEN},
         f'OIDC token federation of client {FEDERATED_CLIENT} (ID token from GitHub Actions)'),
        # A user's earlier browser login, cached by the Python SDK (its file
        # named by the SDK's own key), expired: both refresh it.
        ('external-browser from the SDK\'s token cache, refreshed', None,
         {'DATABRICKS_HOST': host, 'DATABRICKS_AUTH_TYPE': 'external-browser'},
         "the Databricks Python SDK's browser login of client databricks-cli "
         '({case}/.config/databricks-sdk-py/oauth/'),
        ('azure-cli login of a service principal', None,
         {'DATABRICKS_HOST': host, 'DATABRICKS_AZURE_RESOURCE_ID': RESOURCE_ID,
          'SLUICE_DATABRICKS_ENTRA_ENDPOINT': host + '/entra/', 'PATH': '{case}:' + os.environ.get('PATH', '')},
         f'Azure CLI login (az account get-access-token, tenant {TENANT})'),
    ]


def _google_key(fake):
    return {'type': 'service_account', 'project_id': 'oracle-proj', 'private_key_id': 'kid1',
            'private_key': fake.google_private_pem, 'client_email': GOOGLE_ACCOUNT, 'client_id': '1',
            'token_uri': fake.url + '/google/token'}


def _environment(folder, name, config_text, extra, fake):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('DATABRICKS_', 'ARM_', 'AZURE_', 'GOOGLE_', 'ACTIONS_ID_TOKEN_', 'SYSTEM_',
                                'IS_IN_DB', 'SERVING_', 'DB_MODEL_SERVING_'))}
    env.pop('SLUICE_AZURE_CLI', None)
    case_dir = os.path.join(folder, hashlib.sha256(name.encode()).hexdigest()[:12])
    os.makedirs(case_dir)
    env['HOME'] = case_dir
    if config_text is not None:
        with open(os.path.join(case_dir, '.databrickscfg'), 'w') as f:
            f.write(config_text)
    with open(os.path.join(case_dir, 'id-token'), 'w') as f:
        f.write(ID_TOKEN + '-file\n')
    # The Python SDK's cache of a browser login to the fake (databricks-sdk's
    # TokenCache.filename), expired, with its refresh token.
    key = {'host': fake.url, 'client_id': 'databricks-cli', 'scopes': ['all-apis', 'offline_access'], 'profile': ''}
    cache = os.path.join(case_dir, '.config', 'databricks-sdk-py', 'oauth',
                         hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest() + '.json')
    os.makedirs(os.path.dirname(cache))
    with open(cache, 'w') as f:
        json.dump({'token': {'access_token': 'u2m-expired', 'token_type': 'Bearer',
                             'expiry': '2001-01-01T00:00:00', 'refresh_token': BROWSER_REFRESH_TOKEN}}, f)
    with open(os.path.join(case_dir, 'model-dependencies-oauth-token'), 'w') as f:
        json.dump({'OAUTH_TOKEN': [{'oauthTokenValue': SERVING_TOKEN}]}, f)
    with open(os.path.join(case_dir, 'sa.json'), 'w') as f:
        json.dump(_google_key(fake), f)
    with open(os.path.join(case_dir, 'az'), 'w') as f:
        f.write(FAKE_AZ)
    os.chmod(os.path.join(case_dir, 'az'), 0o755)
    with open(os.path.join(case_dir, 'databricks'), 'w') as f:
        f.write(FAKE_DATABRICKS_CLI)
    os.chmod(os.path.join(case_dir, 'databricks'), 0o755)
    env['SLUICE_ORACLE_AZ_LOG'] = os.path.join(case_dir, 'az.log')
    env['SLUICE_ORACLE_DBRUNTIME'] = os.path.join(folder, 'fake-dbruntime')
    env.update({k: v.replace('{case}', case_dir) for k, v in extra.items()})
    return env, case_dir


def _sdk(env, fake):
    import google.auth.iam
    if 'DATABRICKS_RUNTIME_VERSION' in env and env['SLUICE_ORACLE_DBRUNTIME'] not in sys.path:
        # Before databricks.sdk.runtime is first imported (it binds dbruntime's
        # functions then).
        sys.path.insert(0, env['SLUICE_ORACLE_DBRUNTIME'])
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    iam = env.get('SLUICE_GCP_IAM_CREDENTIALS_ENDPOINT')
    saved_iam = (google.auth.iam._IAM_ENDPOINT, google.auth.iam._IAM_IDTOKEN_ENDPOINT)
    if iam:  # google-auth's IAM Credentials endpoints are module constants
        google.auth.iam._IAM_ENDPOINT = iam + '/v1/projects/-/serviceAccounts/{}:generateAccessToken'
        google.auth.iam._IAM_IDTOKEN_ENDPOINT = iam + '/v1/projects/-/serviceAccounts/{}:generateIdToken'
    try:
        kwargs = {}
        entra = env.get('SLUICE_DATABRICKS_ENTRA_ENDPOINT')
        if entra:  # the public Azure cloud, but its Entra ID is the fake
            kwargs['databricks_environment'] = environments.DatabricksEnvironment(
                environments.Cloud.AZURE, '127.0.0.1',
                azure_application_id=environments.ARM_DATABRICKS_RESOURCE_ID,
                azure_environment=dataclasses.replace(environments.ENVIRONMENTS['PUBLIC'],
                                                      active_directory_endpoint=entra))
        cfg = Config(**kwargs)
        headers = cfg.authenticate()
        auth = {h: headers[h] for h in AUTH_HEADERS if h in headers}
    finally:
        os.environ.clear()
        os.environ.update(saved)
        google.auth.iam._IAM_ENDPOINT, google.auth.iam._IAM_IDTOKEN_ENDPOINT = saved_iam
    got = requests.get(f'{fake.url}/api/2.0/fs/files{VOLUME}/index.json', headers=auth, timeout=10)
    return auth, got.content


def _sluice(env, fake):
    child = dict(env)
    child['PYTHONPATH'] = os.path.join(ROOT, 'bindings', 'python') + (
        os.pathsep + env['SLUICE_ORACLE_DBRUNTIME'] if 'DATABRICKS_RUNTIME_VERSION' in env else '')
    child['SLUICE_LIBRARY'] = os.environ.get(
        'SLUICE_LIBRARY', os.path.join(ROOT, 'build', 'bindings', 'c', 'libsluice.so'))
    before = len(fake.file_bearers)
    run = subprocess.run(
        [os.environ.get('SLUICE_PYTHON', '/usr/bin/python3'), '-c',
         'import sys; from sluice.remote import remote_read; '
         f'sys.stdout.buffer.write(remote_read("dbfs:{VOLUME}", "index.json"))'],
        env=child, capture_output=True, timeout=120)
    if run.returncode != 0:
        return None, run.stderr.decode(errors='replace').strip().splitlines()[-1:]
    bearers = fake.file_bearers[before:]
    return (bearers[-1] if bearers else {}), run.stdout


def main():
    fake = FakeWorkspace()
    fake.account_fake = FakeWorkspace(account=ACCOUNT, shared=fake)
    cli = os.environ.get('SLUICE_CLI', os.path.join(ROOT, 'build', 'bindings', 'cli', 'sluice'))
    failures = 0
    with tempfile.TemporaryDirectory(prefix='sluice-databricks-oracle-') as folder:
        os.makedirs(os.path.join(folder, 'fake-dbruntime', 'dbruntime'))
        for name, text in FAKE_DBRUNTIME.items():
            with open(os.path.join(folder, 'fake-dbruntime', 'dbruntime', name), 'w') as f:
                f.write(text)
        for name, config_text, extra, source in _cases(fake):
            env, case_dir = _environment(folder, name, config_text, extra, fake)
            fake.az_log = env['SLUICE_ORACLE_AZ_LOG']
            source = source.replace('{case}', case_dir) if source is not None else None
            start = time.monotonic()
            try:
                sdk_auth, sdk_bytes = _sdk(env, fake)
            except Exception as e:  # the SDK's own failure is the case's result
                sdk_auth, sdk_bytes = None, repr(e)
            our_auth, our_bytes = _sluice(env, fake)
            whoami = subprocess.run([cli, 'whoami', f'dbfs:{VOLUME}'], env=env,
                                    capture_output=True, timeout=60)
            shown = whoami.stdout.decode() + whoami.stderr.decode()
            secrets = ([PAT, CLIENT_SECRET, METADATA_KEY, AZURE_SECRET, ID_TOKEN, GITHUB_REQUEST_TOKEN, RUNTIME_TOKEN,
                        ADO_ACCESS_TOKEN, SERVING_TOKEN, BROWSER_REFRESH_TOKEN,
                        fake.google_private_pem.splitlines()[1]] +
                       sorted(fake.issued | fake.cli_issued()))
            problems = []
            if sdk_auth is None or sdk_auth != our_auth:
                problems.append(f'databricks-sdk: {sdk_auth}  sluice: {our_auth}')
            if not (sdk_bytes == our_bytes == OBJECT):
                problems.append(f'bytes: databricks-sdk {sdk_bytes!r}  sluice {our_bytes!r}')
            if source is not None and (whoami.returncode != 0 or f'credentials: {source}' not in shown):
                problems.append(f'whoami: {shown.strip()}')
            if any(s in shown for s in secrets):
                problems.append('whoami printed a secret')
            failures += bool(problems)
            print(f'{"same" if not problems else "DIFFERENT"}  {name}  '
                  f'({time.monotonic() - start:.1f} s)' + ''.join('\n    ' + p for p in problems),
                  flush=True)
    print(f'databricks-sdk {databricks.sdk.version.__version__}: '
          f'{"all the same" if not failures else f"{failures} differ"}')
    return 1 if failures else 0


if __name__ == '__main__':
    loopback_only()
    sys.exit(main())
