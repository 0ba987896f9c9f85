#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: boot the newest supported kernel (or NETLAT_KVERS) with the
# module loaded, tail records while markers and pings flow, then record and
# report a capture. The VM console is shown live.

set -euo pipefail
LANE_KERNELS=newest
# shellcheck source=tests/qemu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

setup_host
build_userspace
for k in "${KVERS[@]}"; do
	initrd=$(prepare_vm "$k" demo "${USER_BINS[@]}")
	run_vm "$k" "$initrd" "${NETLAT_VM_TIMEOUT:-300}" demo show
	[[ $(vm_status "$k" demo) == 0 ]] || die "$k: the demo VM did not finish cleanly"
done
