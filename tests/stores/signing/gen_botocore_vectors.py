#!/usr/bin/python3
"""Prints S3 SigV4 known answers from botocore, the oracle for S3's own rules.

Run once with Debian's python3-botocore (`apt-get install python3-botocore`):
    /usr/bin/python3 tests/stores/signing/gen_botocore_vectors.py
and paste the output into s3_botocore_test.cc. Fixed clock and credentials,
so the output never changes for a given botocore version.
"""
import datetime
import types

import botocore
import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

FIXED = datetime.datetime(2013, 5, 24, 0, 0, 0)


class FixedDatetime(datetime.datetime):
    @classmethod
    def utcnow(cls):
        return FIXED


botocore.auth.datetime = types.SimpleNamespace(datetime=FixedDatetime)

AKID = 'AKIAIOSFODNN7EXAMPLE'
SECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'
TOKEN = 'IQoJb3JpZ2luX2VjEXAMPLE+/token=='


class CapturingS3Auth(botocore.auth.S3SigV4Auth):
    def canonical_request(self, request):
        self.last_cr = super().canonical_request(request)
        return self.last_cr


class CapturingS3QueryAuth(botocore.auth.S3SigV4QueryAuth):
    def canonical_request(self, request):
        self.last_cr = super().canonical_request(request)
        return self.last_cr


class NoPayloadSigning:
    s3 = {'payload_signing_enabled': False}


def c_string(s):
    return '"' + s.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n"\n      "') + '"'


def header_case(name, method, url, headers, body=b'', params=None, token=None,
                unsigned=False):
    creds = Credentials(AKID, SECRET, token)
    auth = CapturingS3Auth(creds, 's3', 'us-east-1')
    req = AWSRequest(method=method, url=url, headers=headers, data=body, params=params or {})
    if unsigned:
        req.context['client_config'] = NoPayloadSigning()
    auth.add_auth(req)
    print(f'// {name}')
    print(f'  {{"{name}",')
    print(f'   /*canonical_request=*/{c_string(auth.last_cr)},')
    print(f'   /*authorization=*/{c_string(req.headers["Authorization"])},')
    print(f'   /*content_sha256=*/{c_string(req.headers["X-Amz-Content-SHA256"])}}},')


def presign_case(name, method, url, expires, token=None):
    creds = Credentials(AKID, SECRET, token)
    auth = CapturingS3QueryAuth(creds, 's3', 'us-east-1', expires=expires)
    req = AWSRequest(method=method, url=url)
    auth.add_auth(req)
    print(f'// {name}')
    print(f'  {{"{name}",')
    print(f'   /*canonical_request=*/{c_string(auth.last_cr)},')
    print(f'   /*url=*/{c_string(req.url)}}},')


print(f'// botocore {botocore.__version__}')
print('// --- header signing ---')
# The example of the S3 SigV4 documentation (virtual-hosted, ranged GET).
header_case('get-object-range', 'GET', 'https://examplebucket.s3.amazonaws.com/test.txt',
            {'Range': 'bytes=0-9'})
# Path style, a key with characters S3 keys may hold, a session token.
header_case('get-path-style-token', 'GET',
            'https://s3.us-east-1.amazonaws.com/examplebucket/dir%20a/b%2Bc~d%3De.txt',
            {}, token=TOKEN)
# PUT with a signed body and a content type.
header_case('put-object', 'PUT', 'https://examplebucket.s3.amazonaws.com/data/shard.00000.mds',
            {'Content-Type': 'application/octet-stream', 'Content-Length': '11'},
            body=b'hello world')
# UNSIGNED-PAYLOAD (payload signing disabled).
header_case('put-unsigned-payload', 'PUT', 'https://examplebucket.s3.amazonaws.com/big.bin',
            {'Content-Length': '11'}, body=b'hello world', unsigned=True)
# ListObjectsV2 with query parameters that need encoding.
header_case('list-objects-v2', 'GET', 'https://examplebucket.s3.amazonaws.com/',
            {}, params={'list-type': '2', 'prefix': 'train data/', 'max-keys': '1000',
                        'continuation-token': '1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM='})
print('// --- presigned URLs ---')
presign_case('presign-get', 'GET', 'https://examplebucket.s3.amazonaws.com/test.txt', 86400)
presign_case('presign-get-token', 'GET',
             'https://s3.us-east-1.amazonaws.com/examplebucket/dir%20a/b%2Bc.txt', 3600,
             token=TOKEN)
