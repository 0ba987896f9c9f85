#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: boot the newest supported kernel (or NETLAT_KVERS) and run
# /bin/netlat_bench (built by selftests/) in it. Figures are printed, not
# asserted. Without a netlat_bench binary there is nothing to do. The TCP
# bench runs bpftrace on the same hooks as a peer when the host has it
# (installed here, see BENCH_PKGS in lib.sh).
#
# NETLAT_BENCH_BASE=<git rev> (e.g. main): the module of that commit goes
# into the VM too, and the TCP bench runs its modes with it as well, in
# the same rounds ("base" figures beside this tree's).

set -euo pipefail
LANE_KERNELS=newest
# bpftrace (the peer) and its libraries are in the bench's initramfs
LANE_BENCH=1
VM_MEM=3G
# shellcheck source=tests/qemu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

setup_host
build_userspace
bench=$REPO/selftests/netlat_bench
if [[ ! -x $bench ]]; then
	echo "selftests/netlat_bench was not built: no benchmark to run (skipped)"
	exit 0
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
		$(find "$REPO/selftests" -maxdepth 1 -name netlat_tcp_bench -executable))
	run_vm "$k" "$initrd" "${NETLAT_VM_TIMEOUT:-2400}" bench show
	[[ $(vm_status "$k" bench) == 0 ]] || die "$k: the bench VM did not finish cleanly"
done
