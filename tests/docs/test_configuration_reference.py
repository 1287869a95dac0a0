"""docs/configuration.rst names every option and environment variable:
every keyword argument of the Python datasets and Stream, every key the C
stream options parser accepts, and every variable the engine, the CLI or the
package reads. A new option or variable without its entry fails here. Reads
the sources only (no library needed)."""
import ast
import json
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
REFERENCE = (ROOT / 'docs' / 'configuration.rst').read_text()


def documented(name):
    return f'``{name}``' in REFERENCE


def init_arguments(module, cls):
    """The keyword arguments of cls.__init__ in the package's module."""
    tree = ast.parse((ROOT / 'bindings' / 'python' / 'sluice' / module).read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            init = next(f for f in node.body
                        if isinstance(f, ast.FunctionDef) and f.name == '__init__')
            return [a.arg for a in init.args.args[1:] + init.args.kwonlyargs]
    raise AssertionError(f'no class {cls} in {module}')


def function_arguments(module, name):
    """The arguments of the package module's function `name`."""
    tree = ast.parse((ROOT / 'bindings' / 'python' / 'sluice' / module).read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return [a.arg for a in node.args.args + node.args.kwonlyargs]
    raise AssertionError(f'no function {name} in {module}')


def c_stream_option_keys():
    """The keys engine/dataset/dataset_config.cc compares against."""
    text = (ROOT / 'engine' / 'dataset' / 'dataset_config.cc').read_text()
    return sorted(set(re.findall(r'\b(?:k|wk|key) == "(\w+)"', text)))


def environment_variables():
    """Names read from the environment: literal getenv/GetEnv arguments and
    upper-case names with an underscore in the C++ sources (the credential
    code keeps its names in tables), and the Python package's reads.
    formats/ reads no environment (checked), and its upper-case literals are
    format vocabulary (Parquet's DELTA_BYTE_ARRAY, INT_32, ...)."""
    names = set()
    for folder in ('base', 'formats', 'stores', 'engine', 'bindings'):
        for path in (ROOT / folder).rglob('*'):
            if path.suffix in ('.cc', '.h'):
                text = path.read_text()
                names.update(re.findall(r'\b(?:getenv|GetEnv)\("(\w+)"', text))
                if folder != 'formats':
                    names.update(re.findall(r'"([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)"', text))
                else:
                    assert not re.search(r'\b(?:getenv|GetEnv|secure_getenv)\(', text), path
            elif path.suffix == '.py':
                text = path.read_text()
                names.update(re.findall(r"\b(?:_env|_env_int)\('(\w+)'", text))
                names.update(re.findall(r"\benviron(?:\.get\(|\[)'(\w+)'", text))
                names.update(re.findall(r"'(\w+)' in os\.environ", text))
    return sorted(names)


def test_python_arguments_are_documented():
    for module, cls in (('dataset.py', 'StreamingDataset'), ('stream.py', 'Stream'),
                        ('file_dataset.py', 'StreamingFileDataset'),
                        ('ray.py', 'SluiceDatasource')):
        arguments = init_arguments(module, cls)
        assert len(arguments) >= 3, (cls, arguments)
        missing = [a for a in arguments if not documented(a)]
        assert not missing, f'{cls} arguments missing from docs/configuration.rst: {missing}'
    arguments = function_arguments('ray.py', 'read_sluice')
    missing = [a for a in arguments if not documented(a)]
    assert len(arguments) > 5 and not missing, (arguments, missing)


def test_c_stream_option_keys_are_documented():
    keys = c_stream_option_keys()
    assert {'remote', 'cache_limit', 'fetch_concurrency', 'world', 'rank', 'glob'} <= set(keys)
    missing = [k for k in keys if not documented(k)]
    assert not missing, f'sluice_stream_open keys missing from docs/configuration.rst: {missing}'


def test_environment_variables_are_documented():
    names = environment_variables()
    assert {'AWS_ACCESS_KEY_ID', 'GCS_KEY', 'AZURE_ACCOUNT_NAME', 'RANK', 'SLUICE_LIBRARY',
            'TMPDIR'} <= set(names), names
    missing = [n for n in names if not documented(n)]
    assert not missing, f'environment variables missing from docs/configuration.rst: {missing}'


def test_every_store_url_form_is_documented():
    """Every scheme OpenStore knows (stores/store.cc) has its row in the
    store table."""
    text = (ROOT / 'stores' / 'store.cc').read_text()
    table = re.search(r'kKnownSchemes\[\] = \{([^}]*)\}', text).group(1)
    schemes = re.findall(r'"([a-z][a-z0-9-]*)"', table)
    assert {'file', 's3', 'gs', 'azure', 'https', 'dbfs'} <= set(schemes), schemes
    missing = [s for s in schemes if not re.search(rf'``{re.escape(s)}:', REFERENCE)]
    assert not missing, f'URL schemes missing from docs/configuration.rst: {missing}'


def test_the_json_example_uses_only_keys_the_parser_knows():
    """The reference's C example (its one json block) parses, and every key in
    it is one sluice_stream_open accepts (it names S3 buckets, so it is not
    opened here)."""
    block = re.search(r'^\.\. code-block:: json\n\n((?:   .*\n|\n)+)', REFERENCE, re.M).group(1)
    options = json.loads(block)

    def keys(value):
        if isinstance(value, dict):
            for k, v in value.items():
                yield k
                yield from keys(v)
        elif isinstance(value, list):
            for v in value:
                yield from keys(v)

    used = set(keys(options))
    assert {'streams', 'remote', 'cache_limit'} <= used, used
    assert used <= set(c_stream_option_keys()), sorted(used - set(c_stream_option_keys()))
