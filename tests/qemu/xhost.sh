#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two VMs, each its own host with its own clock, joined by netlat join
# (Documentation/join.rst): A runs redis-benchmark against a redis-server
# on B; their NICs are QEMU UDP socket netdevs on 127.0.0.1 whose frames pass
# only through tests/qemu/xhost.c's relay, which delays each direction by
# a known amount (asymmetric: A>B more than B>A). B's clock is slewed
# +200 ppm (adjtimex). Each VM records a capture at the packet level and
# hands it to the host on its second serial port; on the third the host
# probes each guest's CLOCK_MONOTONIC (a byte out, the guest's reading
# back: a bound of its clock against the host's). Then `netlat join` of
# the two captures is judged against the probes and the relay (xhost
# check): the join's bound overlaps the probes' in every window, the drift
# is the injected one, no wire time is below the relay's delay less the
# bound; and the bytes joined from A to B are those redis-server says it
# read. Last, A's ping-pong with B (selftests/netlat_xping.c): each
# request's application round trip, on A's clock, must hold the sum of its
# joined parts (xhost check's "xping:" lines). TAP lines, then "N passed,
# N failed".
#
#   tests/qemu/xhost.sh <work dir> [<kernel>]
set -euo pipefail
# the newest bookworm kernel (6.12) unless one is named
LANE_KERNELS=newest
# shellcheck source=tests/qemu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

dir=${1:?usage: xhost.sh <work dir> [<kernel>]}
setup_host
k=${2:-${KVERS[0]}}
rm -rf "$dir" && mkdir -p "$dir"
DELAY_AB_US=3000 DELAY_BA_US=1000
# requests of A's netlat_xping client (tests/qemu/init.sh's job_xhost), of 100 bytes
XPING_N=200 XPING_REQ=100
# A's bulk transfer to B's port 7002 (job_xhost), which B answers with pure ACKs
BULK_BYTES=1048576

gcc -O2 -Wall -Wextra -o "$dir/xhost" "$LANE/xhost.c"
# what make check's build_userspace built (static), else build it
if [[ -x $REPO/selftests/netlat_clockecho && -x $REPO/selftests/netlat_xping &&
	-x $REPO/tools/netlat ]]; then
	user_bins
else
	build_userspace
fi
initrd=$(prepare_vm "$k" xhost "${USER_BINS[@]}")

# free ports: the relay's two and each VM's own
base=$((20000 + RANDOM % 20000))
PA=$base PEER_A=$((base + 1)) PB=$((base + 2)) PEER_B=$((base + 3))

"$dir/xhost" relay "$PA" "$PEER_A" "$PB" "$PEER_B" "$DELAY_AB_US" "$DELAY_BA_US" \
	"$dir/probe-a" "$dir/probe-b" "$dir/probes" "$dir/stop" 2>"$dir/relay.log" &
relay=$!

# vm <a|b> <mac> <local port> <relay port>: one vCPU each (the last -smp
# counts), so two VMs beside the host's relay do not starve each other
vm() {
	local VM_QEMU_ARGS=(-smp 1)
	local VM_NICS=(
		-netdev "socket,id=n1,udp=127.0.0.1:$4,localaddr=127.0.0.1:$3"
		-device "virtio-net-pci,netdev=n1,mac=$2,romfile="
		-serial mon:stdio -serial "file:$dir/cap-$1.nl"
		-chardev "socket,id=tp,path=$dir/probe-$1,server=on,wait=off" -serial chardev:tp)
	run_vm "$k" "$initrd" "${NETLAT_VM_TIMEOUT:-600}" "xhost-$1" || true
}
vm a 52:54:00:00:00:0a "$PEER_A" "$PA" &
va=$!
vm b 52:54:00:00:00:0b "$PEER_B" "$PB" &
vb=$!
wait "$va" "$vb" || true
touch "$dir/stop"
wait "$relay" || true
sed 's/^/# /' "$dir/relay.log"

pass=0 fail=0
for v in a b; do
	st=$(vm_status "$k" "xhost-$v")
	if [[ $st == 0 ]]; then
		echo "ok - VM $v ($k) finished cleanly"
		pass=$((pass + 1))
	else
		echo "not ok - VM $v ($k) finished cleanly (status '${st:-none}'; console in $(vm_log "$k" "xhost-$v"))"
		grep -E 'xhost:|NETLAT-VM-TROUBLE' "$(vm_log "$k" "xhost-$v")" | sed 's/^/#   /' || true
		fail=$((fail + 1))
	fi
done
"$REPO/tools/netlat" join "$dir/cap-a.nl" "$dir/cap-b.nl" 2>&1 | sed 's/^/# /' || true
"$REPO/tools/netlat" join --json --no-packets "$dir/cap-a.nl" "$dir/cap-b.nl" \
	>"$dir/join.json" 2>"$dir/join.err" || true
"$REPO/tools/netlat" join --json --no-packets --asym "$((DELAY_AB_US - DELAY_BA_US))us" \
	"$dir/cap-a.nl" "$dir/cap-b.nl" >"$dir/join-asym.json" 2>>"$dir/join.err" || true
# the xping client's lines on A's console, and the join's packets of its
# flow (one a line) with the line holding the clock's windows
tr -d '\r' <"$(vm_log "$k" xhost-a)" | grep '^xping: ' >"$dir/xping.txt" || true
"$REPO/tools/netlat" join --json "$dir/cap-a.nl" "$dir/cap-b.nl" 2>>"$dir/join.err" |
	grep -E '"windows":\[|"(sport|dport)":7001,' >"$dir/join-xping.json" || true
sed 's/^/# /' "$dir/join.err"
out=$("$dir/xhost" check "$dir/probes" "$dir/join.json" "$DELAY_AB_US" "$DELAY_BA_US" \
	"$dir/join-asym.json" "$dir/xping.txt" "$dir/join-xping.json" "$XPING_N") || true
printf '%s\n' "$out" | grep -v 'passed, .* failed'
# the bytes the server read, by its own count, against the join's A>B
# bytes: those, xping's requests to B's port 7001, the bulk transfer to
# B's port 7002 and the 5 of A's "done\n" to B's port 7000, nothing else
read_bytes=$(tr -d '\r' <"$(vm_log "$k" xhost-a)" |
	sed -n 's/^xhost: redis read \([0-9]*\) bytes$/\1/p' | tail -n 1)
xping_done=$(sed -n 's/^xping: done \([0-9]*\) of .*/\1/p' "$dir/xping.txt" | tail -n 1)
joined_bytes=$(sed -n 's/.*"sender":"A","receiver":"B",[^}]*"joined_bytes":\([0-9]*\).*/\1/p' \
	"$dir/join.json")
what="the ${read_bytes:-no} redis-server read (INFO stats), xping's ${xping_done:-no} requests of $XPING_REQ, the bulk's $BULK_BYTES and A's 5 of \"done\""
if [[ -n $read_bytes && -n $xping_done &&
	$((read_bytes + xping_done * XPING_REQ + BULK_BYTES + 5)) == "${joined_bytes:-}" ]]; then
	echo "ok - A>B: the join's $joined_bytes bytes are $what"
	pass=$((pass + 1))
else
	echo "not ok - A>B: the join's ${joined_bytes:-no} bytes are $what"
	fail=$((fail + 1))
fi
read -r p f < <(printf '%s\n' "$out" | sed -nE 's/^([0-9]+) passed, ([0-9]+) failed.*/\1 \2/p')
echo "$((pass + ${p:-0})) passed, $((fail + ${f:-1})) failed"
