#!/usr/bin/env python3
"""Checks that a kestrel(1) page says what a kestrel binary's --help texts say.

usage: tests/packaging/check_man.py KESTREL PAGE   (PAGE: kestrel.1 or kestrel.1.gz)

The page is rendered by groff (man macros, ASCII, no hyphenation, wide lines), cut into
its sections, and each command's section must hold exactly the words of
`KESTREL COMMAND --help`, in order (the word "usage:" aside, which the page drops);
DESCRIPTION those of `KESTREL --help`; SYNOPSIS every command's usage lines. groff must
render the page without a warning. Exit 0 when they agree, 1 with each difference."""
import gzip, re, subprocess, sys

kestrel, page = sys.argv[1], sys.argv[2]
src = gzip.open(page, 'rb').read() if page.endswith('.gz') else open(page, 'rb').read()
r = subprocess.run(['groff', '-man', '-Tascii', '-ww', '-P-c', '-P-b', '-P-u', '-rLL=250n'],
                   input=src, capture_output=True)
fails = []
if r.returncode != 0 or r.stderr:
    fails.append('groff: exit %d: %s' % (r.returncode, r.stderr.decode(errors='replace').strip()))
text = r.stdout.decode()


def helptext(*args):
    h = subprocess.run([kestrel, *args, '--help'], capture_output=True, text=True)
    if h.returncode != 0:
        sys.exit('check_man: %s %s --help: exit %d' % (kestrel, ' '.join(args), h.returncode))
    return h.stdout


def words(s):
    w = s.split()
    return w[1:] if w[:1] == ['usage:'] else w


# Sections: a line at column 0 (.SH) or 3 (.SS) that is not indented further.
sections, name = {}, None
for line in text.splitlines():
    m = re.match(r'^(\S.*|   \S.*)$', line)
    if m and not line.startswith('    ') and not re.match(r'^KESTREL\(1\)', line):
        name = line.strip()
        sections[name] = []
        continue
    if name:
        sections[name].append(line)
sections = {k: '\n'.join(v) for k, v in sections.items()}

top = helptext()
commands = re.findall(r'^  ([a-z]+) ', top.split('commands:', 1)[1].split('\n\n', 1)[0], re.M)
if not commands:
    fails.append('kestrel --help lists no commands')


def compare(what, want, got):
    if want == got:
        return
    i = next((k for k in range(min(len(want), len(got))) if want[k] != got[k]), min(len(want), len(got)))
    fails.append('%s: --help and the page part at word %d: --help has %r, the page %r'
                 % (what, i, ' '.join(want[max(0, i - 3):i + 4]), ' '.join(got[max(0, i - 3):i + 4])))


compare('DESCRIPTION', words(top), words(sections.get('DESCRIPTION', '')))
synopsis = []
for c in commands:
    h = helptext(c)
    sec = sections.get('kestrel ' + c)
    if sec is None:
        fails.append('the page has no section "kestrel %s"' % c)
        continue
    compare('kestrel ' + c, words(h), sec.split())
    synopsis += words(h.split('\n\n', 1)[0])
compare('SYNOPSIS', synopsis, sections.get('SYNOPSIS', '').split())
for f in fails:
    print('check_man: ' + f)
sys.exit(1 if fails else 0)
