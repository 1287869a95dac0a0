"""A Parquet file replaced on the store between the listing (whose ETag keys
the cache) and the ranged read of its row group (issue 35): the read asks
for the listed version (If-Match). s3rver ignores If-Match on GET but
answers with the new ETag, which the engine refuses: the read fails naming
the file, and no bytes of the new version are served or cached."""
import pathlib

import pytest

from sluice import StreamingDataset
from sluice.remote import remote_write
from s3rver_fixture import SECRET, s3, s3rver  # noqa: F401

DATA = pathlib.Path(__file__).resolve().parents[2] / 'data' / 'parquet'


def test_a_file_replaced_after_the_listing_is_an_error_naming_it(s3, tmp_path):
    old = (DATA / 'pa26_types_plain_uncompressed.parquet').read_bytes()
    # Uncompressed, no dictionary: the same size, other values.
    new = old.replace(b'non-BMP', b'NON-BMP')
    assert new != old and len(new) == len(old)
    url = f'{s3}/changed-{tmp_path.name}'
    remote_write(url, 'a.parquet', old)
    cache = tmp_path / 'cache'
    # Shuffled: nothing is read beside the footers (in order, row group 0
    # would be guessed with them, of the listed version, before the
    # replacement: guess_first_shard).
    ds = StreamingDataset(remote=url, local=str(cache), batch_size=4, shuffle=True)
    assert len(ds) == 48  # listed, footer read
    remote_write(url, 'a.parquet', new)
    with pytest.raises(Exception) as raised:
        list(ds)
    text = str(raised.value)
    assert 'a.parquet: row group 0, bytes [' in text
    assert f'{url}/a.parquet: changed since it was listed (ETag "' in text
    assert SECRET not in text
    pieces = cache / '.parquet_row_groups'
    assert not pieces.exists() or not any(pieces.iterdir())
