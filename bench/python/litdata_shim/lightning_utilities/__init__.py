"""A stand-in for `lightning_utilities`, which Debian 12 lacks, with only what
LitData imports at start-up (see bench/python/litdata_shims.py). A package
on disk rather than a module built at run time, so that the worker processes
LitData spawns import it too.

It also gives Debian's torch 1.13 the `torch.uint16/32/64` names LitData's
dtype table lists (torch >= 2.3), as placeholder objects: the benchmarks
never store such tensors, and any use fails loudly on the placeholder.
"""
import torch


class _Placeholder:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f'<placeholder {self.name}: not in this torch>'


for _name in ('uint16', 'uint32', 'uint64'):
    if not hasattr(torch, _name):
        setattr(torch, _name, _Placeholder('torch.' + _name))
