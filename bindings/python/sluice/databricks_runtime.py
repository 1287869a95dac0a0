"""A Databricks runtime's own token for the engine (the Databricks SDK's
`runtime` credentials strategy): inside a runtime (DATABRICKS_RUNTIME_VERSION
set) the workspace's host and a token for it live in the notebook's Python
objects, which the engine cannot read; install() registers a provider the
engine calls whenever it needs the token (sluice_set_databricks_runtime_
token_provider, bindings/c/sluice.h).

The provider reads them as databricks-sdk 0.162.0 does, trying in its order
`dbruntime.sdk_credential_provider`'s init_runtime_native_unified and
init_runtime_native_auth, then the REPL context
(`dbruntime.databricks_repl_context.get_context()`: https://<workspaceUrl>
and apiToken), then the notebook's `dbutils` context (apiUrl, apiToken);
the first that names a host is kept, and its token is read again at every
call. Nothing is imported until the engine asks."""
import atexit
import os

from sluice import _lib

_lib_ = _lib.lib
_source = None  # (host, headers function) once one was found


def _native_unified():
    from dbruntime.sdk_credential_provider import init_runtime_native_unified
    host, _account, _workspace, inner = init_runtime_native_unified()
    return host, inner


def _native():
    from dbruntime.sdk_credential_provider import init_runtime_native_auth
    return init_runtime_native_auth()


def _repl():
    from dbruntime.databricks_repl_context import get_context
    ctx = get_context()
    if ctx is None or ctx.workspaceUrl is None:
        return None, None
    return f'https://{ctx.workspaceUrl}', lambda: {
        'Authorization': f'Bearer {get_context().apiToken}'}


def _dbutils():
    try:
        import IPython
    except ImportError:  # no notebook, as no notebook shell
        return None, None
    shell = IPython.get_ipython()
    if shell is None or 'dbutils' not in shell.ns_table['user_global']:
        return None, None
    dbutils = shell.ns_table['user_global']['dbutils'].notebook.entry_point.getDbutils()
    ctx = dbutils.notebook().getContext() if dbutils is not None else None
    if ctx is None:
        return None, None
    return ctx.apiUrl().get(), lambda: {
        'Authorization': f'Bearer {dbutils.notebook().getContext().apiToken().get()}'}


def _find():
    """(host, headers function) of the first way that names a host, or
    (None, what was tried)."""
    tried = []
    for name, way in (('dbruntime.sdk_credential_provider.init_runtime_native_unified',
                       _native_unified),
                      ('dbruntime.sdk_credential_provider.init_runtime_native_auth', _native),
                      ('dbruntime.databricks_repl_context', _repl), ('dbutils', _dbutils)):
        try:
            host, inner = way()
        except ImportError:
            tried.append(f'{name} (not importable)')
            continue
        if host is not None:
            return host, inner
        tried.append(f'{name} (no host)')
    return None, '; '.join(tried)


def _token():
    """(host, bearer token) of the runtime; raises LookupError saying why
    there is none."""
    global _source
    if _source is None:
        host, inner = _find()
        if host is None:
            raise LookupError(f'no Databricks runtime context: tried {inner}')
        _source = (host, inner)
    host, inner = _source
    authorization = (inner() or {}).get('Authorization', '').strip()
    if not authorization.lower().startswith('bearer '):
        raise LookupError(f'the runtime context of {host} gave no bearer token')
    return host, authorization[len('bearer '):].strip()


def _provide(_user_data, sink):
    # Called by the engine on its threads; nothing may escape (ctypes would
    # print it and answer 0).
    try:
        host, token = _token()
    except Exception as e:  # noqa: BLE001 - every failure is the engine's to report
        text = str(e) if isinstance(e, LookupError) else f'{type(e).__name__}: {e}'
        _lib_.sluice_databricks_token_sink_fail(sink, text.encode('utf-8', 'replace'))
        return 1
    _lib_.sluice_databricks_token_sink_put(sink, host.encode(), token.encode(), 0)
    return 0


_callback = _lib.DATABRICKS_TOKEN_FN(_provide)  # kept alive while registered
_installed = False


def _uninstall():
    # Before the interpreter goes, so that no engine thread calls into it.
    _lib.check(_lib_.sluice_set_databricks_runtime_token_provider(
        _lib.DATABRICKS_TOKEN_FN(), None))


def install():
    """Registers the provider when running inside a Databricks runtime
    (DATABRICKS_RUNTIME_VERSION set, the SDK's test); elsewhere nothing."""
    global _installed
    if _installed or 'DATABRICKS_RUNTIME_VERSION' not in os.environ:
        return
    _lib.check(_lib_.sluice_set_databricks_runtime_token_provider(_callback, None))
    atexit.register(_uninstall)
    _installed = True
