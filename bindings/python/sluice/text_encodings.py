"""What mosaicml-streaming's JSONL and CSV/TSV column encodings share
(json_encodings, xsv_encodings add each format's methods): a column's
Python type, the check that a value has it (AttributeError with Mosaic's
text) and the encodings by name ('str', 'int', 'float': the types' names)."""

__all__ = []


class TypedEncoding:
    value_type = None

    @classmethod
    def check_type(cls, obj):
        """Nothing when `obj` has this column's type, else AttributeError."""
        if not isinstance(obj, cls.value_type):
            raise AttributeError(f'data should be of type {cls.value_type}, but instead, found '
                                 f'as {type(obj)}')


def by_name(*classes):
    """{'str': Str, ...}: each class by its value type's name."""
    return {c.value_type.__name__: c for c in classes}
