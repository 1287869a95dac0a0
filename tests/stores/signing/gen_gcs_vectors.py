#!/usr/bin/python3
"""Prints GCS XML API V4 HMAC (GOOG4-HMAC-SHA256) known answers.

Computed straight from Google's "V4 signing process" pages (canonical request,
string to sign, signing key "GOOG4"+secret -> date -> region -> "storage" ->
"goog4_request") with only hashlib/hmac, independent of the C++ signer. No
Google client is installed here, so this is the oracle for the GOOG4 names.
Run once with /usr/bin/python3 and paste the output into gcs_hmac_test.cc.
"""
import hashlib
import hmac
from urllib.parse import quote

ACCESS = 'GOOG1EXAMPLEACCESSID'
SECRET = 'bGoa+V7g/yqDXvKRqq+JTFn4uQZbPiQJo4pf9RzJ'
DATE = '20250830T123600Z'
SCOPE = f'{DATE[:8]}/auto/storage/goog4_request'


def enc(s):
    return quote(s, safe='-_.~')


def sign(canonical_request):
    sts = '\n'.join(['GOOG4-HMAC-SHA256', DATE, SCOPE,
                     hashlib.sha256(canonical_request.encode()).hexdigest()])
    key = ('GOOG4' + SECRET).encode()
    for part in [DATE[:8], 'auto', 'storage', 'goog4_request']:
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return sts, hmac.new(key, sts.encode(), hashlib.sha256).hexdigest()


def show(name, cr, sts, sig):
    def c(s):
        return '"' + s.replace('"', '\\"').replace('\n', '\\n"\n      "') + '"'
    print(f'// {name}\n  canonical_request = {c(cr)};\n  string_to_sign = {c(sts)};\n'
          f'  signature = "{sig}";')


# Header signing: ranged GET of an object, unsigned payload.
headers = {'host': 'storage.googleapis.com', 'range': 'bytes=0-1023',
           'x-goog-content-sha256': 'UNSIGNED-PAYLOAD', 'x-goog-date': DATE}
cr = '\n'.join(['GET', '/my-bucket/dir/shard.00000.mds.zstd', '',
                ''.join(f'{k}:{v}\n' for k, v in sorted(headers.items())),
                ';'.join(sorted(headers)), 'UNSIGNED-PAYLOAD'])
show('header', cr, *sign(cr))

# Query signing (signed URL), 15 minutes.
params = {'X-Goog-Algorithm': 'GOOG4-HMAC-SHA256', 'X-Goog-Credential': f'{ACCESS}/{SCOPE}',
          'X-Goog-Date': DATE, 'X-Goog-Expires': '900', 'X-Goog-SignedHeaders': 'host'}
cq = '&'.join(f'{enc(k)}={enc(v)}' for k, v in sorted(params.items()))
cr = '\n'.join(['GET', '/my-bucket/index.json', cq, 'host:storage.googleapis.com\n', 'host',
                'UNSIGNED-PAYLOAD'])
show('query', cr, *sign(cr))
