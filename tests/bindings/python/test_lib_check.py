"""sluice._lib.check: an engine error raised as Mosaic raises it becomes
Mosaic's exception type with Mosaic's exact text; a type name anywhere else
in an error (a path, a context) is just text."""
import os
import shutil

import pytest

import sluice
from sluice._lib import MissingIndexError


def write(folder, columns, sample):
    with sluice.MDSWriter(out=folder, columns=columns) as w:
        w.write(sample)


def test_mosaic_value_error_keeps_its_type_and_text(tmp_path):
    folder = str(tmp_path / 'pkl')
    write(folder, {'x': 'pkl'}, {'x': {'a': 1}})
    with pytest.raises(ValueError) as e:
        sluice.StreamingDataset(local=folder, batch_size=1)
    assert type(e.value) is ValueError
    assert str(e.value) == ('Column x contains an unsafe type: pkl. To proceed anyway, set '
                            '``allow_unsafe_types=True``.')


def test_mosaic_runtime_error_without_context(tmp_path):
    folder = str(tmp_path / 'empty')
    os.makedirs(folder)
    stream = sluice.Stream(local=folder)
    with pytest.raises(MissingIndexError) as e:
        sluice.StreamingDataset(streams=[stream], batch_size=1)
    assert isinstance(e.value, RuntimeError) and isinstance(e.value, FileNotFoundError)
    assert str(e.value) == (f'No `remote` provided, but local file {folder}/index.json does not '
                            f'exist either')


def test_type_name_inside_a_path_is_not_a_mosaic_error(tmp_path):
    folder = str(tmp_path / 'a: ValueError: b')
    write(folder, {'x': 'int'}, {'x': 7})
    ds = sluice.StreamingDataset(local=folder, batch_size=1)
    os.remove(os.path.join(folder, 'shard.00000.mds'))
    with pytest.raises(FileNotFoundError) as e:
        ds[0]
    assert str(e.value) == (f"not found: shard cache '{folder}': fetching shard 0 "
                            f"'shard.00000.mds': {folder}/shard.00000.mds: missing, and the "
                            f"stream has no remote")
    shutil.rmtree(folder)
