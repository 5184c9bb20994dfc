# The viewer with 50,000 distinct stacks in Debian's chromium, beside speedscope on the
# same stacks (figures -> BENCHMARKS.md `## Viewer`).
BENCHES += bench/viewer_bench.sh
bench/viewer_bench.sh: $(VIEWER_PAGE)
