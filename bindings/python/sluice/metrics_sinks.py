"""Where a dataset's or a loader's metrics() go: MLflow, TensorBoard, and a
one-line progress display on a terminal (docs/metrics.rst). Each tool is
imported only inside the function that uses it, so a user who did not install
MLflow or TensorBoard never imports them; asking for one that is missing
raises ImportError naming the package to install."""
import re
import sys
import time

__all__ = ['flatten', 'log_to_mlflow', 'log_to_tensorboard', 'Progress', 'progress']

# MLflow accepts in a metric name only letters, digits, '_', '-', '.', ' ' and
# '/', and (3.x) no name that a path's normalisation changes, as '//' does; a
# host key ("http://127.0.0.1:8000") has ':' and '//'. A key is one level of
# the name, so its '/' goes too.
_KEY_UNSAFE = re.compile(r'[^A-Za-z0-9_\-. ]')


def flatten(metrics, prefix='sluice'):
    """The numeric fields of a nested metrics dict, one level a dot:
    {'sluice.window.wait_s': 0.25, 'sluice.hosts.http___h_80.requests': 3, ...}.
    Strings (the diagnosis, the remote) and booleans are left out; in a key,
    '/' and the characters MLflow refuses in a name become '_'. Sorted by
    name."""
    out = {}

    def walk(name, value):
        if isinstance(value, dict):
            for key, inner in value.items():
                walk(f'{name}.{_KEY_UNSAFE.sub("_", str(key))}' if name
                     else _KEY_UNSAFE.sub('_', str(key)), inner)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[name] = value

    walk(prefix or '', metrics)
    return dict(sorted(out.items()))


def _import(module, package):
    try:
        return __import__(module, fromlist=['_'])
    except ImportError as e:
        raise ImportError(f'sluice: logging metrics to {module} needs the {package} package '
                          f'(pip install {package}): {e}') from e


def active_mlflow():
    """mlflow when it is importable and a run is active, else None (for
    callers that log only when the user set MLflow up)."""
    try:
        import mlflow
    except ImportError:
        return None
    return mlflow if mlflow.active_run() is not None else None


def log_to_mlflow(metrics, step=None, prefix='sluice', required=True):
    """Logs flatten(metrics, prefix) to the active MLflow run with
    mlflow.log_metrics at `step`. Returns True when logged, False when no run
    is active. Without mlflow installed: ImportError, or False when
    `required` is False."""
    if required:
        mlflow = _import('mlflow', 'mlflow')
        if mlflow.active_run() is None:
            return False
    else:
        mlflow = active_mlflow()
        if mlflow is None:
            return False
    mlflow.log_metrics(flatten(metrics, prefix), step=step)
    return True


def log_to_tensorboard(writer, metrics, step, prefix='sluice'):
    """Adds each field of flatten(metrics, prefix) as a scalar to `writer`
    (a torch.utils.tensorboard SummaryWriter, or anything with
    add_scalar(tag, value, step)), the dots of its name made '/' so that
    TensorBoard groups the tags. Returns the number of scalars added."""
    scalars = flatten(metrics, prefix)
    for name, value in scalars.items():
        writer.add_scalar(name.replace('.', '/'), value, step)
    return len(scalars)


def _line(metrics):
    """The progress line's text for a loader's or a dataset's metrics()."""
    window = metrics.get('window', {})
    seconds = window.get('seconds', 0.0)
    samples_per_s = window.get('samples_per_s')
    if samples_per_s is None:
        samples_per_s = window.get('samples', 0) / seconds if seconds > 0 else 0.0
    # A loader has its dataset's bytes: read here, or summed over its
    # workers' records (scope 'job'); a loader of another dataset has none.
    dataset_window = metrics.get('dataset', {}).get('window', {})
    mb_per_s = window.get('mb_per_s', dataset_window.get('mb_per_s'))
    wait = window.get('wait_fraction', 0.0)
    mb = f'{mb_per_s:.1f} MB/s' if mb_per_s is not None else '- MB/s'
    return f'sluice: {samples_per_s:.0f} samples/s  {mb}  waited {wait * 100:.0f}%'


class Progress:
    """A one-line display of `source`'s rates (a StreamingDataLoader or a
    StreamingDataset: anything with metrics()), rewritten in place with '\\r'
    on `stream` (stderr by default) at most every `every` seconds. Iterating
    it iterates `source`, updating after each item; or call update() from a
    training loop. Each line is one metrics() call, which starts the source's
    next window; `last` holds that dict, to log it elsewhere too."""

    def __init__(self, source, every=10.0, stream=None, clock=time.monotonic):
        if not every > 0:
            raise ValueError(f'progress: every must be > 0 seconds, got {every!r}')
        self.source = source
        self.every = every
        self.stream = stream
        self.last = None
        self._clock = clock
        self._next = clock() + every
        self._width = 0

    def update(self, force=False):
        """Writes the line when `every` seconds passed since the last one (or
        `force`). Returns the line written, or None."""
        now = self._clock()
        if not force and now < self._next:
            return None
        self._next = now + self.every
        self.last = self.source.metrics()
        line = _line(self.last)
        stream = self.stream if self.stream is not None else sys.stderr
        # Pads over a longer previous line: '\r' only moves the cursor.
        stream.write('\r' + line.ljust(self._width))
        stream.flush()
        self._width = len(line)
        return line

    def close(self):
        """Writes a last line and ends it with a newline."""
        line = self.update(force=True)
        (self.stream if self.stream is not None else sys.stderr).write('\n')
        return line

    def __iter__(self):
        try:
            for item in self.source:
                yield item
                self.update()
        finally:
            self.close()


def progress(source, every=10.0, stream=None):
    """Turns on the one-line display for `source`:
    `for batch in sluice.progress(loader, every=5): ...`. See Progress."""
    return Progress(source, every=every, stream=stream)

