"""Deliberately broken files, each derived from a good fixture by a small, recorded change.

Each gets `<name>.expected.json` with "error" (what a reader must report) and what pyarrow says
about the file. Offsets and flipped bytes are fixed by the source file's layout, so they change only
if the source's bytes do.
"""
import json
import os
import struct

import pyarrow.parquet as pq

from . import pages


def _pyarrow_says(path, **options):
    try:
        pq.ParquetFile(path, **options).read()
        return None
    except Exception as e:  # noqa: BLE001 -- the error is the point
        return (str(e).splitlines() or [type(e).__name__])[0]


def _footer(buf):
    length = struct.unpack("<I", buf[-8:-4])[0]
    return len(buf) - 8 - length, length


def _first_data_page(buf, path, column_path):
    md = pq.ParquetFile(path).metadata
    rg = md.row_group(0)
    for c in range(rg.num_columns):
        cc = rg.column(c)
        if cc.path_in_schema == column_path:
            for header_at, data_at, h in pages.read_pages(buf, *pages.chunk_range(cc)):
                if h[1] in (pages.DATA_PAGE, pages.DATA_PAGE_V2):
                    skip = 0
                    if h[1] == pages.DATA_PAGE_V2:  # levels are stored uncompressed before the values
                        skip = h[8].get(5, 0) + h[8].get(6, 0)
                    return header_at, data_at + skip, data_at + h[3]
    raise ValueError("%s: no data page for %s" % (path, column_path))


def _flipped(buf, at):
    out = bytearray(buf)
    out[at] ^= 0xFF
    out[at + 1] ^= 0x5A
    return bytes(out)


class _Writer:
    def __init__(self, out, manifest):
        self.out, self.manifest = out, manifest

    def source(self, name):
        path = os.path.join(self.out, name + ".parquet")
        with open(path, "rb") as f:
            return path, f.read()

    def write(self, name, data, source, change, error, **extra):
        path = os.path.join(self.out, name + ".parquet")
        with open(path, "wb") as f:
            f.write(data)
        info = {"file": name + ".parquet", "error": error, "derived_from": source + ".parquet",
                "change": change}
        info.update(extra)
        info["pyarrow_error"] = _pyarrow_says(path)
        with open(os.path.join(self.out, name + ".expected.json"), "w", encoding="utf-8") as f:
            f.write(json.dumps(info, indent=1, ensure_ascii=False) + "\n")
        self.manifest[name + ".parquet"] = info
        return path


def _footer_damage(w):
    src = "pa26_codec_snappy"
    _, buf = w.source(src)
    meta_at, meta_len = _footer(buf)
    cut = meta_at + meta_len // 2
    w.write("bad_truncated_file", buf[:cut], src,
            "the file cut at byte %d, inside the footer metadata (was %d bytes)" % (cut, len(buf)),
            "truncated file: it does not end with the PAR1 magic")
    half = meta_len // 2
    data = buf[:meta_at + half] + struct.pack("<I", half) + b"PAR1"
    w.write("bad_truncated_footer", data, src,
            "footer metadata cut to its first %d of %d bytes, footer length field set to match" % (half, meta_len),
            "footer metadata truncated: the Thrift FileMetaData ends before its STOP field")
    big = len(buf) + 1000
    w.write("bad_footer_length", buf[:-8] + struct.pack("<I", big) + b"PAR1", src,
            "footer length field set to %d, the file is %d bytes" % (big, len(buf)),
            "footer length larger than the file")
    w.write("bad_magic_head", b"XAR1" + buf[4:], src, "the first 4 bytes PAR1 replaced by XAR1",
            "not a Parquet file: it does not start with the PAR1 magic")
    w.write("bad_magic_tail", buf[:-4] + b"PAR0", src, "the last 4 bytes PAR1 replaced by PAR0",
            "not a Parquet file: it does not end with the PAR1 magic")
    w.write("bad_encrypted_footer_magic", buf[:-4] + b"PARE", src,
            "the last 4 bytes PAR1 replaced by PARE (the magic of an encrypted footer)",
            "encrypted footer (PARE magic): not supported")


def _page_damage(w):
    # Without a CRC: a GZIP page whose deflate stream no longer inflates (or fails its gzip CRC-32).
    src, column = "pa26_codec_gzip", "text"
    path, buf = w.source(src)
    header_at, start, end = _first_data_page(buf, path, column)
    for at in range(start + (end - start) // 2, end - 2):
        data = _flipped(buf, at)
        probe = os.path.join(w.out, "bad_probe.parquet")
        with open(probe, "wb") as f:
            f.write(data)
        failed = _pyarrow_says(probe)
        os.remove(probe)
        if failed:
            break
    else:
        raise AssertionError("no flip in %s made pyarrow fail" % src)
    w.write("bad_page_gzip_corrupt", data, src,
            "bytes %d and %d of the file (inside the compressed data of the page whose header is at %d) "
            "flipped" % (at, at + 1, header_at),
            "page decompression failed (GZIP) in row group 0, column 'text', page at offset %d" % header_at,
            row_group=0, column=column, page_offset=header_at)
    # With a CRC: bytes flipped inside compressed data, preferably where it still decompresses.
    for src, column in [("pa26_page_crc_v1", "text"), ("pa26_page_crc_v2", "text")]:
        path, buf = w.source(src)
        header_at, start, end = _first_data_page(buf, path, column)
        # A reader checks the CRC before it decompresses, so any flip must give a CRC error; a flip
        # that pyarrow reads silently without its check shows a reader that skips CRCs is wrong.
        candidates = []
        middle = start + (end - start) // 2
        for at in range(middle, min(end - 2, middle + 200)):
            data = _flipped(buf, at)
            probe = os.path.join(w.out, "bad_probe.parquet")
            with open(probe, "wb") as f:
                f.write(data)
            silent = _pyarrow_says(probe) is None
            caught = _pyarrow_says(probe, page_checksum_verification=True)
            os.remove(probe)
            if caught:
                candidates.append((at, data, caught, silent))
            if silent and caught:
                break
        if not candidates:
            raise AssertionError("no flip in %s failed its CRC under pyarrow" % src)
        at, data, caught, silent = candidates[-1] if candidates[-1][3] else candidates[0]
        name = "bad_page_crc_mismatch_" + src.rsplit("_", 1)[1]
        saved = w.write(name, data, src,
                        "bytes %d and %d flipped inside the compressed data of the page whose header is at %d; "
                        "%s" % (at, at + 1, header_at, "the page still decompresses, to wrong values" if silent
                                else "the page no longer decompresses either"),
                        "page CRC mismatch in row group 0, column 'text', page at offset %d" % header_at,
                        row_group=0, column=column, page_offset=header_at,
                        pyarrow_error_with_page_checksum_verification=caught)
        assert saved


def _first_page(buf, path, column_path, page_type):
    md = pq.ParquetFile(path).metadata
    rg = md.row_group(0)
    for c in range(rg.num_columns):
        if rg.column(c).path_in_schema == column_path:
            for header_at, _, h in pages.read_pages(buf, *pages.chunk_range(rg.column(c))):
                if h[1] == page_type:
                    return header_at, h
    raise ValueError("%s: no page of type %d for %s" % (path, page_type, column_path))


def _lying_sizes(w):
    """Page headers whose sizes lie. The new value is the largest that the old varint's width holds,
    so no byte of the file moves."""
    src, column = "pa26_codec_snappy", "text"
    path, buf = w.source(src)
    for name, page_type, field, field_name, error in [
        ("bad_page_compressed_size", pages.DICTIONARY_PAGE, 3, "compressed_page_size",
         "the dictionary page's compressed_page_size runs past the end of its column chunk and of the file"),
        ("bad_page_uncompressed_size", pages.DATA_PAGE, 2, "uncompressed_page_size",
         "the data page decompresses to fewer bytes than its uncompressed_page_size says"),
    ]:
        header_at, header = _first_page(buf, path, column, page_type)
        start, end = pages.field_spans(buf, header_at)[field]
        claim, encoded = pages.largest_zigzag_varint(end - start)
        w.write(name, buf[:start] + encoded + buf[end:], src,
                "%s of the page header at %d (row group 0, column 'text') changed from %d to %d, in the same "
                "%d varint bytes" % (field_name, header_at, header[field], claim, end - start),
                error, row_group=0, column=column, page_offset=header_at,
                declared=claim, actual=header[field])


def write_all(out, manifest):
    w = _Writer(out, manifest)
    _footer_damage(w)
    _page_damage(w)
    _lying_sizes(w)
