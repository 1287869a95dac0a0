"""sluice.compression and sluice.hashing (Mosaic's streaming.base.compression
and .hashing) over the engine's codecs and hashes: Mosaic's names, levels,
defaults, bytes and errors."""
import pytest

from sluice import compression, hashing


def test_names_and_levels_are_mosaics():
    assert compression.Zstandard.levels == list(range(1, 23))
    assert compression.Brotli.levels == list(range(0, 12))
    assert compression.Bzip2.levels == list(range(1, 10))
    assert compression.Gzip.levels == list(range(0, 10))
    names = compression.get_compressions()
    assert len(names) == 5 + 22 + 12 + 9 + 10
    assert {'snappy', 'zstd', 'zstd:22', 'br:0', 'gz:9'} <= names and 'snappy:1' not in names
    assert compression.Zstandard().level == 3 and compression.Brotli().level == 11


def test_bytes_roundtrip_and_errors():
    assert compression.compress('br:1', b'hello') == b'\x0b\x02\x80hello\x03'
    assert compression.decompress('br:1', b'\x0b\x02\x80hello\x03') == b'hello'
    assert compression.compress(None, b'hello') == b'hello'
    data = bytes(range(256)) * 40
    for name in ('br', 'bz2:3', 'gz', 'snappy', 'zstd:19'):
        assert compression.decompress(name, compression.compress(name, data)) == data
    assert compression.get_compression_extension('zstd:7') == 'zstd'
    with pytest.raises(ValueError, match='^br:99 is not a supported compression algorithm.$'):
        compression.compress('br:99', b'hello')
    with pytest.raises(ValueError, match='Invalid Zstandard level: 23'):
        compression.Zstandard(23)
    with pytest.raises(TypeError):
        compression.Zstandard().compress('bigdata')
    with pytest.raises(ValueError, match='zstd'):  # corrupt input: the engine's error
        compression.decompress('zstd', b'not zstd at all')


def test_hashes_are_hashlibs_and_xxhashs():
    assert len(hashing.get_hashes()) == 17 and hashing.is_hash('xxh128')
    assert not hashing.is_hash('') and not hashing.is_hash('sha3')
    assert hashing.get_hash('md5', b'hello') == '5d41402abc4b2a76b9719d911017c592'
    assert hashing.get_hash('md5', bytearray(b'hello')) == '5d41402abc4b2a76b9719d911017c592'
    for not_bytes in (5, 'hello'):
        with pytest.raises(TypeError, match='get_hash takes bytes'):
            hashing.get_hash('md5', not_bytes)
    assert hashing.get_hash('xxh3_64', b'hello') == '9555e8555c62dcfd'
    with pytest.raises(ValueError, match='^sha3 is not a supported hash algorithm.$'):
        hashing.get_hash('sha3', b'hello')
