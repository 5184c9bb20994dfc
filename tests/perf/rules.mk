# Tests of the perf_event engine:
#  - the ring reader and record parser on hand-made and real rings (sanitizers on, the
#    parser compiled in directly);
#  - the engine end to end (test_perf_engine.py): no signal ever reaches the program,
#    the profile matches the work, auto picks perf, and falls back when a seccomp
#    filter refuses perf_event_open;
#  - what a build's processes keep (test_short_rings.py): short and preempted processes
#    lose nothing with their small first ring;
#  - the whole CPU runtime suite (tests/runtime) a second time with the perf engine
#    forced: one wrapper per test under build/tests/perf-pass/.
PERF_DIR        := $(BUILD)/tests/perf
PERF_UNIT_TESTS := $(PERF_DIR)/test_perf_ring
PERF_HELPERS    := $(PERF_DIR)/quiet $(PERF_DIR)/noperf $(PERF_DIR)/work $(PERF_DIR)/nested \
                   $(PERF_DIR)/syscalls $(PERF_DIR)/deny
PERF_PASS_OF    := $(sort $(wildcard tests/runtime/test_*.c tests/runtime/test_*.py))
PERF_PASS       := $(patsubst tests/runtime/%,$(BUILD)/tests/perf-pass/%,$(basename $(PERF_PASS_OF)))

TESTS     += $(PERF_UNIT_TESTS) tests/perf/test_perf_engine.py tests/perf/test_unprivileged.py \
             tests/perf/test_refused_calls.py \
             tests/perf/test_go_signal.py tests/perf/test_guessed_stacks.py \
             tests/perf/test_short_rings.py \
             $(PERF_PASS)
# open_drops.py: the signal engine lost 1 of 427 samples in one run (0.1% asked), none
# in 3 runs since its rings spill into a shared pool; the perf engine lost 11 of 1,456
# records of rg in one run (its drain waited for a CPU), and its CPU total for the
# socket-pair server read 1564.7 ms of 1489.4 (5.1% over) in one run.
OPEN_TESTS += tests/perf/open_unprivileged_server.sh tests/perf/open_unprivileged_dd_shares.sh \
              tests/perf/open_drops.py
TEST_DEPS += $(PERF_UNIT_TESTS) $(PERF_HELPERS) $(PERF_PASS) $(LIBKESTREL_SO)

$(PERF_DIR)/test_perf_ring: tests/perf/test_perf_ring.c src/runtime/cpu/perf_ring.c src/runtime/cpu/perf_ring.h
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) $(SAN_FLAGS) -Itests -o $@ tests/perf/test_perf_ring.c src/runtime/cpu/perf_ring.c

# Programs to be profiled: frame pointers on, like `kestrel run` builds them.
$(PERF_DIR)/quiet: tests/perf/quiet.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -o $@ $<
$(PERF_DIR)/nested: tests/perf/nested.c tests/runtime/burn.h
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -o $@ $<
$(PERF_DIR)/work: bench/engines/work.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -o $@ $<
$(PERF_DIR)/syscalls: tests/perf/syscalls.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -pthread -o $@ $<
$(PERF_DIR)/deny: tests/perf/deny.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -o $@ $<
$(PERF_DIR)/noperf: tests/perf/noperf.c
	@mkdir -p $(@D)
	$(CC) $(COMMON) $(OPT) -D_GNU_SOURCE -o $@ $<

# The runtime's tests read KESTREL_PROFILE_ENGINE; each wrapper forces perf and runs
# the test as built or written by tests/runtime/rules.mk. A wrapper is made again when
# its test's source is newer, so that a test rewritten in the other language (a .c
# become a .py) is not run from its old build.
$(foreach t,$(PERF_PASS_OF),$(eval $(BUILD)/tests/perf-pass/$(basename $(notdir $(t))): $(t)))
$(BUILD)/tests/perf-pass/%: tests/perf/rules.mk
	@mkdir -p $(@D)
	@t=$$(ls tests/runtime/$*.py 2>/dev/null || echo $(BUILD)/tests/runtime/$*); \
	  printf '#!/bin/sh\nKESTREL_PROFILE_ENGINE=perf exec %s "$$@"\n' "$$t" > $@ && chmod +x $@
