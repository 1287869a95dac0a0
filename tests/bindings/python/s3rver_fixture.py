"""The s3rver fixtures: a real, signature-verifying s3rver (tests/servers,
started with node on a free loopback port, once per module) and `s3`, the
environment that points Sluice's and boto3's S3 clients at it."""
import os
import shutil
import socket
import subprocess
import time

import pytest

SERVERS = os.path.normpath(os.path.join(os.path.dirname(__file__), '..', '..', 'servers'))
KEY_ID = 'SLUICEPYKEY'
SECRET = 'py-s3cr3t-never-printed'


def _free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@pytest.fixture(scope='module')
def s3rver(tmp_path_factory):
    # One the caller started with KEY_ID, SECRET and the bucket bkt, where no
    # node runs beside the tests (tests/install/bare_root.sh's chroot).
    if os.environ.get('SLUICE_TEST_S3RVER'):
        yield os.environ['SLUICE_TEST_S3RVER']
        return
    node = shutil.which('node')
    if not node or not os.path.isdir(os.path.join(SERVERS, 'node_modules')):
        pytest.skip('node or tests/servers/node_modules missing (run ./dev deps)')
    port = _free_port()
    folder = tmp_path_factory.mktemp('s3rver')
    log = open(folder / 'log.txt', 'w+')
    proc = subprocess.Popen([node, os.path.join(SERVERS, 's3rver_launch.js'), str(port),
                             str(folder / 'data'), KEY_ID, SECRET, 'bkt'],
                            stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 20
    while time.time() < deadline:
        try:
            socket.create_connection(('127.0.0.1', port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail('s3rver did not start')
    if proc.poll() is not None:
        log.seek(0)
        pytest.fail('s3rver exited: ' + log.read())
    yield f'http://127.0.0.1:{port}'
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()


@pytest.fixture
def s3(s3rver, monkeypatch):
    for name in ('AWS_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_ENDPOINT_URL', 'AWS_ENDPOINT_URL_S3',
                 'S3_UNSIGNED', 'AWS_NO_SIGN_REQUEST', 'S3_ADDRESSING_STYLE'):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv('AWS_ACCESS_KEY_ID', KEY_ID)
    monkeypatch.setenv('AWS_SECRET_ACCESS_KEY', SECRET)
    monkeypatch.setenv('S3_ENDPOINT_URL', s3rver)
    return 's3://bkt'
