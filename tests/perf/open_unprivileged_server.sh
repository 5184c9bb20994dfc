#!/bin/sh
# The server-like program of test_unprivileged.py: its CPU total and shares under
# every perf_event_paranoid level are a target not met yet (make test-open). Met: the
# perf engine's and auto's CPU totals at paranoid 1 (within 4% in six runs; they read
# 1160 of 1481 ms before switch time was charged, docs/perf-engine.md), and the signal
# engine's split between the two threads by their own CPU clocks (checked by
# test_unprivileged_server_split.sh). Not met: the perf engine's handle_request share at
# paranoid 1 (24.5-24.7% of the server's samples against perf record's 31.6%, this
# run's own clock 16-19%, in one run at a load of 70) and its server_store share
# (6-8% against perf record's 15% in earlier runs); the signal engine's handle_request
# against perf record's of another run: 6 of 28 checks failed in seven runs (33.5%
# against 25.4% with this run's own clock at 34.7%; 36.2% against 28.5%, own 34.8%;
# 19.2% against 26.2%, own 16.8%): the program's own time in handle_request moves
# between runs more than 2 SE, so the reference needs the same run.
exec "$(dirname "$0")/test_unprivileged.py" server
