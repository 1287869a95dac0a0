"""The job and node scopes' hosts: a remote served over HTTP on 127.0.0.1
and read by two DataLoader workers; the sums have the host once, with every
request the server answered (the index and the first shard's guessed head,
asked for when the dataset opened, and the workers' fetches), and the node's
Prometheus file its series; the same server behind the benchmark's delay
proxy, its times within their bounds."""
import functools
import http.server
import os
import pathlib
import sys
import threading
import time

import pytest

import sluice


class CountingHandler(http.server.SimpleHTTPRequestHandler):
    """Serves a folder; counts the requests it answered 2xx."""

    def log_request(self, code='-', size='-'):
        if str(code).startswith('2'):
            with self.server.lock:
                self.server.answered += 1

    def log_message(self, *args):
        pass


@pytest.fixture
def served(tmp_path):
    root = tmp_path / 'www'
    with sluice.MDSWriter(out=str(root), columns={'id': 'int', 'data': 'bytes'},
                          size_limit=1 << 10) as w:
        for i in range(200):
            w.write({'id': i, 'data': bytes([i % 251]) * 20})
    handler = functools.partial(CountingHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
    server.answered = 0
    server.lock = threading.Lock()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_job_and_node_scopes_merge_the_workers_hosts(tmp_path, monkeypatch, served):
    state = tmp_path / 'state'
    state.mkdir()
    monkeypatch.setenv('SLUICE_CACHE_STATE_DIR', str(state))
    host = f'http://127.0.0.1:{served.server_port}'
    ds = sluice.StreamingDataset(remote=host, local=str(tmp_path / 'local'), batch_size=10,
                                 shuffle=False)
    loader = sluice.StreamingDataLoader(ds, batch_size=10, num_workers=2,
                                        collate_fn=lambda b: [s['id'] for s in b])
    assert sorted(i for b in loader for i in b) == list(range(200))
    answered = served.answered
    assert answered >= 10  # the index and 9 shards at least
    for scope in ('job', 'node'):
        m = ds.metrics(scope)
        assert m['processes'] == 3, scope
        assert list(m['hosts']) == [host], scope
        h = m['hosts'][host]
        assert h['requests'] == answered and h['attempts'] == answered, scope
        assert h['failed'] == 0 and h['retries'] == 0
        assert h['transfer']['count'] == answered
        assert m['totals']['requests'] == answered
        assert h['transfer']['p50_ms'] > 0
    # This process's own view has the index's request and the first shard's
    # head asked for beside it (guess_first_shard): the parent reads
    # nothing itself, and the bytes are for the worker whose first sample
    # they hold (handed over at the fork); this server ignores Range, so
    # there the guess finds nothing and that worker reads as without it.
    own = ds.metrics()['hosts'][host]
    assert own['requests'] == 2
    out = tmp_path / 'prom'
    out.mkdir()
    text = pathlib.Path(ds.write_prometheus(str(out), scope='node')).read_text()
    assert (f'sluice_http_requests_total{{process="node",host="{host}"}} {answered}\n'
            in text), text
    assert f'sluice_http_transfer_seconds{{process="node",host="{host}",quantile="0.99"}}' in text


def test_a_delayed_link_reads_back_within_the_histograms_bounds(tmp_path, served):
    """Through the benchmark's delay proxy (bench/python/delay_proxy.py),
    which holds each response's first byte until 100 ms after its request
    arrived: every request's time to first byte and transfer time is at
    least 100 ms, so the host's percentiles are at least 100 ms / 1.19 (a
    percentile is within 19% of a measured value) and its busy_s at least
    0.1 s per request; no more than the wall time per request in flight;
    the diagnosis names the downloads from that host."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[3] / 'bench' / 'python'))
    from delay_proxy import DelayProxy

    with DelayProxy(served.server_port, delay_ms=100, rate_mbps=100) as proxy:
        host = f'http://127.0.0.1:{proxy.port}'
        began = time.monotonic()
        ds = sluice.StreamingDataset(remote=host, local=str(tmp_path / 'local'), batch_size=10,
                                     shuffle=False)
        assert [s['id'] for s in ds] == list(range(200))
        m = ds.metrics()
        wall = time.monotonic() - began
    answered = served.answered
    h = m['hosts'][host]
    assert h['requests'] == h['attempts'] == answered >= 10  # the index and 9 shards at least
    assert h['first_byte']['count'] == h['transfer']['count'] == answered
    for timing in ('first_byte', 'transfer'):
        assert h[timing]['p50_ms'] >= 100 / 1.19, (timing, h[timing])
        assert h[timing]['p99_ms'] <= wall * 1000 * 1.19, (timing, h[timing])
    assert 0.1 * answered <= h['busy_s'] <= wall * answered
    t = m['totals']
    assert h['retries'] == h['failed'] == h['throttles_503'] == 0
    assert 0 < t['wait_download_s'] <= t['wait_s'] <= t['seconds'] <= wall
    assert m['diagnosis'].startswith('waited '), m['diagnosis']
    assert f'on downloads from {host}: ' in m['diagnosis'], m['diagnosis']
