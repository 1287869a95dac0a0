"""mosaicml-streaming's JSONL column encodings ('str', 'int', 'float') as
`streaming.base.format.json.encodings` offers them: each class checks that
a value has its column's type (AttributeError otherwise, as Mosaic's)."""

__all__ = ['Str', 'Int', 'Float', 'is_json_encoded', 'is_json_encoding']


class Encoding:
    value_type = None

    @classmethod
    def is_encoded(cls, obj):
        """True when `obj` has this column's type, else AttributeError."""
        if not isinstance(obj, cls.value_type):
            raise AttributeError(f'data should be of type {cls.value_type}, but instead, found '
                                 f'as {type(obj)}')
        return True


class Str(Encoding):
    value_type = str


class Int(Encoding):
    value_type = int


class Float(Encoding):
    value_type = float


_encodings = {'str': Str, 'int': Int, 'float': Float}


def is_json_encoding(encoding):
    return encoding in _encodings


def is_json_encoded(encoding, value):
    return _encodings[encoding].is_encoded(value)
