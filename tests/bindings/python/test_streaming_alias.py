"""Code written for mosaicml-streaming: the opt-in that serves its module
paths from Sluice, and streaming.base.util's helpers with Mosaic's
behaviour and texts."""
import os
import subprocess
import sys
import textwrap

import pytest

import sluice
from sluice import util


def run(code, tmp_path):
    """Runs `code` in a fresh interpreter (the alias changes sys.modules)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = subprocess.run([sys.executable, '-c', textwrap.dedent(code)], cwd=tmp_path, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_mosaic_module_paths_resolve_to_sluice(tmp_path):
    out = run('''
        import sluice.streaming_alias
        import sluice
        from streaming import StreamingDataset, Stream, MDSWriter, StreamingDataLoader
        from streaming.base import StreamingDataset as Deep
        from streaming.base.util import bytes_to_int, clean_stale_shared_memory
        from streaming.base.world import World
        from streaming.base.format.mds import MDSWriter as DeepWriter
        import streaming.base.util
        from streaming.base.converters import dataframe_to_mds, infer_dataframe_schema
        import sluice.dataframe
        assert dataframe_to_mds is sluice.dataframe.dataframe_to_mds
        assert infer_dataframe_schema is sluice.dataframe.infer_dataframe_schema
        assert StreamingDataset is Deep is sluice.StreamingDataset
        assert MDSWriter is DeepWriter is sluice.MDSWriter
        assert streaming.base.util is sluice.util
        clean_stale_shared_memory()
        with MDSWriter(out='ds', columns={'id': 'int'}) as w:
            for i in range(10):
                w.write({'id': i})
        ds = StreamingDataset(local='ds', batch_size=2)
        print(bytes_to_int('1kb'), [int(s['id']) for s in ds][:3], World().num_ranks)
        try:
            import streaming.multimodal.convert
        except ImportError as e:
            print(e)
        sluice.streaming_alias.uninstall()
        try:
            import streaming
        except ImportError:
            print('gone')
    ''', tmp_path)
    assert out.splitlines() == [
        '1024 [0, 1, 2] 1',
        'streaming.multimodal.convert: this mosaicml-streaming module has no Sluice counterpart '
        '(sluice.streaming_alias.ALIASES lists those that do)',
        'gone']


def test_mosaic_encodings_module_paths(tmp_path):
    out = run('''
        import sluice.streaming_alias
        import sluice.mds_encodings, sluice.json_encodings, sluice.xsv_encodings
        import streaming.base.format.mds.encodings as mds
        import streaming.base.format.json.encodings as jsonl
        from streaming.base.format.xsv.encodings import xsv_encode
        from streaming.base.format.mds import MDSWriter
        assert mds is sluice.mds_encodings and jsonl is sluice.json_encodings
        assert xsv_encode is sluice.xsv_encodings.xsv_encode and MDSWriter is sluice.MDSWriter
        print(mds.mds_encode('int', 99).hex(), jsonl.is_json_encoding('float'),
              xsv_encode('float', 1.25))
    ''', tmp_path)
    assert out.splitlines() == ['6300000000000000 True 1.25']


def test_mosaic_storage_registry_and_batching_module_paths(tmp_path):
    out = run('''
        import sluice.streaming_alias
        import sluice
        from streaming.base.storage import CloudUploader, LocalDownloader
        from streaming.base.storage.upload import S3Uploader
        from streaming.base.storage.download import CloudDownloader
        from streaming.base.batching import generate_work
        from streaming.base.distributed import get_world_size
        from streaming.base.stream import Stream
        from streaming.vision import StreamingCIFAR10
        from streaming.vision.imagenet import StreamingImageNet
        import sluice.vision
        assert StreamingCIFAR10 is sluice.vision.StreamingCIFAR10
        assert StreamingImageNet is sluice.vision.StreamingImageNet
        assert CloudUploader is sluice.upload.CloudUploader and S3Uploader is sluice.upload.S3Uploader
        assert CloudDownloader is sluice.download.CloudDownloader
        assert generate_work is sluice.batching.generate_work and Stream is sluice.Stream
        print(type(CloudUploader.get('up')).__name__, get_world_size())
    ''', tmp_path)
    assert out.splitlines() == ['LocalUploader 1']


def test_bytes_and_number_abbreviations():
    assert util.bytes_to_int('64mb') == 64 << 20
    assert util.bytes_to_int(' 1.5KB ') == 1536
    assert util.bytes_to_int('100b') == 100
    assert util.bytes_to_int('100') == 100
    assert util.bytes_to_int(7.9) == 7
    with pytest.raises(ValueError, match=r"^Unsupported value/suffix 12xb\. Supported suffix "
                                         r"are \['b', 'kb', 'mb', 'gb', 'tb', 'pb', 'eb', "
                                         r"'zb', 'yb'\]\.$"):
        util.bytes_to_int('12xb')
    assert util.number_abbrev_to_int('1.5k') == 1500
    assert util.number_abbrev_to_int('2B') == 2 * 10**9
    assert util.number_abbrev_to_int('42') == 42
    with pytest.raises(ValueError, match=r"^Unsupported value/suffix 3q\. Supported suffix "
                                         r"are \['k', 'm', 'b', 't'\]\.$"):
        util.number_abbrev_to_int('3q')
    assert util.get_list_arg('a,b') == ['a', 'b']
    assert util.get_list_arg('') == []
    assert util.merge_index is sluice.merge_index


def test_retry_and_waiting_for_a_file(tmp_path):
    calls, cleanups = [], []

    @util.retry(RuntimeError, clean_up_fn=lambda: cleanups.append(1), num_attempts=3,
                initial_backoff=0, max_jitter=0)
    def flaky():
        calls.append(1)
        if len(calls) < 3:
            raise RuntimeError('too soon')
        return 'third'
    assert flaky() == 'third' and len(calls) == 3 and len(cleanups) == 2

    @util.retry(num_attempts=2, initial_backoff=0, max_jitter=0)
    def always():
        calls.append(1)
        raise KeyError('x')
    calls.clear()
    with pytest.raises(KeyError):
        always()
    assert len(calls) == 2

    @util.retry
    def fine():
        return 5
    assert fine() == 5
    with pytest.raises(ValueError, match='num_attempts must be at-least 1'):
        util.retry(num_attempts=0)
    with pytest.raises(RuntimeError, match=r'^no file: 0\.050 < 0\.\d+ secs\.$'):
        util.wait_for_file_to_exist(str(tmp_path / 'never'), 0.01, 0.05, 'no file: ')
    (tmp_path / 'there').write_text('x')
    util.wait_for_file_to_exist(str(tmp_path / 'there'), 0.01, 1, 'no file: ')


def test_clean_stale_shared_memory_unlinks_mosaics_leftovers(monkeypatch):
    from multiprocessing import shared_memory

    from sluice import mosaic_shm
    assert mosaic_shm.shm_name(0, mosaic_shm.RESUME) == '000000_resume'
    assert mosaic_shm.SHM_TO_CLEAN == ['locals', 'barrier', 'next_epoch', 'cache_usage',
                                       'shard_states', 'shard_access_times', 'resume',
                                       'epoch_shape', 'epoch_data']
    # Names of this test only: a Mosaic job running beside it keeps its own.
    names = [f'sluice_test_{os.getpid()}_a', f'sluice_test_{os.getpid()}_b']
    monkeypatch.setattr(mosaic_shm, 'SHM_TO_CLEAN', names)
    made = [shared_memory.SharedMemory(mosaic_shm.shm_name(p, n), create=True, size=64)
            for p, n in ((0, names[0]), (1, names[1]), (3, names[0]))]
    try:
        util.clean_stale_shared_memory()
        for gone in made[:2]:  # prefixes 0 and 1; prefix 2 has none, so 3 is left
            with pytest.raises(FileNotFoundError):
                shared_memory.SharedMemory(gone.name, create=False)
        shared_memory.SharedMemory(made[2].name, create=False).close()
    finally:
        for m in made:
            m.close()
        made[2].unlink()
