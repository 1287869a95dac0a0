#!/usr/bin/python3
"""The node's first open of a Parquet folder by phase (issue 38): wall and CPU
of each phase of one `stream_open`, told apart by which files the cache's
.sluice folder holds (a temporary one is ".NAME..."), polled every 4 ms:

  0 listing        before listing.json's temporary file
  1 listing write  listing.json being written
  2 store front    the listing selected and fingerprinted, the store laid out
  3 tails+store    parquet_footers being written (its tails read; on a library
                   with ParquetTailConsumer, each decoded and the table built)
  4 decode+table   after parquet_footers (the store read back and decoded)
  5 index write    parquet_index.bin being written
  6 close          after it, to the exit

CPU from /proc/PID/stat (all threads, 10 ms ticks) and the main thread's from
/proc/PID/task/PID/stat (a store's writer), each added to the phase seen at
the poll before; the poller's own CPU is not counted, but it shares the cores.

  bench/index/first_open_phases.py LIB_DIR STREAM_OPEN FOLDER WORK

LIB_DIR: a folder holding libsluice.so.4 (put first on LD_LIBRARY_PATH);
STREAM_OPEN: build-rel/bench/index/stream_open; FOLDER: the remote; WORK:
scratch (its cache and state folders are made anew).
"""
import os
import shutil
import subprocess
import sys
import time


def main():
    lib, program, folder, work = sys.argv[1:5]
    cache, state = os.path.join(work, "cache"), os.path.join(work, "state")
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(state, ignore_errors=True)
    os.makedirs(state)
    env = dict(os.environ, LD_LIBRARY_PATH=lib, SLUICE_CACHE_STATE_DIR=state)
    tick = os.sysconf("SC_CLK_TCK")

    def phase():
        try:
            names = set(os.listdir(os.path.join(cache, ".sluice")))
        except FileNotFoundError:
            return "0 listing"
        if "parquet_index.bin" in names:
            return "6 close"
        if "parquet_footers" in names:
            writing = any(n.startswith(".parquet_index.bin") for n in names)
            return "5 index write" if writing else "4 decode+table"
        if "listing.json" in names:
            writing = any(n.startswith(".parquet_footers") for n in names)
            return "3 tails+store" if writing else "2 store front"
        writing = any(n.startswith(".listing.json") for n in names)
        return "1 listing write" if writing else "0 listing"

    def cpu(path):  # (user, system) ticks
        fields = open(path).read().rsplit(")", 1)[1].split()
        return int(fields[11]), int(fields[12])

    start = time.monotonic()
    child = subprocess.Popen([program, folder, cache], env=env, stdout=subprocess.DEVNULL)
    phases = {}  # name -> [wall, user, system, main user, main system]
    last = {"all": (0, 0), "main": (0, 0)}
    current, since = "0 listing", start
    while child.poll() is None:
        now = time.monotonic()
        row = phases.setdefault(current, [0.0, 0, 0, 0, 0])
        row[0] += now - since
        for key, path, at in (("all", f"/proc/{child.pid}/stat", 1),
                              ("main", f"/proc/{child.pid}/task/{child.pid}/stat", 3)):
            try:
                u, s = cpu(path)
            except (FileNotFoundError, ProcessLookupError):
                continue
            row[at] += u - last[key][0]
            row[at + 1] += s - last[key][1]
            last[key] = (u, s)
        current, since = phase(), now
        time.sleep(0.004)
    end = time.monotonic()
    phases.setdefault(current, [0.0, 0, 0, 0, 0])[0] += end - since
    times = os.times()
    print(f"total wall {end - start:.2f} s; user {times.children_user:.2f} s, "
          f"system {times.children_system:.2f} s")
    print("| phase | wall s | user s | system s | main thread: user / system s |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name in sorted(phases):
        wall, u, s, mu, ms = phases[name]
        print(f"| {name} | {wall:.2f} | {u / tick:.2f} | {s / tick:.2f} | "
              f"{mu / tick:.2f} / {ms / tick:.2f} |")


if __name__ == "__main__":
    main()
