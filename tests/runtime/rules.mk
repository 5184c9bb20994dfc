# Tests of the CPU runtime. C tests link libkestrel.a (internal functions included);
# the process tests (*.py) preload libkestrel.so into the helper programs built here
# (prog_api, which calls the API, links libkestrel.a instead) and check the raw files
# they leave. KESTREL_PROFILE_ENGINE is taken from the environment, so the suite can
# run once per engine.
RT_TEST_C     := $(wildcard tests/runtime/test_*.c)
RT_TESTS_C    := $(RT_TEST_C:tests/runtime/%.c=$(BUILD)/tests/runtime/%)
RT_PROG_C     := $(wildcard tests/runtime/prog_*.c)
RT_PROGS      := $(RT_PROG_C:tests/runtime/%.c=$(BUILD)/tests/runtime/%)
RT_TESTS_PY   := $(sort $(wildcard tests/runtime/test_*.py))
TESTS     += $(RT_TESTS_C) $(RT_TESTS_PY)
TEST_DEPS += $(RT_TESTS_C) $(RT_PROGS) $(LIBKESTREL_SO)

$(BUILD)/tests/runtime/test_%: tests/runtime/test_%.c $(LIBKESTREL_A)
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -Itests -o $@ $< $(LIBKESTREL_A) -ldl

# Programs to be profiled: frame pointers on, like `kestrel run` builds them.
$(BUILD)/tests/runtime/prog_%: tests/runtime/prog_%.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -o $@ $< -ldl

# The in-process API's program (test_api.py): the runtime linked in, no preload.
$(BUILD)/tests/runtime/prog_api: tests/runtime/prog_api.c $(LIBKESTREL_A)
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -Itests -o $@ $< $(LIBKESTREL_A) -ldl

# The same work built without frame pointers (the stack-completeness tests).
$(BUILD)/tests/runtime/prog_libcwork_nofp: tests/runtime/prog_libcwork.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -fomit-frame-pointer -D_GNU_SOURCE -pthread -o $@ $< -ldl
TEST_DEPS += $(BUILD)/tests/runtime/prog_libcwork_nofp

# Deep recursion without frame pointers (test_cut_causes.py): cut by the depth limit,
# which frame pointers would not cure.
$(BUILD)/tests/runtime/prog_deeprec_nofp: tests/runtime/prog_deeprec.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -fomit-frame-pointer -D_GNU_SOURCE -pthread -o $@ $< -ldl
TEST_DEPS += $(BUILD)/tests/runtime/prog_deeprec_nofp

# Tests of targets not met yet (`make test-open`, not part of `make test`): each fails
# today and says by how much. open_live_threads.py: 10,000 threads alive at once, each
# sampled (issue 28; on a 2-core machine the signal engine's threads arm their own
# timers, but a 250 Hz tick samples one thread per CPU every 4 ms, 5,000 of the 10,000
# at most: 3,759-4,124 sampled, and its CPU total read 12.5 to 20.6 s of 20.0 as its
# sampler waits for a CPU; the perf engine's rings of 64 KiB stack copies overflow
# while its drain waits for a CPU, 2,017-2,050 sampled, 3.2-3.5 s; with
# KESTREL_PROFILE_UNWIND=fp 9,909-9,949 sampled, none lost, 17.1-18.0 s: each thread's
# last period is not sampled).
OPEN_TESTS += tests/runtime/open_live_threads.py
