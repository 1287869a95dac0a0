"""Planner errors reach Python with Mosaic's exception type and text (code
written for Mosaic matches them)."""
import pytest

import sluice


def write(folder, n, first):
    with sluice.MDSWriter(out=folder, columns={'id': 'int'}, size_limit=1 << 8) as w:
        for i in range(first, first + n):
            w.write({'id': i})


def test_a_stream_too_small_for_a_stratified_batch_is_mosaics_value_error(tmp_path):
    write(str(tmp_path / 'a'), 1000, 0)
    write(str(tmp_path / 'b'), 11, 1000)
    ds = sluice.StreamingDataset(streams=[sluice.Stream(local=str(tmp_path / 'a')),
                                          sluice.Stream(local=str(tmp_path / 'b'))],
                                 batch_size=8, batching_method='stratified')
    with pytest.raises(ValueError) as e:
        next(iter(ds))
    assert str(e.value) == ('Number of samples for stream 1 is 0 because the portion of this '
                            'stream in the global batch, which is of size 8, is too low. Please '
                            'increase the global batch size or increase the proportion of total '
                            'samples that come from stream 1.')


def test_fewer_samples_than_canonical_nodes_is_mosaics_value_error(tmp_path):
    write(str(tmp_path / 'a'), 1, 0)
    ds = sluice.StreamingDataset(local=str(tmp_path / 'a'), shuffle=True, num_canonical_nodes=2,
                                 batch_size=1)
    with pytest.raises(ValueError) as e:
        next(iter(ds))
    assert str(e.value) == ('The number of samples assigned to a canonical node is 0. This very '
                            'likely indicates that the number of samples in this stream is less '
                            'than the number of canonical nodes, which is 2. Please check your '
                            'index.json file and ensure that your dataset has been written out '
                            'correctly. If this was intended, reduce num_canonical_nodes.')
