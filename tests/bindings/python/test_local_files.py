"""sluice.local_files and its users (LocalDownloader, every downloader's
local copy, LocalUploader, write_prometheus): files are written under the
engine's temporary name (base/file.h's TempPathFor) and renamed into place,
so a copy in progress, or one whose process died, never looks complete, and
no temporary is named by Python."""
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pytest

from sluice import download, local_files, upload

HERE = os.path.dirname(os.path.abspath(__file__))


def engine_temporary(folder, final, pid):
    """The names in `folder` that are the engine's temporaries of `final` owned by `pid`."""
    pattern = re.compile(rf'^\.{re.escape(final)}\.sluice-tmp\.{pid}\.[0-9]+\.[0-9]+$')
    return [n for n in os.listdir(folder) if pattern.match(n)]


def wait_for(condition, what):
    # A wait, not a timed assertion: it ends as soon as the copier has
    # written; the bound only turns a hang into a failure.
    for _ in range(6000):
        if condition():
            return
        time.sleep(0.01)
    pytest.fail(f'never happened: {what}')


def test_write_and_copy_replace_the_file_whole_and_leave_no_temporary(tmp_path):
    path = tmp_path / 'f'
    path.write_bytes(b'old')
    local_files.write_file(str(path), bytearray(b'new bytes'))
    assert path.read_bytes() == b'new bytes'
    assert local_files.copy_file(str(path), str(tmp_path / 'g')) == 9
    assert (tmp_path / 'g').read_bytes() == b'new bytes'
    assert sorted(os.listdir(tmp_path)) == ['f', 'g']
    with pytest.raises(FileNotFoundError, match=r"^copy_file: .*nope"):
        local_files.copy_file(str(tmp_path / 'nope'), str(tmp_path / 'h'))
    with pytest.raises(FileNotFoundError, match=r"^write_file: .*no_folder"):
        local_files.write_file(str(tmp_path / 'no_folder' / 'x'), b'x')
    with pytest.raises(TypeError, match='^write_file takes bytes, not str$'):
        local_files.write_file(str(tmp_path / 'x'), 'text')
    assert sorted(os.listdir(tmp_path)) == ['f', 'g']


@pytest.mark.parametrize('copier', ['downloader', 'uploader'])
def test_a_copy_in_progress_is_the_engines_hidden_temporary_until_whole(tmp_path, copier):
    # The source is a pipe the test feeds: with half the bytes copied, the
    # destination folder holds them under the engine's temporary name only.
    local, out = tmp_path / 'local', tmp_path / 'out'
    if copier == 'uploader':
        up = upload.LocalUploader(out=(str(local), str(out)), keep_local=True)
        copy = lambda: up.upload_file('shard')  # noqa: E731
    else:
        local.mkdir()
        out.mkdir()
        copy = lambda: download.LocalDownloader().download(  # noqa: E731
            str(local / 'shard'), str(out / 'shard'))
    os.mkfifo(local / 'shard')
    errors = []

    def run():
        try:
            copy()
        except Exception as e:  # noqa: BLE001 (asserted below)
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    with open(local / 'shard', 'wb') as pipe:
        pipe.write(b'a' * 5000)
        pipe.flush()
        temps = []

        def half_written():
            temps[:] = engine_temporary(out, 'shard', os.getpid())
            return bool(temps) and os.path.getsize(out / temps[0]) == 5000
        wait_for(half_written, 'half the bytes in the temporary')
        assert sorted(os.listdir(out)) == temps  # nothing named 'shard' yet
        pipe.write(b'b' * 5000)
    thread.join()
    assert errors == []
    assert (out / 'shard').read_bytes() == b'a' * 5000 + b'b' * 5000
    assert os.listdir(out) == ['shard']


def test_a_killed_download_leaves_only_a_hidden_temporary_multiprocess(tmp_path):
    src, out = tmp_path / 'src', tmp_path / 'out'
    out.mkdir()
    os.mkfifo(src)
    child = subprocess.Popen(
        [sys.executable, '-c',
         'import sys; from sluice import download; '
         'download.LocalDownloader().download(sys.argv[1], sys.argv[2])',
         str(src), str(out / 'shard')],
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    try:
        with open(src, 'wb') as pipe:
            pipe.write(b'x' * 4096)
            pipe.flush()
            wait_for(lambda: engine_temporary(out, 'shard', child.pid) and os.path.getsize(
                out / engine_temporary(out, 'shard', child.pid)[0]) == 4096,
                'the child writing its temporary')
            child.send_signal(signal.SIGKILL)
            child.wait()
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    names = os.listdir(out)
    assert names == engine_temporary(out, 'shard', child.pid)  # hidden, never 'shard'
    assert len(names) == 1 and names[0].startswith('.')
