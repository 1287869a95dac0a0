"""Mosaic's `streaming.base.registry_utils` (the registries LLM Foundry and
Mosaic's StreamingDataset(stream_name=...) build on), over `catalogue`, as
Mosaic's: registries live in catalogue.REGISTRY under their namespace and
may take entries from Python entry points."""
import functools
import importlib.util
import os
import warnings
from contextlib import contextmanager

import catalogue

__all__ = ['TypedRegistry', 'create_registry', 'construct_from_registry', 'import_file',
           'save_registry']


class TypedRegistry(catalogue.Registry):
    """A catalogue registry with a description; `TypedRegistry[T]` names the
    type of its entries (for type checkers only)."""

    def __init__(self, namespace, entry_points=False, description=''):
        super().__init__(namespace, entry_points=entry_points)
        self.description = description

    def __class_getitem__(cls, item):
        return cls

    def register(self, name, *, func=None):
        return super().register(name, func=func)

    def get(self, name):
        # catalogue reads entry points through importlib.metadata's dict
        # interface, deprecated since Python 3.10: the warning is about
        # catalogue, and StreamingDataset looks 'stream' up on every build.
        with warnings.catch_warnings():
            warnings.filterwarnings('ignore', message='SelectableGroups dict interface',
                                    category=DeprecationWarning)
            return super().get(name)

    def register_class(self, name, *, func=None):
        return super().register(name, func=func)


def create_registry(*namespace, generic_type=None, entry_points=False, description=''):
    """A new registry under `namespace` (e.g. 'streaming', 'streams_registry');
    catalogue.RegistryError when that namespace has one already."""
    if catalogue.check_exists(*namespace):
        raise catalogue.RegistryError(f'Namespace already exists: {namespace}')
    return TypedRegistry(namespace, entry_points=entry_points, description=description)


def construct_from_registry(name, registry, partial_function=True, pre_validation_function=None,
                            post_validation_function=None, kwargs=None):
    """The entry `name` built with `kwargs`: a class (or, unless
    partial_function, a builder function) is called; a function becomes a
    functools.partial. pre_validation_function is a base class the entry must
    subclass, or a function that raises for a bad entry; post_validation_function
    checks what was built."""
    kwargs = kwargs or {}
    entry = registry.get(name)
    if pre_validation_function is not None:
        if isinstance(pre_validation_function, type):
            if not (isinstance(entry, type) and issubclass(entry, pre_validation_function)):
                raise ValueError(f'Expected {name} to be of type {pre_validation_function}, but '
                                 f'got {type(entry)}')
        elif callable(pre_validation_function):
            pre_validation_function(entry)
        else:
            raise ValueError(f'Expected pre_validation_function to be a callable or a type, but '
                             f'got {type(pre_validation_function)}')
    if isinstance(entry, type) or (callable(entry) and not partial_function):
        built = entry(**kwargs)
    elif callable(entry):
        built = functools.partial(entry, **kwargs)
    else:
        raise ValueError(f'Expected {name} to be a class or function, but got {type(entry)}')
    if post_validation_function is not None:
        post_validation_function(built)
    return built


def import_file(loc):
    """Runs the Python file `loc` (e.g. code that registers entries) and
    returns it as a module; FileNotFoundError when it does not exist,
    RuntimeError naming it when it raises."""
    if not os.path.exists(loc):
        raise FileNotFoundError(f'File {loc} does not exist.')
    spec = importlib.util.spec_from_file_location('python_code', str(loc))
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        raise RuntimeError(f'Error executing {loc}') from e
    return module


@contextmanager
def save_registry():
    """Restores every catalogue registry's entries on leaving (in place:
    catalogue's functions hold that dict, not the module attribute)."""
    entries = catalogue.REGISTRY
    saved = dict(entries)
    try:
        yield
    finally:
        entries.clear()
        entries.update(saved)
