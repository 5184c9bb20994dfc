#!/usr/bin/env bash
# Prefork servers started as root whose workers drop to another user, under `kestrel
# record --heap`: nginx from Debian (`user www-data;`, master_process on, 2 workers,
# gzip of a 2 MiB file so the workers work) and a small C one (tests/cli/prefork/). Every
# worker leaves its CPU and its heap profile and is in the report; the runtime writes
# nothing into the servers' logs: each log is the same as an unprofiled run's, apart from
# timestamps and pids; the processes are named by their program, not by the status line
# nginx writes into argv[0].
set -u
cd "$(dirname "$0")/../.."
fail=0
t=$(mktemp -d /tmp/kestrel-e2e-prefork-XXXXXX)
chmod 755 "$t"
trap 'rm -rf "$t"' EXIT
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL: $what"; fail=1; fi
}
k=$PWD/build/bin/kestrel
[ "$(id -u)" -eq 0 ] || { echo "FAIL: the prefork tests run as root (workers switch user)"; exit 1; }

# A free port: the kernel's choice for a socket closed again at once.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# Timestamps and pids out, lines sorted (workers and master write in any order).
# The run's own folder and port out too (each run has its own), and nginx's notices of
# the signals it got as its workers ended: two workers ending together are one SIGCHLD
# (the kernel merges them), one after the other two and a SIGIO, however they are run.
normal() { # normal LOG DIR
  sed -E "s#$2#DIR#g" "$1" | grep -vE 'signal (17 \(SIGCHLD\)|29 \(SIGIO\)) received' |
    sed -E 's#[0-9]{4}/[0-9]{2}/[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}#TIME#g; s#\[[0-9]{2}/[A-Za-z]{3}/[0-9]{4}:[0-9:]+ [+-][0-9]{4}\]#[TIME]#g; s#[0-9]+\#[0-9]+#PID\#TID#g; s#(process|pid|received from) [0-9]+#\1 PID#g; s#127\.0\.0\.1:[0-9]+#127.0.0.1:PORT#g' | sort
}

# ---------------------------------------------------------------- nginx
nginx_run() { # nginx_run DIR PROFILED(0/1): the server, 10 requests, then SIGTERM
  local d=$1 port; port=$(free_port)
  mkdir -p "$d/html" "$d/tmp" "$d/logs"
  python3 -c 'import random,sys; r=random.Random(7); sys.stdout.write("".join(r.choice("abcdefgh \n") for _ in range(2<<20)))' >"$d/html/big.txt"
  chmod -R a+rX "$d"
  cat >"$d/nginx.conf" <<CONF
user www-data;
master_process on;
worker_processes 2;
daemon off;
pid $d/nginx.pid;
error_log $d/logs/error.log notice;
events { worker_connections 64; }
http {
  access_log $d/logs/access.log;
  client_body_temp_path $d/tmp/body; proxy_temp_path $d/tmp/proxy;
  fastcgi_temp_path $d/tmp/fcgi; uwsgi_temp_path $d/tmp/uwsgi; scgi_temp_path $d/tmp/scgi;
  gzip on; gzip_types text/plain; gzip_comp_level 6; gzip_min_length 1;
  server { listen 127.0.0.1:$port; root $d/html; }
}
CONF
  if [ "$2" = 1 ]; then
    "$k" record -o "$d/ng" --heap --report="$d/report" -- /usr/sbin/nginx -p "$d" -c "$d/nginx.conf" \
      >"$d/stdout" 2>"$d/kestrel.err" &
  else
    /usr/sbin/nginx -p "$d" -c "$d/nginx.conf" >"$d/stdout" 2>"$d/stderr" &
  fi
  local top=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
  for i in $(seq 10); do
    curl -s -H "Accept-Encoding: gzip" -o /dev/null "http://127.0.0.1:$port/big.txt?n=$i"
  done
  sleep 1.2
  kill -TERM $top
  wait $top
}
if [ -x /usr/sbin/nginx ]; then
  nginx_run "$t/ng0" 0; nginx_run "$t/ng1" 1; rc=$?
  check "nginx under record: exit 0 ($rc: $(head -c 300 "$t/ng1/kestrel.err"))" test $rc -eq 0
  check "nginx: the error log is the unprofiled run's, apart from times and pids" \
    diff <(normal "$t/ng0/logs/error.log" "$t/ng0") <(normal "$t/ng1/logs/error.log" "$t/ng1")
  check "nginx: the access log is the unprofiled run's, apart from times" \
    diff <(normal "$t/ng0/logs/access.log" "$t/ng0") <(normal "$t/ng1/logs/access.log" "$t/ng1")
  check "nginx: no byte from kestrel in its logs or output" \
    bash -c '! grep -rq "kestrel:\|KESTREL" "$1/logs" "$1/stdout"' _ "$t/ng1"
  workers=$(grep -c "start worker process [0-9]" "$t/ng1/logs/error.log")
  check "nginx: 2 workers started ($workers)" test "$workers" -eq 2
  raws=$(ls "$t"/ng1/ng.raw/*.raw.json 2>/dev/null | wc -l)
  heaps=$(ls "$t"/ng1/ng.raw/*.heap.pb.gz 2>/dev/null | wc -l)
  check "nginx: a CPU profile per process, master and workers ($raws)" test "$raws" -eq 3
  check "nginx: a heap profile per process ($heaps)" test "$heaps" -eq 3
  owners=$(stat -c %U "$t"/ng1/ng.raw/*.raw.json | sort | uniq -c | tr -s ' ' | tr '\n' ';')
  check "nginx: the workers' files were written as www-data ($owners)" \
    bash -c 'stat -c %U "$1"/*.raw.json | grep -c "^www-data$" | grep -qx 2' _ "$t/ng1/ng.raw"
  rows=$(grep -E '^ +[0-9]+ +[0-9]+ .* nginx  \(' "$t/ng1/report" | awk '{print $1}' | sort -u | wc -l)
  check "nginx: the report lists the 3 processes, each named nginx ($rows)" test "$rows" -eq 3
  check "nginx: no process named after its status line" \
    bash -c '! grep -qE "nginx\.conf|nginx: (master|worker)  " "$1"' _ "$t/ng1/report"
  # A row of one process reads "nginx [PID]", of the function in several "nginx ×N".
  check "nginx: the workers' compression (libz) in the report" \
    grep -qE "nginx (\[[0-9]+\]|×[0-9]+) .*libz\.so" "$t/ng1/report"
  check "nginx: the heap report lists every process's file ($(grep "each process's heap profile" "$t/ng1/report"))" \
    bash -c '[ "$(grep "each process.s heap profile:" "$1" | sed "s/.*(//; s/).*//" | wc -w)" -eq 3 ]' _ "$t/ng1/report"
else
  echo "FAIL: /usr/sbin/nginx is not installed (scripts/deps.sh: nginx-light)"; fail=1
fi

# ---------------------------------------------------------------- the C prefork server
cc -O1 -g -fno-omit-frame-pointer -o "$t/prefork" tests/cli/prefork/prefork.c || exit 1
pf_run() { # pf_run DIR PROFILED
  local d=$1; mkdir -p "$d"; chmod 755 "$d"
  if [ "$2" = 1 ]; then
    "$k" record -o "$d/pf" --heap --report="$d/report" -- "$t/prefork" "$d/port" 3 "$d/log" \
      >"$d/stdout" 2>"$d/kestrel.err" &
  else
    "$t/prefork" "$d/port" 3 "$d/log" >"$d/stdout" 2>"$d/stderr" &
  fi
  local top=$!
  for _ in $(seq 100); do [ -s "$d/port" ] && break; sleep 0.1; done
  for _ in $(seq 12); do curl -s -o /dev/null "http://127.0.0.1:$(cat "$d/port")/"; done
  sleep 1.2
  kill -TERM $top
  wait $top
}
pf_run "$t/pf0" 0; pf_run "$t/pf1" 1; rc=$?
check "C prefork under record: exit 0 ($rc: $(head -c 300 "$t/pf1/kestrel.err"))" test $rc -eq 0
check "C prefork: its log is the unprofiled run's" diff <(normal "$t/pf0/log" "$t/pf0") <(normal "$t/pf1/log" "$t/pf1")
check "C prefork: the workers ran as nobody" test "$(grep -c "serving as uid 65534" "$t/pf1/log")" -eq 3
raws=$(ls "$t"/pf1/pf.raw/*.raw.json 2>/dev/null | wc -l)
heaps=$(ls "$t"/pf1/pf.raw/*.heap.pb.gz 2>/dev/null | wc -l)
check "C prefork: a CPU profile per process ($raws)" test "$raws" -eq 4
check "C prefork: a heap profile per process ($heaps)" test "$heaps" -eq 4
rows=$(grep -E '^ +[0-9]+ +[0-9]+ .* prefork  \(' "$t/pf1/report" | awk '{print $1}' | sort -u | wc -l)
check "C prefork: the heap report lists every process's file" \
  bash -c '[ "$(grep "each process.s heap profile:" "$1" | sed "s/.*(//; s/).*//" | wc -w)" -eq 4 ]' _ "$t/pf1/report"
check "C prefork: the report lists the 4 processes ($rows)" test "$rows" -eq 4
check "C prefork: handle_request in the report" grep -q "handle_request" "$t/pf1/report"
# Every worker's heap profile holds handle_request's allocations.
n=0
for h in "$t"/pf1/pf.raw/*.heap.pb.gz; do
  "$k" report --sample-type alloc_space "$h" 2>/dev/null | grep -q "handle_request" && n=$((n + 1))
done
check "C prefork: 3 heap profiles (the workers') show handle_request ($n)" test $n -eq 3
exit $fail
