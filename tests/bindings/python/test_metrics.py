"""StreamingDataset.metrics() and diagnosis(): the engine's counters of a
known job (a remote folder of 9 shards read twice), its windows, and every
field documented in docs/metrics.rst."""
import itertools
import os
import pathlib
import re
import time

import pytest

import sluice

DOCS = (pathlib.Path(__file__).resolve().parents[3] / 'docs' / 'metrics.rst').read_text()


def write_remote(root):
    with sluice.MDSWriter(out=root, columns={'id': 'int', 'data': 'bytes'},
                          size_limit=1 << 10) as w:
        for i in range(200):
            w.write({'id': i, 'data': bytes([i % 251]) * 20})
    return sorted(f for f in os.listdir(root) if f.startswith('shard.'))


def keys(value, into):
    if isinstance(value, dict):
        for k, v in value.items():
            into.add(k)
            if k != 'hosts':  # host names are data, their fields are keys
                keys(v, into)
            else:
                for host in v.values():
                    keys(host, into)
    return into


def test_counts_of_a_folder_remote_read_twice(tmp_path):
    remote, local = str(tmp_path / 'remote'), str(tmp_path / 'local')
    shards = write_remote(remote)
    assert len(shards) == 9
    stored = sum(os.path.getsize(os.path.join(remote, f)) for f in shards)
    ds = sluice.StreamingDataset(remote=remote, local=local, batch_size=8, shuffle=False)
    assert [s['id'] for s in ds] == list(range(200))
    m = ds.metrics()
    assert m['remote'] == remote
    t = m['totals']
    assert (t['samples'], t['downloads'], t['shards_downloaded']) == (200, 9, 9)
    assert t['bytes_downloaded'] == stored
    # Near the epoch's end the next epoch's first shards are opened (hits,
    # how many depends on timing); nothing was evicted or failed.
    assert (t['shards_evicted'], t['download_errors']) == (0, 0)
    assert t['cache_bytes_on_disk'] == stored
    assert t['cache_limit'] == 0
    parts = ['wait_download_s', 'wait_peer_download_s', 'wait_cache_room_s', 'wait_decode_s',
             'wait_other_s']
    assert abs(sum(t[p] for p in parts) - t['wait_s']) < 1e-6
    assert m['window']['samples'] == 200 and m['window']['downloads'] == 9

    assert [s['id'] for s in ds] == list(range(200))
    m = ds.metrics()
    w = m['window']
    assert (w['samples'], w['downloads'], w['bytes_downloaded']) == (200, 0, 0)
    assert m['totals']['samples'] == 400
    assert w['samples_per_s'] == w['samples'] / w['seconds']
    assert isinstance(ds.diagnosis(), str)


def test_every_field_is_documented(tmp_path):
    remote = str(tmp_path / 'remote')
    write_remote(remote)
    ds = sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'local'), batch_size=8)
    next(iter(ds))
    fields = keys(ds.metrics(), set())
    missing = sorted(k for k in fields if f'``{k}``' not in DOCS)
    assert not missing, missing
    # And every documented name of the reference is one the engine gives (or
    # an error kind, a histogram field).
    assert re.search(r'``wait_cache_room_s``', DOCS)


def test_prometheus_file_per_process(tmp_path):
    remote = str(tmp_path / 'remote')
    write_remote(remote)
    ds = sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'local'), batch_size=8,
                                 shuffle=False)
    assert len([s for s in ds]) == 200
    out = tmp_path / 'prom'
    out.mkdir()
    path = ds.write_prometheus(str(out))
    assert path == str(out / f'sluice-{os.getpid()}.prom')
    assert os.listdir(out) == [f'sluice-{os.getpid()}.prom']
    text = pathlib.Path(path).read_text()
    pid = os.getpid()
    assert f'sluice_samples_total{{process="{pid}"}} 200\n' in text
    assert f'sluice_downloads_total{{process="{pid}"}} 9\n' in text
    # Every line is a HELP/TYPE comment or `name{labels} value`; every
    # metric name is documented.
    for line in text.splitlines():
        if line.startswith('# '):
            assert re.fullmatch(r'# (HELP|TYPE) sluice_\w+ .+', line), line
            continue
        m = re.fullmatch(r'(sluice_\w+)\{process="\d+"(,\w+="[^"]*")*\} (\S+)', line)
        assert m, line
        float(m.group(3))
        assert f'``{m.group(1)}``' in DOCS, m.group(1)


class Doubled(sluice.StreamingDataset):
    """A subclass that reads through its own __getitem__ (as tokenizing and
    decoding subclasses do)."""

    def __getitem__(self, idx):
        sample = super().__getitem__(idx)
        return {'id': sample['id'] * 2}


def test_a_subclass_reading_through_getitem_counts_each_sample_once(tmp_path):
    remote, local = str(tmp_path / 'remote'), str(tmp_path / 'local')
    write_remote(remote)
    plain = sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'plain'), batch_size=8,
                                    shuffle=True, shuffle_seed=5)
    order = [s['id'] for s in plain]
    ds = Doubled(remote=remote, local=local, batch_size=8, shuffle=True, shuffle_seed=5)
    assert [s['id'] for s in ds] == [2 * i for i in order]
    t = ds.metrics()['totals']
    assert (t['samples'], t['downloads']) == (200, 9)
    assert t['bytes'] == plain.metrics()['totals']['bytes']


def alone_on_a_node(tmp_path, monkeypatch, **options):
    """A dataset of write_remote's 200 samples, the only one of its node
    (a state folder of its own)."""
    state = tmp_path / 'state'
    state.mkdir()
    monkeypatch.setenv('SLUICE_CACHE_STATE_DIR', str(state))
    remote = str(tmp_path / 'remote')
    write_remote(remote)
    return sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'local'), batch_size=8,
                                   shuffle=False, **options)


def test_scopes_of_one_process(tmp_path, monkeypatch):
    ds = alone_on_a_node(tmp_path, monkeypatch)
    assert len([s for s in ds]) == 200
    own = ds.metrics()
    assert own['processes'] == 1
    # Alone on the node, the job's and the node's counts are this process's.
    for scope in ('job', 'node'):
        m = ds.metrics(scope)
        assert m['processes'] == 1 and m['hosts'] == {}
        for key in ('samples', 'bytes', 'batches', 'downloads', 'bytes_downloaded'):
            assert m['totals'][key] == own['totals'][key], (scope, key)
    with pytest.raises(ValueError,
                       match=re.escape('metrics scope "rank": expected "process", "job" or "node"')):
        ds.metrics('rank')
    with pytest.raises(ValueError, match="scope 'job': expected 'process' or 'node'"):
        ds.write_prometheus(str(tmp_path), scope='job')


def test_the_job_and_node_windows_least_lead_is_their_batches_own(tmp_path, monkeypatch):
    """Alone on the node, a job's or node's window (summed from the records)
    covers the same batches as the process's window: the same least lead,
    window by window, also where it is above the totals' least (a cached
    epoch whose prefetcher opened shards ahead of the reader)."""
    ds = alone_on_a_node(tmp_path, monkeypatch, predownload=200)
    above_totals = 0
    for epoch in range(4):
        it = iter(ds)
        next(it)
        time.sleep(0.2)  # lets the prefetcher open shards ahead (nothing timed is asserted)
        while True:
            got = list(itertools.islice(it, 40))
            views = {scope: ds.metrics(scope) for scope in ('process', 'job', 'node')}
            own = views['process']
            for scope, m in views.items():
                assert m['window']['batches'] == own['window']['batches'], (epoch, scope)
                for key in ('prefetch_lead_samples_min', 'prefetch_lead_shards_min'):
                    assert m['window'][key] == own['window'][key], (epoch, scope, key)
                    assert m['totals'][key] == own['totals'][key], (epoch, scope, key)
            if own['window']['prefetch_lead_samples_min'] > own['totals']['prefetch_lead_samples_min']:
                above_totals += 1
            if not got:
                break
        if above_totals and epoch >= 1:
            break
    assert above_totals > 0
    # A window without batches has no least.
    assert ds.metrics('job')['window']['prefetch_lead_samples_min'] == 0
