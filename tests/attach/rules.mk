# Tests of the attached mode (kestrel record -p / -a / --attach, src/attach): a
# program sampled from outside, built with frame pointers, without, and statically;
# a Go program (built by the test, with the go tool).
ATTACH_DIR   := $(BUILD)/tests/attach
ATTACH_PROGS := $(ATTACH_DIR)/prog_fp $(ATTACH_DIR)/prog_nofp $(ATTACH_DIR)/prog_static \
                $(ATTACH_DIR)/prog_forker $(ATTACH_DIR)/prog_jit $(ATTACH_DIR)/prog_deep \
                $(ATTACH_DIR)/prog_noreadv

TESTS     += tests/attach/test_attach.py tests/attach/test_attach_deep.py
TEST_DEPS += $(ATTACH_PROGS) $(KESTREL) $(KESTREL_SAN)

$(ATTACH_DIR)/prog_fp: tests/attach/prog_attach.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Werror -fno-omit-frame-pointer -pthread -o $@ $<
$(ATTACH_DIR)/prog_nofp: tests/attach/prog_attach.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Werror -fomit-frame-pointer -pthread -o $@ $<
$(ATTACH_DIR)/prog_static: tests/attach/prog_attach.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Werror -fomit-frame-pointer -static -pthread -o $@ $<
$(ATTACH_DIR)/prog_forker: tests/attach/prog_forker.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Werror -o $@ $<
$(ATTACH_DIR)/prog_jit: tests/attach/prog_jit.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Werror -o $@ $<
$(ATTACH_DIR)/prog_deep: tests/attach/prog_deep.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Werror -fomit-frame-pointer -o $@ $<
$(ATTACH_DIR)/prog_noreadv: tests/attach/prog_noreadv.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -Wall -Werror -o $@ $<
