"""`<name>.expected.json` from pyarrow's reading, cross-checked against DuckDB's reading.

Each column is read by both readers, and where both read it they must agree. Where pyarrow refuses a
column that DuckDB reads (some of DuckDB's own files), DuckDB's reading is the expected one.
Values follow PARQUET.md: temporal values as integers in the unit the Parquet file stores (INT96 as
nanoseconds), floats as Python's repr(), binary as {"hex": ...}, decimals as str(Decimal). For the
comparison both readings are brought to one form, timestamps in nanoseconds, since DuckDB widens
milliseconds to microseconds.
"""
import decimal
import json
import os

import pyarrow as pa
import pyarrow.parquet as pq

from . import pages

UNIT_OF_PARQUET = {"MILLIS": "ms", "MICROS": "us", "NANOS": "ns"}


def _stored_unit(column_schema):
    """The unit a Parquet leaf stores timestamps in (INT96: nanoseconds), or None if not a timestamp."""
    if column_schema.physical_type == "INT96":
        return "ns"
    logical = json.loads(column_schema.logical_type.to_json())
    if logical.get("Type") == "Timestamp":
        return {"milliseconds": "ms", "microseconds": "us", "nanoseconds": "ns"}[logical["timeUnit"]]
    converted = column_schema.converted_type
    if converted and converted.startswith("TIMESTAMP_"):
        return UNIT_OF_PARQUET[converted.split("_")[1]]
    return None


def _rebuild_list(t, value_type):
    field = pa.field(t.value_field.name, value_type, nullable=t.value_field.nullable)
    if pa.types.is_fixed_size_list(t):
        return pa.list_(field, t.list_size)
    if pa.types.is_large_list(t):
        return pa.large_list(field)
    return pa.list_(field)


def _map_leaves(t, leaves, leaf_fn):
    """Rewrites each leaf type of t with leaf_fn(leaf_type, parquet_leaf); lists keep their shape."""
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _rebuild_list(t, _map_leaves(t.value_type, leaves, leaf_fn))
    if pa.types.is_struct(t) or pa.types.is_map(t) or pa.types.is_union(t):
        raise ValueError("struct-free fixtures only, got %s" % t)
    return leaf_fn(t, next(leaves))


def _as_stored_unit(t, leaf):
    unit = _stored_unit(leaf)
    if pa.types.is_timestamp(t) and unit:
        return pa.timestamp(unit, tz=t.tz)
    return t


def _as_nanoseconds(t, _leaf):
    return pa.timestamp("ns", tz=t.tz) if pa.types.is_timestamp(t) else t


def _temporal_as_int(t, _leaf):
    if pa.types.is_timestamp(t) or pa.types.is_date64(t) or pa.types.is_duration(t) or pa.types.is_time64(t):
        return pa.int64()
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_dictionary(t):
        return t.value_type
    return t


def _cast(column, t):
    return column.cast(t) if column.type != t else column


def _json_value(v):
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return repr(float(v))
    if isinstance(v, (bytes, bytearray)):
        return {"hex": bytes(v).hex()}
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, list):
        return [_json_value(x) for x in v]
    raise TypeError("no JSON form for %r (%s)" % (v, type(v)))


def column_values(column, leaves, leaf_fn):
    """(type shown, JSON values) of one top-level column after leaf_fn picks each timestamp's unit."""
    shown = _map_leaves(column.type, iter(leaves), leaf_fn)
    as_ints = _map_leaves(shown, iter(leaves), _temporal_as_int)
    values = _cast(_cast(column, shown), as_ints).to_pylist()
    return shown, [_json_value(v) for v in values]


def _leaves_by_top_field(pf):
    schema = pf.schema
    by_field = {}
    for i in range(len(schema)):
        col = schema.column(i)
        by_field.setdefault(col.path.split(".")[0], []).append(col)
    return by_field


def _row_groups(path, md):
    with open(path, "rb") as f:
        buf = f.read()
    raw = pages.footer_chunks(buf)
    groups = []
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        cols = []
        for c in range(rg.num_columns):
            cc = rg.column(c)
            path_in_schema, codec, encodings = raw[g][c]
            if path_in_schema != cc.path_in_schema or set(encodings) != set(cc.encodings):
                raise AssertionError("%s: footer walk and pyarrow disagree on chunk %d.%d" % (path, g, c))
            version, crc, n_pages = pages.describe_chunk(buf, cc)
            # Sorted: parquet-java lists them from a hash set, in an order that changes run to run.
            cols.append({"path": path_in_schema, "codec": codec, "encodings": sorted(encodings),
                         "data_page_version": version, "data_pages": n_pages, "page_crc": crc})
        groups.append({"num_rows": rg.num_rows, "columns": cols})
    return groups


def _duckdb_column(duckdb, path, column):
    sel = '"%s"' % column.replace('"', '""')
    rel = duckdb.connect().sql("SELECT %s FROM read_parquet('%s')" % (sel, path.replace("'", "''")))
    table = rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()
    return table.column(0)


def _first_line(e):
    return (str(e).splitlines() or [type(e).__name__])[0]


def _read_columns(names, read_one):
    got, errors = {}, {}
    for name in names:
        try:
            got[name] = read_one(name)
        except Exception as e:  # noqa: BLE001 -- a reader's refusal is recorded, not fatal
            errors[name] = _first_line(e)
    return got, errors


def _disagreement(path, name, mine, theirs):
    if len(mine) != len(theirs):
        return "%s column %s: %d rows vs %d" % (path, name, len(mine), len(theirs))
    row = next(i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b)
    return "%s column %s: pyarrow and DuckDB disagree at row %d: %r vs %r" % (path, name, row, mine[row], theirs[row])


def expected_for(path, rel_name, writer, duckdb):
    """Each column from pyarrow's reading, or DuckDB's where pyarrow refuses the column; where both
    read it they must agree."""
    pf = pq.ParquetFile(path)
    md = pf.metadata
    names = pf.schema_arrow.names
    leaves = _leaves_by_top_field(pf)
    by_pyarrow, pyarrow_errors = _read_columns(names, lambda n: pf.read(columns=[n]).column(0))
    by_duckdb, duckdb_errors = _read_columns(names, lambda n: _duckdb_column(duckdb, path, n))
    columns = []
    for name in names:
        readings = [(r, t[name]) for r, t in (("pyarrow", by_pyarrow), ("duckdb", by_duckdb)) if name in t]
        if not readings:
            raise AssertionError("%s column %s: neither reader reads it: %s / %s" % (
                path, name, pyarrow_errors[name], duckdb_errors[name]))
        shown, values = column_values(readings[0][1], leaves[name], _as_stored_unit)
        compared = [column_values(c, leaves[name], _as_nanoseconds)[1] for _, c in readings]
        if len(compared) == 2 and compared[0] != compared[1]:
            raise AssertionError(_disagreement(path, name, compared[0], compared[1]))
        columns.append({"name": name, "arrow_type": str(shown), "read_by": [r for r, _ in readings],
                        "values": values})
    return {
        "file": rel_name,
        "writer": writer,
        "created_by": md.created_by,
        "num_rows": md.num_rows,
        "row_groups": _row_groups(path, md),
        "columns": columns,
        "readers": {"pyarrow": {"version": pa.__version__, "not_read": pyarrow_errors},
                    "duckdb": {"version": duckdb.__version__, "not_read": duckdb_errors}},
    }


def dump(obj, path):
    """Indented JSON, but each column chunk and each column's values on one line, to keep the files
    small and their diffs readable."""
    def enc(o, depth):
        pad = "\n" + " " * depth
        if isinstance(o, dict):
            if "values" in o or "path" in o or "hex" in o or not o or depth > 6:
                return json.dumps(o, ensure_ascii=False)
            items = ['%s%s: %s' % (pad + " ", json.dumps(k), enc(v, depth + 1)) for k, v in o.items()]
            return "{" + ",".join(items) + pad + "}"
        if isinstance(o, list) and o and isinstance(o[0], dict):
            return "[" + ",".join(pad + " " + enc(v, depth + 1) for v in o) + pad + "]"
        return json.dumps(o, ensure_ascii=False)
    with open(path, "w", encoding="utf-8") as f:
        f.write(enc(obj, 0) + "\n")


def write_all(root, manifest):
    """manifest: relative parquet path -> {"writer": ..., optional "expected": relative stem}."""
    import duckdb
    for rel_name in sorted(manifest):
        entry = manifest[rel_name]
        stem = entry.get("expected", rel_name[:-len(".parquet")])
        obj = expected_for(os.path.join(root, rel_name), rel_name, entry["writer"], duckdb)
        dump(obj, os.path.join(root, stem + ".expected.json"))
