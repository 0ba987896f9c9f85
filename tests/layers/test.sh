#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test (no VM, no kernel): Documentation/design.rst's "The
# units and their layers" says what module/ is made of and who uses whom,
# and this checks it against the sources, so that it cannot drift:
#
# - every unit of module/ (a .c, or a header alone) is in the units
#   table, and the table names no unit the tree lacks;
# - each unit's uses in the uses table are exactly this project's
#   headers its .c and its own header include;
# - a unit uses only units below it in the units table (the layering).
#
# - every tracepoint module/ hooks is one the check VM pins
#   (tests/qemu/init.sh, pin_tracepoints);
# - uapi/netlat_layout.h asserts every member's offset as tests/abi/gen.py
#   writes it.
#
# It also runs the check on a copy of the tree with one use added that
# goes upwards, and on one with a use the table does not name, and
# requires both to fail: a check that cannot fail checks nothing.
# TAP lines, then "N passed, N failed". Usage: test.sh <work dir>

set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=${1:?usage: test.sh <work dir>}
mkdir -p "$dir"
pass=0 fail=0

ok() { echo "ok - $1"; pass=$((pass + 1)); }
not_ok() { echo "not ok - $1"; fail=$((fail + 1)); }

# section <rst>: the lines of the section "The units and their layers"
section() {
	awk '/^The units and their layers$/ { on = 1; next }
	     on && /^[A-Z].*$/ { t = $0; getline u
			if (u ~ /^=+$/ && length(u) == length(t)) exit
			print t; print u; next }
	     on' "$1"
}

# units <rst>: the units table's units, top to bottom ("dev.[ch]" -> dev)
units() {
	section "$1" | awk '/^=+  +=+$/ { n++; next }
		n == 2 && /^[a-z_]+(\.\[ch\]|\.c|\.h) / {
			u = $1; sub(/\..*/, "", u); print u }
		n == 3 { exit }'
}

# uses <rst>: "unit use use ..." per row of the uses table (the second
# table), "none" for a unit that uses none of ours
uses() {
	section "$1" | awk '/^=+  +=+$/ { n++; next }
		n == 5 && /^[a-z_]+\.[ch] / {
			if (u != "") print u, l
			u = $1; sub(/\..*/, "", u); $1 = ""; l = $0; next }
		n == 5 && /^  +[^ ]/ { l = l " " $0; next }
		n == 6 { exit }
		END { if (u != "") print u, l }' |
		sed 's/,/ /g; s/  */ /g; s/ $//'
}

# actual <module dir> <unit>: this project's units <unit>.c and <unit>.h
# include, sorted
actual() {
	local m=$1 u=$2 f
	for f in "$m/$u.c" "$m/$u.h"; do
		[[ -f $f ]] && sed -n 's/^#include "\([a-z_]*\)\.h".*/\1/p' "$f"
	done | while read -r f; do
		[[ $f != "$u" && ( -f $m/$f.c || -f $m/$f.h ) ]] && echo "$f"
	done | sort -u
}

# check <module dir> <rst>: the three rules; prints what breaks them and
# fails if any does
check() {
	local m=$1 rst=$2 u f i bad=0 doc act
	local -a order
	local -A pos=() documented=()

	mapfile -t order < <(units "$rst")
	((${#order[@]})) || { echo "# no units table in $rst"; return 1; }
	for i in "${!order[@]}"; do
		pos[${order[$i]}]=$i
	done
	for f in "$m"/*.c "$m"/*.h; do
		u=${f##*/}
		u=${u%.*}
		[[ -n ${pos[$u]:-} ]] && continue
		echo "# $u (module/${f##*/}) is not in the units table"
		bad=1
	done
	for u in "${order[@]}"; do
		[[ -f $m/$u.c || -f $m/$u.h ]] && continue
		echo "# the units table names $u, which module/ does not have"
		bad=1
	done
	while read -r u doc; do
		documented[$u]=$doc
	done < <(uses "$rst")
	for u in "${order[@]}"; do
		[[ -f $m/$u.c ]] || continue
		act=$(actual "$m" "$u" | tr '\n' ' ')
		act=${act% }
		doc=$(tr ' ' '\n' <<<"${documented[$u]:-}" | grep -v '^none$' |
		      grep . | sort -u | tr '\n' ' ')
		doc=${doc% }
		if [[ -z ${documented[$u]+set} ]]; then
			echo "# $u.c has no row in the uses table (it uses: ${act:-none})"
			bad=1
		elif [[ $act != "$doc" ]]; then
			echo "# $u.c uses: ${act:-none}; the table says: ${doc:-none}"
			bad=1
		fi
		for f in $act; do
			((pos[$f] > pos[$u])) && continue
			echo "# $u uses $f, which is not below it in the units table"
			bad=1
		done
	done
	return $bad
}

rst=$repo/Documentation/design.rst
# The units table renders: no unit's name is wider than its column (the
# border's first run); reST refuses text in the margin between columns.
overflow=$(section "$rst" | awk '/^=+  +=+$/ { n++; if (n == 1) w = index($0, " ") - 1; next }
	n == 2 && /^[a-z_]/ { if (length($1) > w) print $1 }
	n == 3 { exit }')
if [[ -z $overflow ]]; then
	ok "design.rst's units table: every name fits its column"
else
	echo "# wider than the column: $overflow"
	not_ok "design.rst's units table: every name fits its column"
fi
if out=$(check "$repo/module" "$rst"); then
	ok "design.rst's units and uses tables match module/'s includes, each use downwards"
else
	printf '%s\n' "$out"
	not_ok "design.rst's units and uses tables match module/'s includes, each use downwards"
fi

# The same check on two broken copies: ring.c (near the bottom) using
# dev (near the top); then track.c using ring, which it does not.
rm -rf "$dir/mod"
cp -r "$repo/module" "$dir/mod"
sed -i '0,/^#include "/s//#include "dev.h"\n&/' "$dir/mod/ring.c"
out=$(check "$dir/mod" "$rst")
if [[ $? != 0 && $out == *"# ring uses dev, which is not below"* ]]; then
	ok "the check fails on a use that goes upwards"
else
	not_ok "the check fails on a use that goes upwards"
fi
rm -rf "$dir/mod"
cp -r "$repo/module" "$dir/mod"
sed -i '0,/^#include "/s//#include "ring.h"\n&/' "$dir/mod/track.c"
out=$(check "$dir/mod" "$rst")
if [[ $? != 0 && $out =~ \#\ track\.c\ uses:\ [a-z\ ]*ring ]]; then
	ok "the check fails on a use the table does not name"
else
	not_ok "the check fails on a use the table does not name"
fi
rm -rf "$dir/mod"

# The check VM pins every tracepoint module/ hooks (tests/qemu/init.sh,
# pin_tracepoints): one left out has its text rewritten live whenever a
# test flips netlat's groups, which multi-threaded TCG can crash on
# ("Oops: int3" in tcp_rcv_established when tcp_probe was not pinned).
# hooked <module dir>: the tracepoints of the NETLAT_TP* rows
hooked() {
	sed -n 's/.*NETLAT_TP[A-Z_]*(\([a-z_0-9]*\),.*/\1/p' "$1"/*.c | sort -u
}
# pinned <init.sh>: the events of pin_tracepoints()'s "for ev in" list
pinned() {
	awk '/^pin_tracepoints\(\)/ { on = 1 }
	     on && /for ev in/ { list = 1; sub(/.*for ev in/, "") }
	     list { line = $0; sub(/; do.*/, "", line); gsub(/\\/, "", line)
		    n = split(line, w, /[ \t]+/)
		    for (i = 1; i <= n; i++) if (w[i] != "") { sub(/.*\//, "", w[i]); print w[i] }
		    if ($0 ~ /; do/) exit }' "$1" | sort -u
}
# unpinned <module dir> <init.sh>: hooked tracepoints the VM does not pin
unpinned() {
	comm -23 <(hooked "$1") <(pinned "$2")
}
init=$repo/tests/qemu/init.sh
out=$(unpinned "$repo/module" "$init")
if [[ -z $out && -n $(hooked "$repo/module") ]]; then
	ok "the check VM pins every tracepoint module/ hooks"
else
	echo "# not pinned in tests/qemu/init.sh: $(tr '\n' ' ' <<<"$out")"
	not_ok "the check VM pins every tracepoint module/ hooks"
fi
sed 's|tcp/tcp_probe||' "$init" >"$dir/init.sh"
if [[ $(unpinned "$repo/module" "$dir/init.sh") == tcp_probe ]]; then
	ok "the pin check fails on a tracepoint left out"
else
	not_ok "the pin check fails on a tracepoint left out"
fi

# The ABI's layout (uapi/netlat_layout.h, which the module's uarg.c and the
# selftests compile): its member offsets are what tests/abi/gen.py writes
# from the uapi now (so a member or a struct added is covered), it holds
# on the host's compiler, and it stops a build whose uapi has two members
# of the record header swapped (no size changes).
layout_ok() {	# <uapi dir>: the layout file compiles against that uapi
	echo '#include "netlat_layout.h"' |
		gcc -fsyntax-only -I "$1" -I "$repo/uapi" -x c - 2>"$dir/abi.err"
}
if python3 "$repo/tests/abi/gen.py" "$repo" - >"$dir/layout.h" &&
   cmp -s "$dir/layout.h" "$repo/uapi/netlat_layout.h" && layout_ok "$repo/uapi"; then
	ok "netlat_layout.h's offsets are tests/abi/gen.py's, and the uapi has its layout"
else
	diff "$dir/layout.h" "$repo/uapi/netlat_layout.h" | head -n 5 | sed 's/^/# /'
	not_ok "netlat_layout.h's offsets are tests/abi/gen.py's, and the uapi has its layout"
fi
mkdir -p "$dir/uapi/linux"
awk '/^struct netlat_rec_hdr \{/ { on = 1 }
     on && /__u8 magic;/ { held = $0; next }
     on && /__u8 version;/ { print; print held; on = 0; next }
     { print }' "$repo/uapi/linux/netlat.h" >"$dir/uapi/linux/netlat.h"
if ! cmp -s "$dir/uapi/linux/netlat.h" "$repo/uapi/linux/netlat.h" &&
   ! layout_ok "$dir/uapi" && grep -q '"rec_hdr.magic"' "$dir/abi.err"; then
	ok "netlat_layout.h stops the build on a member moved"
else
	not_ok "netlat_layout.h stops the build on a member moved"
fi

echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
