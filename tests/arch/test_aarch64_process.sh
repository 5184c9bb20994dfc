#!/usr/bin/env bash
# The runtime's process tests (tests/runtime/test_*.py) that hold under emulation, run
# against the aarch64 runtime and helpers (KESTREL_TEST_ARCH=aarch64: rtlib.py takes
# build/aarch64's, each helper started by its qemu-aarch64 wrapper). Left out, and
# why (docs/aarch64.md): those whose helpers run `kestrel record` or a native program
# (debian_programs, event_loop, junk_fp, stack_completeness, utf8_names), those that
# name frames from the helper's file or read its threads' names and counts, which
# under qemu are the wrapper's and the emulator's (raw_format, long_run, inactive),
# those qemu-user itself cannot run (a threaded fork child starting a thread aborts
# it: process_life, signal_alloc; 4000 short threads, a 16 KiB thread stack:
# thread_cpu, small_stack), and waiting_share (/proc/self/task/TID/syscall shows the
# emulator's registers), program_signals (its interval timers count the emulator's
# CPU time: 59 SIGPROF for 504 ms of the program's CPU in one run here), write_errors
# (its program uses up every descriptor, which the emulator shares with it and needs
# itself: the runtime's line was missing in 1 of 2 runs here). test_api.py runs with
# its page-fault count left unchecked: under qemu it counts the emulator's faults.
set -u
cd "$(dirname "$0")/../.."
export KESTREL_TEST_ARCH=aarch64
fail=0 n=0
for t in activation api no_eintr own_fds own_handlers short_threads special_files; do
  n=$((n + 1))
  if out=$(python3 "tests/runtime/test_$t.py" 2>&1); then
    echo "ok   test_$t.py: $(printf '%s\n' "$out" | tail -n 1)"
  else
    echo "FAIL test_$t.py:"; printf '%s\n' "$out" | grep -v '^ok ' | tail -n 20 | sed 's/^/    | /'
    fail=$((fail + 1))
  fi
done
echo "$n process tests on aarch64, $fail failed"
[ "$fail" -eq 0 ]
