"""The job and node scopes' hosts: a remote served over HTTP on 127.0.0.1
and read by two DataLoader workers; the sums have the host once, with every
request the server answered (the index, read when the dataset opened, and
the workers' fetches), and the node's Prometheus file its series."""
import functools
import http.server
import os
import pathlib
import threading

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
    # This process's own view has only the index's request.
    own = ds.metrics()['hosts'][host]
    assert own['requests'] == 1
    out = tmp_path / 'prom'
    out.mkdir()
    text = pathlib.Path(ds.write_prometheus(str(out), scope='node')).read_text()
    assert (f'sluice_http_requests_total{{process="node",host="{host}"}} {answered}\n'
            in text), text
    assert f'sluice_http_transfer_seconds{{process="node",host="{host}",quantile="0.99"}}' in text
