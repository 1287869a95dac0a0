"""WebDataset as a peer in cold_first_sample.py and speed_table.py: the
same samples as their MDS datasets written as WebDataset tar shards, and the
child process that times a cold read over HTTP.

Shards: shard-000000.tar, ... of at most `size_limit` bytes each (the MDS
shards' 64 MiB), each sample two members, `%09d.id` (the index as ASCII
decimal, as WebDataset's `id` extension is read) and `%09d.data` (the
payload), in index order. Written with Python's tarfile, mode 0644, mtime 0,
so the same input gives the same bytes.

The package: the registry's `webdataset` at its pin in peers.txt (with
braceexpand, its one dependency Debian lacks), in registry_peers.py's venv
with Mosaic and LitData; the child runs this interpreter with that venv's
site-packages first on sys.path, as their children do.

Cheap to import (no numpy, no sluice): the test of the writer imports it.
"""
import hashlib
import io
import os
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))

SHUFFLE_BUFFER = 1000  # samples in .shuffle()'s buffer
SHARD_SHUFFLE = 100  # shards in shardshuffle's buffer (more than any dataset here has)
SEED = 17  # as the MDS children's shuffle_seed

BLOCK = 512
RECORD = tarfile.RECORDSIZE  # tarfile pads the closed archive to a multiple of it


def member_bytes(size):
    """Bytes a member of `size` bytes takes in a tar: its header block and
    its content padded to whole blocks (short ASCII names need no extended
    header)."""
    return BLOCK + -(-size // BLOCK) * BLOCK


def closed_bytes(members):
    """Size of an archive whose members take `members` bytes, once closed:
    two zero blocks, padded to a whole record."""
    return -(-(members + 2 * BLOCK) // RECORD) * RECORD


def shard_name(index):
    return f'shard-{index:06d}.tar'


def add(tar, name, content):
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(content), 0o644, 0
    tar.addfile(info, io.BytesIO(content))


def write_tars(folder, samples, payload, size_limit=64 << 20):
    """Writes `samples` samples, each with id = its index and data =
    `payload`, as tar shards of at most `size_limit` bytes in `folder`;
    returns the shard names in order."""
    os.makedirs(folder, exist_ok=True)
    names, tar, used = [], None, 0
    try:
        for i in range(samples):
            key, ident = f'{i:09d}', str(i).encode()
            need = member_bytes(len(ident)) + member_bytes(len(payload))
            if tar is not None and closed_bytes(used + need) > size_limit:
                tar.close()
                tar = None
            if tar is None:
                if closed_bytes(need) > size_limit:
                    raise ValueError(f'a sample takes {closed_bytes(need)} B as a tar, more '
                                     f'than the shard size limit {size_limit} B')
                names.append(shard_name(len(names)))
                tar = tarfile.open(os.path.join(folder, names[-1]), 'w',
                                   format=tarfile.USTAR_FORMAT)
                used = 0
            add(tar, key + '.id', ident)
            add(tar, key + '.data', payload)
            used += need
    finally:
        if tar is not None:
            tar.close()
    return names


# The child: argv[1] the site-packages folder webdataset is imported from,
# argv[2] '1' to shuffle, argv[3] '1' to read the whole epoch, argv[4] the
# samples written, argv[5] the payload's size and argv[6] its SHA-256,
# argv[7:] the shards' URLs. Prints, as cold_first_sample.py's
# child, seconds from the pipeline's construction to the first sample (its
# `data` member as bytes: nothing decodes), to the end of the epoch, and CPU
# seconds (its curl transfers included once reaped), and the wall clock
# (time.time()) when the first sample was in hand; imports excluded. Then
# checks what it read, outside the timing: the first sample's key, id and
# payload bytes (in order: sample 0), and with the epoch every sample once.
CHILD = r'''
import hashlib, sys, time
sys.path.insert(0, %r)
from cold_epoch import cpu_seconds
sys.path.insert(0, sys.argv[1])
import webdataset as wds
shuffle, epoch, samples, size, digest = (sys.argv[2] == '1', sys.argv[3] == '1',
                                         int(sys.argv[4]), int(sys.argv[5]), sys.argv[6])
urls = sys.argv[7:]
c0, t0 = cpu_seconds(), time.perf_counter()
if shuffle:
    ds = wds.WebDataset(urls, shardshuffle=%d, seed=%d).shuffle(%d, seed=%d)
else:
    ds = wds.WebDataset(urls, shardshuffle=False)
it = iter(ds)
sample = next(it)
first, at = time.perf_counter() - t0, time.time()
ids = [int(sample['id'])]
if epoch:
    for s in it:
        ids.append(int(s['id']))
        if len(s['data']) != size:
            sys.exit(f"{s['__url__']}: sample {s['__key__']} has {len(s['data'])} B, not {size}")
whole = time.perf_counter() - t0
cpu = cpu_seconds() - c0
if sample['__key__'] != '%%09d' %% ids[0] or not 0 <= ids[0] < samples or \
        (not shuffle and ids[0] != 0):
    sys.exit(f"first sample: key {sample['__key__']}, id {ids[0]}")
if hashlib.sha256(sample['data']).hexdigest() != digest:
    sys.exit(f"first sample ({sample['__key__']}): its {len(sample['data'])} B are not the payload")
if epoch and sorted(ids) != list(range(samples)):
    sys.exit(f'the epoch read {len(ids)} samples, not each of {samples} once')
print(first, whole, cpu, at)
''' % (HERE, SHARD_SHUFFLE, SEED, SHUFFLE_BUFFER, SEED)


def webdataset_time(site, urls, shuffle, samples, payload, epoch=False, env=None, at=False):
    """Seconds to the first sample read by WebDataset (imported from the
    site-packages folder `site`: registry_peers.site_packages()) from the
    tar shards at `urls`; with `epoch`: (to the first sample, to the end of
    the epoch, CPU seconds). With `at`: (that, the wall clock when the first
    sample was in hand)."""
    out = subprocess.run([sys.executable, '-c', CHILD, site, '1' if shuffle else '0',
                          '1' if epoch else '0', str(samples), str(len(payload)),
                          hashlib.sha256(payload).hexdigest(), *urls],
                         capture_output=True, text=True, env=env or os.environ)
    if out.returncode != 0:
        raise RuntimeError(f'webdataset child: {out.stderr}')
    first, whole, cpu, when = map(float, out.stdout.strip().splitlines()[-1].split())
    got = (first, whole, cpu) if epoch else first
    return (got, when) if at else got
