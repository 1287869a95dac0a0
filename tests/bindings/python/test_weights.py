"""Stream weights resolved as Mosaic's: Stream.apply_weights against every
recorded call of Mosaic's (order/units/weights.json: choose, and the exact
bits of proportion and repeat), and a built StreamingDataset's streams and
epoch_size; bad weights rejected with Mosaic's texts."""
import json
import os

import numpy as np
import pytest

import sluice
from conftest import DATA

WEIGHTS = os.path.join(DATA, '..', 'order', 'units', 'weights.json')


def cases():
    with open(WEIGHTS) as f:
        return json.load(f)['cases']


@pytest.mark.parametrize('case', cases(), ids=lambda c: str(c['args']['weights'])[:60])
def test_apply_weights_matches_mosaics_calls(case):
    args = case['args']
    streams = [sluice.Stream(local=f'unused{i}', **w) for i, w in enumerate(args['weights'])]
    if 'error' in case:
        with pytest.raises(ValueError) as e:
            sluice.Stream.apply_weights(streams, args['samples_per_stream'],
                                        args['choose_per_epoch'], args['seed'])
        assert str(e.value) == case['error']['message']
        return
    total = sluice.Stream.apply_weights(streams, np.array(args['samples_per_stream']),
                                        args['choose_per_epoch'], args['seed'])
    assert type(total) is int and total == case['epoch_size']
    for stream, want in zip(streams, case['streams']):
        assert int(stream.choose) == want['choose']
        assert float(stream.proportion).hex() == float.fromhex(want['proportion']['hex']).hex()
        assert float(stream.repeat).hex() == float.fromhex(want['repeat']['hex']).hex()


def write(folder, first, n):
    with sluice.MDSWriter(out=folder, columns={'value': 'int'}) as w:
        for v in range(first, first + n):
            w.write({'value': v})
    return folder


def test_a_built_dataset_resolves_its_streams_weights(tmp_path):
    a, b = write(str(tmp_path / 'a'), 0, 4), write(str(tmp_path / 'b'), 4, 6)
    streams = [sluice.Stream(local=a, repeat=2), sluice.Stream(local=b, choose=3)]
    assert (streams[0].proportion, streams[0].repeat, streams[0].choose) == (None, 2, None)
    ds = sluice.StreamingDataset(streams=streams, batch_size=1, num_canonical_nodes=1)
    assert [(float(s.proportion), float(s.repeat), int(s.choose)) for s in streams] == \
        [(8 / 11, 2.0, 8), (3 / 11, 0.5, 3)]
    assert ds.epoch_size == 11 and len(ds) == 11
    got = [int(s['value']) for s in ds]
    assert sorted(got)[:8] == [0, 0, 1, 1, 2, 2, 3, 3] and len(got) == 11
    plain = [sluice.Stream(local=a), sluice.Stream(local=b)]
    ds = sluice.StreamingDataset(streams=plain, batch_size=1, epoch_size='1k')
    assert ds.epoch_size == 1000
    assert [int(s.choose) for s in plain] == [400, 600]


@pytest.mark.parametrize(('kwargs', 'message'), [
    ({'proportion': -0.5}, '`proportion` must be non-negative'),
    ({'repeat': -1}, '`repeat` must be non-negative'),
    ({'choose': -3}, '`choose` must be non-negative'),
    ({'proportion': 0.5, 'choose': 3}, 'At most one of `proportion`, `repeat`, and `choose` may '
                                       'be specified; the others are derived'),
    ({'download_retry': -1}, '`download_retry` must be non-negative'),
    ({'download_timeout': 0}, '`download_timeout` must be positive')])
def test_bad_stream_arguments_have_mosaics_texts(kwargs, message):
    with pytest.raises(ValueError) as e:
        sluice.Stream(local='x', **kwargs)
    assert str(e.value) == message


def test_mixed_weights_and_negative_epoch_size_are_refused_before_reading(tmp_path):
    streams = [sluice.Stream(local=str(tmp_path / 'none'), proportion=1),
               sluice.Stream(local=str(tmp_path / 'none'))]
    with pytest.raises(ValueError, match=r'^Relative \(`proportion`\) and absolute .*\(error in '
                                         r'stream 1\)$'):
        sluice.StreamingDataset(streams=streams, batch_size=1)
    with pytest.raises(ValueError, match=r'^Epoch size cannot be negative\. Received -5\.$'):
        sluice.StreamingDataset(local=str(tmp_path / 'none'), batch_size=1, epoch_size=-5)
