"""Hostile declared sizes reach Python as exceptions, never as an abort of
the interpreter: the allocation used to happen on the engine's prefetch
thread, where an uncaught std::bad_alloc terminated the process."""
import json
import os

import pytest

import sluice

# 17 bytes: a single-segment zstd frame declaring `size` bytes, one RLE byte.
def zstd_frame_declaring(size):
    return b'\x28\xb5\x2f\xfd\xe0' + size.to_bytes(8, 'little') + b'\x0b\x00\x00x'


def hostile_dataset(root, raw_bytes):
    """A zstd MDS dataset whose shard 1 is the 17-byte frame declaring
    `raw_bytes`, and whose index claims as much."""
    with sluice.MDSWriter(out=root, columns={'x': 'bytes'}, compression='zstd',
                          size_limit=1 << 12) as w:
        for i in range(200):
            w.write({'x': bytes([i % 251]) * 100})
    path = os.path.join(root, 'index.json')
    with open(path) as f:
        index = json.load(f)
    shard = index['shards'][1]
    frame = zstd_frame_declaring(raw_bytes)
    with open(os.path.join(root, shard['zip_data']['basename']), 'wb') as f:
        f.write(frame)
    shard['zip_data'].update(bytes=len(frame), hashes={})
    shard['raw_data'].update(bytes=raw_bytes, hashes={})
    with open(path, 'w') as f:
        json.dump(index, f, sort_keys=True)
    return shard


def test_index_claiming_one_tib_is_refused_when_the_dataset_opens(tmp_path):
    remote, local = str(tmp_path / 'remote'), str(tmp_path / 'local')
    hostile_dataset(remote, 1 << 40)
    with pytest.raises(ValueError) as e:
        sluice.StreamingDataset(remote=remote, local=local, shuffle=False, batch_size=1)
    assert str(e.value) == (
        f"corrupt: stream 0 ({local}): {local}/index.json: shard 1: field 'raw_data.bytes': "
        "'shard.00001.mds' declares 1099511627776 bytes, more than 32-bit offsets address "
        "(4294967295)")


def test_zstd_shard_declaring_the_largest_size_raises_while_iterating(tmp_path):
    remote, local = str(tmp_path / 'remote'), str(tmp_path / 'local')
    shard = hostile_dataset(remote, 2**32 - 1)
    ds = sluice.StreamingDataset(remote=remote, local=local, shuffle=False, batch_size=1)
    seen = 0
    with pytest.raises(ValueError) as e:
        for _ in ds:
            seen += 1
    zip_name = shard['zip_data']['basename']
    assert seen == 36  # shard 0 holds samples 0-35
    assert str(e.value) == (
        f"corrupt: prefetching sample position 36: 'shard.00001.mds' from {remote}/{zip_name} "
        f"is corrupt after 3 download(s) (expected 17 bytes): shard cache '{local}': fetching "
        f"shard 1 'shard.00001.mds': {zip_name}: zstd data is corrupt: Frame requires too much "
        "memory for decoding (in the frame at input offset 0)")
