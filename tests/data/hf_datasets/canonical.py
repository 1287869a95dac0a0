"""One Parquet row's values in a form two Python environments compare: each
value with the name of its Python type (numpy arrays and scalars as the
Python lists and numbers they hold, None for a masked array's masked
elements, datetime64 arrays as lists of naive
pandas Timestamps), timestamps with a zone as their UTC
instant. Imports nothing beyond the standard library, so that the
generator (under Hugging Face `datasets`) and the test (under the sluice
package) share it."""
import datetime
import decimal
import hashlib
import json


def canonical(value):
    if value is None:
        return None
    if getattr(getattr(value, 'dtype', None), 'kind', None) == 'M':  # numpy datetime64
        # A packed list of timestamps: the naive instants it holds, as pandas
        # gives each element (Timestamp.value is nanoseconds).
        # A masked array's (numpy.ma) null elements are None.
        nanos = value.astype('datetime64[ns]').astype('int64').tolist()
        return [None if n is None else ['Timestamp', n, False] for n in nanos] \
            if isinstance(nanos, list) else ['Timestamp', nanos, False]
    if hasattr(value, 'tolist') and not isinstance(value, (int, float)):  # numpy
        value = value.tolist()
    if isinstance(value, list):
        return [canonical(x) for x in value]
    if isinstance(value, bool):
        return ['bool', value]
    if isinstance(value, int):
        return ['int', value]
    if isinstance(value, float):
        return ['float', repr(value)]
    if isinstance(value, str):
        return ['str', value]
    if isinstance(value, bytes):
        return ['bytes', value.hex()]
    if isinstance(value, decimal.Decimal):
        return ['Decimal', str(value)]
    if type(value).__name__ == 'Timestamp':  # pandas
        return ['Timestamp', value.value, value.tz is not None]
    if isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            return ['datetime', value.isoformat(), False]
        utc = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return ['datetime', utc.isoformat(), True]
    if isinstance(value, datetime.date):
        return ['date', value.isoformat()]
    if isinstance(value, datetime.time):
        return ['time', value.isoformat()]
    raise TypeError(f'no canonical form for {type(value).__name__}: {value!r}')


def row_digest(row):
    """16 hex digits of the row's canonical values (column -> value)."""
    text = json.dumps({k: canonical(v) for k, v in row.items()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
