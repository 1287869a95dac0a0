import os
import subprocess
import sys

import on_bench_path  # noqa: F401
import cold_epoch  # noqa: E402


def test_cpu_per_gb_divides_by_decimal_gigabytes():
    assert cold_epoch.cpu_per_gb(3.0, 1_500_000_000) == 2.0


def test_cpu_seconds_counts_children_once_waited_for():
    before_own, before = cold_epoch.cpu_seconds(), cold_epoch.children_cpu_seconds()
    # A child that burns about 0.2 s of CPU.
    subprocess.run([sys.executable, '-c',
                    'import time\nt = time.process_time()\n'
                    'while time.process_time() - t < 0.2: pass'], check=True)
    kids = cold_epoch.children_cpu_seconds() - before
    assert kids >= 0.2
    assert cold_epoch.cpu_seconds() - before_own >= kids


def test_importing_cold_epoch_loads_neither_sluice_nor_numpy():
    # The epoch children of speed_table.py (Mosaic's, LitData's) import it.
    out = subprocess.run([sys.executable, '-c',
                          'import sys; sys.path.insert(0, sys.argv[1]); import cold_epoch; '
                          'print(sorted({"sluice", "numpy"} & set(sys.modules)))',
                          os.path.dirname(cold_epoch.__file__)],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == '[]'


def test_curl_epoch_into_dev_null_counts_the_bytes_and_writes_nothing(tmp_path):
    import functools
    import http.server
    import threading
    www, work = tmp_path / 'www', tmp_path / 'work'
    www.mkdir()
    work.mkdir()
    (www / 'a').write_bytes(bytes(1000))
    (www / 'b').write_bytes(bytes(2345))
    server = http.server.ThreadingHTTPServer(
        ('127.0.0.1', 0), functools.partial(http.server.SimpleHTTPRequestHandler,
                                            directory=str(www)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        urls = [f'http://127.0.0.1:{server.server_port}/{n}' for n in ('a', 'b')]
        for discard in (False, True):
            assert cold_epoch.curl_epoch(urls, 2, str(work), discard=discard)[2] == 3345
            assert os.listdir(work) == []
    finally:
        server.shutdown()
        server.server_close()


def test_busiest_threads_puts_the_main_thread_first_then_the_others_by_cpu():
    # Binary fractions, so that the blocked seconds compare exactly.
    line = '11:0.2500:0.1250 10:0.5000:1.0000 12:0.7500:0.5000 13:0.0625:0.0000'
    assert cold_epoch.busiest_threads(line, '10', 3.0) == [
        ('main', 0.5, 1.0, 1.5), ('#1', 0.75, 0.5, 1.75), ('#2', 0.25, 0.125, 2.625)]


def test_busiest_threads_blocked_time_is_never_negative():
    # schedstat's clocks and the epoch's perf_counter need not agree to the
    # millisecond: a thread busy the whole epoch is blocked 0, not -0.01.
    assert cold_epoch.busiest_threads('7:2.0000:1.0100', '7', 3.0) == [('main', 2.0, 1.01, 0.0)]


def test_thread_sched_counts_a_threads_cpu_under_its_own_id():
    import threading
    import time
    if not os.path.exists('/proc/self/task'):
        return
    ids, burnt, done = [], threading.Event(), threading.Event()

    def burn():
        ids.append(str(threading.get_native_id()))
        t = time.thread_time()
        while time.thread_time() - t < 0.2:
            pass
        burnt.set()
        done.wait()  # alive while its schedstat is read
    main = str(threading.get_native_id())
    main_before = cold_epoch.thread_sched()[main][0]
    worker = threading.Thread(target=burn)
    worker.start()
    try:
        assert burnt.wait(30)
        sched = cold_epoch.thread_sched()
        assert sched[ids[0]][0] >= 0.2
        # The main thread only waited meanwhile.
        assert sched[main][0] - main_before < sched[ids[0]][0]
    finally:
        done.set()
        worker.join()
