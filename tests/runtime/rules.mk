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
# sampled (issue 28; on a 2-core machine the signal engine's sampler arms most 2 ms
# threads' timers after their work, 174 of 10,000 sampled, and the perf engine's rings
# overflow while its drain waits for a CPU, 3,783).
OPEN_TESTS += tests/runtime/open_live_threads.py
