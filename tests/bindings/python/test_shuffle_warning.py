"""py1e's warning, as Mosaic gives it: when a shard's random shuffle block
comes out smaller than the shard, the epoch's iteration warns once, with
Mosaic's text, in the process that plans it."""
import warnings

import pytest
from torch.utils.data import DataLoader

import sluice

TEXT = ('Shuffle block size was smaller than shard size for some shards. This' + ' ' * 25 +
        'will result in these shards not being shuffled with other shards. Set' + ' ' * 25 +
        'shuffle_block_size to a larger value for a higher quality shuffle.')


@pytest.fixture
def hundreds(tmp_path):
    """6 shards of 100 samples."""
    folder = str(tmp_path / 'ds')
    with sluice.MDSWriter(out=folder, columns={'id': 'int'}, size_limit=1370) as w:
        for i in range(600):
            w.write({'id': i})
    return folder


def dataset(folder, block, seed=7, algo='py1e'):
    return sluice.StreamingDataset(local=folder, batch_size=4, shuffle=True, shuffle_seed=seed,
                                   num_canonical_nodes=2, shuffle_algo=algo,
                                   shuffle_block_size=block)


def test_shards_wider_than_their_block_warn_with_mosaics_text(hundreds):
    assert [s.samples for s in sluice.StreamingDataset(local=hundreds,
                                                       batch_size=4).shards] == [100] * 6
    with pytest.warns(UserWarning) as record:
        ids = [int(b) for batch in DataLoader(dataset(hundreds, 50), batch_size=4)
               for b in batch['id']]
    assert sorted(ids) == list(range(600))
    assert [str(w.message) for w in record] == [TEXT]


def test_the_warning_follows_the_epochs_draws(hundreds):
    # Mosaic's py1e warns in epochs 1, 4 and 5 of these (block 120, seed 7)
    # and not in 0, 2 and 3: the block is drawn per shard and epoch.
    ds = dataset(hundreds, 120)
    warned = []
    for _ in range(6):
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter('always')
            for _ in ds:
                pass
        warned.append([str(w.message) for w in record] == [TEXT])
    assert warned == [False, True, False, False, True, True]


def test_no_warning_with_room_or_another_shuffle(hundreds):
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        for ds in (dataset(hundreds, 1000), dataset(hundreds, 50, algo='py1s')):
            assert len(list(ds)) == 600
