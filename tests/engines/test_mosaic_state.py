"""A state that real Mosaic saved (mosaicml-streaming from the registry,
oracle.txt) loads into Sluice's StreamingDataset, which resumes where
Mosaic's own resume does, sample for sample."""
import gc
import itertools

import pytest

import sluice

import streaming

COLUMNS = {'id': 'int', 'text': 'str'}
ARGS = dict(shuffle=True, shuffle_algo='py1e', shuffle_seed=29, batch_size=4,
            shuffle_block_size=60, num_canonical_nodes=2)


@pytest.fixture(scope='module')
def mosaic_mds(tmp_path_factory):
    out = str(tmp_path_factory.mktemp('state') / 'mds')
    with streaming.MDSWriter(out=out, columns=COLUMNS, size_limit=1 << 10) as w:
        for i in range(230):
            w.write({'id': i, 'text': f'sample {i}'})
    return out


def mosaic_run(local, state=None, batches=None, num_workers=0):
    """Mosaic's ids through its StreamingDataLoader (from `state` when
    given; `batches` of them then its state_dict, else all) and that state."""
    try:
        ds = streaming.StreamingDataset(local=local, **ARGS)
        if state is not None:
            ds.load_state_dict(state)
        loader = streaming.StreamingDataLoader(ds, batch_size=ARGS['batch_size'],
                                               num_workers=num_workers)
        # islice takes no batch past the last (the loader counts each it yields).
        ids = [int(i) for batch in itertools.islice(loader, batches) for i in batch['id']]
        saved = loader.state_dict() if batches is not None else None
        del loader, ds
        gc.collect()
        return ids, saved
    finally:
        streaming.base.util.clean_stale_shared_memory()


def check_resume(local, batches, num_workers):
    full, _ = mosaic_run(local, num_workers=num_workers)
    head, state = mosaic_run(local, batches=batches, num_workers=num_workers)
    assert head == full[:len(head)] and len(head) == batches * ARGS['batch_size']
    assert set(state) == {'epoch', 'sample_in_epoch', 'num_canonical_nodes', 'shuffle_seed',
                          'initial_physical_nodes'}
    want, _ = mosaic_run(local, state=state, num_workers=num_workers)
    assert want and want == full[len(head):]  # Mosaic's own resume: the rest of the run
    ds = sluice.StreamingDataset(local=local, **ARGS)
    ds.load_state_dict(state)
    loader = sluice.StreamingDataLoader(ds, batch_size=ARGS['batch_size'],
                                        num_workers=num_workers)
    assert [int(i) for batch in loader for i in batch['id']] == want


@pytest.mark.parametrize('batches', [1, 9, 30])
def test_sluice_resumes_a_state_mosaic_saved_where_mosaic_resumes(mosaic_mds, batches):
    check_resume(mosaic_mds, batches, 0)


@pytest.mark.parametrize('batches', [3, 22])
def test_the_same_through_dataloader_workers_MultiProcess(mosaic_mds, batches):
    check_resume(mosaic_mds, batches, 2)
