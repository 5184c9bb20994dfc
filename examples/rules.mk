# Example programs to profile: each examples/<name>.c becomes build/examples/<name>,
# built the way kestrel wants a program (debug info, frame pointers, the leaf's too).
EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLE_BINS := $(EXAMPLE_SRCS:examples/%.c=$(BUILD)/examples/%)
EXAMPLES += $(EXAMPLE_BINS)
EXAMPLE_CFLAGS := -std=gnu11 $(WARN) -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
# clang when present: GCC 12 drops the frame pointer of leaf functions that need no
# stack frame despite -mno-omit-leaf-frame-pointer, and a sample in such a leaf loses
# its caller (the frame-pointer walk skips straight to the caller's caller).
EXAMPLE_CC := $(shell command -v clang >/dev/null 2>&1 && echo clang || echo $(CC))

$(BUILD)/examples/%: examples/%.c
	@mkdir -p $(@D)
	$(EXAMPLE_CC) $(EXAMPLE_CFLAGS) -pthread -o $@ $< -lm
