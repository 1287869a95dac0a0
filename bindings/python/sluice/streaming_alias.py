"""Opt-in for code written against mosaicml-streaming's module paths: after

    import sluice.streaming_alias

(or `sluice.streaming_alias.install()`), `import streaming`,
`from streaming import StreamingDataset`, `from streaming.base.util import
bytes_to_int` and the other public paths below resolve to Sluice, without
Mosaic installed. Code that imports only the top level needs no opt-in: it
changes `from streaming import ...` to `from sluice import ...`.

A path Sluice has no counterpart for raises ImportError naming it. When the
real `streaming` package is already imported, install() refuses (one
process cannot use both under one name). Thread-safe as Python's import
system is; uninstall() removes the finder and the aliases."""
import importlib
import importlib.abc
import importlib.machinery
import sys
import types

__all__ = ['install', 'uninstall', 'ALIASES']

# mosaicml-streaming module -> the Sluice module that serves it. Packages
# (that have submodules) become forwarding modules; the others are the
# Sluice module itself.
ALIASES = {
    'streaming': 'sluice',
    'streaming.base': 'sluice',
    'streaming.base.dataset': 'sluice.dataset',
    'streaming.base.stream': 'sluice.stream',
    'streaming.base.dataloader': 'sluice.dataloader',
    'streaming.base.local': 'sluice.local',
    'streaming.base.world': 'sluice.world',
    'streaming.base.util': 'sluice.util',
    'streaming.base.format': 'sluice.writer',
    'streaming.base.format.mds': 'sluice.writer',
    'streaming.base.format.mds.encodings': 'sluice.mds_encodings',
    'streaming.base.format.json': 'sluice.writer',
    'streaming.base.format.json.encodings': 'sluice.json_encodings',
    'streaming.base.format.xsv': 'sluice.writer',
    'streaming.base.format.xsv.encodings': 'sluice.xsv_encodings',
    'streaming.base.converters': 'sluice.dataframe',
    'streaming.base.batching': 'sluice.batching',
    'streaming.base.distributed': 'sluice.distributed',
    'streaming.base.registry_utils': 'sluice.registry',
    'streaming.base.compression': 'sluice.compression',
    'streaming.base.hashing': 'sluice.hashing',
    'streaming.base.storage': 'sluice.storage',
    'streaming.base.storage.upload': 'sluice.upload',
    'streaming.base.storage.download': 'sluice.download',
    'streaming.base.constant': 'sluice.mosaic_shm',
    'streaming.base.shared': 'sluice.mosaic_shm',
    'streaming.base.shared.prefix': 'sluice.mosaic_shm',
    'streaming.vision': 'sluice.vision',
    'streaming.vision.base': 'sluice.vision',
    'streaming.vision.cifar10': 'sluice.vision',
    'streaming.vision.imagenet': 'sluice.vision',
    'streaming.vision.ade20k': 'sluice.vision',
    'streaming.vision.coco': 'sluice.vision',
    'streaming.text': 'sluice.text',
    'streaming.text.c4': 'sluice.text',
    'streaming.text.enwiki': 'sluice.text',
    'streaming.text.pile': 'sluice.text',
    'streaming.multimodal': 'sluice.multimodal',
    'streaming.multimodal.webvid': 'sluice.multimodal',
}
_PACKAGES = {'streaming', 'streaming.base', 'streaming.base.format', 'streaming.base.format.mds',
             'streaming.base.format.json', 'streaming.base.format.xsv', 'streaming.base.storage',
             'streaming.base.shared', 'streaming.vision', 'streaming.text',
             'streaming.multimodal'}


def _forwarding_package(name, target):
    """A package module whose attributes are `target`'s (looked up when
    asked, so it sees what target has at that time)."""
    module = types.ModuleType(name, f'{name}: mosaicml-streaming path served by {target.__name__}')
    module.__path__ = []  # a package: its submodules come from the finder
    module.__getattr__ = lambda attr: getattr(target, attr)
    return module


class _Loader(importlib.abc.Loader):

    def create_module(self, spec):
        target = importlib.import_module(ALIASES[spec.name])
        return _forwarding_package(spec.name, target) if spec.name in _PACKAGES else target

    def exec_module(self, module):
        pass  # the target module is imported (and run) already


class _Finder(importlib.abc.MetaPathFinder):

    def find_spec(self, fullname, path=None, target=None):
        if fullname != 'streaming' and not fullname.startswith('streaming.'):
            return None
        if fullname not in ALIASES:
            raise ImportError(f'{fullname}: this mosaicml-streaming module has no Sluice '
                              f'counterpart (sluice.streaming_alias.ALIASES lists those that '
                              f'do)', name=fullname)
        return importlib.machinery.ModuleSpec(fullname, _LOADER,
                                              is_package=fullname in _PACKAGES)


_LOADER = _Loader()
_FINDER = _Finder()


def _made_here(module):
    spec = getattr(module, '__spec__', None)
    return spec is not None and spec.loader is _LOADER


def install():
    """Makes `streaming` and its listed submodules resolve to Sluice."""
    real = sys.modules.get('streaming')
    if real is not None and not _made_here(real):
        raise ImportError('sluice.streaming_alias: the real mosaicml-streaming is already '
                          'imported as `streaming`')
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall():
    """Removes the finder and every `streaming` module it made."""
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in [n for n in sys.modules if n in ALIASES]:
        module = sys.modules[name]
        # Ours: a forwarding package, or a Sluice module under this name.
        if _made_here(module) or module.__name__ == ALIASES[name]:
            del sys.modules[name]


install()
