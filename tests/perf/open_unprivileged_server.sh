#!/bin/sh
# The server-like program of test_unprivileged.py: its CPU total and shares under
# every perf_event_paranoid level are a target not met yet (make test-open).
exec "$(dirname "$0")/test_unprivileged.py" server
