"""parquet_first_row_timeline.py's proxy log: each request through the delay
proxy is noted with its request line, its Range, and its answer's bytes and
times, the bytes passing through unchanged."""
import socket
import threading

import on_bench_path  # noqa: F401
import delay_proxy  # noqa: E402
import parquet_first_row_timeline as timeline  # noqa: E402

ANSWER = b'HTTP/1.1 206 Partial Content\r\nContent-Length: 5\r\n\r\nhello'


def test_a_request_is_logged_with_its_range_and_its_answers_bytes():
    upstream = socket.create_server(('127.0.0.1', 0))

    def serve():
        conn, _ = upstream.accept()
        conn.recv(4096)
        conn.sendall(ANSWER)
        conn.close()
    threading.Thread(target=serve, daemon=True).start()
    listener = socket.create_server(('127.0.0.1', 0))
    timeline.LoggedConnection.log.clear()
    saved, delay_proxy.Connection = delay_proxy.Connection, timeline.LoggedConnection
    try:
        threading.Thread(target=delay_proxy.serve, daemon=True,
                         args=(listener, upstream.getsockname()[1], 0.0, 100e6)).start()
        client = socket.create_connection(listener.getsockname())
        client.sendall(b'GET /bench/t/a.parquet HTTP/1.1\r\nHost: x\r\nRange: bytes=4-8\r\n\r\n')
        got = b''
        while len(got) < len(ANSWER):
            chunk = client.recv(4096)
            if not chunk:
                break
            got += chunk
        client.close()
    finally:
        delay_proxy.Connection = saved
    assert got == ANSWER
    [entry] = timeline.LoggedConnection.log
    assert (entry['line'], entry['range'], entry['bytes']) == (
        'GET /bench/t/a.parquet HTTP/1.1', 'bytes=4-8', len(ANSWER))
    assert entry['asked'] <= entry['first'] <= entry['last']


def test_in_flight_counts_the_requests_asked_and_not_yet_answered_at_each_step():
    log = [{'asked': 0.0, 'last': 0.25}, {'asked': 0.1, 'last': 0.12},
           {'asked': 0.2}, {'asked': 0.3, 'last': 0.45}]
    # at 0.0, 0.1, 0.2, 0.3, 0.4: a request never answered is never in flight
    assert timeline.in_flight(log, 0.0, 0.45, step=0.1) == [1, 2, 1, 1, 1]
