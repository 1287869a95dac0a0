"""OCI request signatures made by the OCI SDK's own signer (oci.signer.Signer,
pinned in requirements.txt), for the test API keys in tests/data/oci/: the
known answers tests/stores/signing/oci_signature_test.cc checks Sluice's
signer against (tests/data/oci/signature_vectors.json).

  python oci_vectors.py --write   regenerates the file
  python oci_vectors.py           checks the file against the SDK (exit 1 when
                                  they differ); tests/sdk_oracle/run_oci.sh runs it

Each vector is a request (method, URL, Date, body) as the SDK would send it
and the headers the SDK's signer added: Authorization, and for body requests
x-content-sha256 and content-length. RSA PKCS#1 v1.5 signatures are
deterministic, so the same key, request and date give the same header."""
import json
import os
import sys

import oci
import requests

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), 'data', 'oci')
VECTORS = os.path.join(DATA, 'signature_vectors.json')
TENANCY = 'ocid1.tenancy.oc1..aaaaaaaatestoraclequerytenancy'
USER = 'ocid1.user.oc1..aaaaaaaatestoraclequeryuser'
FINGERPRINT = '20:3b:97:13:55:1c:5b:0d:d3:37:d8:50:4e:c5:3a:34'
DATE = 'Thu, 05 Jan 2014 21:31:40 GMT'
HOST = 'https://objectstorage.us-ashburn-1.oraclecloud.com'
REQUESTS = [
    ('GET', HOST + '/n/mytenancy/b/my-bucket/o/datasets/c4/index.json', None),
    ('HEAD', HOST + '/n/mytenancy/b/my-bucket/o/datasets/c4/shard.00000.mds', None),
    ('GET', HOST + '/n/mytenancy/b/my-bucket/o?prefix=datasets%2Fc4%2F&fields=name%2Csize'
            '&start=datasets%2Fc4%2Fb', None),
    ('GET', 'http://127.0.0.1:8123/n/ns/b/bkt/o/a%20b/c.txt', None),
    ('GET', HOST + '/n/', None),
    ('PUT', HOST + '/n/mytenancy/b/my-bucket/o/out/part.json', b'{"hello": "world"}\n'),
    ('POST', HOST + '/n/mytenancy/b/my-bucket/actions/listObjects', b''),
]


def vectors():
    out = []
    for key_file, passphrase in (('test_api_key.pem', None),
                                 ('test_api_key_encrypted.pem', 'test-passphrase')):
        signer = oci.signer.Signer(TENANCY, USER, FINGERPRINT, os.path.join(DATA, key_file),
                                   pass_phrase=passphrase)
        for method, url, body in REQUESTS:
            headers = {'date': DATE}
            if body is not None:
                headers['content-type'] = 'application/json'
            prepared = requests.Request(method, url, headers=headers, data=body).prepare()
            signed = signer(prepared)
            out.append({
                'key_file': key_file, 'passphrase': passphrase or '', 'method': method,
                'url': url, 'host': requests.utils.urlparse(url).netloc,
                'target': prepared.path_url, 'date': DATE,
                'body': body.decode() if body is not None else None,
                'content_type': signed.headers.get('content-type', ''),
                'content_length': signed.headers.get('content-length', ''),
                'x_content_sha256': signed.headers.get('x-content-sha256', ''),
                'authorization': signed.headers['authorization'],
            })
    return {'key_id': f'{TENANCY}/{USER}/{FINGERPRINT}', 'oci': oci.__version__,
            'vectors': out}


def main():
    made = vectors()
    if sys.argv[1:] == ['--write']:
        with open(VECTORS, 'w') as f:
            json.dump(made, f, indent=1)
            f.write('\n')
        print(f'wrote {len(made["vectors"])} vectors from oci {oci.__version__}')
        return 0
    with open(VECTORS) as f:
        stored = json.load(f)
    differ = [v['method'] + ' ' + v['url'] + ' (' + v['key_file'] + ')'
              for v, w in zip(made['vectors'], stored['vectors'])
              if {k: x for k, x in v.items()} != w]
    differ += ['count'] if len(made['vectors']) != len(stored['vectors']) else []
    for d in differ:
        print('DIFFERENT ' + d)
    print(f'oci {oci.__version__}: {len(made["vectors"])} signatures, '
          f'{"all the same as tests/data/oci/signature_vectors.json" if not differ else f"{len(differ)} differ"}')
    return 1 if differ else 0


if __name__ == '__main__':
    sys.exit(main())
