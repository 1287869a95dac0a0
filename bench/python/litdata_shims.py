"""Imports LitData (Lightning-AI/litData) from its source with Debian's
numpy and torch. It needs `lightning_utilities`, which Debian 12 lacks:
when missing, bench/python/litdata_shim/ stands in for it (see its
__init__.py for the one other change, torch's newer dtype names). Nothing
else is changed.
"""
import importlib.util
import os
import sys

SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'litdata_shim')


def import_litdata(source_dir):
    """`litdata` from `source_dir` (a checkout; its package is under src/).
    Paths go on sys.path, which the processes LitData spawns inherit."""
    if importlib.util.find_spec('lightning_utilities') is None:
        sys.path.insert(0, SHIM)
    sys.path.insert(0, os.path.join(source_dir, 'src'))
    import litdata
    return litdata
