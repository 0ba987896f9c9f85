#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: boot the newest supported kernel (or NETLAT_KVERS) and run
# /bin/netlat_bench (built by selftests/) in it. Figures are printed, not
# asserted. Without a netlat_bench binary there is nothing to do. The TCP
# bench runs bpftrace on the same hooks as a peer when the host has it
# (installed here, see BENCH_PKGS in lib.sh).
#
# The guest's instructions are counted by a TCG plugin of the project's
# (tests/insn/insn_plugin.c, built here with the host's gcc); the TCP
# bench windows each transfer (selftests/netlat_insn.h) and, after the VM,
# tests/insn/insn_report.c prints instructions per data segment for every
# series and mode against the module unloaded in the same round, where
# they go, and the packet level against its budget (INSN_BUDGET percent,
# the hooks alone INSN_HOOKS_BUDGET); also kept in
# build/logs/<kver>-bench-insn.txt. NETLAT_BENCH_INSN=0 runs without it.
#
# NETLAT_BENCH_TOP=N: the report lists N functions (1..64) where it
# lists the top ones.
#
# NETLAT_BENCH_BASE=<git rev> (e.g. main): the module of that commit goes
# into the VM too, and the TCP bench runs its modes with it as well, in
# the same rounds ("base" figures beside this tree's).

set -euo pipefail
LANE_KERNELS=newest
# bpftrace (the peer) and its libraries are in the bench's initramfs
LANE_BENCH=1
VM_MEM=3G
INSN_BUDGET=3
INSN_HOOKS_BUDGET=1.5
# shellcheck source=tests/qemu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

INSN=$BUILD/insn

# The plugin and the report, from tests/insn/ (the host's gcc; the plugin
# declares the few QEMU plugin API functions it calls).
build_insn_tools() {
	mkdir -p "$INSN"
	gcc -O2 -Wall -Wextra -shared -fPIC -fvisibility=hidden \
		-o "$INSN/insn_plugin.so" "$REPO/tests/insn/insn_plugin.c" &&
	gcc -O2 -Wall -Wextra -o "$INSN/insn_report" "$REPO/tests/insn/insn_report.c"
}

# insn_hooks <source tree>: "kind hook handler" of each probe table entry
# of its module/*.c (NETLAT_KP/KRP/TP and their _AT forms; a tracepoint's
# name quoted, as older trees have it, or not).
insn_hooks() {
	# shellcheck disable=SC2016 # perl's variables
	perl -0777 -ne '
		while (/NETLAT_(KP|KRP|TP)(?:_AT)?\(\s*((?:[A-Z_]+\s*)?"[^"]*"|\w+)\s*,\s*\w+(?:\s*\|\s*\w+)*\s*,\s*(\w+)(?:\s*,\s*(\w+))?/g) {
			my ($k, $n, $a, $b) = ($1, $2, $3, $4);
			$n =~ s/.*"([^"]*)"$/$1/;
			$n =~ s/^://;
			if ($k eq "KP") { print "kprobe $n $a\n" }
			elsif ($k eq "TP") { print "tracepoint $n $a\n" }
			else { print "kretprobe $n $a\nkretprobe-ret $n $b\n" }
		}' "$1"/module/*.c
}

# insn_report <kver> <console log> <plugin output>: the figures.
insn_report() {
	local k=$1 log=$2 out=$3 mods m f file args=()
	insn_hooks "$REPO" >"$INSN/hooks.txt"
	[[ -z ${INITRAMFS_BASE_KO:-} ]] || insn_hooks "$BUILD/base-src" >>"$INSN/hooks.txt"
	# `objdump -t` of every module the guest placed
	mods=$(sed -n 's/.*NETLAT-INSN-MOD w=[0-9]* [^ ]* \([^ ]*\) .*/\1/p' "$log" | sort -u)
	for file in $mods; do
		case $file in
		/netlat.ko) f=$(moddir "$k")/netlat.ko ;;
		/netlat-base.ko) f=${INITRAMFS_BASE_KO:-} ;;
		*)
			f=$(find "$(kdir "$k")/lib/modules/$k/kernel" \
				\( -name "$file.ko*" -o -name "${file//_/-}.ko*" \) | head -n 1)
			if [[ $f == *.xz ]]; then
				xz -dc "$f" >"$INSN/$file.ko"
				f=$INSN/$file.ko
			fi
			;;
		esac
		[[ -n $f && -f $f ]] || continue
		m=$INSN/${file//\//_}.syms
		objdump -t "$f" >"$m"
		args+=(-o "$file=$m")
	done
	"$INSN/insn_report" -c "$log" -p "$out" -H "$INSN/hooks.txt" \
		-b "$INSN_BUDGET" -B "$INSN_HOOKS_BUDGET" \
		${NETLAT_BENCH_TOP:+-t "$NETLAT_BENCH_TOP"} "${args[@]}"
}

setup_host
build_userspace
bench=$REPO/selftests/netlat_bench
if [[ ! -x $bench ]]; then
	echo "selftests/netlat_bench was not built: no benchmark to run (skipped)"
	exit 0
fi
use_insn=
if [[ ${NETLAT_BENCH_INSN:-1} != 0 ]]; then
	if [[ ${NETLAT_BENCH_MTTCG:-} == 1 ]]; then
		log "NETLAT_BENCH_MTTCG=1: no instruction counts (the plugin's counters are exact only under single-threaded TCG)"
	elif build_insn_tools; then
		use_insn=1
	else
		log "the instruction-count plugin did not build: throughput figures only"
	fi
fi
for k in "${KVERS[@]}"; do
	# NETLAT_BENCH_BASE=<git rev>: that commit's module is the baseline
	# the TCP bench alternates with this tree's, in the same VM run.
	INITRAMFS_BASE_KO=
	if [[ -n ${NETLAT_BENCH_BASE:-} ]]; then
		INITRAMFS_BASE_KO=$(build_base_module "$k" "$NETLAT_BENCH_BASE") ||
			die "$k: could not build the baseline module of $NETLAT_BENCH_BASE"
	fi
	export INITRAMFS_BASE_KO
	initrd=$(prepare_vm "$k" bench "${USER_BINS[@]}" "$bench" \
		$(find "$REPO/selftests" -maxdepth 1 \( -name netlat_tcp_bench \
			-o -name netlat_insn_mark \) -executable))
	VM_QEMU_ARGS=()
	insn_out=$LOGS/$k-bench.insn
	rm -f "$insn_out"
	append=${NETLAT_APPEND:-}
	if [[ -n $use_insn ]]; then
		VM_QEMU_ARGS=(-plugin "$INSN/insn_plugin.so,out=$insn_out")
		# the bench prints the symbols the report names addresses by
		append+=" netlat_insn=1"
	fi
	NETLAT_APPEND=$append run_vm "$k" "$initrd" "${NETLAT_VM_TIMEOUT:-2400}" bench show
	[[ $(vm_status "$k" bench) == 0 ]] || die "$k: the bench VM did not finish cleanly"
	if [[ -n $use_insn ]]; then
		insn_report "$k" "$(vm_log "$k" bench)" "$insn_out" |
			tee "$LOGS/$k-bench-insn.txt"
	fi
done
