"""Imports mosaicml-streaming (the registry's release, bench/python/registry_peers.py,
or a checkout) with Debian's numpy and torch.

streaming/base/dataloader.py imports `transformers` (BatchFeature,
BatchEncoding, AutoTokenizer) for type checks of batches; nothing the
comparison runs calls it. When `transformers` is missing, every module under
it is a stub whose attributes are classes that raise when called, so an
unexpected use fails loudly instead of measuring something else.
Nothing else is stubbed.
"""
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

STUBBED = ('transformers',)


class _StubModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)

        def called(*args, **kwargs):
            raise RuntimeError(f'stubbed {self.__name__}.{name} was called by the benchmark')
        stub = type(name, (), {'__init__': called, '__call__': called})
        setattr(self, name, stub)
        return stub


class _StubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target=None):
        if fullname.split('.')[0] in STUBBED:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        return None

    def create_module(self, spec):
        module = _StubModule(spec.name)
        module.__path__ = []
        return module

    def exec_module(self, module):
        pass


def import_streaming(source_dir):
    """`streaming` from `source_dir` (a checkout); stubs only what is missing."""
    if source_dir:
        sys.path.insert(0, source_dir)
    stubbed = [m for m in STUBBED if importlib.util.find_spec(m) is None]
    if stubbed:
        sys.meta_path.append(_StubFinder())  # after the real finders: only missing ones
    import streaming
    return streaming, stubbed
