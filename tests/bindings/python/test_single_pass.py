"""The single-pass mode (StreamingDataset/Stream `single_pass`, the engine's
stream key "single_pass"): each shard is received into memory and its
samples read from there. Over nginx on a loopback port (test_parquet_manifest's
fixture): the samples and their order are exactly the cached mode's, in
order and shuffled, through DataLoader workers, plain and zstd shards; no
shard file or temporary appears under the cache folder; a resumed epoch
goes on exactly; a shard whose sha1 does not match is an error before any
of its samples, naming it and its URL; random access reads the sample. A
local-only stream asking for single_pass reads in place, as without it."""
import os

import pytest
from test_parquet_manifest import web  # noqa: F401

from sluice import MDSWriter, Stream, StreamingDataLoader, StreamingDataset

SAMPLES = 200
BATCH = 4
SEED = 31


def payload(i):
    return bytes([i % 251, (7 * i) % 256]) * (4000 + 37 * (i % 50))


def write(folder, compression=None):
    with MDSWriter(out=str(folder), columns={'id': 'int', 'x': 'bytes'}, size_limit='256kb',
                   compression=compression, hashes=['sha1']) as w:
        for i in range(SAMPLES):
            w.write({'id': i, 'x': payload(i)})
    assert len([n for n in os.listdir(folder) if n.startswith('shard.')]) >= 6


@pytest.fixture(scope='module')
def served(web):  # noqa: F811
    """(www root, base URL): 'plain' and 'zstd' datasets on nginx."""
    www, url, _ = web
    write(www / 'sp_plain')
    write(www / 'sp_zstd', 'zstd')
    return www, url


def listing(folder):
    """Every file under `folder`, relative, sorted."""
    out = []
    for root, _, files in os.walk(folder):
        out += [os.path.relpath(os.path.join(root, f), folder) for f in files]
    return sorted(out)


def shard_files(folder):
    """The files under `folder` that hold shard bytes or their temporaries."""
    return [f for f in listing(folder) if os.path.basename(f).startswith('shard.')
            or '.tmp' in f or 'scratch' in f]


def read(url, local, shuffle, workers, single_pass, state=None):
    ds = StreamingDataset(remote=url, local=str(local), shuffle=shuffle, shuffle_seed=SEED,
                          batch_size=BATCH, num_canonical_nodes=2, single_pass=single_pass)
    if state is not None:
        ds.load_state_dict(state)
    loader = StreamingDataLoader(ds, batch_size=BATCH, num_workers=workers,
                                 collate_fn=lambda b: [(int(s['id']), bytes(s['x'])) for s in b])
    return [batch for batch in loader]


@pytest.mark.parametrize('dataset', ['sp_plain', 'sp_zstd'])
@pytest.mark.parametrize('shuffle', [False, True])
@pytest.mark.parametrize('workers', [0, 2])
def test_single_pass_reads_what_the_cache_reads_and_writes_no_shard_MultiProcess(
        tmp_path, served, dataset, shuffle, workers):
    _, url = served
    cached = read(f'{url}/{dataset}', tmp_path / 'cached', shuffle, workers, False)
    passed = read(f'{url}/{dataset}', tmp_path / 'single', shuffle, workers, True)
    samples = [s for batch in cached for s in batch]
    assert sorted(i for i, _ in samples) == list(range(SAMPLES))
    assert all(x == payload(i) for i, x in samples)
    assert passed == cached  # every batch, in order
    # The cached mode kept its shards; the single pass none, nor temporaries.
    assert shard_files(tmp_path / 'cached')
    assert shard_files(tmp_path / 'single') == []
    assert listing(tmp_path / 'single') == ['index.json']


def test_a_resumed_single_pass_goes_on_exactly(tmp_path, served):
    _, url = served
    state = {'epoch': 0, 'sample_in_epoch': 84, 'num_canonical_nodes': 2,
             'shuffle_seed': SEED, 'initial_physical_nodes': 1}
    cached = read(f'{url}/sp_plain', tmp_path / 'cached', True, 2, False, state)
    passed = read(f'{url}/sp_plain', tmp_path / 'single', True, 2, True, state)
    assert passed == cached  # every batch after the resume point, in order
    rest = [i for b in passed for i, _ in b]
    assert len(rest) == len(set(rest)) == SAMPLES - 84
    assert shard_files(tmp_path / 'single') == []


def test_a_shard_whose_hash_does_not_match_fails_before_its_samples(tmp_path, served):
    www, url = served
    folder = www / 'sp_corrupt'
    write(folder)
    shard = folder / 'shard.00002.mds'
    data = bytearray(shard.read_bytes())
    data[-1] ^= 0xFF  # the same size, another sha1
    shard.write_bytes(bytes(data))
    ds = StreamingDataset(remote=f'{url}/sp_corrupt', local=str(tmp_path / 'single'),
                          shuffle=False, batch_size=1, validate_hash='sha1', single_pass=True)
    seen = []
    with pytest.raises(Exception) as e:
        for s in ds:
            seen.append(int(s['id']))
    before = sum(ds.samples_per_shard[:2])
    assert seen == list(range(before))
    text = str(e.value)
    assert (f"'shard.00002.mds' from {url}/sp_corrupt/shard.00002.mds is corrupt after 3 "
            "download(s)") in text
    assert 'sha1' in text
    assert shard_files(tmp_path / 'single') == []


def test_random_access_reads_the_sample_and_a_stream_may_ask_alone(tmp_path, served):
    _, url = served
    ds = StreamingDataset(streams=[Stream(remote=f'{url}/sp_zstd', local=str(tmp_path / 'single'),
                                          single_pass=True)], batch_size=1)
    for i in (0, 57, SAMPLES - 1):
        assert int(ds[i]['id']) == i
        assert bytes(ds[i]['x']) == payload(i)
    assert shard_files(tmp_path / 'single') == []


@pytest.mark.parametrize('change', ['longer', 'shorter'])
def test_a_shard_of_another_size_fails_without_a_hash(tmp_path, served, change):
    www, url = served
    folder = www / f'sp_{change}'
    write(folder)
    shard = folder / 'shard.00001.mds'
    data = shard.read_bytes()
    shard.write_bytes(data + b'\0' if change == 'longer' else data[:-1])
    ds = StreamingDataset(remote=f'{url}/sp_{change}', local=str(tmp_path / 'single'),
                          shuffle=False, batch_size=1, single_pass=True)
    seen = []
    with pytest.raises(Exception) as e:
        for s in ds:
            seen.append(int(s['id']))
    assert seen == list(range(int(ds.samples_per_shard[0])))
    text = str(e.value)
    # The store said the object is not the index's: no download heals
    # that, so it is not downloaded again.
    assert (f"'shard.00001.mds' from {url}/sp_{change}/shard.00001.mds is corrupt after 1 "
            "download(s)") in text
    # Each ranged part asks for the index's size: the server's answer
    # states another, so no byte of the shard is used (none served in
    # flight either).
    stated = len(data) + 1 if change == 'longer' else len(data) - 1
    assert f'the object is {stated} bytes, index.json says {len(data)}' in text
    assert shard_files(tmp_path / 'single') == []


def test_a_single_pass_samples_file_has_no_local_path(tmp_path, served):
    """sluice_stream_sample_path (StreamingFileDataset's output='path') names
    a file on disk, which a single pass never writes: the engine refuses,
    naming the stream and saying what to read instead."""
    _, url = served
    local = tmp_path / 'single'
    ds = StreamingDataset(remote=f'{url}/sp_plain', local=str(local), batch_size=1,
                          single_pass=True)
    assert int(ds[0]['id']) == 0
    with pytest.raises(ValueError) as e:
        ds._engine.sample_path(0)
    assert str(e.value) == (
        f"invalid argument: sluice_stream_sample_path: stream 0 ({url}/sp_plain) is read in a "
        f"single pass: its files are received into memory and never written to {local}, so "
        f"they have no local path; read the sample's bytes")
    cached = StreamingDataset(remote=f'{url}/sp_plain', local=str(tmp_path / 'cached'),
                              batch_size=1)
    assert int(cached[0]['id']) == 0
    assert cached._engine.sample_path(0) == str(tmp_path / 'cached' / 'shard.00000.mds')


@pytest.mark.parametrize('single_pass', [False, True])
def test_a_local_only_stream_asking_single_pass_reads_in_place_as_without(tmp_path, single_pass):
    """single_pass applies only to a stream with a remote, a rule of the
    engine's alone (ReadsInSinglePass): a local-only stream asking for it
    reads in place, its samples' files have their paths, and Mosaic's
    cache_limit check counts its index.json, exactly as without it."""
    local = tmp_path / 'local'
    write(local)
    index_size = os.path.getsize(local / 'index.json')
    with pytest.raises(ValueError) as e:
        StreamingDataset(local=str(local), batch_size=1, cache_limit=index_size,
                         single_pass=single_pass)
    assert str(e.value) == (f'Minimum cache usage ({index_size} bytes) is larger than the cache '
                            f'limit ({index_size} bytes). Please raise `cache_limit`. '
                            f'Recommendation is to provide a `cache_limit` as high as possible '
                            f'to avoid thrashing.')
    ds = StreamingDataset(local=str(local), batch_size=1, single_pass=single_pass)
    assert [int(s['id']) for s in ds] == list(range(SAMPLES))
    assert bytes(ds[57]['x']) == payload(57)
    assert ds._engine.sample_path(0) == str(local / 'shard.00000.mds')
    last = ds._engine.sample_path(SAMPLES - 1)
    assert os.path.dirname(last) == str(local) and os.path.isfile(last)
