#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: GPL-2.0
#
# /init of the netlat test VM (busybox-static initramfs built by lib.sh).
# The job comes from the kernel command line: netlat_job=check|demo|bench,
# or check-single for the selftests of the single-threaded TCG VM (no dot
# in the name: "netlat.job" would be handed to the module as a parameter).
# The last line is always "NETLAT-VM-DONE status=N"; the host treats a
# missing line as a failure. Status bits: 1 tests failed, 2 kernel trouble
# (module load/unload, dmesg, taint).
#
# Note: busybox sh runs its own applets before anything in PATH.

/bin/busybox --install -s /bin
export PATH=/bin

TROUBLE_RE=$(cat /trouble_re)	# lib.sh's list
# Taint bits allowed: O (out-of-tree module, 4096), E (unsigned module,
# 8192), K (a live patch, 32768: tcp.synack_retransmit_live_patched
# loads one).
TAINT_OK=45056
status=0

trouble() {
	echo "NETLAT-VM-TROUBLE $*"
	status=$((status | 2))
}

mount_fs() {
	mount -t proc proc /proc
	mount -t sysfs sys /sys
	mount -t devtmpfs dev /dev
	# tracefs/debugfs: benchmarks and probe work look there.
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	# The debug kernel's failslab and fail_page_alloc fail nothing, not
	# even a fail-nth count (it counts every check that is not filtered
	# out first), until a test arms them (selftests/netlat_fault_test).
	[ -w /sys/kernel/debug/failslab/cache-filter ] &&
		echo Y >/sys/kernel/debug/failslab/cache-filter
	[ -w /sys/kernel/debug/fail_page_alloc/min-order ] &&
		echo 11 >/sys/kernel/debug/fail_page_alloc/min-order
}

# cmdline_arg <name> <default>: value of name=... on the kernel command line.
cmdline_arg() {
	read -r cmdline </proc/cmdline
	for arg in $cmdline; do
		case $arg in "$1"=*) echo "${arg#*=}"; return ;; esac
	done
	echo "$2"
}
job_name() { cmdline_arg netlat_job check; }

# The NICs are not needed by the tests yet; a failing load is only noted.
load_virtio() {
	while read -r m; do
		insmod "/lib/modules/$m.ko" || echo "note: insmod $m failed"
	done </lib/modules/order
}

load_netlat() {
	insmod /netlat.ko || { trouble "insmod netlat.ko failed"; return 1; }
	# devtmpfs creates the node asynchronously.
	for i in 1 2 3 4 5 6 7 8 9 10; do
		[ -c /dev/netlat ] && return 0
		sleep 1
	done
	trouble "/dev/netlat did not appear"
	return 1
}

# The pause lets timers, RCU callbacks or work the module left behind run
# (and oops) before the kernel is judged.
unload_netlat() {
	# an armed ftrace hook holds the module (rmmod: in use)
	[ -c /dev/netlat ] && netlat probes --enable none >/dev/null
	rmmod netlat || trouble "rmmod netlat failed"
	[ -e /sys/module/netlat ] && trouble "netlat still loaded after rmmod"
	sleep 1
}

# kmemleak (debug kernel only). Before the module is loaded: scan and
# mark what is already suspected as known, so that only later leaks count.
KMEMLEAK=/sys/kernel/debug/kmemleak
kmemleak_baseline() {
	[ -w $KMEMLEAK ] || return 0
	echo scan >$KMEMLEAK && echo clear >$KMEMLEAK
}

# After rmmod: objects must be 5 s old to be reported, hence the pause.
# A leak is netlat's if its report names netlat (a function, or a test
# process "netlat_*") or its backtrace holds a raw address that no longer
# resolves to a symbol (code of an unloaded module: netlat or the test
# modules built with it); other suspects are only shown.
kmemleak_check() {
	[ -w $KMEMLEAK ] || return 0
	sleep 6
	echo scan >$KMEMLEAK
	cat $KMEMLEAK >/tmp/kmemleak
	n=$(grep -c '^unreferenced object' /tmp/kmemleak)
	echo "kmemleak: $n suspected leak(s) after rmmod netlat"
	if grep -qE 'netlat|\] 0xffffffff[0-9a-f]{8}$' /tmp/kmemleak; then
		cat /tmp/kmemleak
		trouble "kmemleak reports memory leaked by netlat (above)"
	elif [ "$n" -gt 0 ]; then
		head -n 40 /tmp/kmemleak | sed 's/^/kmemleak (not netlat): /'
	fi
}

# Kernel log and taint after everything ran (and was unloaded).
check_kernel() {
	if dmesg | awk -v re="$TROUBLE_RE" -v ctx=12 -f /trouble.awk | grep .; then
		trouble "kernel log shows problems (above)"
	fi
	taint=$(cat /proc/sys/kernel/tainted)
	if [ $((taint & ~TAINT_OK)) -ne 0 ]; then
		trouble "kernel tainted: $taint"
	fi
}

# Each test prints TAP between markers that the host parses; exit code 4
# is kselftest's "skipped". netlat_tests=a,b on the command line (set with
# NETLAT_APPEND) runs only those tests, for quick iteration. The tests in
# netlat_single_tests= run in job check-single (the single-threaded TCG
# VM, see lib.sh), all others in job check.
run_tests() {
	only=$(cmdline_arg netlat_tests '')
	single=$(cmdline_arg netlat_single_tests '')
	for t in /bin/*_test; do
		[ -x "$t" ] || continue
		name=${t##*/}
		case ",$only," in ,,|*",$name,"*) ;; *) continue ;; esac
		case ",$single," in
		*",$name,"*) [ "$job" = check-single ] || continue ;;
		*) [ "$job" = check ] || continue ;;
		esac
		echo "NETLAT-TAP-BEGIN $name"
		"$t"
		rc=$?
		echo "NETLAT-TAP-END $name rc=$rc"
		case $rc in 0|4) ;; *) status=$((status | 1)) ;; esac
	done
}

# Put eth0 and eth1 (one qemu hub) into namespaces "a" and "b" and ping
# across: real virtio_net TX and RX for the probes. Namespaces are held
# by background sleeps; busybox ip has no "netns" command.
NS_A='' NS_B=''
setup_netns() {
	unshare -n sleep 100000 & NS_A=$!
	unshare -n sleep 100000 & NS_B=$!
	sleep 1
	ns_nic "$NS_A" eth0 192.0.2.1/24 && ns_nic "$NS_B" eth1 192.0.2.2/24
}
# ns_nic <ns-pid> <dev> <addr>: move a NIC into a namespace and bring it up.
ns_nic() {
	ip link set "$2" netns "$1" &&
		in_ns "$1" ip addr add "$3" dev "$2" &&
		in_ns "$1" ip link set "$2" up &&
		in_ns "$1" ip link set lo up
}
in_ns() { ns=$1; shift; nsenter -t "$ns" -n "$@"; }

# Multi-threaded TCG can run a stale translation of kernel text that the
# other vCPU has just rewritten (lib.sh, SINGLE_TCG_TESTS): an INT3 that is
# no longer there. Adding or removing a tracepoint's probe rewrites text
# only when its number of probes goes 0<->1 (the static key) or 1<->2 (the
# static call: one probe is called directly, more through the iterator);
# from 2 up it swaps an RCU pointer. So two ftrace instances, tracing off,
# keep two probes on each tracepoint netlat uses, before netlat loads:
# its groups going on and off in the tests then rewrite no text there
# (the hottest sites, sched_switch and sched_wakeup, died so on 6.12).
pin_tracepoints() {
	for inst in netlat_pin1 netlat_pin2; do
		d=/sys/kernel/tracing/instances/$inst
		mkdir -p "$d" 2>/dev/null && echo 0 >"$d/tracing_on" || return 0
		echo 4 >"$d/buffer_size_kb"	# nothing is ever written
		for ev in sched/sched_switch sched/sched_wakeup net/net_dev_queue \
			net/net_dev_start_xmit net/netif_receive_skb \
			net/napi_gro_receive_entry napi/napi_poll \
			skb/kfree_skb sock/sk_data_ready sock/sock_recv_length \
			tcp/tcp_destroy_sock tcp/tcp_probe; do
			[ -e "$d/events/$ev/enable" ] &&
				echo 1 >"$d/events/$ev/enable"
		done
	done
	echo "tracepoints held by two ftrace instances:" \
		"$(tr '\n' ' ' <"$d/set_event")"
}

job_check() {
	[ "$job" = check ] && pin_tracepoints
	kmemleak_baseline
	load_netlat || return
	run_tests
	unload_netlat
	kmemleak_check
}

# A failing reader command fails the demo (status 1): it doubles as a smoke
# test of the tools.
demo_fail() { echo "demo: $* failed"; status=$((status | 1)); }
# tcp_transfer <KiB>: one TCP connection from namespace a to b over the
# virtio NICs, checked by the bytes the receiver got. busybox nc gives up
# its connection when its own stdin ends, so the listener's stdin is a
# FIFO held open until the sender is done.
tcp_transfer() {
	rm -f /tmp/nc_hold && mkfifo /tmp/nc_hold
	in_ns "$NS_B" nc -l -p 5001 </tmp/nc_hold | wc -c >/tmp/nc_bytes &
	srv=$!
	exec 9>/tmp/nc_hold
	sleep 1
	dd if=/dev/zero bs=1024 count="$1" 2>/dev/null |
		in_ns "$NS_A" nc 192.0.2.2 5001
	wait "$srv"
	exec 9>&-
	got=$(cat /tmp/nc_bytes)
	echo "demo: the receiver got $got of $(($1 * 1024)) bytes"
	[ "$got" -eq $(($1 * 1024)) ] || demo_fail "the $1 KiB TCP transfer"
}

# save_file <path>: hand one file to the host on the second serial port,
# which demo.sh connects to a file under build/demo/ (raw: byte for byte).
save_file() {
	if [ -c /dev/ttyS1 ] && stty -F /dev/ttyS1 raw -echo 2>/dev/null &&
		cat "$1" >/dev/ttyS1; then
		echo "--- $1 ($(wc -c <"$1") bytes) went to the host"
	else
		echo "--- $1 stays in the VM: no second serial port"
	fi
}

DEMO_GROUPS=sendmsg,push,skb,xmit,retrans,ack,dev,virtio_tx,virtio_rx

# The receive path: the same messages to a reader blocked in recv() (port
# 5101) and to one busy-polling (5102), over the
# virtio NICs. netlat_rxwait checks the bytes each got and prints its own
# SO_TIMESTAMPNS view of the wait; the report shows netlat's, for both
# flows and for each port alone.
demo_rx_wait() {
	echo "--- the receive path: a blocking reader beside a busy-polling one, 200 messages of 1000 bytes each, 5 ms apart (netlat record, then report)"
	netlat probes --enable rx,rx_sched >/dev/null || {
		demo_fail "netlat probes --enable rx,rx_sched"
		return
	}
	missed0=$(netlat probes | sed -n 's/^nmissed *//p')
	# recording until the receivers are done, however long TCG takes
	netlat record -o /tmp/rxcap &
	rec_pid=$!
	sleep 1
	netlat_rxwait "/proc/$NS_A/ns/net" "/proc/$NS_B/ns/net" 192.0.2.2 5101 \
		200 1000 5 || demo_fail "the receivers (netlat_rxwait)"
	sleep 1
	kill -TERM "$rec_pid"
	wait "$rec_pid" || demo_fail "netlat record"
	missed1=$(netlat probes | sed -n 's/^nmissed *//p')
	echo "demo: probe hits the kernel skipped meanwhile: $((missed1 - missed0)) (records of those hits are missing from the capture)"
	netlat report /tmp/rxcap || demo_fail "netlat report of the receivers"
	# each reader alone: the blocked one waited for wakeups, the busy one
	# never blocked, so it has no wakeup rows at all
	for p in 5101 5102; do
		if [ "$p" = 5101 ]; then who=blocking; else who=busy-polling; fi
		echo "--- netlat report --port $p: the $who reader's receive stages alone"
		out=$(netlat report --port "$p" /tmp/rxcap) ||
			demo_fail "netlat report --port $p"
		printf '%s\n' "$out" | sed -n '/receive stages/,/^$/p'
		printf '%s\n' "$out" | grep -q '^queue>user' ||
			demo_fail "a queue>user row for port $p"
		if printf '%s\n' "$out" | grep -q '^wakeup>run'; then
			[ "$p" = 5101 ] || demo_fail "the busy reader's report (wakeup>run rows, yet it never blocked)"
		else
			[ "$p" = 5102 ] || demo_fail "the blocking reader's report (no wakeup>run rows)"
		fi
	done
	netlat probes --enable "$DEMO_GROUPS" >/dev/null ||
		netlat probes --enable sendmsg,push,skb,xmit,retrans,ack,dev >/dev/null ||
		demo_fail "netlat probes"
}
job_demo() {
	pin_tracepoints
	load_netlat || return
	setup_netns || echo "note: netns setup failed"
	netlat probes --enable "$DEMO_GROUPS" ||
		netlat probes --enable sendmsg,push,skb,xmit,retrans,ack,dev ||
		demo_fail "netlat probes"
	echo "--- netlat tail (first 40 records) while markers, a ping and TCP run"
	netlat tail -n 40 --duration 6 &
	tail_pid=$!
	sleep 1
	for i in 1 2 3; do echo "hello-$i" >/dev/netlat; done
	in_ns "$NS_A" ping -c 2 192.0.2.2 >/dev/null
	tcp_transfer 16
	wait "$tail_pid" || demo_fail "netlat tail"
	echo "--- netlat record (4 s) of a 512 KiB TCP transfer, then netlat report"
	netlat record -o /tmp/cap --duration 4 &
	rec_pid=$!
	sleep 1
	echo "transfer-start" >/dev/netlat
	tcp_transfer 512
	echo "transfer-end" >/dev/netlat
	wait "$rec_pid" || demo_fail "netlat record"
	netlat report /tmp/cap || demo_fail "netlat report"
	echo "--- netlat report --html: the same capture as one HTML page"
	netlat report --html /tmp/cap.html /tmp/cap || demo_fail "netlat report --html"
	save_file /tmp/cap.html
	echo "--- netlat flight: overwrite mode; a marker tagged INCIDENT freezes the last records"
	netlat flight -d /tmp/flight --trigger marker=INCIDENT --post 300 \
		--count 1 &
	fl_pid=$!
	sleep 1
	tcp_transfer 64
	echo "INCIDENT: the demo pretends something broke" >/dev/netlat
	wait "$fl_pid" || demo_fail "netlat flight"
	ls -l /tmp/flight
	netlat report /tmp/flight/*.snap || demo_fail "netlat report of a snapshot"
	demo_rx_wait
	echo "--- the packet level: the kernel follows each packet, both ways (every group on), and keeps the histograms"
	netlat probes --enable all >/dev/null || demo_fail "netlat probes --enable all"
	netlat config --level packets --slow 5ms || demo_fail "netlat config --level"
	tcp_transfer 256
	netlat stat --hist || demo_fail "netlat stat --hist"
	netlat config --level events || demo_fail "netlat config --level events"
	kill "$NS_A" "$NS_B" 2>/dev/null
	unload_netlat
}

# The two-VM join test (xhost.sh): this VM is host A (the client,
# 192.0.2.1) or B (the server, 192.0.2.2) of a redis-benchmark against a
# redis-server across the host's relay, each recording its own capture at
# the packet level; the capture leaves on the second serial port, the
# third answers the host's clock probes. B's clock runs 1000 ppm fast
# (adjtimex: CLOCK_MONOTONIC follows it), which the join must find.
xhost_fail() { echo "xhost: $* failed"; status=$((status | 1)); }
job_xhost() {
	role=${job#xhost-}
	if [ "$role" = a ]; then me=192.0.2.1; peer=192.0.2.2; else me=192.0.2.2; peer=192.0.2.1; fi
	echo "xhost: host $role, $me"
	ip link set lo up
	{ ip addr add "$me/24" dev eth0 && ip link set eth0 up; } || xhost_fail "eth0"
	ip addr show dev eth0 | sed 's/^/xhost: /'
	# the slew first: the probes see one rate (tick 10010 us: +1000 ppm)
	[ "$role" = b ] && { adjtimex -t 10010 >/dev/null || xhost_fail "adjtimex"; }
	netlat_clockecho /dev/ttyS2 &
	echo_pid=$!
	load_netlat || return
	netlat probes --enable all >/dev/null || xhost_fail "netlat probes"
	# --acks on: B's pure ACKs of A's bulk transfer carry their ACKs
	netlat config --level packets --acks on >/dev/null || xhost_fail "netlat config"
	netlat record -o /tmp/cap &
	rec_pid=$!
	echo "xhost: recording"
	if [ "$role" = b ]; then
		# A's ping-pong after the benchmark (xhost.sh's XPING_N requests)
		netlat_xping server 7001 </dev/null &
		xp=$!
		# A's bulk transfer: B sends nothing back but pure ACKs
		netlat_xping sink 7002 </dev/null &
		bulk=$!
		redis-server --bind "$me" --port 6379 --save '' --appendonly no \
			--protected-mode no --daemonize no --dir /tmp \
			</dev/null >/tmp/redis.log 2>&1 &
		srv=$!
		# until A says it is done (or 10 minutes)
		timeout 600 nc -l -p 7000 </dev/null >/dev/null || xhost_fail "waiting for A"
		kill "$srv"
		# the client's close ended it, before A's "done" (a little later here)
		i=0
		while kill -0 "$xp" 2>/dev/null && [ $i -lt 5 ]; do sleep 1; i=$((i + 1)); done
		if kill -0 "$xp" 2>/dev/null; then
			kill "$xp"
			xhost_fail "xping server (no client)"
		else
			wait "$xp" || xhost_fail "xping server"
		fi
		wait "$bulk" || xhost_fail "bulk receiver"
	else
		i=0
		until ping -c 1 -W 1 "$peer" >/dev/null 2>&1 &&
			timeout 30 redis-benchmark -h "$peer" -n 1 -c 1 -t set \
				</dev/null >/dev/null 2>&1; do
			i=$((i + 1))
			[ $i -lt 300 ] || { xhost_fail "reaching B"; break; }
			[ $((i % 20)) = 1 ] && ip -s link show dev eth0 | sed 's/^/xhost: /'
			sleep 1
		done
		echo "xhost: B answers; the benchmark"
		sleep 1
		redis-benchmark -h "$peer" -c 10 -n 15000 -d 100 -t set,get --csv \
			</dev/null || xhost_fail "redis-benchmark"
		# the server's own count of what it read, this request included:
		# the join's A>B bytes must equal it
		redis-cli -h "$peer" INFO stats </dev/null | tr -d '\r' |
			sed -n 's/^total_net_input_bytes:\([0-9]*\)$/xhost: redis read \1 bytes/p'
		# each request's own round trip, for xhost check to add up its joined
		# parts against; on B's port 7001, apart from redis's
		netlat_xping client "$peer" 7001 200 </dev/null || xhost_fail "xping"
		# 1 MiB one way (xhost.sh's BULK_BYTES): ACKs only come back
		netlat_xping bulk "$peer" 7002 1048576 </dev/null || xhost_fail "bulk"
		sleep 1
		# 5 bytes, which xhost.sh counts beside redis's
		echo "done" | nc "$peer" 7000 || xhost_fail "telling B"
	fi
	sleep 1
	kill -TERM "$rec_pid"
	wait "$rec_pid" || xhost_fail "netlat record"
	kill "$echo_pid" 2>/dev/null
	netlat config --level events >/dev/null
	netlat probes --enable none >/dev/null
	save_file /tmp/cap
	unload_netlat
}

# The path this kernel takes: each hook and the mechanism it has here
# (NETLAT_IOC_HOOKS), at the packet level with every group on, what the
# series measure; then the events level with no group, as loaded.
bench_hooks() {
	netlat probes --enable all >/dev/null &&
		netlat config --level packets >/dev/null &&
		netlat probes --hooks | sed "s/^/bench: hooks $(uname -r): /" ||
		status=$((status | 1))
	netlat config --level events >/dev/null
	netlat probes --enable none >/dev/null
}

# netlat_bench_quick=1 on the command line (NETLAT_APPEND): only the TCP
# bench, one round of 1 s per mode, for trying the bench itself;
# netlat_bench_only=LIST: only the benches LIST names (comma-separated:
# server, gso, virtio, rx, 1seg; tx is gso,virtio,1seg).
job_bench() {
	quick=$(cmdline_arg netlat_bench_quick 0)
	only=$(cmdline_arg netlat_bench_only '')
	tcp_args=''
	[ "$quick" = 1 ] && tcp_args='-k 1 -s 1'
	# netlat_bench_rounds=N (1..16), netlat_bench_secs=S: the TCP bench's
	# rounds and seconds per mode instead (e.g. many short rounds, to
	# repeat its probe switches)
	rounds=$(cmdline_arg netlat_bench_rounds '')
	[ -n "$rounds" ] && tcp_args="$tcp_args -k $rounds"
	secs=$(cmdline_arg netlat_bench_secs '')
	[ -n "$secs" ] && tcp_args="$tcp_args -s $secs"
	[ -n "$only" ] && tcp_args="$tcp_args -t $only"
	# netlat_bench_keys=N: the packet modes keep histograms by key too
	# (NETLAT_KEY_* bits, 1: the port); a baseline module does not
	keys=$(cmdline_arg netlat_bench_keys '')
	[ -n "$keys" ] && tcp_args="$tcp_args -K $keys"
	# the baseline module (NETLAT_BENCH_BASE in bench.sh)
	[ -f /netlat-base.ko ] && tcp_args="$tcp_args -b /netlat-base.ko"
	# netlat_insn=1: qemu counts instructions (bench.sh's plugin); the
	# bench prints the kernel's symbols and module sections for it
	[ "$(cmdline_arg netlat_insn 0)" = 1 ] && tcp_args="$tcp_args -i"
	load_netlat || return
	bench_hooks
	if [ "$quick" = 1 ]; then
		echo "netlat_bench_quick=1: netlat_bench skipped"
	elif [ -x /bin/netlat_bench ]; then
		/bin/netlat_bench || status=$((status | 1))
	else
		echo "netlat_bench not built: skipped"
	fi
	# TCP throughput unloaded / idle / probes on: it (re)loads the module.
	if [ -x /bin/netlat_tcp_bench ]; then
		# shellcheck disable=SC2086 # options, one a word
		/bin/netlat_tcp_bench $tcp_args || status=$((status | 1))
	fi
	unload_netlat
}

mount_fs
job=$(job_name)
echo	# the firmware leaves the console mid-line
echo "NETLAT-VM-START job=$job kernel=$(uname -r)"
load_virtio
case $job in
check|check-single) job_check ;;
demo) job_demo ;;
bench) job_bench ;;
xhost-a|xhost-b) job_xhost ;;
*) echo "unknown job $job"; status=$((status | 1)) ;;
esac
check_kernel
echo "NETLAT-VM-DONE status=$status"
poweroff -f
