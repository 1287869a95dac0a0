"""Resumption through the Python package over a warm cache: a dataset whose
remote's index.json and shards are all in its cache folder loads a
mid-epoch state and reads on without a single connection to the remote (a
loopback listener stands in for S3 and records every connection), and reads
exactly what the same state gives over the same files read in place."""
import shutil
import socket
import threading

import pytest
import torch.utils.data

import sluice

SAMPLES = 300
BATCH = 4
SEED = 23
STATE = {'epoch': 0, 'sample_in_epoch': 120, 'num_canonical_nodes': 1, 'shuffle_seed': SEED,
         'initial_physical_nodes': 1}


class ConnectionLog:
    """A TCP listener on 127.0.0.1 that records the first bytes of every
    connection it accepts and closes it (any request to it fails)."""

    def __init__(self):
        self.sock = socket.create_server(('127.0.0.1', 0))
        self.port = self.sock.getsockname()[1]
        self.seen = []
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            # Counted when accepted, before any byte is read.
            self.seen.append(b'')
            with conn:
                conn.settimeout(1)
                try:
                    self.seen[-1] = conn.recv(256)
                except OSError:
                    pass

    def close(self):
        self.sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() (close alone does not)
        self.sock.close()
        self.thread.join(5)


@pytest.fixture
def folders(tmp_path):
    """(the dataset read in place, a warm cache of it: the same files)."""
    src = tmp_path / 'src'
    with sluice.MDSWriter(out=str(src), columns={'id': 'int', 'x': 'bytes'},
                          size_limit='8kb') as w:
        for i in range(SAMPLES):
            w.write({'id': i, 'x': bytes([i % 251]) * (100 + i % 37)})
    cache = tmp_path / 'cache'
    shutil.copytree(src, cache)
    assert len(list(cache.glob('shard.*.mds'))) > 3  # several shards to plan over
    return str(src), str(cache)


@pytest.fixture
def remote_endpoint(monkeypatch):
    log = ConnectionLog()
    monkeypatch.setenv('S3_ENDPOINT_URL', f'http://127.0.0.1:{log.port}')
    monkeypatch.setenv('AWS_ACCESS_KEY_ID', 'SLUICEWARMKEY')
    monkeypatch.setenv('AWS_SECRET_ACCESS_KEY', 'warm-s3cr3t-never-printed')
    monkeypatch.setenv('AWS_DEFAULT_REGION', 'us-east-1')
    for name in ('AWS_PROFILE', 'AWS_SESSION_TOKEN', 'AWS_ENDPOINT_URL', 'S3_UNSIGNED'):
        monkeypatch.delenv(name, raising=False)
    yield log
    log.close()


def resumed(remote, local, workers):
    """(id, x) of every sample after STATE, read through a DataLoader with
    `workers` workers (None: iterating the dataset itself)."""
    ds = sluice.StreamingDataset(remote=remote, local=local, shuffle=True, shuffle_seed=SEED,
                                 batch_size=BATCH, num_canonical_nodes=1, download_retry=0)
    ds.load_state_dict(STATE)
    if workers is None:
        return [(int(s['id']), bytes(s['x'])) for s in ds]
    loader = torch.utils.data.DataLoader(ds, batch_size=BATCH, num_workers=workers,
                                         collate_fn=lambda b: b)
    return [(int(s['id']), bytes(s['x'])) for batch in loader for s in batch]


@pytest.mark.parametrize('workers', [None, 0, 2])
def test_a_warm_resume_sends_nothing_and_reads_the_rest_of_the_epoch(folders, remote_endpoint,
                                                                     workers):
    src, cache = folders
    expected = resumed(None, src, workers)
    assert len(expected) == SAMPLES - STATE['sample_in_epoch']
    assert sorted({i for i, _ in expected}) == sorted(i for i, _ in expected)  # no repeats
    assert all(x == bytes([i % 251]) * (100 + i % 37) for i, x in expected)
    got = resumed('s3://bkt/ds', cache, workers)
    assert remote_endpoint.seen == []
    assert got == expected
