#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build tests against kernel trees configured in ways the lane does not
# boot (#39): a 6.1 tree with kprobes and tracepoints but without the
# function tracer (noftrace.config). netlat must build there with W=1 and
# no warning, its ftrace mechanisms left out (every entry hook a kprobe),
# or stop with one line naming the option. The tree is prepared once per
# machine in $NETLAT_CACHE. TAP lines, then "N passed, N failed".
# Usage: test.sh <work dir>

set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
dir=$1
cache=${NETLAT_CACHE:-$HOME/.cache/netlat}
mkdir -p "$dir" "$cache"
pass=0 fail=0

ok() { echo "ok - $1"; pass=$((pass + 1)); }
not_ok() { echo "not ok - $1"; fail=$((fail + 1)); }
finish() { echo "$pass passed, $fail failed"; exit $((fail != 0)); }

src_tar=/usr/src/linux-source-6.1.tar.xz
key=$({ stat -c '%s %Y' "$src_tar"; cat "$repo/tests/qemu/debug.config" \
	"$here/noftrace.config"; } | md5sum | cut -c1-16)
tree=$cache/noftrace-$key

# tinyconfig + what netlat needs + no function tracer; modules_prepare
prepare_tree() {
	local tmp
	rm -rf "$cache"/noftrace-* "$cache"/.noftrace-tmp.*
	tmp=$(mktemp -d "$cache/.noftrace-tmp.XXXXXX")
	tar -xJf "$src_tar" -C "$tmp" --strip-components=1 &&
	make -C "$tmp" tinyconfig &&
	(cd "$tmp" && scripts/kconfig/merge_config.sh -m .config \
		"$repo/tests/qemu/debug.config" "$here/noftrace.config") &&
	make -C "$tmp" olddefconfig &&
	make -C "$tmp" -j"$(nproc)" modules_prepare &&
	mv "$tmp" "$tree"
}

# under a lock, as the lane's other cached builds: two clones on one
# machine wait for each other's tree instead of breaking it
exec {lock}>"$cache/.noftrace.lock"
flock "$lock"
if [[ ! -f $tree/.config ]]; then
	if ! prepare_tree >"$dir/prepare.log" 2>&1; then
		tail -n 30 "$dir/prepare.log" | sed 's/^/# /'
		not_ok "a 6.1 tree without the function tracer is prepared"
		finish
	fi
fi
cfg=$tree/.config
if grep -q '^CONFIG_FUNCTION_TRACER=y' "$cfg" ||
   ! grep -q '^CONFIG_KPROBES=y' "$cfg" || ! grep -q '^CONFIG_KRETPROBES=y' "$cfg" ||
   ! grep -q '^CONFIG_TRACEPOINTS=y' "$cfg"; then
	not_ok "the tree has kprobes and tracepoints, no function tracer"
	finish
fi
ok "the tree has kprobes and tracepoints, no function tracer"

# netlat from a copy of its sources, as the lane builds it
rm -rf "$dir/src"
mkdir -p "$dir/src"
cp -r "$repo/Kbuild" "$repo/module" "$repo/uapi" "$repo/VERSION" "$dir/src/"
make -C "$tree" M="$dir/src" W=1 modules >"$dir/build.log" 2>&1
rc=$?
# modpost's own warnings are the prepared tree's (no Module.symvers)
warn=$(grep -E '(warning|error):' "$dir/build.log" | grep -v 'modpost' | head -n 10)
if ((rc == 0)) && [[ -z $warn && -f $dir/src/netlat.ko ]]; then
	ok "netlat builds without CONFIG_FUNCTION_TRACER (W=1, no warning)"
elif ((rc != 0)) && [[ $(grep -c 'netlat:.*CONFIG_' "$dir/build.log") == 1 ]]; then
	ok "make stops with one line: $(grep 'netlat:.*CONFIG_' "$dir/build.log")"
	finish
else
	printf '%s\n' "${warn:-$(tail -n 20 "$dir/build.log")}" | sed 's/^/# /'
	not_ok "netlat builds without CONFIG_FUNCTION_TRACER (W=1, no warning)"
	finish
fi
# the fallback is in the object: no ftrace callback, no ftrace_ops use
if nm "$dir/src/netlat.ko" | grep -qE 'netlat_fentry_func|netlat_wrap_func| U (register_ftrace_function|ftrace_set_filter_ip)$'; then
	not_ok "without the function tracer every entry hook is a kprobe (no ftrace code in netlat.ko)"
else
	ok "without the function tracer every entry hook is a kprobe (no ftrace code in netlat.ko)"
fi
finish
