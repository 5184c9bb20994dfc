#!/usr/bin/env bash
# The runtime's process tests (tests/runtime/test_*.py) that hold under emulation, run
# against the aarch64 runtime and helpers (KESTREL_TEST_ARCH=aarch64: rtlib.py takes
# build/aarch64's, each helper started by its qemu-aarch64 wrapper; rtlib.EMULATED).
# Each says in its docstring what it does otherwise there (docs/aarch64.md): inactive
# counts threads against the program without the library (qemu has one of its own);
# raw_format and long_run read the aarch64 program's symbols (rtlib.program_file), and
# raw_format takes a thread's name to be the emulator's;
# api leaves out its page-fault count (the emulator's), program_signals how many
# SIGPROF its ITIMER_PROF brings, process_life its modes that fork while sampling and
# signal_alloc its CPU-profiled runs (its program forks): qemu 7.2 aborts a threaded
# program's fork child that starts a thread, as the runtime's does.
# Left out, and why: those whose helpers run `kestrel record` or a native program
# (debian_programs, event_loop, junk_fp, stack_completeness, utf8_names), thread_cpu
# (a short thread's CPU clock under qemu counts the emulator's work on it) and
# waiting_share (/proc/self/task/TID/syscall shows the emulator's registers).
set -u
cd "$(dirname "$0")/../.."
export KESTREL_TEST_ARCH=aarch64
fail=0 n=0
for t in activation api inactive long_run no_eintr own_fds own_handlers process_life \
         program_signals raw_format short_threads signal_alloc signal_in_sample \
         small_stack special_files write_errors; do
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
