#!/bin/sh
# The server-like program of test_unprivileged.py under the perf engine and auto: its
# CPU total and shares under every perf_event_paranoid level are a target not met yet
# (make test-open). Met: the perf engine's and auto's CPU totals at paranoid 1 (within
# 4% in six runs; they read 1160 of 1481 ms before switch time was charged,
# docs/perf-engine.md), and the client's and server's shares by the threads' own
# clocks. Not met: the perf engine's handle_request share at paranoid 1 (24.5-24.7% of
# the server's samples against perf record's 31.6%, this run's own clock 16-19%, in
# one run at a load of 70); its server_store share read 6-8% against perf record's 15%
# in earlier runs (7.3% and 9.5% against 10.6%, within 2 SE, in that one). The signal
# engine's part is met and checked by
# test_unprivileged_server_signal.sh.
exec "$(dirname "$0")/test_unprivileged.py" server --engines perf,auto
