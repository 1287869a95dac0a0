"""mosaicml-streaming's JSONL column encodings ('str', 'int', 'float') as
`streaming.base.format.json.encodings` offers them: each class checks that
a value has its column's type (AttributeError otherwise, as Mosaic's)."""

from sluice.text_encodings import TypedEncoding, by_name

__all__ = ['Str', 'Int', 'Float', 'is_json_encoded', 'is_json_encoding']


class Encoding(TypedEncoding):

    @classmethod
    def is_encoded(cls, obj):
        """True when `obj` has this column's type, else AttributeError."""
        cls.check_type(obj)
        return True


class Str(Encoding):
    value_type = str


class Int(Encoding):
    value_type = int


class Float(Encoding):
    value_type = float


_encodings = by_name(Str, Int, Float)


def is_json_encoding(encoding):
    return encoding in _encodings


def is_json_encoded(encoding, value):
    return _encodings[encoding].is_encoded(value)
