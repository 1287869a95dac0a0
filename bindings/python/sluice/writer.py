"""Dataset writers with Mosaic's names and arguments: MDSWriter, JSONWriter,
CSVWriter, TSVWriter. Shards, index.json and their bytes are produced by the
C writer (sluice_writer_*), byte-identical to Mosaic's; Python only turns
each value into its stored bytes (MDS) or its text (JSON/CSV/TSV).
"""
import ctypes
import math
import os
import re
import shutil
import tempfile

import numpy as np

from sluice import _lib
from sluice.encodings import value_error
from sluice.mds_encodings import custom_coder, get_mds_encoded_size, make_value_encoder
from sluice.remote import url_scheme

_cast = ctypes.cast
_c_char_p = ctypes.c_char_p
_u8p = ctypes.POINTER(ctypes.c_uint8)

__all__ = ['MDSWriter', 'JSONWriter', 'CSVWriter', 'TSVWriter', 'XSVWriter',
           'parse_size_limit']

_SIZE_UNITS = ['b', 'kb', 'mb', 'gb', 'tb', 'pb', 'eb', 'zb', 'yb']


def parse_size_limit(size_limit):
    """size_limit as Mosaic takes it: None (no limit), an int, or a string such
    as '64mb' / '1.5kb' / '100' (suffixes kb..yb mean x1024 each,
    case-insensitive). Returns an int or None. As Mosaic, a false value (0,
    '') or one that comes to 0 bytes means no limit."""
    if not size_limit:
        return None
    if isinstance(size_limit, bool):
        raise TypeError('size_limit must be an int, a size string or None')
    if isinstance(size_limit, int):
        value = size_limit
    elif isinstance(size_limit, str):
        m = re.fullmatch(r'\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*', size_limit)
        unit = m.group(2).lower() if m else None
        if not m or unit not in _SIZE_UNITS + ['']:
            raise ValueError(f'size_limit {size_limit!r}: expected a number with an optional '
                             f'suffix b, kb, mb, gb, tb, pb, eb, zb or yb')
        power = _SIZE_UNITS.index(unit) if unit else 0
        value = int(float(m.group(1)) * 1024**power)
    else:
        raise TypeError(f'size_limit must be an int, a size string or None, not '
                        f'{type(size_limit).__name__}')
    # Mosaic's texts, which users' code and tests match.
    if value < 0:
        raise ValueError(f'`size_limit` must be greater than zero, instead, found as {value}.')
    if value >= 1 << 32:
        raise ValueError(f'`size_limit` must be less than 2**32, instead, found as {value}. '
                         f'This is because sample byte offsets are stored with uint32.')
    return value or None


def is_remote(path):
    """True for a URL with a scheme (s3://, gs://, file://, dbfs:/...), as
    Mosaic's urlparse(out).scheme test, by the engine's reading of schemes;
    plain paths are local."""
    return url_scheme(path) != ''


def resolve_out(out):
    """(local, remote) of a writer's `out`, as Mosaic's CloudUploader reads it:
    a local folder -> (folder, None); a remote URL -> (a new temporary folder,
    URL); a (local, remote) pair as given (an empty remote means none)."""
    if isinstance(out, (tuple, list)):
        if len(out) != 2:
            raise ValueError('Invalid `out` argument. It is either a string of local/remote '
                             'directory or a list of two strings with [local, remote].')
        local, remote = out
        return os.path.expanduser(str(local)), (str(remote) if remote else None)
    out = str(out)
    if is_remote(out):
        return tempfile.mkdtemp(), out
    return os.path.expanduser(out), None


class _Writer:
    format = None
    separator = None

    def __init__(self, *, out, columns, compression=None, hashes=None, size_limit=1 << 26,
                 keep_local=False, progress_bar=False, max_workers=None, retry=2, exist_ok=False,
                 newline=None, separator=None, **kwargs):
        if kwargs:
            # Mosaic's type and text.
            raise ValueError(f'Invalid Writer argument(s): {list(kwargs)} ')
        if not isinstance(columns, dict) or not columns:
            raise ValueError('columns must be a non-empty dict {name: encoding}')
        if max_workers is not None and (isinstance(max_workers, bool) or
                                        not isinstance(max_workers, int) or max_workers <= 0):
            raise ValueError(f'max_workers must be a positive int or None, not {max_workers!r}')
        if isinstance(retry, bool) or not isinstance(retry, int) or retry < 1:
            raise ValueError(f'retry must be a positive int (attempts per upload), not {retry!r}')
        size_limit = parse_size_limit(size_limit)
        self.local, self.remote = resolve_out(out)
        if os.path.isdir(self.local) and os.listdir(self.local):
            if not exist_ok:
                raise FileExistsError(f'Directory is not empty: {self.local}')
            shutil.rmtree(self.local)  # Mosaic's exist_ok: start from an empty folder
        self.columns = dict(columns)
        self.newline = newline
        if separator is not None:  # CSV and TSV have theirs as a class attribute
            self.separator = separator
        self.compression = compression
        self.hashes = list(hashes or [])
        self.size_limit = size_limit
        self.keep_local = keep_local
        self.progress_bar = progress_bar
        self.max_workers = max_workers
        self._names = list(self.columns)
        n = len(self._names)
        names = (ctypes.c_char_p * n)(*[k.encode('utf-8') for k in self._names])
        encs = (ctypes.c_char_p * n)(*[str(v).encode('utf-8') for v in self.columns.values()])
        hashes_c = (ctypes.c_char_p * max(len(self.hashes), 1))(
            *[h.encode() for h in self.hashes])
        custom = self._custom_encodings()
        custom_names = (ctypes.c_char_p * max(len(custom), 1))(
            *[name.encode('utf-8') for name in custom])
        custom_sizes = (ctypes.c_int64 * max(len(custom), 1))(
            *[-1 if size is None else size for size in custom.values()])
        opts = _lib.WriterOptions(
            format=self.format.encode(),
            compression=compression.encode() if compression else None,
            hashes=hashes_c, num_hashes=len(self.hashes),
            size_limit=self.size_limit or 0, no_size_limit=1 if self.size_limit is None else 0,
            newline=newline.encode('utf-8') if newline is not None else None,
            separator=separator.encode('utf-8') if separator is not None else None,
            remote=self.remote.encode('utf-8') if self.remote else None,
            keep_local=1 if keep_local else 0, max_workers=max_workers or 0,
            upload_attempts=retry, custom_encodings=custom_names,
            custom_encoding_sizes=custom_sizes, num_custom_encodings=len(custom))
        h = ctypes.c_void_p()
        where = f'{self.local!r}' + (f' -> {self.remote!r}' if self.remote else '')
        status = _lib.lib.sluice_writer_open(os.fsencode(self.local), names, encs, n,
                                             ctypes.byref(opts), ctypes.byref(h))
        if status != _lib.OK and self.remote and not isinstance(out, (tuple, list)):
            shutil.rmtree(self.local, ignore_errors=True)  # our temporary folder
        _lib.check(status, f'{type(self).__name__}({where})')
        self._handle = h
        self._fields = (_lib.Bytes * n)()
        self._finished = False
        self._bar = None
        if progress_bar:
            try:
                from tqdm import tqdm
                self._bar = tqdm(desc=f'writing {self.local}', unit=' samples')
            except ImportError:
                self._bar = None

    def _encode(self, sample):
        raise NotImplementedError

    def _custom_encodings(self):
        """{name: fixed size or None} of the users' own encodings among the columns'."""
        return {}

    def get_config(self):
        """The shard settings index.json records for each shard (Mosaic's
        get_config): version, format, compression, hashes, size_limit and the
        format's own keys."""
        return {'version': 2, 'format': self.format, 'compression': self.compression,
                'hashes': self.hashes, 'size_limit': self.size_limit}

    def write(self, sample):
        """Appends one sample (a dict with a value for every column)."""
        if self._finished:
            raise RuntimeError(f'{type(self).__name__}: write after finish()')
        try:
            parts = self._encode(sample)
        except KeyError as e:
            raise KeyError(f'sample has no value for column {e.args[0]!r}') from None
        f = self._fields
        # c_char_p points into each bytes object without copying; `parts`
        # keeps them alive for the call (the C writer copies before returning).
        for i, p in enumerate(parts):
            f[i].data = _cast(_c_char_p(p), _u8p) if p else None
            f[i].size = len(p)
        self._send(f, len(parts))
        if self._bar is not None:
            self._bar.update(1)

    def _send(self, fields, n):
        """Hands the engine the sample whose fields _encode gave."""
        _lib.check(_lib.lib.sluice_writer_write(self._handle, fields, n),
                   f'{type(self).__name__}.write')

    def finish(self):
        """Writes the last shard and index.json; with a remote, waits until
        every file is uploaded (index.json last) and then removes the local
        folder unless keep_local, as Mosaic does."""
        if self._finished:
            return
        self._finished = True
        try:
            _lib.check(_lib.lib.sluice_writer_finish(self._handle),
                       f'{type(self).__name__}.finish')
        finally:
            self._close()
        if self.remote and not self.keep_local:
            shutil.rmtree(self.local, ignore_errors=True)

    def uploaded(self):
        """(files, bytes) uploaded to the remote so far."""
        files, size = ctypes.c_uint64(), ctypes.c_uint64()
        if self._handle:
            _lib.check(_lib.lib.sluice_writer_uploaded(self._handle, ctypes.byref(files),
                                                       ctypes.byref(size)))
        return files.value, size.value

    def _close(self):
        if self._handle:
            _lib.lib.sluice_writer_close(self._handle)
            self._handle = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.finish()
        else:
            self._finished = True
            self._close()

    def __del__(self):
        try:
            self._close()
        except Exception:
            pass


class MDSWriter(_Writer):
    """Writes an MDS dataset, byte-identical to Mosaic's MDSWriter.

    Args:
        out: a local folder; a remote URL (written to a temporary folder, each
            shard uploaded as soon as it is finished, index.json last); or a
            (local, remote) pair.
        keep_local: with a remote, keep the local files (default: removed).
        max_workers: concurrent uploads (default min(32, cpus + 4)).
        retry: attempts per upload request (default 2).
        exist_ok: empty a non-empty local folder instead of raising.
        columns: {name: encoding}, any MDS encoding.
        compression, hashes, size_limit: as Mosaic (size_limit may be '64mb').
    """
    format = 'mds'

    def __init__(self, *, out, columns, **kwargs):
        super().__init__(out=out, columns=columns, **kwargs)
        self._columns = [(c, make_value_encoder(self.columns[c], c)) for c in self._names]
        self._kinds = (ctypes.c_uint32 * len(self._names))()

    def _encode(self, sample):
        # Each value as the engine takes it (its class's engine_value, or
        # the field its class encoded): the engine encodes the sample's
        # values in the one call that writes it (sluice_writer_write_values).
        kinds, parts = zip(*[enc(sample[c]) for c, enc in self._columns])
        self._kinds[:] = kinds
        return parts

    def _send(self, fields, n):
        status = _lib.lib.sluice_writer_write_values(self._handle, fields, self._kinds, n)
        if status == _lib.EINVAL:  # a value the engine refused: "column 'x': <its text>"
            text = _lib.last_error().partition(': ')[2]
            if text.startswith('column '):
                raise value_error(text)
        _lib.check(status, 'MDSWriter.write')

    def _custom_encodings(self):
        # Registered Mosaic's way (mds_encodings._encodings[name] = cls): the
        # C writer stores what their class encodes, sized as its `size` says.
        out = {}
        for encoding in self.columns.values():
            coder = custom_coder(str(encoding))
            if coder is not None:
                out[str(encoding)] = coder.size
        return out

    def get_config(self):
        names = sorted(self.columns)  # MDS stores columns by name
        return dict(super().get_config(), column_names=names,
                    column_encodings=[self.columns[n] for n in names],
                    column_sizes=[get_mds_encoded_size(self.columns[n]) for n in names])


def _py_text(column, encoding, value, json_bools=False):
    if encoding == 'int':
        if json_bools and isinstance(value, bool):
            # Mosaic's JSONWriter takes a bool as an int and json.dumps
            # writes it as true/false (its CSVWriter would write 'True',
            # which int() cannot read back: refused there).
            return 'true' if value else 'false'
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            raise TypeError(f'column {column!r} (int): got {type(value).__name__}')
        return str(int(value))  # any size, as Mosaic's
    if encoding == 'float':
        if not isinstance(value, (float, np.floating)):
            raise TypeError(f'column {column!r} (float): got {type(value).__name__}')
        v = float(value)
        return 'nan' if math.isnan(v) else repr(v)
    if encoding == 'str':
        if not isinstance(value, str):
            raise TypeError(f'column {column!r} (str): got {type(value).__name__}')
        return value
    raise ValueError(f'column {column!r}: unsupported encoding {encoding!r} (str, int, float)')


class _TextWriter(_Writer):
    # What each text writer does differently is said by its class, not by
    # comparing format names: JSONL writes a bool as true/false, and XSV's
    # config keeps its separator (CSV and TSV imply theirs).
    _json_bools = False
    _config_has_separator = False

    def _encode(self, sample):
        return [_py_text(c, self.columns[c], sample[c], self._json_bools).encode('utf-8')
                for c in self._names]

    def get_config(self):
        """CSV/TSV/XSV: columns stored by name, with their newline (and
        separator for XSV; CSV and TSV imply theirs), as Mosaic's."""
        names = sorted(self.columns)
        config = dict(super().get_config(), column_names=names,
                      column_encodings=[self.columns[n] for n in names],
                      separator=self.separator, newline=self.newline)
        if not self._config_has_separator:
            del config['separator']
        return config


class JSONWriter(_TextWriter):
    """Writes a JSONL dataset as Mosaic's JSONWriter (columns: str, int, float);
    `newline` ends each line (default '\\n')."""
    format = 'json'
    _json_bools = True

    def __init__(self, *, out, columns, newline='\n', **kwargs):
        super().__init__(out=out, columns=columns, newline=newline, **kwargs)

    def get_config(self):
        return dict(_Writer.get_config(self), columns=self.columns, newline=self.newline)


class XSVWriter(_TextWriter):
    """Writes an XSV dataset as Mosaic's XSVWriter: columns joined by
    `separator`, lines ended by `newline` (no quoting: values may hold
    neither)."""
    format = 'xsv'
    _config_has_separator = True

    def __init__(self, *, out, columns, separator, newline='\n', **kwargs):
        super().__init__(out=out, columns=columns, separator=separator, newline=newline,
                         **kwargs)


class CSVWriter(_TextWriter):
    """Writes a CSV dataset as Mosaic's CSVWriter (separator ',')."""
    format = 'csv'
    separator = ','

    def __init__(self, *, out, columns, newline='\n', **kwargs):
        super().__init__(out=out, columns=columns, newline=newline, **kwargs)


class TSVWriter(_TextWriter):
    """Writes a TSV dataset as Mosaic's TSVWriter (separator '\\t')."""
    format = 'tsv'
    separator = '\t'

    def __init__(self, *, out, columns, newline='\n', **kwargs):
        super().__init__(out=out, columns=columns, newline=newline, **kwargs)
