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


def test_the_sample_request_is_the_last_ranged_one_to_arrive_before_the_sample(tmp_path):
    # Sluice: the index, the peek's two ranged reads, then the shard's whole
    # download, which may arrive before the sample is in Python's hands.
    log = tmp_path / 'access.log'
    log.write_text('1700000000.010 0.002 /data/index.json 200 "-"\n'
                   '1700000000.020 0.001 /data/shard.00003.mds 206 "bytes=0-39"\n'
                   '1700000000.031 0.001 /data/shard.00003.mds 206 "bytes=4096-5119"\n'
                   '1700000000.500 0.460 /data/shard.00003.mds 200 "-"\n'
                   '1700000000.600 0.001 /data/shard.00005.mds 206 "bytes=0-39"\n')
    assert first_sample_phases.sample_request(str(log), 1700000000.045) == (
        1700000000.031 - 0.001, 'request /data/shard.00003.mds 206 bytes=4096-5119 (answered in 1 ms)')


def test_without_a_ranged_read_the_sample_request_is_the_last_to_arrive(tmp_path):
    # WebDataset: each tar shard streamed by one GET.
    log = tmp_path / 'access.log'
    log.write_text('1700000000.900 0.800 /wds/shard-000000.tar 200 "-"\n'
                   '1700000001.900 0.800 /wds/shard-000001.tar 200 "-"\n')
    assert first_sample_phases.sample_request(str(log), 1700000000.150) == (
        1700000000.900 - 0.800, 'request /wds/shard-000000.tar 200 whole (answered in 800 ms)')
    assert first_sample_phases.sample_request(str(log), 1700000000.050) is None
