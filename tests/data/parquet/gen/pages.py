"""Walks a column chunk's page headers (Thrift compact protocol), independently of pyarrow.

pyarrow's metadata does not say which data page version a chunk uses or where its pages are; the
expected files need the first, the corrupted-page fixtures the second.
"""
import struct

DATA_PAGE, INDEX_PAGE, DICTIONARY_PAGE, DATA_PAGE_V2 = 0, 1, 2, 3


class _Reader:
    def __init__(self, buf, pos):
        self.buf, self.pos = buf, pos

    def byte(self):
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def varint(self):
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                return result

    def zigzag(self):
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def value(self, ctype):
        if ctype in (1, 2):  # bool inside a list is one byte; as a field it is the type itself
            return ctype == 1
        if ctype == 3:
            return struct.unpack("b", bytes([self.byte()]))[0]
        if ctype in (4, 5, 6):
            return self.zigzag()
        if ctype == 7:
            self.pos += 8
            return struct.unpack_from("<d", self.buf, self.pos - 8)[0]
        if ctype == 8:
            n = self.varint()
            self.pos += n
            return self.buf[self.pos - n:self.pos]
        if ctype in (9, 10):
            head = self.byte()
            n = head >> 4
            if n == 15:
                n = self.varint()
            return [self.value(head & 0x0F) if (head & 0x0F) not in (1, 2) else self.byte() == 1
                    for _ in range(n)]
        if ctype == 11:
            n = self.varint()
            kv = self.byte() if n else 0
            return [(self.value(kv >> 4), self.value(kv & 0x0F)) for _ in range(n)]
        if ctype == 12:
            return self.struct()
        raise ValueError("unknown thrift compact type %d at %d" % (ctype, self.pos))

    def struct(self):
        fields, last = {}, 0
        while True:
            head = self.byte()
            if head == 0:
                return fields
            delta, ctype = head >> 4, head & 0x0F
            fid = last + delta if delta else self.zigzag()
            fields[fid] = self.value(ctype)
            last = fid


def field_spans(buf, pos):
    """{field id: (start, end)} of the value bytes of each top-level field of the struct at pos."""
    r, spans, last = _Reader(buf, pos), {}, 0
    while True:
        head = r.byte()
        if head == 0:
            return spans
        delta, ctype = head >> 4, head & 0x0F
        fid = last + delta if delta else r.zigzag()
        start = r.pos
        r.value(ctype)
        spans[fid] = (start, r.pos)
        last = fid


def largest_zigzag_varint(width):
    """The largest non-negative value whose zigzag varint is width bytes, and those bytes."""
    value = (2 ** (7 * width) - 1) >> 1
    v, out = value << 1, []
    while True:
        byte, v = v & 0x7F, v >> 7
        out.append(byte | (0x80 if v else 0))
        if not v:
            return value, bytes(out)


def read_pages(buf, start, length):
    """Yields (header_offset, data_offset, header_fields) for each page in buf[start:start+length]."""
    pos, end = start, start + length
    while pos < end:
        r = _Reader(buf, pos)
        header = r.struct()
        yield pos, r.pos, header
        pos = r.pos + header[3]
    if pos != end:
        raise ValueError("pages overran the column chunk: %d != %d" % (pos, end))


def chunk_range(column_meta):
    """The byte range of a column chunk from pyarrow's ColumnChunkMetaData."""
    start = column_meta.data_page_offset
    if column_meta.has_dictionary_page and column_meta.dictionary_page_offset is not None:
        start = min(start, column_meta.dictionary_page_offset)
    return start, column_meta.total_compressed_size


def describe_chunk(buf, column_meta):
    """data_page_version (1 or 2), whether every page carries a CRC, the number of data pages."""
    versions, crcs, data_pages = set(), [], 0
    for _, _, h in read_pages(buf, *chunk_range(column_meta)):
        if h[1] in (DATA_PAGE, DATA_PAGE_V2):
            versions.add(1 if h[1] == DATA_PAGE else 2)
            data_pages += 1
        crcs.append(4 in h)
    if len(versions) != 1:
        raise ValueError("a column chunk with data page versions %s" % sorted(versions))
    return versions.pop(), all(crcs), data_pages


CODECS = ["UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"]
ENCODINGS = {0: "PLAIN", 2: "PLAIN_DICTIONARY", 3: "RLE", 4: "BIT_PACKED", 5: "DELTA_BINARY_PACKED",
             6: "DELTA_LENGTH_BYTE_ARRAY", 7: "DELTA_BYTE_ARRAY", 8: "RLE_DICTIONARY", 9: "BYTE_STREAM_SPLIT"}


def footer_chunks(buf):
    """Per row group, per column chunk: (path, codec, encodings) as the footer's Thrift stores them.

    pyarrow's metadata names both LZ4 (Hadoop-era, codec 5) and LZ4_RAW (codec 7) "LZ4"; a reader
    must tell them apart, so the expected files take the codec from here."""
    if buf[-4:] != b"PAR1":
        raise ValueError("no PAR1 at the end")
    length = struct.unpack("<I", buf[-8:-4])[0]
    meta = _Reader(buf, len(buf) - 8 - length).struct()
    groups = []
    for rg in meta.get(4, []):
        chunks = []
        for cc in rg[1]:
            md = cc[3]
            chunks.append((".".join(p.decode() for p in md[3]), CODECS[md[4]], [ENCODINGS[e] for e in md[2]]))
        groups.append(chunks)
    return groups
