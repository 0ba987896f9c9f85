#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write the member offsets of uapi/netlat_layout.h.

uapi/netlat_layout.h holds the ABI's layout where it is compiled (the
module's uarg.c and the selftests include it): the structs' sizes by hand,
with their history, and, in the part this script writes, the offset of
every member of every top-level struct of uapi/linux/netlat.h as the
host's compiler lays them out now. A change that moves a member stops the
build with the struct and member named; a member appended on purpose is a
rerun of this script, committed with it (tests/layers/test.sh checks that
the part is what this script writes).

Usage: gen.py <repo> [-]   (-: print the whole file instead of writing it)
"""
import os
import re
import subprocess
import sys
import tempfile

MEMBER = re.compile(r'^\s+(?:struct\s+\w+|__\w+|char)\s+([^;]+);')


def structs(header):
    """[(name, [member, ...])] of the header's top-level structs."""
    out, cur, depth = [], None, 0
    for line in open(header):
        m = re.match(r'^struct (netlat_\w+) \{', line)
        if m:
            cur, depth = (m.group(1), []), 1
            continue
        if cur is None:
            continue
        code = re.sub(r'/\*.*?\*/', '', line)
        if depth == 1:
            mm = MEMBER.match(code)
            if mm:
                for name in mm.group(1).split(','):
                    cur[1].append(re.sub(r'\[.*', '', name).strip())
        depth += code.count('{') - code.count('}')
        if depth == 0:
            out.append(cur)
            cur = None
    return out


BEGIN = ("/* ---- Every member's offset, as tests/abi/gen.py wrote it from "
         "linux/netlat.h:\n * rerun it when a member is appended, never edit "
         "these lines. ---- */\n")
END = "/* ---- end of gen.py's part ---- */\n"


def offsets(repo):
    """The _Static_assert lines of every member's offset, as laid out now."""
    ss = structs(os.path.join(repo, 'uapi', 'linux', 'netlat.h'))
    prog = ['#include <stdio.h>', '#include <stddef.h>',
            '#include <linux/netlat.h>', 'int main(void)', '{']
    for name, members in ss:
        for mem in members:
            prog.append('\tprintf("_Static_assert(offsetof(struct %s, %s) == '
                        '%%zu, \\"%s.%s\\");\\n", offsetof(struct %s, %s));'
                        % (name, mem, name[len('netlat_'):], mem, name, mem))
    prog += ['\treturn 0;', '}']
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, 'abi.c'), os.path.join(d, 'abi')
        with open(src, 'w') as f:
            f.write('\n'.join(prog) + '\n')
        subprocess.run(['gcc', '-I', os.path.join(repo, 'uapi'), '-o', exe,
                        src], check=True)
        return subprocess.run([exe], check=True, capture_output=True,
                              text=True).stdout


def main():
    repo = sys.argv[1]
    path = os.path.join(repo, 'uapi', 'netlat_layout.h')
    text = open(path).read()
    head, rest = text.split(BEGIN, 1) if BEGIN in text else \
        (text[:text.rindex('#endif')], text[text.rindex('#endif'):])
    tail = rest.split(END, 1)[1] if END in rest else '\n' + rest
    text = head + BEGIN + offsets(repo) + END + tail
    if len(sys.argv) > 2 and sys.argv[2] == '-':
        sys.stdout.write(text)
    else:
        with open(path, 'w') as f:
            f.write(text)


if __name__ == '__main__':
    main()
