# Tests of the CLI and the analysis library. Each tests/cli/test_*.c is one program
# built with the sanitizers against the analysis library; each tests/cli/*.sh is an
# end-to-end script that runs build/bin/kestrel and build/bin/kestrel-san.
CLI_TEST_SRCS := $(wildcard tests/cli/test_*.c)
CLI_TESTS     := $(CLI_TEST_SRCS:tests/cli/%.c=$(BUILD)/tests/cli/%)
CLI_SCRIPTS   := $(wildcard tests/cli/e2e_*.sh)
TESTS     += $(CLI_TESTS) $(CLI_SCRIPTS)
TEST_DEPS += $(CLI_TESTS) $(KESTREL) $(KESTREL_SAN)

$(BUILD)/tests/cli/%: tests/cli/%.c $(LIBANALYSIS_SAN)
	@mkdir -p $(@D)
	$(CC) $(ANALYSIS_CFLAGS) $(SAN_FLAGS) -Itests -o $@ $< $(LIBANALYSIS_SAN) $(ANALYSIS_LIBS)

# A program that writes a raw profile of addresses in its own code, built twice with
# different code (so different build ids) for the changed-binary case.
FIXTURE_CXXFLAGS := -O2 -g -fno-omit-frame-pointer -Wl,--build-id
$(BUILD)/tests/cli/fixture_symbols: tests/cli/fixture_symbols.cpp
	@mkdir -p $(@D)
	g++ $(FIXTURE_CXXFLAGS) -DVARIANT=1 -o $@ $<
$(BUILD)/tests/cli/fixture_symbols_v2: tests/cli/fixture_symbols.cpp
	@mkdir -p $(@D)
	g++ $(FIXTURE_CXXFLAGS) -DVARIANT=2 -o $@ $<
# The same with clang, whose DWARF 5 comes without .debug_aranges.
$(BUILD)/tests/cli/clang/fixture_symbols: tests/cli/fixture_symbols.cpp
	@mkdir -p $(@D)
	clang++ $(FIXTURE_CXXFLAGS) -DVARIANT=1 -o $@ $<
$(BUILD)/tests/cli/clang/fixture_symbols_v2: tests/cli/fixture_symbols.cpp
	@mkdir -p $(@D)
	clang++ $(FIXTURE_CXXFLAGS) -DVARIANT=2 -o $@ $<
$(BUILD)/tests/cli/test_symbolize: $(BUILD)/tests/cli/fixture_symbols \
    $(BUILD)/tests/cli/fixture_symbols_v2 $(BUILD)/tests/cli/clang/fixture_symbols \
    $(BUILD)/tests/cli/clang/fixture_symbols_v2
