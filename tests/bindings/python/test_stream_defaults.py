"""Mosaic's Stream.apply_default: download_retry, download_timeout and
keep_zip given to StreamingDataset apply to every stream that leaves them
unset, and reach the engine."""
import os

from sluice import Stream, StreamingDataset

DATA = os.path.join(os.path.dirname(__file__), '..', '..', 'data', 'mosaic', 'mds', 'compressed_zstd')


def _engine_streams(ds):
    return ds._engine._config['streams']


def test_dataset_arguments_are_the_streams_defaults(tmp_path):
    ds = StreamingDataset(remote=DATA, local=str(tmp_path / 'one'), download_retry=5,
                          download_timeout=7, keep_zip=True, batch_size=2,
                          allow_unsafe_types=True)
    [spec] = _engine_streams(ds)
    assert (spec['download_retry'], spec['download_timeout'], spec['keep_zip']) == (5, 7, True)


def test_a_streams_own_values_win(tmp_path):
    streams = [Stream(remote=DATA, local=str(tmp_path / 'a'), download_retry=1),
               Stream(remote=DATA, local=str(tmp_path / 'b'), keep_zip=False)]
    ds = StreamingDataset(streams=streams, download_retry=4, download_timeout=9, keep_zip=True,
                          batch_size=2, allow_unsafe_types=True)
    a, b = _engine_streams(ds)
    assert (a['download_retry'], a['download_timeout'], a['keep_zip']) == (1, 9, True)
    assert (b['download_retry'], b['download_timeout'], b['keep_zip']) == (4, 9, False)
    assert len(list(ds)) == ds.num_samples
