"""Imports LitData (Lightning-AI/litData), from the registry's release
(registry_peers.py) or a source checkout, with Debian's numpy and torch.
It needs `lightning_utilities`, which Debian 12 lacks: when missing,
bench/python/litdata_shim/ stands in for it (its torch_dtype_names.py makes
the one other change, torch's newer dtype names). Nothing
else is changed. The shim stays with the registry's LitData too: in a venv
with the registry's torch both shims would go (torch >= 2.3 has the dtype
names; lightning-utilities installs), but `pip install 'torch>=2.4'
lightning-utilities` resolves (pip --dry-run --report, Dec 2026) to torch
2.15.0 with CUDA 13's nvidia-*/cuda-* wheels and triton (31 packages), a
second torch beside Debian's 1.13; and the contenders would then have to
move to it together to measure the same thing.
"""
import importlib.util
import os
import sys

SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'litdata_shim')


def import_litdata(source_dir=None):
    """`litdata` from `source_dir`: a checkout (its package under src/) or a
    site-packages folder holding it; None: the one installed. Paths go on
    sys.path, which the processes LitData spawns inherit. Where the
    registry's lightning_utilities is installed (tests/engines' venv) only
    the dtype names are added, in this process."""
    if importlib.util.find_spec('lightning_utilities') is None:
        sys.path.insert(0, SHIM)
    else:
        sys.path.append(SHIM)
        import torch_dtype_names  # noqa: F401
    if source_dir is not None:
        src = os.path.join(source_dir, 'src')
        sys.path.insert(0, src if os.path.isdir(os.path.join(src, 'litdata')) else source_dir)
    import litdata
    return litdata


def collate_bytes(items):
    """A collate for LitData's StreamingDataLoader over samples with a bytes
    column: LitData hands such a column back as a memoryview into its chunk,
    and torch's default_collate treats a memoryview as a sequence, turning
    every byte position into a tensor of its own (262,144 tensors for a
    batch of 256 KiB samples; DataLoader workers then run out of file
    descriptors sharing them, and the loader waits forever). Here the column
    becomes `bytes`, as Sluice's and Mosaic's samples are, and the rest goes
    to default_collate: a batch of the same shape for every contender.
    A module-level function, so that DataLoader workers can unpickle it."""
    from torch.utils.data import default_collate
    return default_collate([
        {k: bytes(v) if isinstance(v, memoryview) else v for k, v in item.items()}
        if isinstance(item, dict) else item for item in items])
