#!/bin/sh
# boost.context's unregistered fibers under the perf engine: a target not met yet
# (make test-open).
exec "$(dirname "$0")/test_fibers.py" prog_boost/perf
