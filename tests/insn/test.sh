#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of make bench's instruction counting (no VM): the plugin
# builds and QEMU accepts it (its exported API version), and insn_report
# turns a known console and plugin output into the figures they imply.
# TAP lines, then "N passed, N failed". Usage: test.sh <work dir>

set -uo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=$1
mkdir -p "$dir"
pass=0 fail=0

ok() { echo "ok - $1"; pass=$((pass + 1)); }
not_ok() { echo "not ok - $1"; fail=$((fail + 1)); }

if gcc -O2 -Wall -Wextra -Werror -shared -fPIC -fvisibility=hidden \
	-o "$dir/insn_plugin.so" "$src/insn_plugin.c" &&
   gcc -O2 -Wall -Wextra -Werror -o "$dir/insn_report" "$src/insn_report.c"; then
	ok "insn: plugin and report build with -Werror"
else
	not_ok "insn: plugin and report build with -Werror"
	echo "$pass passed, $fail failed"
	exit 1
fi

# QEMU loads the plugin (a wrong qemu_plugin_version is refused: no out=
# file) and the plugin refuses arguments it does not know. -S: the machine
# never runs; it is stopped once the plugin had its time to load.
qemu_none() {
	exec qemu-system-x86_64 -accel tcg -M none -display none -monitor none \
		-serial none -nodefaults -S -plugin "$1" </dev/null
}
rm -f "$dir/load.out"
qemu_none "$dir/insn_plugin.so,out=$dir/load.out" >"$dir/qemu.log" 2>&1 &
pid=$!
sleep 3
kill "$pid" 2>/dev/null
wait "$pid"
if [[ -f $dir/load.out ]]; then
	ok "insn: qemu loads the plugin"
else
	not_ok "insn: qemu loads the plugin ($(head -c 300 "$dir/qemu.log"))"
fi
if timeout 60 bash -c "$(declare -f qemu_none); qemu_none '$dir/insn_plugin.so,bogus=1'" \
	>"$dir/qemu2.log" 2>&1; then
	not_ok "insn: an unknown plugin argument stops qemu"
else
	ok "insn: an unknown plugin argument stops qemu"
fi

# Two rounds; in each the module adds, per segment: netlat.ko's handler
# 15 (1 call), the kprobe handler 10, a trampoline 5 = +30 on 1000.
cat >"$dir/console.log" <<'EOT'
bench: hooks 6.12.0-test: hook                             group      mechanism      levels   armed
bench: hooks 6.12.0-test: __tcp_transmit_skb               xmit       fprobe         packets  no
bench: hooks 6.12.0-test: __tcp_transmit_skb               xmit       ftrace         events   yes
NETLAT-KSYM ffffffff81000000 tcp_sendmsg
NETLAT-KSYM ffffffff81000100 kprobe_ftrace_handler
NETLAT-KSYM ffffffff81000200 _etext
NETLAT-INSN-MOD w=1 netlat /netlat.ko .text ffffffffc0001000
NETLAT-INSN w=2 series=gso mode=unloaded round=1 segs=100 mbps=10.0
NETLAT-INSN w=4 series=gso mode=packets round=1 segs=100 mbps=9.0
NETLAT-INSN w=6 series=gso mode=unloaded round=2 segs=200 mbps=10.0
NETLAT-INSN w=8 series=gso mode=packets round=2 segs=200 mbps=8.0
NETLAT-INSN w=9 series=gso mode=base-packets round=2 segs=100 mbps=8.0
NETLAT-INSN w=10 series=server mode=unloaded round=1 segs=100 mbps=1.0
NETLAT-INSN w=11 series=server mode=packets round=1 segs=100 mbps=0.9
EOT
cat >"$dir/plugin.out" <<'EOT'
W 1 7 0
W 2 100000 40
A ffffffff81000000 100000 1000
W 3 9 0
W 4 103000 40
A ffffffff81000000 100000 1000
A ffffffff81000100 1000 100
A ffffffffc0001000 1000 100
A ffffffffc0001008 500 100
A ffffffffd0000000 500 100
W 5 9 0
W 6 200000 80
A ffffffff81000000 200000 2000
W 7 9 0
W 8 206000 80
A ffffffff81000000 200000 2000
A ffffffff81000100 2000 200
A ffffffffc0001000 2000 200
A ffffffffc0001008 1000 200
A ffffffffd0000000 1000 200
W 9 104000 40
A ffffffff81000000 104000 1000
W 10 50000 50000
A ffffffff81000000 50000 500
W 11 52000 50000
A ffffffff81000000 52000 520
EOT
printf '0000000000000000 l     F .text\t0000000000000040 netlat_xmit_pre\n' >"$dir/netlat.syms"
echo "kprobe __tcp_transmit_skb netlat_xmit_pre" >"$dir/hooks.txt"
"$dir/insn_report" -c "$dir/console.log" -p "$dir/plugin.out" \
	-H "$dir/hooks.txt" -o "/netlat.ko=$dir/netlat.syms" >"$dir/report.txt" 2>&1
expect() {
	if grep -qE "$2" "$dir/report.txt"; then
		ok "insn report: $1"
	else
		not_ok "insn report: $1 (no line matching '$2')"
		sed 's/^/#   /' "$dir/report.txt"
	fi
}
expect "baseline per segment" 'gso baseline .*: 1000 kernel instructions per data segment \(median of 2 rounds'
expect "added per segment, paired by round" 'gso packets +1030 +\+30 \[\+30\.\.\+30\] +\+3\.00% .* +0\.850$'
expect "the budget verdict" 'gso budget: the packet level adds \+3\.00% .* budget 3\.0%: within'
expect "where the instructions go" 'gso packets where .*: netlat\.ko \+15, kprobe \+10, trampolines/BPF JIT \+5, total \+30'
expect "this tree against another commit's module" 'gso this tree against NETLAT_BENCH_BASE, packets: -10 per segment \[-10\.\.-10\] \(-1\.00% of the baseline\), throughput ratio 1\.000'
expect "hits and costs per hook, by the path the kernel took" 'gso packets per hook: __tcp_transmit_skb +netlat_xmit_pre +ftrace +1\.000 +15\.0 +15\.0 +30\.0'
# a series whose user space works as much as its kernel (the server
# series): the whole machine's work per unit, kernel and user
expect "the whole machine per unit" 'server whole machine \(kernel \+ user\) per unit: unloaded 1000 '
expect "the whole machine, added" 'server whole machine packets +\+20 \[\+20\.\.\+20\] +\+2\.00%'
if grep -q 'gso whole machine' "$dir/report.txt"; then
	not_ok "insn report: a whole-machine line for a series without user work"
else
	ok "insn report: no whole-machine line for a series without user work"
fi
echo "$pass passed, $fail failed"
((fail == 0))
