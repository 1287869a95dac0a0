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
