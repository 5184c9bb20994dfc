# bench/unwind/tree.sh — a shell script of 20 short processes (bench/unwind/short_ir.sh).
for i in 1 2 3 4 5 6 7 8 9 10; do /bin/true; /bin/echo x >/dev/null; done
