#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write module/abi.c: the uapi's layout as the module is built against it.

Every top-level struct of uapi/linux/netlat.h gets a _Static_assert of its
size and of each member's offset, as the host's compiler lays them out
now. The module compiles module/abi.c, so a change that moves a member or
grows a struct stops make with the struct and member named; an appended
field is then a conscious step (rerun this and commit the new file).

Usage: gen.py <repo> [<out>]   (out: default <repo>/module/abi.c, - stdout)
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


def main():
    repo = sys.argv[1]
    dest = sys.argv[2] if len(sys.argv) > 2 else \
        os.path.join(repo, 'module', 'abi.c')
    ss = structs(os.path.join(repo, 'uapi', 'linux', 'netlat.h'))
    prog = ['#include <stdio.h>', '#include <stddef.h>',
            '#include <linux/netlat.h>', 'int main(void)', '{']
    for name, members in ss:
        prog.append('\tprintf("ABI(%s, %%zu)\\n", sizeof(struct %s));'
                    % (name, name))
        for mem in members:
            prog.append('\tprintf("AT(%s, %s, %%zu)\\n", '
                        'offsetof(struct %s, %s));' % (name, mem, name, mem))
    prog += ['\treturn 0;', '}']
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, 'abi.c'), os.path.join(d, 'abi')
        with open(src, 'w') as f:
            f.write('\n'.join(prog) + '\n')
        subprocess.run(['gcc', '-I', os.path.join(repo, 'uapi'), '-o', exe,
                        src], check=True)
        rows = subprocess.run([exe], check=True, capture_output=True,
                              text=True).stdout
    text = '''// SPDX-License-Identifier: GPL-2.0
/*
 * The ABI's layout, checked where the module is built: the size of every
 * struct of uapi/linux/netlat.h and the offset of each member, as they
 * were when tests/abi/gen.py wrote this file (do not edit it by hand).
 * A change that moves a member or grows a struct stops the build here;
 * a field appended on purpose is a rerun of gen.py, committed with it.
 */
#include <linux/netlat.h>

#define ABI(s, n) \\
	_Static_assert(sizeof(struct s) == (n), "ABI: size of struct " #s)
#define AT(s, m, n) \\
	_Static_assert(__builtin_offsetof(struct s, m) == (n), \\
		       "ABI: offset of " #s "." #m)

''' + ''.join(r + ';\n' for r in rows.splitlines())
    if dest == '-':
        sys.stdout.write(text)
    else:
        with open(dest, 'w') as f:
            f.write(text)


if __name__ == '__main__':
    main()
