"""A stand-in for `lightning_utilities`, which Debian 12 lacks, with only what
LitData imports at start-up (see bench/python/litdata_shims.py). A package
on disk rather than a module built at run time, so that the worker processes
LitData spawns import it too.

It also gives Debian's torch 1.13 the dtype names LitData lists
(torch_dtype_names.py, beside this package on sys.path).
"""
import torch_dtype_names  # noqa: F401
