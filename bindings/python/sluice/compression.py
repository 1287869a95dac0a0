"""Mosaic's `streaming.base.compression` over the engine's codecs (the C
ABI's sluice_compress / sluice_decompress): the same names ("zstd",
"zstd:19", "br", "gz", "bz2", "snappy"), classes, levels, defaults and
errors, and the same bytes as the codecs Sluice writes shards with."""
import ctypes

from sluice import _lib

__all__ = ['Compression', 'LevelledCompression', 'Brotli', 'Bzip2', 'Gzip', 'Snappy',
           'Zstandard', 'compress', 'decompress', 'get_compressions', 'get_compression_extension',
           'is_compression']

# Output a decompression may produce: the caller's own data, bounded only so
# that nothing is allocated from a header's claim (memory follows the output).
_MAX_OUTPUT = 1 << 40


def _known(name):
    return _lib.lib.sluice_compression_check(name.encode()) == _lib.OK


def _levels(family):
    """The levels the engine accepts for `family` (its one rule), in order."""
    return [n for n in range(0, 23) if _known(f'{family}:{n}')]


def _call(fn, name, data, *extra):
    data = _lib.as_bytes(data, fn)
    out, size = ctypes.c_void_p(), ctypes.c_uint64()
    _lib.check(getattr(_lib.lib, fn)(name.encode(), data, len(data), *extra, ctypes.byref(out),
                                     ctypes.byref(size)), fn)
    try:
        return ctypes.string_at(out, size.value)
    finally:
        _lib.lib.sluice_free(out)


class Compression:
    """One algorithm (and level): compress / decompress whole byte strings."""

    extension = ''

    def __init__(self):
        self._name = self.extension

    @classmethod
    def each(cls):
        """(name, instance) for the family's default."""
        yield cls.extension, cls()

    def compress(self, data):
        return _call('sluice_compress', self._name, data)

    def decompress(self, data):
        return _call('sluice_decompress', self._name, data, ctypes.c_uint64(_MAX_OUTPUT))


class LevelledCompression(Compression):
    """A family with levels; `level=None` is the family's default."""

    levels = []
    default_level = None

    def __init__(self, level=None):
        super().__init__()
        self.level = self.default_level if level is None else level
        if self.level not in self.levels:
            raise ValueError(f'Invalid {type(self).__name__} level: {level}.')
        self._name = f'{self.extension}:{self.level}'

    @classmethod
    def each(cls):
        """(name, instance) for the default, then for every level."""
        yield cls.extension, cls()
        for level in cls.levels:
            yield f'{cls.extension}:{level}', cls(level)


class Brotli(LevelledCompression):
    extension = 'br'
    levels = _levels('br')
    default_level = 11


class Bzip2(LevelledCompression):
    extension = 'bz2'
    levels = _levels('bz2')
    default_level = 9


class Gzip(LevelledCompression):
    extension = 'gz'
    levels = _levels('gz')
    default_level = 9


class Snappy(Compression):
    extension = 'snappy'


class Zstandard(LevelledCompression):
    extension = 'zstd'
    levels = _levels('zstd')
    default_level = 3


_FAMILIES = (Brotli, Bzip2, Gzip, Snappy, Zstandard)
_ALGORITHMS = {name: obj for cls in _FAMILIES for name, obj in cls.each()}


def get_compressions():
    """Every supported name: each family, and each family:level."""
    return set(_ALGORITHMS)


def is_compression(algo):
    return algo in _ALGORITHMS


def _algorithm(algo):
    if not is_compression(algo):
        raise ValueError(f'{algo} is not a supported compression algorithm.')
    return _ALGORITHMS[algo]


def get_compression_extension(algo):
    """The file extension of `algo`'s files (its family)."""
    return _algorithm(algo).extension


def compress(algo, data):
    """`data` compressed with `algo` (None: unchanged)."""
    return data if algo is None else _algorithm(algo).compress(data)


def decompress(algo, data):
    """`data` decompressed with `algo` (None: unchanged)."""
    return data if algo is None else _algorithm(algo).decompress(data)
