#!/usr/bin/env bash
# Installs the Debian packages kestrel's build and tests need, when they are missing.
# Idempotent and silent when everything is present. The test packages include the
# Windows and Wasm stubs' cross toolchains and runners (mingw-w64, wine64, wasi-libc)
# and the aarch64 runtime's (gcc-aarch64-linux-gnu, qemu-user).
# `--bench` adds the peers the benchmarks compare against (perf, gperftools,
# heaptrack, jemalloc, hyperfine, llvm-symbolizer; samply through cargo, once).
# `--package` installs only what `make deb` needs: the build's packages and dpkg-dev.
set -euo pipefail

# package:probe — the probe is a file or a command that tells whether it is present.
BUILD_PKGS=(
  gcc:/usr/bin/gcc make:/usr/bin/make pkg-config:/usr/bin/pkg-config
  libdw-dev:/usr/include/elfutils/libdw.h libelf-dev:/usr/include/libelf.h
  libjansson-dev:/usr/include/jansson.h zlib1g-dev:/usr/include/zlib.h
  binutils:/usr/bin/objcopy libiberty-dev:/usr/include/libiberty/demangle.h
)
TEST_PKGS=(
  clang:/usr/bin/clang libclang-rt-14-dev:/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
  golang-go:/usr/bin/go python3:python3 nodejs:node npm:npm chromium:/usr/bin/chromium
  procps:/usr/bin/pgrep g++:/usr/bin/g++
  libjemalloc2:/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
  libtcmalloc-minimal4:/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
  time:/usr/bin/time cargo:cargo debuginfod:/usr/bin/debuginfod curl:/usr/bin/curl
  xz-utils:/usr/bin/xz binutils:/usr/bin/readelf linux-perf:/usr/bin/perf
  dpkg-dev:/usr/bin/dpkg-shlibdeps lintian:/usr/bin/lintian man-db:/usr/bin/man
  libboost-context-dev:/usr/include/boost/context/fiber.hpp
  nginx-light:/usr/sbin/nginx
)
# What code-server's native modules build against, and the ripgrep it searches with,
# for the VS Code extension's editor test (scripts/code-server.sh).
CODE_SERVER_PKGS=(
  libkrb5-dev:/usr/include/krb5.h libx11-dev:/usr/include/X11/Xlib.h
  libxkbfile-dev:/usr/include/X11/extensions/XKBfile.h
  libsecret-1-dev:/usr/include/libsecret-1/libsecret/secret.h ripgrep:/usr/bin/rg
)
# The Windows and Wasm stubs and their tests (tests/platform): mingw-w64's C compiler
# (the win32-threads one alone; the mingw-w64 metapackage adds C++ and i686 compilers
# that kestrel does not use), wine64 to run what it builds, and for Wasm clang's
# wasm32 builtins, wasi-libc, lld (wasm-ld) and llvm-ar; Node's WASI runs those.
STUB_PKGS=(
  gcc-mingw-w64-x86-64-win32:/usr/bin/x86_64-w64-mingw32-gcc wine64:/usr/lib/wine/wine64
  wasi-libc:/usr/lib/wasm32-wasi/libc.a
  libclang-rt-14-dev-wasm32:/usr/lib/llvm-14/lib/clang/14.0.6/lib/wasi/libclang_rt.builtins-wasm32.a
  lld:/usr/bin/wasm-ld llvm:/usr/bin/llvm-ar
)
# The runtime for aarch64 Linux and its tests (tests/arch): the cross compiler with
# Debian's arm64 libc (headers and libraries), qemu-user's qemu-aarch64 to run them.
A64_PKGS=(
  gcc-aarch64-linux-gnu:/usr/bin/aarch64-linux-gnu-gcc
  libc6-dev-arm64-cross:/usr/aarch64-linux-gnu/include/stdio.h
  libc6-arm64-cross:/usr/aarch64-linux-gnu/lib/libc.so.6 qemu-user:/usr/bin/qemu-aarch64
)
BENCH_PKGS=(
  linux-perf:/usr/bin/perf google-perftools:/usr/bin/google-pprof
  libgoogle-perftools-dev:/usr/include/gperftools/profiler.h heaptrack:/usr/bin/heaptrack
  libjemalloc-dev:/usr/include/jemalloc/jemalloc.h hyperfine:/usr/bin/hyperfine
  time:/usr/bin/time llvm:/usr/bin/llvm-symbolizer
  libunwind-dev:/usr/include/x86_64-linux-gnu/libunwind.h
)

PACKAGE_PKGS=(dpkg-dev:/usr/bin/dpkg-shlibdeps)

if [ "${1:-}" = "--package" ]; then
  want=("${BUILD_PKGS[@]}" "${PACKAGE_PKGS[@]}")
else
  want=("${BUILD_PKGS[@]}" "${TEST_PKGS[@]}" "${CODE_SERVER_PKGS[@]}" "${STUB_PKGS[@]}" "${A64_PKGS[@]}")
fi
[ "${1:-}" = "--bench" ] && want+=("${BENCH_PKGS[@]}")

missing=()
for entry in "${want[@]}"; do
  pkg=${entry%%:*} probe=${entry#*:}
  if [ "${probe#/}" != "$probe" ]; then [ -e "$probe" ] && continue
  else command -v "$probe" >/dev/null 2>&1 && continue; fi
  missing+=("$pkg")
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] && ! command -v sudo >/dev/null 2>&1; then
    echo "kestrel: missing packages: ${missing[*]}; run as root or install them with apt-get" >&2
    exit 1
  fi
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  echo "kestrel: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; } \
       >/tmp/kestrel-deps.log 2>&1; then
    echo "kestrel: could not install ${missing[*]} with apt-get; see /tmp/kestrel-deps.log" >&2
    tail -n 5 /tmp/kestrel-deps.log >&2
    exit 1
  fi
fi

[ "${1:-}" = "--package" ] && exit 0

# samply (Firefox Profiler's sampler, a benchmark peer) is not in Debian: cargo builds
# it once into ~/.cargo/bin, where the benchmarks look for it.
if [ "${1:-}" = "--bench" ] && ! command -v samply >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/samply" ]; then
  echo "kestrel: installing samply (cargo install --locked samply, a few minutes)" >&2
  if ! cargo install --locked samply >/tmp/kestrel-samply.log 2>&1; then
    echo "kestrel: cargo could not install samply; see /tmp/kestrel-samply.log" >&2
    exit 1
  fi
fi

# The browser and consumer tests use npm packages (playwright-core drives Debian's
# chromium; consumers such as speedscope read our files), and the VS Code extension is
# built with its own (typescript, @vscode/vsce). Each directory with a package.json
# and a package-lock.json gets `npm ci` once.
for dir in web tests/consumers editors/vscode; do
  [ -f "$dir/package-lock.json" ] && [ ! -d "$dir/node_modules" ] || continue
  if ! (cd "$dir" && npm ci --no-audit --no-fund --silent >/tmp/kestrel-npm.log 2>&1); then
    echo "kestrel: npm could not install the packages of $dir; see /tmp/kestrel-npm.log" >&2
    exit 1
  fi
done

exit 0
