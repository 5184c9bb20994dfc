#!/usr/bin/env python3
"""A C project of N source files and a Makefile: `make -j2` runs gcc once a file
(gcc, cc1, as: three processes each, and make's shell where a recipe needs one),
then one link (collect2, ld), a few hundred short processes in all."""
import os
import sys

def main():
    out, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 140
    os.makedirs(out, exist_ok=True)
    for i in range(n):
        with open(os.path.join(out, f"m{i}.c"), "w") as f:
            f.write(f"#include <stdio.h>\n#include <string.h>\n#include <stdlib.h>\n")
            for j in range(12):
                f.write(f"static int f{j}(int x) {{ int s = 0; for (int k = 0; k < x; k++)"
                        f" s += (k * {j + 3}) ^ (s >> 2); return s; }}\n")
            f.write(f"int m{i}(int x) {{ return " + " + ".join(f"f{j}(x + {j})" for j in range(12))
                    + "; }\n")
    with open(os.path.join(out, "main.c"), "w") as f:
        for i in range(n):
            f.write(f"int m{i}(int);\n")
        f.write("int main(void) { int s = 0;\n")
        for i in range(n):
            f.write(f"  s += m{i}(3);\n")
        f.write("  return s == 12345; }\n")
    objs = " ".join(f"m{i}.o" for i in range(n))
    with open(os.path.join(out, "Makefile"), "w") as f:
        f.write(f"OBJS := main.o {objs}\nprog: $(OBJS)\n\tgcc -o $@ $(OBJS)\n"
                "%.o: %.c\n\tgcc -O2 -c -o $@ $< && test -s $@\n"
                "clean:\n\trm -f prog *.o\n")

main()
