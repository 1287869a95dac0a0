"""StreamingDataset through a real torch DataLoader yields exactly the batches
mosaicml-streaming's DataLoader yielded (order vectors with
dataloader_batches), with 0, 2, 3 and 4 workers, resumption included."""
import json
import os
import shutil

import numpy as np
import pytest
from torch.utils.data import DataLoader

import sluice
from conftest import DATA

# Mosaic's vectors use 3 and 4 workers; torch warns that this machine has 2 cores.
pytestmark = pytest.mark.filterwarnings('ignore:This DataLoader will create')

ORDER = os.path.join(DATA, '..', 'order', 'configs')


def load_order(name):
    with open(os.path.join(ORDER, name + '.json')) as f:
        return json.load(f)


def ids_collate(batch):
    return [int(s['id']) for s in batch]


def write_stream(root, shard_sizes, first_id):
    """A dataset folder whose shards hold exactly `shard_sizes` samples (one
    no-limit MDS part per shard, merged), column id = global sample id."""
    parts = []
    next_id = first_id
    for i, n in enumerate(shard_sizes):
        part = os.path.join(root, f'p{i:03d}')
        with sluice.MDSWriter(out=part, columns={'id': 'int'}, size_limit=None) as w:
            for _ in range(n):
                w.write({'id': next_id})
                next_id += 1
        parts.append(os.path.join(part, 'index.json'))
    sluice.merge_index(parts, root)
    return root


def dataset_for(cfg, root):
    streams = []
    offset = 0
    for i, s in enumerate(cfg['streams']):
        folder = write_stream(os.path.join(root, f's{i}'), s['shard_sizes'], offset)
        offset += sum(s['shard_sizes'])
        streams.append(sluice.Stream(local=folder, proportion=s.get('proportion'),
                                     repeat=s.get('repeat'), choose=s.get('choose')))
    return sluice.StreamingDataset(
        streams=streams, epoch_size=cfg['epoch_size'], batch_size=cfg['batch_size'],
        shuffle=cfg['shuffle'], shuffle_algo=cfg['shuffle_algo'],
        shuffle_seed=cfg['shuffle_seed'], shuffle_block_size=cfg['shuffle_block_size'],
        num_canonical_nodes=cfg['num_canonical_nodes'], partition_algo=cfg['partition_algo'],
        batching_method=cfg['batching_method'], sampling_method=cfg['sampling_method'],
        sampling_granularity=cfg['sampling_granularity'])


@pytest.mark.parametrize('name', ['dataloader_w2_py1e', 'dataloader_w3_resume45',
                                  'dataloader_w4_streams'])
def test_dataloader_batches_match_mosaic(tmp_path, name):
    vec = load_order(name)
    cfg = vec['config']
    ds = dataset_for(cfg, str(tmp_path))
    if cfg['sample_in_epoch']:
        ds.load_state_dict({'epoch': cfg['epoch'], 'sample_in_epoch': cfg['sample_in_epoch'],
                            'num_canonical_nodes': cfg['num_canonical_nodes'],
                            'shuffle_seed': cfg['shuffle_seed'], 'initial_physical_nodes': 1})
    workers = cfg['world']['workers_per_rank']
    loader = DataLoader(ds, batch_size=cfg['batch_size'], num_workers=workers,
                        collate_fn=ids_collate)
    assert [b for b in loader] == vec['dataloader_batches']


def flat_work(vec, worker):
    w = np.array(vec['work'])[0, 0, worker].reshape(-1)
    return [int(x) for x in w if x >= 0]


@pytest.mark.parametrize('workers', [0, 2])
def test_each_worker_gets_its_plan(tmp_path, workers):
    vec = load_order('dataloader_w2_py1e')
    ds = dataset_for(vec['config'], str(tmp_path))
    plan = ds.plan(workers=max(workers, 1))
    per_worker = [list(plan.worker_ids(0, 0, w)) for w in range(max(workers, 1))]
    if workers == 2:
        assert per_worker == [flat_work(vec, 0), flat_work(vec, 1)]
    loader = DataLoader(ds, batch_size=4, num_workers=workers, collate_fn=ids_collate)
    got = [i for b in loader for i in b]
    expect = [i for ids in per_worker for i in ids]
    assert sorted(got) == sorted(expect)
    assert sorted(got) == list(range(450))  # every sample exactly once
    assert len(ds) == 450


def test_state_dict_resumes_with_the_remaining_samples(tmp_path):
    vec = load_order('dataloader_w2_py1e')
    cfg = vec['config']
    ds = dataset_for(cfg, str(tmp_path))
    loader = sluice.StreamingDataLoader(ds, batch_size=4, num_workers=0, collate_fn=ids_collate)
    seen = []
    for i, batch in enumerate(loader):
        seen += batch
        if i == 9:
            state = loader.state_dict()
            break
    # Mosaic's keys, in Mosaic's order, then Sluice's order record.
    assert list(state) == ['epoch', 'sample_in_epoch', 'num_canonical_nodes', 'shuffle_seed',
                           'initial_physical_nodes', 'sluice_order']
    assert {k: state[k] for k in list(state)[:5]} == {
        'epoch': 0, 'sample_in_epoch': 40, 'num_canonical_nodes': 2, 'shuffle_seed': 9176,
        'initial_physical_nodes': 1}
    fresh = dataset_for(cfg, str(tmp_path / 'again'))
    loader2 = sluice.StreamingDataLoader(fresh, batch_size=4, num_workers=0,
                                         collate_fn=ids_collate)
    loader2.load_state_dict(state)
    # Saved again before iterating: the same offset, not twice it.
    assert loader2.state_dict() == state
    rest = [i for b in loader2 for i in b]
    assert sorted(seen + rest) == list(range(450))
    whole = [i for b in sluice.StreamingDataLoader(dataset_for(cfg, str(tmp_path / 'w')),
                                                   batch_size=4, collate_fn=ids_collate)
             for i in b]
    assert seen + rest == whole
    # The next epoch starts over (the checkpoint is for epoch 0 only).
    assert sorted(i for b in loader2 for i in b) == list(range(450))


def test_torch_distributed_env_partitions(tmp_path, monkeypatch):
    vec = load_order('seq_2n2r2w_bs4')
    cfg = vec['config']
    work = np.array(vec['work'])
    for rank in range(4):
        monkeypatch.setenv('RANK', str(rank))
        monkeypatch.setenv('WORLD_SIZE', '4')
        monkeypatch.setenv('LOCAL_WORLD_SIZE', '2')
        ds = dataset_for(cfg, str(tmp_path / f'r{rank}'))
        loader = DataLoader(ds, batch_size=4, num_workers=2, collate_fn=ids_collate)
        got = sorted(i for b in loader for i in b)
        w = work[rank // 2, rank % 2].reshape(-1)
        assert got == sorted(int(x) for x in w if x >= 0)
        assert len(ds) == 113


@pytest.mark.parametrize('workers', [0, 2])
def test_each_iteration_is_the_next_epoch(tmp_path, workers):
    vec = load_order('dataloader_w2_py1e')
    ds = dataset_for(vec['config'], str(tmp_path))
    loader = DataLoader(ds, batch_size=4, num_workers=workers, collate_fn=ids_collate)
    w = max(workers, 1)
    for epoch in range(3):
        plan = ds.plan(epoch=epoch, workers=w)
        per_worker = [plan.worker_ids(0, 0, i).tolist() for i in range(w)]
        got = [b for b in loader]
        flat = [i for b in got for i in b]
        assert sorted(flat) == list(range(450))
        # Worker i yields batches i, i + w, ...: its ids in plan order.
        for i in range(w):
            assert [x for b in got[i::w] for x in b] == per_worker[i], (epoch, i)
    assert ds.next_epoch == 3
    assert ds.plan(epoch=0).worker_ids(0, 0, 0).tolist() != \
        ds.plan(epoch=1).worker_ids(0, 0, 0).tolist()


def test_corrupt_shard_raises_value_error_naming_it(tmp_path):
    shutil.copytree(os.path.join(DATA, 'single_shard_no_limit'), tmp_path / 'c')
    path = tmp_path / 'c' / 'shard.00000.mds'
    data = bytearray(path.read_bytes())
    path.write_bytes(bytes(data[:len(data) // 2]))  # truncated
    ds = sluice.LocalDataset(str(tmp_path / 'c'))
    with pytest.raises(ValueError, match='shard.00000.mds'):
        ds[0]


def test_spawned_workers_reopen_the_dataset(tmp_path):
    # Datasets pickle without their handles and decoders and reopen in the child.
    vec = load_order('dataloader_w2_py1e')
    ds = dataset_for(vec['config'], str(tmp_path))
    loader = DataLoader(ds, batch_size=4, num_workers=2, collate_fn=ids_collate,
                        multiprocessing_context='spawn')
    assert [b for b in loader] == vec['dataloader_batches']


def engine_ids(ds, workers):
    loader = DataLoader(ds, batch_size=4, num_workers=workers, collate_fn=ids_collate)
    return [b for b in loader]


@pytest.mark.parametrize('workers', [0, 2])
def test_engine_streams_a_remote_into_the_cache(tmp_path, workers):
    if not sluice.engine.available():
        pytest.skip('this libsluice.so has no sluice_stream_* (engine) yet')
    remote = os.path.join(DATA, 'merged')
    args = dict(batch_size=4, shuffle=True, shuffle_seed=3, num_canonical_nodes=1)
    ds = sluice.StreamingDataset(remote=remote, local=str(tmp_path / 'cache'), **args)
    assert ds._engine is not None
    # A copy: its compressed shards are decompressed into the folder read in place.
    shutil.copytree(remote, tmp_path / 'in_place')
    in_place = sluice.StreamingDataset(local=str(tmp_path / 'in_place'), **args)
    assert len(ds) == len(in_place) == 106
    assert ds[40] == in_place[40] and ds[-1] == in_place[105]
    # The engine plans with the same planner: the same batches as in place.
    assert engine_ids(ds, workers) == engine_ids(in_place, workers)
    assert os.path.isfile(tmp_path / 'cache' / 'index.json')


def test_engine_resumes_from_a_state_dict(tmp_path):
    if not sluice.engine.available():
        pytest.skip('this libsluice.so has no sluice_stream_* (engine) yet')
    remote = os.path.join(DATA, 'merged')
    args = dict(batch_size=4, shuffle=True, shuffle_seed=3)

    def fresh(name):
        return sluice.StreamingDataset(remote=remote, local=str(tmp_path / name), **args)
    whole = [i for b in sluice.StreamingDataLoader(fresh('a'), batch_size=4,
                                                   collate_fn=ids_collate) for i in b]
    loader = sluice.StreamingDataLoader(fresh('b'), batch_size=4, collate_fn=ids_collate)
    seen = []
    for i, batch in enumerate(loader):
        seen += batch
        if i == 4:
            state = loader.state_dict()
            break
    assert state['sample_in_epoch'] == 20 and state['epoch'] == 0
    again = sluice.StreamingDataLoader(fresh('c'), batch_size=4, collate_fn=ids_collate)
    again.load_state_dict(state)
    assert seen + [i for b in again for i in b] == whole
    assert sorted(whole) == list(range(106))


def test_a_remote_without_local_caches_in_mosaics_temporary_folder():
    import hashlib
    import tempfile
    digest = hashlib.blake2s(b's3://bucket/ds', digest_size=16).hexdigest()
    assert sluice.Stream(remote='s3://bucket/ds').local == \
        os.path.join(tempfile.gettempdir(), digest, '')
    assert sluice.Stream(remote='s3://bucket/ds', split='train').local == \
        os.path.join(tempfile.gettempdir(), digest, 'train')


def test_an_epoch_read_in_the_main_process_moves_every_worker_on(tmp_path):
    vec = load_order('dataloader_w2_py1e')
    ds = dataset_for(vec['config'], str(tmp_path))
    first = [int(s['id']) for s in ds]  # epoch 0, here
    assert sorted(first) == list(range(450))
    loader = DataLoader(ds, batch_size=4, num_workers=2, collate_fn=ids_collate)
    second = [i for b in loader for i in b]  # epoch 1, in two workers
    assert sorted(second) == list(range(450))
    expect = [i for w in range(2) for i in ds.plan(epoch=1, workers=2).worker_ids(0, 0, w)]
    assert sorted(second) == sorted(expect) and second != first
