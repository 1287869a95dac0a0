import on_bench_path  # noqa: F401
import first_sample_phases  # noqa: E402


def test_requests_are_placed_at_their_arrival_with_their_range(tmp_path):
    # nginx logs $msec when it has answered; the request arrived
    # $request_time before.
    log = tmp_path / 'access.log'
    log.write_text('1700000000.250 0.125 /data/shard.00000.mds 206 "bytes=4-11"\n'
                   '1700000000.300 0.000 /data/index.json 200 "-"\n')
    assert first_sample_phases.requests(str(log)) == [
        (1700000000.125, 'request /data/shard.00000.mds 206 bytes=4-11 (answered in 125 ms)'),
        (1700000000.300, 'request /data/index.json 200 whole (answered in 0 ms)'),
    ]


def test_strace_gives_thread_starts_and_ring_setups_with_their_durations(tmp_path):
    trace = tmp_path / 'strace.txt'
    trace.write_text(
        '352   1796305481.260329 clone3({flags=CLONE_VM|CLONE_THREAD, child_tid=0x7f}, 88)'
        ' = 354 <0.000120>\n'
        '355   1796305481.261311 io_uring_setup(16384, {flags=0, sq_entries=16384}) = 4'
        ' <0.021137>\n'
        '352   1796305481.262000 openat(AT_FDCWD, "/tmp/x", O_RDONLY) = 3 <0.000010>\n'
        '356   1796305481.263000 clone3({flags=CLONE_VM}, 88 <unfinished ...>\n')
    assert first_sample_phases.strace_events(str(trace)) == [
        (1796305481.260329, '[strace] thread 352: clone3 (0.1 ms)'),
        (1796305481.261311, '[strace] thread 355: io_uring_setup (21.1 ms)'),
        (1796305481.263000, '[strace] thread 356: clone3'),
    ]
