"""mosaicml-streaming's CSV/TSV column encodings ('str', 'int', 'float') as
`streaming.base.format.xsv.encodings` offers them: a value to its text and
back; a value of the wrong type raises AttributeError, as Mosaic's."""

from sluice.text_encodings import TypedEncoding, by_name

__all__ = ['Str', 'Int', 'Float', 'is_xsv_encoding', 'xsv_encode', 'xsv_decode']


class Encoding(TypedEncoding):

    @classmethod
    def encode(cls, obj):
        cls.check_type(obj)
        return obj if cls.value_type is str else str(obj)

    @classmethod
    def decode(cls, obj):
        return cls.value_type(obj)


class Str(Encoding):
    value_type = str


class Int(Encoding):
    value_type = int


class Float(Encoding):
    value_type = float


_encodings = by_name(Str, Int, Float)


def is_xsv_encoding(encoding):
    return encoding in _encodings


def xsv_encode(encoding, value):
    """The text of `value` in a CSV/TSV column of `encoding`."""
    return _encodings[encoding].encode(value)


def xsv_decode(encoding, value):
    return _encodings[encoding].decode(value)
