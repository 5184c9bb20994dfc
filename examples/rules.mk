# Example programs to profile: each examples/<name>.c becomes build/examples/<name>,
# built the way kestrel wants a program (debug info, frame pointers, the leaf's too).
EXAMPLE_SRCS := $(wildcard examples/*.c)
EXAMPLE_BINS := $(EXAMPLE_SRCS:examples/%.c=$(BUILD)/examples/%)
EXAMPLES += $(EXAMPLE_BINS)
EXAMPLE_CFLAGS := -std=gnu11 $(WARN) -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer

$(BUILD)/examples/%: examples/%.c
	@mkdir -p $(@D)
	$(CC) $(EXAMPLE_CFLAGS) -pthread -o $@ $< -lm
