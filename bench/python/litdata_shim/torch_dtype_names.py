"""Gives Debian's torch 1.13 the `torch.uint16/32/64` names LitData's dtype
table lists at import (torch >= 2.3 has them), as placeholder objects: the
benchmarks and the engines stage's Parquet oracle never store such tensors,
and any use fails loudly on the placeholder. Imported by the
lightning_utilities stand-in beside it, and by litdata_shims.import_litdata
where the registry's lightning_utilities is installed."""
import torch


class _Placeholder:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f'<placeholder {self.name}: not in this torch>'


for _name in ('uint16', 'uint32', 'uint64'):
    if not hasattr(torch, _name):
        setattr(torch, _name, _Placeholder('torch.' + _name))
