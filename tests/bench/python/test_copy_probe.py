import functools
import http.server
import os
import threading

import pytest

import on_bench_path  # noqa: F401
import copy_probe  # noqa: E402


@pytest.fixture
def served(tmp_path):
    """A loopback HTTP server over tmp_path/www: (port, folder)."""
    www = tmp_path / 'www'
    www.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(www))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    try:
        yield server.server_address[1], www
    finally:
        server.shutdown()
        thread.join()
        server.server_close()


# Sizes around the probe's edges: inside the head's read, one 4 KiB page
# exactly, a partial last page, several 2 MiB buffers with a tail.
SIZES = [0, 10, 4096, 4096 * 3 + 5, (5 << 20) + 123]


@pytest.mark.parametrize('mode', ['write', 'splice', 'direct'])
@pytest.mark.parametrize('size', SIZES)
def test_every_mode_writes_exactly_the_served_bytes(served, tmp_path, mode, size):
    port, www = served
    body = bytes((i * 7 + size) % 251 for i in range(size))
    (www / 'obj.bin').write_bytes(body)
    out = tmp_path / f'{mode}.bin'
    assert copy_probe.fetch(mode, port, '/obj.bin', str(out)) == size
    assert out.read_bytes() == body


def test_discard_counts_the_body_and_writes_nothing(served, tmp_path):
    port, www = served
    (www / 'obj.bin').write_bytes(b'x' * ((3 << 20) + 1))
    out = tmp_path / 'never.bin'
    assert copy_probe.fetch('discard', port, '/obj.bin', str(out)) == (3 << 20) + 1
    assert not os.path.exists(out)


def test_a_missing_object_names_its_path_and_status(served, tmp_path):
    port, _ = served
    with pytest.raises(RuntimeError, match=r'^/absent\.bin: HTTP/1\.0 404 File not found$'):
        copy_probe.fetch('write', port, '/absent.bin', str(tmp_path / 'a.bin'))


@pytest.mark.parametrize('block', [4096, 65536, 3 << 20])
def test_write_rows_of_other_block_sizes_write_the_same_bytes(served, tmp_path, block):
    port, www = served
    body = bytes(i % 253 for i in range((5 << 20) + 77))
    (www / 'obj.bin').write_bytes(body)
    out = tmp_path / 'w.bin'
    assert copy_probe.fetch('write', port, '/obj.bin', str(out), block) == len(body)
    assert out.read_bytes() == body
