import pytest

import on_bench_path  # noqa: F401

torch = pytest.importorskip('torch')
from torch.utils.data import default_collate  # noqa: E402

from litdata_shims import collate_bytes  # noqa: E402

# LitData hands a bytes column back as a memoryview into its chunk.
SAMPLES = [{'id': 7, 'data': memoryview(b'abc')}, {'id': 8, 'data': memoryview(b'xyz')}]


def test_default_collate_splits_a_memoryview_into_a_tensor_per_byte():
    # Why the shim exists: a 256 KiB sample becomes 262,144 tensors.
    data = default_collate(SAMPLES)['data']
    assert [t.tolist() for t in data] == [[ord('a'), ord('x')], [ord('b'), ord('y')],
                                          [ord('c'), ord('z')]]


def test_collate_bytes_keeps_each_sample_whole_as_bytes():
    batch = collate_bytes(SAMPLES)
    assert batch['data'] == [b'abc', b'xyz']
    assert all(type(x) is bytes for x in batch['data'])
    assert batch['id'].tolist() == [7, 8]


def test_collate_bytes_leaves_non_dict_samples_to_default_collate():
    assert collate_bytes([1, 2]).tolist() == [1, 2]
