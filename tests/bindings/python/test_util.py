"""sluice.util: Mosaic's helpers of streaming.base.util."""
from sluice.util import _format_remote_index_files


def test_format_remote_index_files_joins_bucket_and_key():
    keys = ['prefix/a/index.json', 'prefix/b/index.json', 'prefix/a/shard.00000.mds']
    assert _format_remote_index_files('s3://bucket/prefix', keys) == [
        's3://bucket/prefix/a/index.json', 's3://bucket/prefix/b/index.json']
    assert _format_remote_index_files('gs://bucket/prefix/', ['prefix/x/index.json']) == [
        'gs://bucket/prefix/x/index.json']


def test_format_remote_index_files_leaves_out_the_merged_index():
    keys = ['prefix/index.json', 'prefix/p/index.json', 'prefix/p/q/index.json']
    assert _format_remote_index_files('oci://bucket/prefix', keys) == [
        'oci://bucket/prefix/p/index.json', 'oci://bucket/prefix/p/q/index.json']


def test_format_remote_index_files_only_index_json():
    keys = ['prefix/p/my_index.json', 'prefix/p/index.json.tmp', 'prefix/p/index.json']
    assert _format_remote_index_files('s3://bucket/prefix', keys) == [
        's3://bucket/prefix/p/index.json']


def test_format_remote_index_files_databricks_volumes():
    keys = ['Volumes/cat/schema/vol/p/index.json']
    assert _format_remote_index_files('dbfs:/Volumes/cat/schema/vol', keys) == [
        'dbfs:/Volumes/cat/schema/vol/p/index.json']
    # Other dbfs paths keep '://' (Mosaic's rule), as does a name that only
    # starts like 'Volumes'.
    assert _format_remote_index_files('dbfs:/Volumes2/x', ['Volumes2/x/p/index.json']) == [
        'dbfs://Volumes2/x/p/index.json']
