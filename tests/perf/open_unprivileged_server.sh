#!/bin/sh
# The server-like program of test_unprivileged.py: its CPU total and shares under
# every perf_event_paranoid level are a target not met yet (make test-open). Met: the
# perf engine's and auto's CPU totals at paranoid 1 (within 4% in six runs; they read
# 1160 of 1481 ms before switch time was charged, docs/perf-engine.md). Not met: the
# perf engine's server_store share at paranoid 1 (6-8% of the server's samples against
# perf record's 15%), the signal engine's split between the two threads (the client
# 19-28% of the samples, 28-40% of the CPU time by the threads' own clocks) and its
# handle_request share (34-40% against perf record's 25-30%, in separate runs).
exec "$(dirname "$0")/test_unprivileged.py" server
