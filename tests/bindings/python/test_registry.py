"""sluice.registry (served as streaming.base.registry_utils) and the
streams registry: a Stream class registered under a name is what
StreamingDataset(stream_name=..., stream_config=...) builds, as Mosaic's."""
import functools

import pytest

catalogue = pytest.importorskip('catalogue')  # Debian: python3-catalogue

import sluice  # noqa: E402
from sluice import dataset, registry  # noqa: E402


def test_streams_registry_serves_stream_and_lives_in_catalogue():
    reg = dataset.streams_registry
    assert isinstance(reg, registry.TypedRegistry)
    assert reg.namespace == ('streaming', 'streams_registry')
    assert reg.get('stream') is sluice.Stream
    assert catalogue.REGISTRY[('streaming', 'streams_registry', 'stream')] is sluice.Stream


def test_construct_from_registry(monkeypatch):
    with registry.save_registry():
        reg = registry.create_registry('sluice_test', 'things', entry_points=False)

        class Base:
            def __init__(self, x=0):
                self.x = x

        reg.register('base', func=Base)
        reg.register('mul', func=lambda x, y: x * y)
        reg.register('one', func=1)
        assert registry.construct_from_registry('base', reg, kwargs={'x': 4}).x == 4
        part = registry.construct_from_registry('mul', reg, kwargs={'x': 2})
        assert isinstance(part, functools.partial) and part(y=3) == 6
        assert registry.construct_from_registry('mul', reg, partial_function=False,
                                                kwargs={'x': 2, 'y': 5}) == 10
        with pytest.raises(ValueError, match=r"^Expected base to be of type <class 'str'>"):
            registry.construct_from_registry('base', reg, pre_validation_function=str)
        with pytest.raises(ValueError, match=r"^Expected one to be a class or function, but "
                                             r"got <class 'int'>$"):
            registry.construct_from_registry('one', reg)
    assert not catalogue.check_exists('sluice_test', 'things', 'base')


def test_import_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r'^File .*nope\.py does not exist\.$'):
        registry.import_file(tmp_path / 'nope.py')
    (tmp_path / 'bad.py').write_text('asdf\n')
    with pytest.raises(RuntimeError, match=r'^Error executing .*bad\.py$'):
        registry.import_file(tmp_path / 'bad.py')
    (tmp_path / 'good.py').write_text('VALUE = 7\n')
    assert registry.import_file(tmp_path / 'good.py').VALUE == 7


def test_dataset_builds_the_registered_stream_class(tmp_path):
    with sluice.MDSWriter(out=str(tmp_path / 'ds'), columns={'id': 'int'}) as w:
        for i in range(5):
            w.write({'id': i})

    class TaggedStream(sluice.Stream):
        def __init__(self, *, tag, **kwargs):
            super().__init__(**kwargs)
            self.tag = tag

    with registry.save_registry():
        dataset.streams_registry.register('tagged', func=TaggedStream)
        ds = sluice.StreamingDataset(local=str(tmp_path / 'ds'), stream_name='tagged',
                                     stream_config={'tag': 'x'}, batch_size=1)
        assert [type(s) for s in ds.streams] == [TaggedStream]
        assert ds.streams[0].tag == 'x'
        assert [int(s['id']) for s in ds] == [0, 1, 2, 3, 4]


def test_a_class_registered_as_stream_wins_over_sluices(tmp_path):
    # Mosaic builds a dataset's one stream from streams_registry under
    # stream_name='stream': a user's class registered there replaces Stream.
    with sluice.MDSWriter(out=str(tmp_path / 'ds'), columns={'id': 'int'}) as w:
        for i in range(5):
            w.write({'id': i})
    made = []

    class MyStream(sluice.Stream):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            made.append(kwargs)

    with registry.save_registry():
        dataset.streams_registry.register('stream', func=MyStream)
        ds = sluice.StreamingDataset(local=str(tmp_path / 'ds'), download_retry=5, batch_size=1)
        assert [type(s) for s in ds.streams] == [MyStream]
        # Mosaic's arguments for it: the dataset's stream arguments.
        assert made == [{'remote': None, 'local': str(tmp_path / 'ds'), 'split': None,
                         'download_retry': 5, 'download_timeout': 60, 'validate_hash': None,
                         'keep_zip': False}]
        assert [int(s['id']) for s in ds] == [0, 1, 2, 3, 4]
    # The registry restored: Stream again.
    ds = sluice.StreamingDataset(local=str(tmp_path / 'ds'), batch_size=1)
    assert [type(s) for s in ds.streams] == [sluice.Stream]
