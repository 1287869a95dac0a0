#!/usr/bin/python3
"""Prints Azure Blob SharedKey known answers, computed straight from the spec.

"Authorize with Shared Key" (learn.microsoft.com/rest/api/storageservices/
authorize-with-shared-key), Blob service, x-ms-version 2015-02-21 and later.
Only the standard library (hmac, hashlib, base64, urllib.parse) is used, so
the answers are independent of the C++ signer. Run once with /usr/bin/python3
and paste the output into azure_shared_key_test.cc.
"""
import base64
import hashlib
import hmac
import re
from urllib.parse import unquote

AZURITE_KEY = ('Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/'
               'K1SZFPTOtr/KBHBeksoGMGw==')
OTHER_KEY = base64.b64encode(bytes(range(64))).decode()

STANDARD = ['content-encoding', 'content-language', 'content-length', 'content-md5',
            'content-type', 'date', 'if-modified-since', 'if-match', 'if-none-match',
            'if-unmodified-since', 'range']


def string_to_sign(method, path, query, headers, account):
    lower = {}
    for name, value in headers:
        lower.setdefault(name.lower(), []).append(value)
    parts = [method]
    for name in STANDARD:
        value = ','.join(lower.get(name, []))
        if name == 'content-length' and value == '0':
            value = ''  # 2015-02-21 and later
        parts.append(value)
    sts = '\n'.join(parts) + '\n'
    # Canonicalized headers: x-ms-*, lower-case, sorted, unfolded, trimmed.
    for name in sorted(n for n in lower if n.startswith('x-ms-')):
        values = [re.sub(r'\s+', ' ', v).strip() for v in lower[name]]
        sts += f'{name}:{",".join(values)}\n'
    # Canonicalized resource.
    sts += f'/{account}{path}'
    params = {}
    for raw in query.split('&') if query else []:
        name, _, value = raw.partition('=')
        params.setdefault(unquote(name).lower(), []).append(unquote(value))
    for name in sorted(params):
        sts += f'\n{name}:{",".join(sorted(params[name]))}'
    return sts


def case(name, method, path, query, headers, account, key):
    sts = string_to_sign(method, path, query, headers, account)
    sig = base64.b64encode(hmac.new(base64.b64decode(key), sts.encode(),
                                    hashlib.sha256).digest()).decode()
    esc = sts.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n"\n      "')
    print(f'  // {name}')
    print(f'  {{"{name}", "{sts and esc}",')
    print(f'   "SharedKey {account}:{sig}"}},')


DATE = 'Sat, 30 Aug 2025 12:36:00 GMT'
case('azurite-ranged-get', 'GET', '/devstoreaccount1/container/dir/blob%20name.mds', '',
     [('x-ms-date', DATE), ('x-ms-version', '2021-10-04'), ('Range', 'bytes=0-99')],
     'devstoreaccount1', AZURITE_KEY)
case('azurite-list-blobs', 'GET', '/devstoreaccount1/container',
     'restype=container&comp=list&prefix=train%20data%2F&Marker=abc&include=snapshots'
     '&include=metadata&maxresults=10',
     [('x-ms-date', DATE), ('x-ms-version', '2021-10-04')], 'devstoreaccount1', AZURITE_KEY)
case('azurite-put-block-blob', 'PUT', '/devstoreaccount1/container/shard.00000.mds', '',
     [('Content-Length', '11'), ('Content-Type', 'application/octet-stream'),
      ('x-ms-blob-type', 'BlockBlob'), ('X-MS-Meta-Note', '  two   spaces\there '),
      ('x-ms-date', DATE), ('x-ms-version', '2021-10-04')],
     'devstoreaccount1', AZURITE_KEY)
case('put-empty-blob', 'PUT', '/container/empty', '',
     [('Content-Length', '0'), ('x-ms-blob-type', 'BlockBlob'), ('x-ms-date', DATE),
      ('x-ms-version', '2021-10-04')], 'myaccount', OTHER_KEY)
case('head-with-conditions', 'HEAD', '/container/blob', 'snapshot=2025-08-30T12%3A00%3A00Z',
     [('If-Match', '"0x8D"'), ('If-None-Match', '"0x8E"'),
      ('If-Modified-Since', 'Fri, 29 Aug 2025 00:00:00 GMT'),
      ('If-Unmodified-Since', 'Sun, 31 Aug 2025 00:00:00 GMT'),
      ('Content-Encoding', 'gzip'), ('Content-Language', 'en'), ('Content-MD5', 'abc=='),
      ('x-ms-date', DATE), ('x-ms-version', '2021-10-04')], 'myaccount', OTHER_KEY)
