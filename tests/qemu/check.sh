#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make check: for each supported kernel, build netlat.ko with W=1, boot it
# in qemu with the selftests (job=check, and job=check-single for the few
# that run under single-threaded TCG, see lib.sh) and judge the consoles.
# Each TAP result counts, plus one "kernel clean" result per kernel
# (warning-free build, the VMs finished, no kernel trouble, clean unload). Ends with the
# plain line "N passed, N failed[, N skipped]"; exits non-zero on failure.

set -euo pipefail
# shellcheck source=tests/qemu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

VM_TIMEOUT=${NETLAT_VM_TIMEOUT:-600}
PASSED=0 FAILED=0 SKIPPED=0

# tap_results <console-log> <counts-file>: print each test's TAP block and
# write "passed failed skipped" to <counts-file>. Results are the lines
# "ok N"/"not ok N" at column 0 (the harness prefixes its nested output
# with "#"). A plan ("1..N") not met, a non-zero exit without a "not ok",
# or output cut off by a dying VM is a failure too.
tap_results() {
	awk '
	function close_block(why) {
		if (n < plan) { print "not ok - " name ": " plan - n " results missing"; fail++ }
		else if (why != "") { print "not ok - " name ": " why; fail++ }
		intap = 0
	}
	/^NETLAT-TAP-BEGIN / { name = $2; intap = 1; plan = n = nbad = 0; print "# " name; next }
	/^NETLAT-TAP-END / {
		rc = substr($3, 4)
		close_block((rc != 0 && rc != 4 && nbad == 0 && n >= plan) ? "exit status " rc : "")
		next
	}
	!intap { next }
	{ print }
	/^not ok [0-9]+/ { n++; nbad++; fail++; next }
	/^ok [0-9]+/ { n++; if (/# SKIP/) skip++; else pass++; next }
	/^1\.\.[0-9]+/ { plan = substr($1, 4) + 0 }
	END {
		if (intap) { print "not ok - " name ": output cut off (VM died?)"; fail++ }
		print pass + 0, fail + 0, skip + 0 > counts
	}' counts="$2" "$1"
}

# kernel_trouble <kver> <job>...: print why the kernel's runs in the VMs
# of the given jobs were not clean (nothing if they were).
kernel_trouble() {
	local k=$1 job log status
	shift
	if module_warnings "$k" >/dev/null; then
		echo "W=1 build warnings (see $(moddir "$k")/build.log)"
	fi
	for job; do
		log=$(vm_log "$k" "$job")
		status=$(vm_status "$k" "$job")
		if [[ -z $status ]]; then
			echo "$job: no NETLAT-VM-DONE line: the VM crashed or hung (see $log)"
		elif ((status & ~1)); then
			echo "$job: VM status $status"
		fi
		{ grep -E '^NETLAT-(HOST|VM-TROUBLE)' "$log"
		  # once each: a panic replays the whole log (panic_print, lib.sh)
		  awk -v re="$TROUBLE_RE" "$TROUBLE_AWK" "$log" | awk '!seen[$0]++' | head -n 20 |
			sed "s/^/$job console: /"; } || true
	done
}

# vm_died_before_netlat <kver> <job>: true if the VM died (no status) in
# an oops or panic of a kernel not tainted yet: netlat.ko was never loaded
# (loading it taints the kernel O and E), so no code of netlat's ran. Under
# multi-threaded TCG the kernel's own boot-time text patching can crash it
# (lib.sh): 7.3 died once at 2.35 s, in ktime_get_real_ts64() right after
# "Switched to clocksource tsc" rewrote its static key. Such a VM is booted
# once more; a crash with netlat loaded is never retried.
vm_died_before_netlat() {
	local log
	log=$(vm_log "$1" "$2")
	[[ -z $(vm_status "$1" "$2") ]] &&
		grep -qE '(Oops|BUG|Kernel panic|WARNING)' "$log" &&
		grep -qE '\] CPU: .* Not tainted' "$log" &&
		! grep -qE '\] CPU: .* Tainted: ' "$log"
}

# kbuild_guards <kver>: Kbuild must refuse a kernel it does not support in
# one line of its own, before the compiler runs. The kernel's headers stand
# in for such kernels by overriding what Kbuild checks. Prints why not.
kbuild_guards() {
	local k=$1 dir=$BUILD/guards/$1 args out want
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -a "${MODULE_SRCS[@]/#/$REPO/}" "$dir/"
	while IFS='|' read -r args want; do
		# shellcheck disable=SC2086 # the overrides are words
		out=$(kmake "$k" "$dir" -C "$(kbuild_dir "$k")" M="$dir" $args modules 2>&1) &&
			{ echo "$args: the build did not stop"; continue; }
		grep -q 'error:' <<<"$out" && echo "$args: the compiler ran"
		[[ $(grep -c 'netlat: ' <<<"$out") == 1 ]] ||
			echo "$args: not one netlat line"
		grep -q "$want" <<<"$out" || echo "$args: no \"$want\""
	done <<-'EOF'
	CONFIG_KPROBES=|without CONFIG_KPROBES, which
	CONFIG_KRETPROBES= CONFIG_TRACEPOINTS=|without CONFIG_KRETPROBES CONFIG_TRACEPOINTS, which
	VERSION=6 PATCHLEVEL=0|kernel 6.0 .* is not supported
	VERSION=8 PATCHLEVEL=0|kernel 8.0 .* is not supported
	EOF
	rm -rf "$dir"
}

# count <passed> <failed> <skipped>: add to the totals.
count() {
	PASSED=$((PASSED + $1)) FAILED=$((FAILED + $2)) SKIPPED=$((SKIPPED + $3))
}

# check_kernel <kver>: build, then boot the check VM and, for the tests
# that need it, the single-threaded TCG VM (check-single, see lib.sh); each
# is skipped when NETLAT_APPEND's netlat_tests= leaves it nothing to run.
check_kernel() {
	local k=$1 t0=$SECONDS initrd=$BUILD/initramfs-$1-check.cpio.gz
	local p=0 f=0 s=0 p1 f1 s1 why job jobs=() secs
	echo
	echo "=== kernel $k ==="
	if ! build_module "$k"; then
		echo "not ok - kernel clean: module build failed"
		count 0 1 0
		return
	fi
	module_warnings "$k" || true
	if ! is_debug_kernel "$k"; then
		why=$(kbuild_guards "$k")
		if [[ -z $why ]]; then
			echo "ok - kbuild refuses unsupported kernels in one line"
			p=$((p + 1))
		else
			echo "not ok - kbuild refuses unsupported kernels in one line:"
			printf '%s\n' "$why" | sed 's/^/#   /'
			f=$((f + 1))
		fi
	fi
	make_initramfs "$k" "$initrd" "${USER_BINS[@]}"
	# KASAN under TCG runs the busy-server tests (20,000 sockets) slowly
	secs=$VM_TIMEOUT
	is_debug_kernel "$k" && secs=$((VM_TIMEOUT * 2))
	for job in check check-single; do
		vm_has_tests "$job" || continue
		jobs+=("$job")
		run_vm "$k" "$initrd" "$secs" "$job" || true
		if vm_died_before_netlat "$k" "$job"; then
			mv "$(vm_log "$k" "$job")" "$(vm_log "$k" "$job").died"
			echo "# $job: the VM died before netlat.ko was loaded (console in $(vm_log "$k" "$job").died): booting it again"
			run_vm "$k" "$initrd" "$secs" "$job" || true
		fi
		tap_results "$(vm_log "$k" "$job")" "$BUILD/counts"
		read -r p1 f1 s1 <"$BUILD/counts"
		p=$((p + p1)) f=$((f + f1)) s=$((s + s1))
	done
	why=$(kernel_trouble "$k" "${jobs[@]}")
	if [[ -z $why ]]; then
		echo "ok - kernel clean"
		p=$((p + 1))
	else
		echo "not ok - kernel clean:"
		printf '%s\n' "$why" | sed 's/^/#   /'
		f=$((f + 1))
	fi
	count "$p" "$f" "$s"
	echo "=== kernel $k: pass=$p fail=$f skip=$s time=$((SECONDS - t0))s"
}

# host_suite <title> <command>...: a host-side test suite (no VM) that
# prints TAP-like "ok"/"not ok" lines and one "N passed, N failed" line;
# its lines are shown, its summary joins the totals.
host_suite() {
	local title=$1 out p f
	shift
	echo
	echo "=== host: $title ==="
	out=$("$@" 2>&1) || true
	printf '%s\n' "$out" | grep -E '^((not )?ok |#)' || printf '%s\n' "$out"
	# no summary: read fails, which set -e must not take for the end
	read -r p f < <(printf '%s\n' "$out" |
		sed -nE 's/^([0-9]+) passed, ([0-9]+) failed.*/\1 \2/p' | tail -n 1) || true
	if [[ -z ${p:-} ]]; then
		echo "not ok - $title printed no summary"
		count 0 1 0
		return
	fi
	echo "=== host: pass=$p fail=$f"
	count "$p" "$f" 0
}

main() {
	setup_host
	build_userspace
	# the reader and libnetlat
	host_suite "tools unit tests" make -s -C "$REPO/tools" test
	# make bench's instruction counting: the plugin builds and loads into
	# qemu, the report's figures from a fixture
	host_suite "instruction-count tools" \
		bash "$REPO/tests/insn/test.sh" "$BUILD/insn-test"
	# design.rst's units, their uses and layers, against the includes
	host_suite "the units and their layers" \
		bash "$REPO/tests/layers/test.sh" "$BUILD/layers-test"
	# a kernel built without the function tracer (#39): netlat builds
	# there with its ftrace mechanisms left out
	host_suite "builds against other kernel configs" \
		bash "$REPO/tests/build/test.sh" "$BUILD/build-test"
	# The packages: make deb, lintian, libnetlat's ABI, make install with
	# pkg-config; then installed with apt in a Debian system with the
	# bookworm kernels of the lane, DKMS, and that system booted with
	# systemd (NETLAT_PKG_TEST=0 leaves both out).
	local k kpkg=() klast=
	for k in "${KVERS[@]}"; do
		[[ -d /lib/modules/$k/build ]] && kpkg+=("$k") && klast=$k
	done
	if [[ ${NETLAT_PKG_TEST:-1} != 0 ]]; then
		host_suite "packages" bash "$REPO/tests/pkg/test.sh" "$BUILD/pkg-test" \
			"$klast"
		if ((${#kpkg[@]})); then
			host_suite "packages installed and booted with systemd" \
				bash "$REPO/tests/pkg/install.sh" "$BUILD/pkg-install" "${kpkg[@]}"
		fi
	fi
	[[ ${USER_BINS[*]} == *_test* ]] || die "no selftest binary built"
	for k in "${KVERS[@]}"; do
		check_kernel "$k"
	done
	# two VMs, each its own host and clock, joined (#38)
	host_suite "two hosts joined: netlat join across two VMs" \
		bash "$LANE/xhost.sh" "$BUILD/xhost-test"
	echo
	if ((SKIPPED)); then
		echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
	else
		echo "$PASSED passed, $FAILED failed"
	fi
	((FAILED == 0))
}

main "$@"
