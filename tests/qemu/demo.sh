#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make demo: boot the newest supported kernel (or NETLAT_KVERS) with the
# module loaded, tail records while markers and pings flow, then record and
# report a capture (also as build/demo/report.html). The VM console is
# shown live.

set -euo pipefail
LANE_KERNELS=newest
# shellcheck source=tests/qemu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# The HTML report of the capture leaves the VM on a second serial port
# (init.sh's save_file), written to build/demo/report.html. Both ports are
# named: a serial device given with -device would drop -nographic's
# default console on the first one.
DEMO_HTML=$BUILD/demo/report.html
mkdir -p "$BUILD/demo"
VM_NICS+=(-serial mon:stdio -serial "file:$DEMO_HTML")

setup_host
build_userspace
for k in "${KVERS[@]}"; do
	initrd=$(prepare_vm "$k" demo "${USER_BINS[@]}")
	run_vm "$k" "$initrd" "${NETLAT_VM_TIMEOUT:-300}" demo show
	[[ $(vm_status "$k" demo) == 0 ]] || die "$k: the demo VM did not finish cleanly"
	if [[ -s $DEMO_HTML ]]; then
		log "the capture's HTML report: $DEMO_HTML (open it in a browser)"
	else
		log "no HTML report came out of the VM (see $(vm_log "$k" demo))"
	fi
done
