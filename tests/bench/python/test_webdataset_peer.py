import os
import tarfile

import pytest

import on_bench_path  # noqa: F401
import webdataset_peer  # noqa: E402

# 700 B: the .data member ends mid-block, so its padding is checked too.
PAYLOAD = bytes(range(256)) * 2 + bytes(range(188))


def members(path):
    with tarfile.open(path) as tar:
        return [(m.name, m.mode, m.mtime, tar.extractfile(m).read()) for m in tar.getmembers()]


def test_samples_are_id_and_data_members_in_order_split_at_the_size_limit(tmp_path):
    # A sample takes 2,560 B (two headers, '0' padded to 512 B, 700 B to
    # 1,024 B); a closed shard adds two zero blocks and pads to 10,240 B, so
    # a 10,240 B limit holds three samples.
    names = webdataset_peer.write_tars(str(tmp_path), 5, PAYLOAD, size_limit=10240)
    assert names == ['shard-000000.tar', 'shard-000001.tar']
    assert sorted(os.listdir(tmp_path)) == names
    assert [os.path.getsize(tmp_path / n) for n in names] == [10240, 10240]
    expected = [[(f'{i:09d}.id', 0o644, 0, str(i).encode()),
                 (f'{i:09d}.data', 0o644, 0, PAYLOAD)] for i in range(5)]
    assert members(tmp_path / names[0]) == sum(expected[:3], [])
    assert members(tmp_path / names[1]) == sum(expected[3:], [])


def test_shard_bytes_are_the_tar_layout_webdataset_reads(tmp_path):
    webdataset_peer.write_tars(str(tmp_path), 1, PAYLOAD)
    raw = (tmp_path / 'shard-000000.tar').read_bytes()
    assert len(raw) == 10240
    assert raw[:13] == b'000000000.id\0'
    assert raw[257:263] == b'ustar\0'
    assert raw[512:1024] == b'0' + bytes(511)
    assert raw[1024:1039] == b'000000000.data\0'
    assert raw[1536:2236] == PAYLOAD
    assert raw[2236:] == bytes(10240 - 2236)


def test_a_sample_larger_than_the_limit_is_refused(tmp_path):
    # 1,024 B of id, 9,216 of data, 1,024 of end blocks: two records.
    with pytest.raises(ValueError, match='a sample takes 20480 B as a tar, more than the shard '
                       'size limit 10240 B'):
        webdataset_peer.write_tars(str(tmp_path), 1, bytes(9000), size_limit=10240)


def test_same_input_same_bytes(tmp_path):
    webdataset_peer.write_tars(str(tmp_path / 'a'), 4, PAYLOAD, size_limit=10240)
    webdataset_peer.write_tars(str(tmp_path / 'b'), 4, PAYLOAD, size_limit=10240)
    for name in ('shard-000000.tar', 'shard-000001.tar'):
        assert (tmp_path / 'a' / name).read_bytes() == (tmp_path / 'b' / name).read_bytes()
