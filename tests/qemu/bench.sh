#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: boot the newest supported kernel (or NETLAT_KVERS) and run
# /bin/netlat_bench (built by selftests/) in it. Figures are printed, not
# asserted. Without a netlat_bench binary there is nothing to do.

set -euo pipefail
LANE_KERNELS=newest
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
	initrd=$(prepare_vm "$k" bench "${USER_BINS[@]}" "$bench" \
		$(find "$REPO/selftests" -maxdepth 1 -name netlat_tcp_bench -executable))
	run_vm "$k" "$initrd" "${NETLAT_VM_TIMEOUT:-1200}" bench show
	[[ $(vm_status "$k" bench) == 0 ]] || die "$k: the bench VM did not finish cleanly"
done
