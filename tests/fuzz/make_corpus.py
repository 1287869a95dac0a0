#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into tests/fuzz/corpus/<target>/
from the Mosaic datasets in tests/data/mosaic (and a few hand-written
protocol samples). Re-run after changing an input layout; the output is
committed so that a fresh clone fuzzes from the same seeds.
Layouts: see the comment at the top of each *_fuzz.cc."""
import gzip
import hashlib
import json
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MOSAIC = os.path.join(HERE, '..', 'data', 'mosaic', 'mds')
OUT = os.path.join(HERE, 'corpus')


def put(target, data, name=None):
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    name = name or hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), 'wb') as f:
        f.write(data)


def read(*parts):
    with open(os.path.join(MOSAIC, *parts), 'rb') as f:
        return f.read()


def mds_fields(shard, encodings, sizes, limit):
    """The stored fields of the first `limit` samples of an MDS shard."""
    n = struct.unpack_from('<I', shard, 0)[0]
    offs = struct.unpack_from('<%dI' % (n + 1), shard, 4)
    out = []
    for i in range(min(n, limit)):
        pos = offs[i]
        var = [j for j, s in enumerate(sizes) if s is None]
        lens = list(struct.unpack_from('<%dI' % len(var), shard, pos))
        pos += 4 * len(var)
        fields = []
        for j, s in enumerate(sizes):
            ln = s if s is not None else lens.pop(0)
            fields.append(shard[pos:pos + ln])
            pos += ln
        out.append(fields)
    return out


def parquet_footers(limit=6, max_bytes=64 << 10):
    """parquet_footer_fuzz seeds from the smallest Parquet fixtures: the
    whole file (mode 1), its FileMetaData (mode 0) and its first page header
    with a few bytes after it (mode 2)."""
    folder = os.path.join(HERE, '..', 'data', 'parquet')
    if not os.path.isdir(folder):
        return
    names = sorted((os.path.getsize(os.path.join(folder, n)), n)
                   for n in os.listdir(folder) if n.endswith('.parquet'))
    for size, name in names[:limit]:
        if size > max_bytes:
            break
        data = open(os.path.join(folder, name), 'rb').read()
        meta_len = struct.unpack_from('<I', data, len(data) - 8)[0]
        put('parquet_footer_fuzz', b'\x01' + data)
        put('parquet_footer_fuzz', b'\x00' + data[len(data) - 8 - meta_len:len(data) - 8])
        put('parquet_footer_fuzz', b'\x02' + data[4:68])


# One small file per feature the chunk decoder has: v1/v2 pages, every
# codec, dictionary and DELTA/BYTE_STREAM_SPLIT encodings, nulls, nested
# lists, INT96, CRCs.
PARQUET_CHUNK_SEEDS = [
    'pa26_decimal_as_integer', 'pa26_int96_timestamps', 'pa26_page_crc_v2', 'pa26_codec_brotli',
    'pa26_codec_zstd', 'pa26_codec_gzip', 'pa26_codecs_per_column_v2', 'pa26_codec_lz4_raw',
    'pa26_nulls_v1', 'duckdb_v2_zstd', 'pa26_page_crc_v1', 'pa26_lists_v2_small_pages',
    'pa26_lists_v1', 'pa26_byte_stream_split_all', 'pa26_delta_v2', 'pa26_delta_v1',
    'pa26_snappy_random_v2',
]


def parquet_chunks():
    folder = os.path.join(HERE, '..', 'data', 'parquet')
    for name in PARQUET_CHUNK_SEEDS:
        path = os.path.join(folder, name + '.parquet')
        if os.path.exists(path):
            put('parquet_chunk_fuzz', open(path, 'rb').read())


def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def zigzag(v):
    return uleb(((v << 1) ^ (v >> 63)) & (2 ** 64 - 1))


def pack_bits(values, width):
    """LSB-first bit packing (Parquet's hybrid and delta miniblocks)."""
    acc = 0
    for i, v in enumerate(values):
        acc |= v << (i * width)
    return acc.to_bytes((len(values) * width + 7) // 8, 'little')


def delta_binary_packed(values, mask=2 ** 64 - 1):
    """DELTA_BINARY_PACKED, blocks of 128 values in 4 miniblocks of 32."""
    out = uleb(128) + uleb(4) + uleb(len(values)) + zigzag(values[0] if values else 0)
    deltas = [(b - a) & mask for a, b in zip(values, values[1:])]
    signed = [d - (mask + 1) if d > mask >> 1 else d for d in deltas]
    for start in range(0, len(deltas), 128):
        block = signed[start:start + 128]
        low = min(block)
        out += zigzag(low)
        widths, bodies = b'', b''
        for m in range(4):
            mini = [(d - low) & mask for d in block[m * 32:(m + 1) * 32]]
            if not mini:
                widths += b'\0'
                continue
            w = max(mini).bit_length()
            widths += bytes([w])
            bodies += pack_bits(mini + [0] * (32 - len(mini)), w)
        out += widths + bodies
    return out


def parquet_encoding_seeds():
    """parquet_encoding_fuzz: decoder byte, parameter byte, u16 count, section."""
    def seed(which, param, count, section):
        put('parquet_encoding_fuzz', bytes([which, param]) + struct.pack('<H', count) + section)
    # The hybrid: Encodings.md's 0..7 in 3 bits, then an RLE run of five 4s.
    runs = b'\x03' + pack_bits(list(range(8)), 3) + uleb(5 << 1) + b'\x04'
    seed(0, 3, 13, runs)
    seed(1, 3, 13, struct.pack('<I', len(runs)) + runs + b'values')
    seed(2, 0, 11, bytes([10]) + uleb(3 << 1) + struct.pack('<H', 700) + b'\x03' +
         pack_bits([1, 2, 3, 1023, 0, 5, 6, 7], 10))
    # PLAIN: booleans, INT32, DOUBLE, INT96, byte arrays, FIXED_LEN_BYTE_ARRAY(3).
    seed(3, 0, 11, b'\xca\x05')
    seed(3, 1, 3, struct.pack('<3i', -2, 7, 2 ** 31 - 1))
    seed(3, 2, 2, struct.pack('<2d', 1.5, -0.0))
    seed(3, 3, 1, struct.pack('<QI', 10 ** 9, 2451545))
    seed(3, 4, 3, b''.join(struct.pack('<I', len(v)) + v for v in [b'hello', b'', b'world']))
    seed(3, 3 * 8 + 7, 3, b'abcdefghi')
    # DELTA_BINARY_PACKED: Encodings.md's example 2, then wrap-around values.
    seed(4, 1, 8, delta_binary_packed([7, 5, 3, 1, 2, 3, 4, 5], 2 ** 32 - 1))
    seed(5, 5, 200, delta_binary_packed([(i * 7919) % 1000 - 500 for i in range(200)]))
    seed(5, 2, 4, delta_binary_packed([2 ** 63 - 1, -2 ** 63, 0, -1]))
    # DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY: Encodings.md's examples.
    words = [b'Hello', b'World', b'Foobar', b'ABCDEF']
    dlba = delta_binary_packed([len(w) for w in words], 2 ** 32 - 1) + b''.join(words)
    seed(6, 3, 4, dlba)
    suffixes = [b'axis', b'le', b'babble', b'yhood']
    seed(7, 1, 4, delta_binary_packed([0, 2, 0, 3], 2 ** 32 - 1) +
         delta_binary_packed([len(x) for x in suffixes], 2 ** 32 - 1) + b''.join(suffixes))
    # BYTE_STREAM_SPLIT: Encodings.md's three floats, and 5-byte values.
    seed(8, 4, 3, bytes.fromhex('aa00a3bb11b4cc22c5dd33d6'))
    seed(8, 5, 4, bytes(range(20)))
    # LZ4_RAW: literals only, and a match ("ab" then 13 more of it).
    seed(9, 0, 5, b'\x50hello')
    seed(9, 0, 15, b'\x24ab\x02\x00\x50ababa')


def main():
    # Regenerate the seeds, but keep the inputs findings left behind
    # (regression-*, see README.md): they are not made here.
    for root, _, files in os.walk(OUT):
        for f in files:
            if not f.startswith('regression-'):
                os.remove(os.path.join(root, f))
    # index.json
    for root, _, files in os.walk(MOSAIC):
        if 'index.json' in files:
            put('index_fuzz', open(os.path.join(root, 'index.json'), 'rb').read())
    # MDS shards: control byte = column set (see mds_shard_fuzz.cc).
    put('mds_shard_fuzz', b'\x00' + read('all_encodings', 'shard.00003.mds'))
    put('mds_shard_fuzz', b'\x01' + read('fixed_size_only', 'shard.00000.mds'))
    put('mds_shard_fuzz', b'\x02' + read('single_shard_no_limit', 'shard.00000.mds'))
    put('mds_shard_fuzz', b'\x03' + read('merged', 'part0', 'shard.00000.mds'))
    # MDS columns: control byte = encoding index (mds_encodings.h order is
    # all_encodings' column order for the first 32).
    entry = json.loads(read('all_encodings', 'index.json'))['shards'][3]
    for sample in mds_fields(read('all_encodings', 'shard.00003.mds'),
                             entry['column_encodings'], entry['column_sizes'], 3):
        for j, field in enumerate(sample):
            if len(field) <= 16384:
                put('mds_column_fuzz', bytes([j]) + field)
    for name in ['ndarray:int16:2,2', 'float32', 'str_int', 'list[pil]']:
        put('mds_column_fuzz', b'\xf0' + bytes([len(name)]) + name.encode() + b'\x01\x00\x02\x00\x03\x00\x04\x00')
    # Split shards: control, u16 meta size, meta, data.
    def split(target, control, folder, data_name):
        meta = read(folder, data_name + '.meta')
        put(target, bytes([control]) + struct.pack('<H', len(meta)) + meta + read(folder, data_name))
    split('jsonl_shard_fuzz', 0, 'json_plain', 'shard.00000.json')
    split('jsonl_shard_fuzz', 0, 'json_plain', 'shard.00004.json')
    split('jsonl_shard_fuzz', 1, 'json_crlf_newline', 'shard.00002.json')
    split('xsv_shard_fuzz', 0, 'csv_plain', 'shard.00002.csv')
    split('xsv_shard_fuzz', 2, 'tsv_plain', 'shard.00002.tsv')
    # Decompressors: control (bit 0: bound 4 GiB - 1; else a u16 bound), data.
    for fam, folder in [('zstd', 'compressed_zstd'), ('gz', 'compressed_gz'),
                        ('br', 'compressed_br'), ('bz2', 'compressed_bz2'),
                        ('snappy', 'compressed_snappy')]:
        files = sorted(f for f in os.listdir(os.path.join(MOSAIC, folder)) if f.endswith('.' + fam))
        data = read(folder, files[1])
        put('codec_%s_fuzz' % fam, b'\x01' + data)
        put('codec_%s_fuzz' % fam, b'\x00' + struct.pack('<H', 1000) + data)
    json_zstd = sorted(f for f in os.listdir(os.path.join(MOSAIC, 'json_zstd_hashed')) if f.endswith('.zstd'))
    put('codec_zstd_fuzz', b'\x01' + read('json_zstd_hashed', json_zstd[0]))
    # A zstd frame declaring 1 TiB, holding nothing (issue 13's 17-byte shard).
    put('codec_zstd_fuzz', b'\x01' + b'\x28\xb5\x2f\xfd\xe0' + struct.pack('<Q', 1 << 40) + b'\x01\x00\x00')
    # A gzip member of zeros whose trailer claims 4 GiB - 1.
    gz = bytearray(gzip.compress(b'\0' * 100000, mtime=0))
    gz[-4:] = b'\xff\xff\xff\xff'
    put('codec_gz_fuzz', b'\x01' + bytes(gz))
    # A snappy block whose varint length says 4 GiB - 1.
    put('codec_snappy_fuzz', b'\x01' + b'\xff\xff\xff\xff\x0f' + b'\x00a')
    # Blocks that SnappyPieces splits (formats/codec/snappy_pieces.h): a
    # literal of 80, one of 3, an overlapping copy of 6 from 2 back and a
    # copy of 4 from the start (as snappy_pieces_test.cc); then long
    # literals (a 2-byte length) with short copies between them.
    lit = bytes(ord('A') + i % 26 for i in range(80))
    put('codec_snappy_fuzz', b'\x01' + bytes([93, 60 << 2, 79]) + lit + bytes([2 << 2]) + b'xyz' +
        bytes([2 | (5 << 2), 2, 0, 2 | (3 << 2), 89, 0]))
    rnd = random.Random(34)
    block = bytearray()
    total = 0
    for n in (300, 1000, 700):
        chunk = bytes(rnd.randrange(256) for _ in range(n))
        block += bytes([61 << 2]) + struct.pack('<H', n - 1) + chunk + bytes([1 | (0 << 2), 4])
        total += n + 4
    put('codec_snappy_fuzz', b'\x01' + bytes([0x80 | (total & 0x7f), total >> 7]) + bytes(block))
    # HTTP responses: shape, step, 2 spare bytes, u32 a, b, expected, response.
    def http(shape, a, b, expected, text):
        put('http_response_fuzz', bytes([shape, 7, 0, 0]) + struct.pack('<III', a, b, expected) + text.encode())
    http(0, 0, 0, 0, 'HTTP/1.1 200 OK\r\nContent-Length: 5\r\nETag: "x"\r\n\r\nhello')
    http(5, 10, 19, 100, 'HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 10-19/100\r\nContent-Length: 10\r\n\r\n0123456789')
    http(4, 0, 0, 2000000, 'HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-536870911/536870912\r\n\r\n')
    http(4, 0, 0, 11, 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\nTrailer: x\r\n\r\n')
    http(7, 100, 0, 1000, 'HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nConnection: close\r\n\r\n' + 'x' * 64)
    http(13, 10, 40, 100, 'HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 25-40/100\r\n\r\n0123456789abcdef')
    # Header values: control bit 0 = Content-Range (0) or Retry-After (1).
    for v in ['bytes 0-99/1000', 'bytes 5-9/*', ' bytes 18446744073709551614-18446744073709551614/18446744073709551615 ']:
        put('http_fields_fuzz', b'\x00' + v.encode())
    for v in ['120', 'Wed, 21 Oct 2015 07:28:00 GMT', 'Sun, 06 Nov 2094 08:49:37 GMT', '0']:
        put('http_fields_fuzz', b'\x01' + v.encode())
    # URLs: control byte picks the redirect base (url_fuzz.cc).
    for i, u in enumerate([
            'https://bucket.s3.us-east-1.amazonaws.com/data/shard.00000.mds?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAEXAMPLE%2F20240101%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Signature=0123456789abcdef&X-Amz-Security-Token=FwoGZXIvYXdzEXAMPLE',
            'https://acct.blob.core.windows.net/c/d/index.json?sv=2022-11-02&ss=b&sig=abcdefSECRET%3D&se=2030-01-01',
            'http://[::1]:8080/a/b?apikey2=SECRETVALUE#frag',
            '/relative/path?token=abcdefgh',
            '../up/one',
            '//other.example:8443/x',
            'HTTPS://Example.COM:443/%2e%2e/?a=b&&c',
            'https://storage.googleapis.com/b/o?X-Goog-Signature=deadbeefcafe&key=AIzaSyEXAMPLE']):
        put('url_fuzz', bytes([i]) + u.encode())
    # XML: control bit 0 = S3 (1) or Azure (0), bit 1 = list under data/.
    put('xml_fuzz', b'\x03' + b'<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>data/</Prefix><KeyCount>2</KeyCount><IsTruncated>true</IsTruncated><NextContinuationToken>tok&amp;1</NextContinuationToken><Contents><Key>data/index.json</Key><Size>1208</Size><ETag>&quot;abc&quot;</ETag></Contents><Contents><Key>data/a&amp;b &#x4e2d;.mds</Key><Size>0</Size></Contents></ListBucketResult>')
    put('xml_fuzz', b'\x00' + b'\xef\xbb\xbf<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="http://127.0.0.1:10000/devstoreaccount1" ContainerName="c"><Prefix>data/</Prefix><Blobs><Blob><Name>data/shard.00000.mds</Name><Properties><Content-Length>540</Content-Length></Properties></Blob><BlobPrefix><Name>data/sub/</Name></BlobPrefix></Blobs><NextMarker/></EnumerationResults>')
    put('xml_fuzz', b'\x01' + b'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match &lt;the&gt; signature</Message><StringToSign>AWS4-HMAC-SHA256\n20240101T000000Z</StringToSign><SignatureProvided>abc</SignatureProvided><RequestId>1</RequestId></Error>')
    # Credentials.
    for c in ['DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=' + 'QUJDREVGR0hJSktMTU5PUA==' + ';EndpointSuffix=core.windows.net',
              'UseDevelopmentStorage=true',
              'BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1/;SharedAccessSignature=sv=2022-11-02&sig=SECRETSIG%3D',
              'AccountName=a;AccountKey=not base64!!;;',
              'DefaultEndpointsProtocol=ftp;AccountName=a']:
        put('azure_connection_string_fuzz', c)
    for c in ['[default]\naws_access_key_id = AKIAEXAMPLE\naws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n\n[profile dev]\nregion=eu-west-1\ns3 =\n  addressing_style = path\n',
              '# comment\n; other\n[ spaced ]\nAWS_Session_Token=  FwoGZXIvYXdzEXAMPLE  \n',
              'aws_secret_access_key = OUTSIDESECTIONSECRET\n',
              '[broken\nkey=value\n']:
        put('aws_credentials_fuzz', c)
    sa = {'type': 'service_account', 'project_id': 'p', 'private_key_id': 'k1',
          'private_key': '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n',
          'client_email': 'sa@p.iam.gserviceaccount.com', 'token_uri': 'https://oauth2.googleapis.com/token'}
    put('gcs_credentials_fuzz', b'\x01' + json.dumps(sa).encode())
    put('gcs_credentials_fuzz', b'\x01' + json.dumps(dict(sa, type='authorized_user')).encode())
    put('gcs_credentials_fuzz', b'\x00' + b'{"access_token": "ya29.EXAMPLETOKEN", "expires_in": 3599, "token_type": "Bearer"}')
    put('gcs_credentials_fuzz', b'\x00' + b'{"error": "invalid_grant", "error_description": "ya29.NOTATOKEN"}')
    creds = {'AccessKeyId': 'ASIAEXAMPLEKEYID0001', 'SecretAccessKey': 'wJalrEXAMPLESECRETKEY0000000',
             'Expiration': '2026-11-26T15:04:05Z'}
    put('aws_credential_documents_fuzz',
        b'\x00' + json.dumps(dict(creds, Version=1, SessionToken='FQoGEXAMPLETOKEN')).encode())
    put('aws_credential_documents_fuzz',
        b'\x01' + json.dumps(dict(creds, Token='FQoGEXAMPLETOKEN', Code='Success')).encode())
    put('aws_credential_documents_fuzz',
        b'\x02<AssumeRoleResponse><AssumeRoleResult><Credentials>'
        b'<AccessKeyId>ASIAEXAMPLEKEYID0001</AccessKeyId>'
        b'<SecretAccessKey>wJalrEXAMPLESECRETKEY0000000</SecretAccessKey>'
        b'<SessionToken>FQoGEXAMPLETOKEN</SessionToken>'
        b'<Expiration>2026-11-26T15:04:05.123Z</Expiration>'
        b'</Credentials></AssumeRoleResult></AssumeRoleResponse>')
    put('aws_credential_documents_fuzz', b'\x032026-11-26T15:04:05+00:00')
    parquet_footers()
    parquet_chunks()
    parquet_encoding_seeds()
    total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(OUT) for f in fs)
    print('seed corpora: %d bytes in %s' % (total, OUT), file=sys.stderr)


if __name__ == '__main__':
    main()
