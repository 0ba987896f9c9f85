# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# Shared functions of the QEMU test lane, sourced by check.sh, demo.sh and
# bench.sh. The host kernel cannot load modules, so every module test boots a
# Debian cloud kernel in qemu (TCG only: KVM hangs here) from a busybox
# initramfs. Everything the lane needs is installed and cached by these
# functions, because CI may run on a fresh machine.
#
# Environment:
#   NETLAT_KVERS   space-separated kernel releases to use instead of the
#                  newest Debian 6.1, 6.12 and 7.x cloud kernels; a
#                  "+deb13" release is built in the trixie chroot (trixie.sh)
#   NETLAT_APPEND  extra kernel command line for the VMs; e.g.
#                  "netlat_tests=netlat_tcp_test" runs only that selftest
#   NETLAT_DEBUG_KERNEL=0  leave out the debug kernel (KASAN, lockdep,
#                  kmemleak; see debugkernel.sh), which check.sh runs by
#                  default after the release kernels
#   NETLAT_PKG_TEST=0  leave out the package suites (tests/pkg: make deb,
#                  lintian, and the packages installed in a Debian system
#                  booted with systemd)

set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LANE=$REPO/tests/qemu
BUILD=$REPO/build
LOGS=$BUILD/logs

# check.sh uses every supported kernel; demo/bench set this to "newest".
LANE_KERNELS=${LANE_KERNELS:-all}

# What Kbuild builds from: copied per kernel (see build_module).
MODULE_SRCS=(Kbuild module uapi VERSION)

BASE_PKGS=(qemu-system-x86 busybox-static cpio xz-utils kmod gcc make
	   libc6-dev bc flex bison libelf-dev libssl-dev perl linux-source-6.1
	   debootstrap debhelper dh-dkms lintian pkgconf)
# The host tests (make -C tools test) load netlat's HTML report in
# headless Chromium; under CI=true they fail without it.
BASE_PKGS+=(chromium)
# The tools tests check `netlat exporter` with promtool and a real
# Prometheus server (tools/tests/test_exporter.c), over HTTPS with
# certificates the openssl command makes (tools/tests/test_webcfg.c).
BASE_PKGS+=(prometheus openssl)
# A real server and client for the busy-server tests (netlat_redis_test):
# redis-tools has the server (as redis-check-rdb: one binary, its name
# picks the program) and redis-benchmark, without a service to start;
# copied into the VMs with their shared libraries (CHECK_DYN_BINS).
BASE_PKGS+=(redis-tools)
# make bench only: bpftrace, the peer its TCP bench runs on the same hooks
# (it goes into the bench initramfs with its shared libraries, never into
# the check one). Optional: without it the bench prints why and goes on.
BENCH_PKGS=(bpftrace)
# Set by bench.sh before sourcing this file.
LANE_BENCH=${LANE_BENCH:-}
# Memory of a VM: the bench's initramfs holds bpftrace and ~200 MB of
# LLVM/clang libraries, which it unpacks into RAM.
VM_MEM=${VM_MEM:-1G}

# Load order of the virtio NIC stack; names missing in a kernel (6.12 has
# virtio_pci built in) are skipped.
VIRTIO_MODS=(virtio_ring virtio virtio_pci_legacy_dev virtio_pci_modern_dev
	     virtio_pci failover net_failover virtio_net)
# Further modules the TCP tests use (veth pairs, netem loss); their
# dependencies (modinfo) are copied and loaded first.
EXTRA_MODS=(veth sch_netem)

# Kernel messages that mean the module (or the kernel) misbehaved. Used on
# the console by check.sh and on dmesg inside the VM (/trouble_re), both
# through TROUBLE_AWK.
TROUBLE_RE='Kernel panic|BUG:|WARNING:|Oops|Call Trace|general protection|KASAN|UBSAN|lockdep:|locking correctness validator|inconsistent lock state|lock inversion|INFO: task|soft lockup|hard LOCKUP|detected stall|refcount_t:|list_(add|del) corruption|suspicious RCU usage|possible recursive locking|circular locking'
# A backtrace the kernel prints for an allocation failure (warn_alloc) that
# selftests/netlat_fault_test injected into its own task is not trouble;
# one of any other task's is. Prints the trouble lines of its input, each
# after up to ctx (awk -v) lines before it not printed yet.
TROUBLE_AWK='$0 ~ "^(\\[ *[0-9.]+\\] )?netlat_fault_te: (page allocation failure|vmalloc error):" { skip = 1 }
skip { if ($0 ~ /<\/TASK>|Mem-Info:/) skip = 0; next }
$0 ~ re { for (i = NR - ctx; i < NR; i++) if (i > last && (i in line)) print line[i]; print; last = NR }
{ line[NR] = $0; delete line[NR - ctx] }'

# shellcheck source=tests/qemu/debugkernel.sh
source "$LANE/debugkernel.sh"
# shellcheck source=tests/qemu/trixie.sh
source "$LANE/trixie.sh"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'ERROR: %s\n' "$*" >&2; exit 1; }

# --- host packages -------------------------------------------------------

APT_UPDATED=
apt_update() {
	[[ -n $APT_UPDATED ]] && return 0
	log "apt-get update"
	apt-get update -qq -o DPkg::Lock::Timeout=600
	APT_UPDATED=1
}

# Print the packages of "$@" that are not installed.
missing_pkgs() {
	local p
	for p; do
		[[ $(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null) == installed ]] ||
			echo "$p"
	done
}

# Install packages without starting their services: Debian's prometheus
# would start one on :9090 where an init system runs, and the tests start
# their own on 127.0.0.1. policy-rc.d answering 101 forbids it (Docker
# images ship one; a machine without one gets it for the install only).
install_pkgs() {
	local policy=/usr/sbin/policy-rc.d own='' rc=0
	if [[ ! -e $policy ]]; then
		printf '#!/bin/sh\nexit 101\n' >"$policy"
		chmod 755 "$policy"
		own=1
	fi
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		-o DPkg::Lock::Timeout=600 \
		--no-install-recommends "$@" >/dev/null || rc=$?
	[[ -z $own ]] || rm -f "$policy"
	return "$rc"
}

# --- kernel selection ----------------------------------------------------

# Newest kernel release whose linux-image package matches ERE $1.
newest_kernel() {
	apt-cache search --names-only "^linux-image-$1\$" |
		sed -E 's/^linux-image-([^ ]+) .*/\1/' | sort -V | tail -n 1
}

# Set KVERS to the bookworm kernels (the 7.x one is added by setup_host,
# from the trixie chroot). apt-cache takes seconds, so the answer is cached in build/,
# keyed on the package lists: it is recomputed after an apt-get update that
# changed them.
resolve_kernels() {
	if [[ -n ${NETLAT_KVERS:-} ]]; then
		read -ra KVERS <<<"$NETLAT_KVERS"
		return 0
	fi
	local cache=$BUILD/kvers key
	key=$(stat -c '%n %s %Y' /var/lib/apt/lists/*_Packages* 2>/dev/null | md5sum || true)
	if [[ ! -f $cache || $(head -n 1 "$cache") != "$key" ]]; then
		local k61 k612
		k61=$(newest_kernel '6\.1\.0-[0-9]+-cloud-amd64')
		k612=$(newest_kernel '6\.12\.[0-9]+\+deb12-cloud-amd64')
		if [[ -z $k61 || -z $k612 ]]; then
			# No or old package lists (fresh machine): fetch them once.
			[[ -z $APT_UPDATED ]] || die "no Debian 6.1/6.12 cloud kernel in apt-cache"
			apt_update
			resolve_kernels
			return 0
		fi
		mkdir -p "$BUILD"
		printf '%s\n%s %s\n' "$key" "$k61" "$k612" >"$cache"
	fi
	read -ra KVERS < <(tail -n 1 "$cache")
	if [[ $LANE_KERNELS == newest ]]; then
		KVERS=("${KVERS[-1]}")
	fi
}

# --- kernel images -------------------------------------------------------

kdir() { echo "$BUILD/kernels/$1"; }
vmlinuz() { echo "$(kdir "$1")/boot/vmlinuz-$1"; }

# Download (never install) the image package and unpack it: vmlinuz and
# /lib/modules/<kver>/ are all the VM needs.
fetch_kernel() {
	local k=$1 dir tmp
	dir=$(kdir "$k")
	[[ -f $(vmlinuz "$k") ]] && return 0
	log "downloading linux-image-$k"
	tmp=$(mktemp -d "$BUILD/kernels/.dl.XXXXXX")
	# Sandbox=root: apt's _apt user cannot write into build/.
	(cd "$tmp" && apt-get download -qq -o APT::Sandbox::User=root "linux-image-$k")
	dpkg-deb -x "$tmp"/linux-image-*.deb "$tmp/root"
	rm -rf "$dir"
	mv "$tmp/root" "$dir"
	rm -rf "$tmp"
}

# The host packages the lane needs: the headers of the bookworm kernels in
# KVERS (trixie kernels have theirs in the chroot) and BASE_PKGS.
host_pkgs() {
	local k
	printf '%s\n' "${BASE_PKGS[@]}"
	for k in "${KVERS[@]}"; do
		is_trixie_kernel "$k" || echo "linux-headers-$k"
	done
}

# True when nothing needs apt: packages installed, kernels unpacked.
host_ready() {
	local k
	# shellcheck disable=SC2046 # one package a word
	[[ -z $(missing_pkgs $(host_pkgs)) ]] || return 1
	for k in "${KVERS[@]}"; do
		is_trixie_kernel "$k" || [[ -f $(vmlinuz "$k") ]] || return 1
	done
}

# The newest 7.x cloud kernel, cached in build/ like resolve_kernels' answer,
# keyed on the chroot's package lists.
resolve_trixie_kernel() {
	local cache=$BUILD/kvers-trixie key
	key=$(stat -c '%n %s %Y' "$(trixie_root)"/var/lib/apt/lists/*_Packages* 2>/dev/null | md5sum || true)
	if [[ ! -f $cache || $(head -n 1 "$cache") != "$key" ]]; then
		local k
		k=$(newest_trixie_kernel)
		[[ -n $k ]] || die "no linux-headers-7.*+deb13-cloud-amd64 in trixie-backports"
		printf '%s\n%s\n' "$key" "$k" >"$cache"
	fi
	tail -n 1 "$cache"
}

# The kselftest harness headers come from Debian's kernel source; extracted
# once into build/ksft (never committed).
fetch_ksft_headers() {
	local dst=$BUILD/ksft
	[[ -f $dst/kselftest_harness.h && -f $dst/kselftest.h ]] && return 0
	log "extracting kselftest headers from linux-source-6.1"
	mkdir -p "$dst"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$dst" --wildcards \
		--strip-components=4 '*/tools/testing/selftests/kselftest*.h'
}

# Set KVERS and make sure packages, kernels and headers are there. apt is
# skipped entirely when everything is already present.
setup_host() {
	mkdir -p "$BUILD/kernels" "$LOGS"
	resolve_kernels
	if ! host_ready; then
		apt_update
		resolve_kernels	# fresh lists may name newer kernels
		local missing
		# shellcheck disable=SC2046 # one package a word
		missing=$(missing_pkgs $(host_pkgs))
		if [[ -n $missing ]]; then
			log "installing: ${missing//$'\n'/ }"
			# Lock timeout: other users of the machine may be in apt.
			# shellcheck disable=SC2086
			install_pkgs $missing
		fi
	fi
	# The 7.x kernel: in every "make check" unless NETLAT_KVERS says
	# otherwise; demo and bench ("newest") keep to 6.12, which needs no
	# chroot, unless NETLAT_KVERS names a 7.x release.
	if [[ $LANE_KERNELS == all && -z ${NETLAT_KVERS:-} ]]; then
		local k7
		setup_trixie
		k7=$(resolve_trixie_kernel)
		KVERS+=("$k7")
	fi
	local k
	for k in "${KVERS[@]}"; do
		if is_trixie_kernel "$k"; then
			setup_trixie
			trixie_kernel "$k"
		else
			fetch_kernel "$k"
		fi
	done
	fetch_ksft_headers
	[[ -z $LANE_BENCH ]] || install_bench_pkgs
	if [[ $LANE_KERNELS == all && ${NETLAT_DEBUG_KERNEL:-1} != 0 ]]; then
		build_debug_kernel
		KVERS+=("$DEBUG_KVER")
	fi
	log "kernels: ${KVERS[*]}"
}

# The bench's optional packages: a failed install is only reported.
install_bench_pkgs() {
	local missing
	# shellcheck disable=SC2046 # one package a word
	missing=$(missing_pkgs "${BENCH_PKGS[@]}")
	[[ -n $missing ]] || return 0
	apt_update
	log "installing for the bench: ${missing//$'\n'/ }"
	# shellcheck disable=SC2086
	install_pkgs $missing ||
		log "could not install ${missing//$'\n'/ }: the bench runs without its bpftrace peer"
}

# --- builds --------------------------------------------------------------

moddir() { echo "$BUILD/mod/$1"; }

# The kernel build tree that modules for kernel $1 are built against (for
# a trixie kernel, a path in the chroot).
kbuild_dir() {
	if is_debug_kernel "$1"; then
		debug_src
	else
		echo "/lib/modules/$1/build"
	fi
}

# kmake <kver> <module-dir> <make args>...: make for kernel <kver>; for a
# trixie kernel in the chroot, with <module-dir> (under build/) bound at the
# same path, so paths in logs and KBUILD_EXTRA_SYMBOLS mean the same inside.
kmake() {
	local k=$1 dir=$2
	shift 2
	if is_trixie_kernel "$k"; then
		in_trixie -b "$dir" make "$@"
	else
		make "$@"
	fi
}

# Build netlat.ko for kernel $1 with W=1 in a private copy of the sources,
# so builds for different kernels never share objects, and always from
# scratch, so every warning is printed every time. Log: <moddir>/build.log.
build_module() {
	build_module_in "$1" "$REPO" "$(moddir "$1")" && build_test_modules "$1"
}

# build_module_in <kver> <source-tree> <dir>: netlat.ko from the
# MODULE_SRCS of <source-tree>, built in <dir> (emptied first).
build_module_in() {
	local k=$1 src=$2 dir=$3
	rm -rf "$dir"
	mkdir -p "$dir"
	cp -a "${MODULE_SRCS[@]/#/$src/}" "$dir/"
	log "building netlat.ko for $k (W=1) from $src"
	if ! kmake "$k" "$dir" -C "$(kbuild_dir "$k")" M="$dir" W=1 modules >"$dir/build.log" 2>&1; then
		cat "$dir/build.log" >&2
		return 1
	fi
	[[ -f $dir/netlat.ko ]] || { echo "no netlat.ko produced" >&2; return 1; }
}

# build_base_module <kver> <git-rev>: netlat.ko of commit <git-rev> (the
# bench's baseline, NETLAT_BENCH_BASE), built like build_module; prints
# its path.
build_base_module() {
	local k=$1 rev=$2 src=$BUILD/base-src dir
	dir=$BUILD/mod-base/$k
	rm -rf "$src"
	mkdir -p "$src"
	# shellcheck disable=SC2046 # a path a word; older revisions lack some
	git -C "$REPO" archive "$rev" $(git -C "$REPO" ls-tree --name-only "$rev" \
		"${MODULE_SRCS[@]}") | tar -x -C "$src"
	build_module_in "$k" "$src" "$dir" >&2 || return 1
	echo "$dir/netlat.ko"
}

# Test modules (selftests/*/Kbuild, e.g. the stress writers) for kernel $1,
# built next to netlat.ko against its exported symbols; their warnings go
# to the same build.log. Each <name>.ko lands in <moddir>/test-modules/.
build_test_modules() {
	local k=$1 dir kb sub name
	dir=$(moddir "$k")
	mkdir -p "$dir/test-modules"
	for kb in "$REPO"/selftests/*/Kbuild; do
		[[ -f $kb ]] || continue
		name=$(basename "$(dirname "$kb")")
		sub=$dir/tm-$name
		cp -a "$(dirname "$kb")" "$sub"
		if ! kmake "$k" "$dir" -C "$(kbuild_dir "$k")" M="$sub" W=1 NETLAT_SRC="$dir" \
			KBUILD_EXTRA_SYMBOLS="$dir/Module.symvers" modules \
			>>"$dir/build.log" 2>&1; then
			cat "$dir/build.log" >&2
			return 1
		fi
		cp "$sub"/*.ko "$dir/test-modules/"
	done
}

# Print the warnings of the last module build for kernel $1; true if any.
module_warnings() {
	grep -F 'warning:' "$(moddir "$1")/build.log"
}

# Build the tests and the reader as static binaries (the VM has no libc;
# -B: an earlier "make -C tools test" left dynamic ones);
# set USER_BINS to what every VM gets: the reader, the two examples
# and the selftests.
build_userspace() {
	local ulog=$LOGS/userspace.log
	log "building selftests and tools (static)"
	if ! { make -C "$REPO/selftests" KSFT_INC="$BUILD/ksft" LDFLAGS=-static &&
	       make -B -C "$REPO/tools" LDFLAGS=-static; } >"$ulog" 2>&1; then
		cat "$ulog" >&2
		die "userspace build failed"
	fi
	user_bins
}

# user_bins: USER_BINS, the static binaries build_userspace built, for the
# initramfs.
user_bins() {
	# shellcheck disable=SC2034 # used by check/demo/bench/xhost
	mapfile -t USER_BINS < <(find "$REPO/tools" "$REPO/tools/examples" \
		"$REPO/selftests" -maxdepth 1 -type f -executable \
		\( -name netlat -o -name flight_min -o -name flight_recorder \
		   -o -name netlat_rxwait -o -name netlat_clockecho -o -name netlat_xping \
		   -o -name "*_test" \) | sort)
}

# --- initramfs -----------------------------------------------------------

# Copy the virtio NIC modules of kernel $1 into the initramfs at $2,
# decompressed (busybox insmod cannot read .ko.xz), with their load order.
add_virtio_modules() {
	local k=$1 root=$2 m f
	local src
	src=$(kdir "$k")/lib/modules/$k/kernel
	mkdir -p "$root/lib/modules"
	for m in "${VIRTIO_MODS[@]}" "${EXTRA_MODS[@]}"; do
		f=$(find "$src/drivers" "$src/net" -name "$m.ko" -o -name "$m.ko.xz" | head -n 1)
		[[ -n $f ]] || continue
		grep -qx "$m" "$root/lib/modules/order" 2>/dev/null && continue
		local d
		for d in $(modinfo -F depends "$f" | tr , ' '); do
			grep -qx "$d" "$root/lib/modules/order" 2>/dev/null ||
				add_module_file "$src" "$d" "$root"
		done
		case $f in
		*.xz) xz -dc "$f" >"$root/lib/modules/$m.ko" ;;
		*) cp "$f" "$root/lib/modules/$m.ko" ;;
		esac
		echo "$m" >>"$root/lib/modules/order"
	done
}

# add_module_file <src> <name> <root>: copy one dependency, no recursion
# beyond one level (none of the lane's modules needs more).
add_module_file() {
	local f
	f=$(find "$1" -name "$2.ko" -o -name "$2.ko.xz" | head -n 1)
	[[ -n $f ]] || return 0
	case $f in
	*.xz) xz -dc "$f" >"$3/lib/modules/$2.ko" ;;
	*) cp "$f" "$3/lib/modules/$2.ko" ;;
	esac
	echo "$2" >>"$3/lib/modules/order"
}

# add_dynamic <root> <binary>: a dynamically linked host binary into
# <root>/bin with the shared libraries ldd names (and the loader), at the
# host's paths.
add_dynamic() {
	local root=$1 b=$2 name=${3:-} lib
	cp "$b" "$root/bin/$name"
	for lib in $(ldd "$b" | grep -oE '/[^ ]+'); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}

# Dynamic binaries for the initramfs of make bench (see BENCH_PKGS).
BENCH_DYN_BINS=(/usr/bin/bpftrace)
# ... and of every VM: the real server and client (BASE_PKGS), as
# <path>[:<name in /bin>].
CHECK_DYN_BINS=(/usr/bin/redis-check-rdb:redis-server /usr/bin/redis-benchmark)
# ... and redis-cli, for the server's own byte counts (INFO stats)
CHECK_DYN_BINS+=(/usr/bin/redis-cli)
# ... and the real Prometheus that scrapes the exporter per service
# (netlat_service_test; BASE_PKGS has it for the tools tests already)
CHECK_DYN_BINS+=(/usr/bin/prometheus)

# make_initramfs <kver> <out> <binary>...: busybox, /init, /netlat.ko, the
# virtio modules, the given static binaries in /bin and CHECK_DYN_BINS
# that are installed; for the bench, BENCH_DYN_BINS that are installed
# too, and INITRAMFS_BASE_KO (if set) as /netlat-base.ko.
make_initramfs() {
	local k=$1 out=$2 root b
	shift 2
	root=$(mktemp -d "$BUILD/.initramfs.XXXXXX")
	mkdir -p "$root"/{bin,dev,proc,sys,tmp,run}
	cp /bin/busybox "$root/bin/busybox"
	install -m 755 "$LANE/init.sh" "$root/init"
	echo "$TROUBLE_RE" >"$root/trouble_re"
	echo "$TROUBLE_AWK" >"$root/trouble.awk"
	cp "$(moddir "$k")/netlat.ko" "$root/netlat.ko"
	[[ -z ${INITRAMFS_BASE_KO:-} ]] || cp "$INITRAMFS_BASE_KO" "$root/netlat-base.ko"
	mkdir -p "$root/lib/netlat"
	cp "$(moddir "$k")"/test-modules/*.ko "$root/lib/netlat/" 2>/dev/null || true
	add_virtio_modules "$k" "$root"
	for b; do
		# A dynamic binary would die in the VM with a confusing "not found".
		if readelf -lW "$b" | grep -q 'program interpreter'; then
			die "$b is not statically linked (does its Makefile honour LDFLAGS?)"
		fi
		cp "$b" "$root/bin/"
	done
	for b in "${CHECK_DYN_BINS[@]}"; do
		[[ $b == *:* ]] || b+=:
		[[ -x ${b%%:*} ]] && add_dynamic "$root" "${b%%:*}" "${b#*:}"
	done
	if [[ -n $LANE_BENCH ]]; then
		for b in "${BENCH_DYN_BINS[@]}"; do
			[[ -x $b ]] && add_dynamic "$root" "$b"
		done
	fi
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
	rm -rf "$root"
}

# --- the VM --------------------------------------------------------------

vm_log() { echo "$LOGS/$1-$2.log"; }

# vm_status <kver> <job>: the status /init printed last; empty if it never
# got there (crash, hang).
vm_status() {
	sed -n 's/^NETLAT-VM-DONE status=\([0-9]*\)$/\1/p' "$(vm_log "$1" "$2")" | tail -n 1
}

# Kernel command line: any WARN, BUG or oops panics, and a panic powers
# the VM off (-no-reboot) instead of leaving it to the timeout.
#
# tsc=reliable: under TCG the clocksource watchdog's cross-CPU reads time
# out ("Watchdog remote CPU 1 read timed out") and it may mark the TSC
# unstable minutes into a run; the switch to HPET rewrites static keys in
# live text (sched_clock's, and on 7.3 one inside ktime_get_mono_fast_ns()),
# which hits the multi-threaded TCG race described below: 7.3 died with
# "Oops: int3" at ktime_get_mono_fast_ns+0x34, the site already patched to
# the JMP over RDTSC. TCG's TSC is the host's, one clock for every vCPU.
VM_APPEND="console=ttyS0 panic=-1 panic_on_warn=1 oops=panic loglevel=4"
VM_APPEND+=" tsc=reliable"
# A wedged VM: a soft lockup panics (every verdict counts it as trouble
# anyway) instead of waiting out NETLAT_VM_TIMEOUT, after an NMI backtrace
# of the other CPUs; at the panic the whole kernel log is replayed, so the
# stacks that loglevel=4 kept off the console are there (a hang in the
# bench showed only "soft lockup" and "rcu ... stall" lines without them).
VM_APPEND+=" softlockup_panic=1 softlockup_all_cpu_backtrace=1 panic_print=0x20"

# Two virtio NICs on one qemu-internal hub (never user networking): one
# goes into each of two network namespaces for real virtio TX/RX. No
# option ROM: the VM boots the kernel directly.
# shellcheck disable=SC2054 # the commas are qemu's
VM_NICS=(-netdev hubport,id=n1,hubid=0 -device virtio-net-pci,netdev=n1,romfile=
	 -netdev hubport,id=n2,hubid=0 -device virtio-net-pci,netdev=n2,romfile=)
# A third NIC (eth2) with a packed virtqueue ring on the same hub (a hub
# port without another port holds its sender's TX): the virtio tests send
# from it to a MAC that no NIC has, which the others' filters drop.
VM_NICS+=(-netdev hubport,id=n3,hubid=0
	  -device virtio-net-pci,netdev=n3,packed=on,romfile=)

# Console filter: no CRs, no firmware terminal escapes (they would clear
# the user's screen).
console_filter() {
	sed -u -e 's/\r$//' -e 's/\x1b\(\[[0-9;?]*[A-Za-z]\|c\)//g'
}

# Selftests that run in a VM of their own, job check-single, under
# single-threaded TCG (-accel tcg,thread=single: both vCPUs take turns on
# one host thread); every other selftest runs in the usual multi-threaded
# VM (job check), whose real parallelism the ring stress tests need.
#
# Why: multi-threaded TCG (QEMU 7.2, Debian 12) can keep executing a
# translation of kernel text that another vCPU has since rewritten. The
# kernel patches live text with text_poke_bp(): INT3 on the site, sync
# every CPU (IPI), the rest of the new instruction, sync, its first byte,
# sync; only then does it stop claiming that INT3 (poke_int3_handler()).
# Real CPUs cannot execute the INT3 after the last sync; under MTTCG a
# vCPU sometimes does. Enabling or removing probes while TCP runs on the
# other vCPU (what netlat_probe_stress_test does, every cycle) crashed
# 6.12 in 8 of 12 runs, in three ways, none through netlat's code:
#  - "Oops: int3" at __tcp_transmit_skb+0x1 or tcp_ack+0x1 while the
#    module was removed: the site (its ftrace call, where the kprobe sits)
#    already held its NOP again, and 6.12's kprobe_int3_handler() no
#    longer backs up over an INT3 it does not know;
#  - the same at __dev_queue_xmit+0x1bf, a static key of the net_dev_queue
#    tracepoint, already rewritten to its JMP: no kprobe involved;
#  - a jump to address 0 with IF clear after a probe was enabled: the
#    INT3 met an ftrace-based kprobe, whose handler ran (a diagnostic in
#    it printed the site's byte in memory: 0xe8, the finished ftrace
#    call) and whose "single-step" slot is NULL (ftrace kprobes have
#    none).
# With thread=single: 10 of 10 runs on 6.12 clean (and 3 of 3 on 6.1, 2
# of 2 on the debug kernel), the test no slower (18-24 s); the extra VM
# costs ~40 s per release kernel. The guest still has two CPUs, so
# handlers still run on one while the other unregisters them; only the
# interleaving is coarser, which is why the other tests stay in the
# multi-threaded VM. netlat_rxpkt_test is here too: wakeup_groups_flip
# turns rx_sched (sched:sched_wakeup and sched_switch, the hottest sites
# there are) on and off while readers sleep and wake on the other vCPU;
# under MTTCG 6.12 died in it once, "Oops: int3" at __schedule+0x339, the
# NOP of sched_switch's static key, with netlat's handlers not involved.
#
# On 6.1 the same race hangs instead: its kprobe_int3_handler() backs up
# over an INT3 it does not know ("removed right after we hit it") and
# re-executes the site, which under MTTCG can be the stale INT3 again,
# forever. make bench (whose TCP bench switches the rx_sched group on and
# off every mode) hung so in 1 of 3 quick runs and in 1 of 5 runs of 16
# short rounds (netlat_bench_rounds=16 netlat_bench_secs=0.3): one vCPU
# looped in exc_int3 at __schedule+0x1bc with IF clear (the rq lock held)
# although the site's bytes in memory were the finished 5-byte NOP
# (0f 1f 44 00 00) of sched_switch's static key; the other, in
# netlat_tcp_bench's NETLAT_IOC_PROBES, waited for it in
# text_poke_bp_batch()'s sync IPI (tracepoint_probe_unregister,
# sched_wakeup's static call): "soft lockup" on the one, RCU stall with
# "timer wakeup didn't happen" on the other; no netlat code on either
# stack, no netlat lock held. So the bench VM runs under thread=single too
# (see run_vm): 4 of 4 runs of 16 short rounds clean. The multi-threaded
# check VM keeps two ftrace probes on each tracepoint netlat uses
# (init.sh, pin_tracepoints), so that netlat's groups going on and off
# there rewrite no text at those sites; kprobes still do.
# netlat_busy_test too: its churn test switches the groups every few
# milliseconds while 10,000 sockets come and go on the other vCPU; under
# MTTCG 6.12 died in its first run, the third way above ("RIP: 0010:0x0"
# from tcp_write_xmit, the call into __tcp_transmit_skb's ftrace kprobe).
SINGLE_TCG_TESTS=(netlat_probe_stress_test netlat_rxpkt_test netlat_busy_test)
#
# On 7.x every VM runs under thread=single (check included): 7.3 met the
# race where no test of the list above runs. Once at boot (see
# vm_died_before_netlat in check.sh), and once in CI in netlat_pkt_test
# (hooks_armed_per_level arms and disarms the packet level's kprobes):
# "RIP: 0010:0x0", IF clear, in the timer softirq on the idle vCPU, the
# registers those of tcp_write_timer() jumping to tcp_retransmit_timer(),
# where netlat keeps an ftrace-based kretprobe: the third way above. The
# check VM of 7.3 is about a minute slower so.

# in_list <word> <list...>: true if <word> is one of <list>.
in_list() {
	local w=$1 x
	shift
	for x; do [[ $x == "$w" ]] && return 0; done
	return 1
}

# vm_has_tests <job>: true if the check VM <job> (check or check-single)
# has a selftest to run under the selection netlat_tests= of NETLAT_APPEND
# (the first one counts, as in /init).
vm_has_tests() {
	local sel t
	sel=$(grep -oE '(^| )netlat_tests=[^ ]*' <<<"${NETLAT_APPEND:-}" |
		head -n 1 | sed 's/.*=//') || true
	if [[ -z $sel ]]; then
		[[ $1 == check ]] || ((${#SINGLE_TCG_TESTS[@]}))
		return
	fi
	for t in ${sel//,/ }; do
		if in_list "$t" "${SINGLE_TCG_TESTS[@]}"; then
			[[ $1 == check-single ]] && return 0
		else
			[[ $1 == check ]] && return 0
		fi
	done
	return 1
}

# run_vm <kver> <initramfs> <timeout-s> <job> [show]: boot the VM running
# /init's <job> under TCG (KVM hangs here), single-threaded for jobs
# check-single and bench (NETLAT_BENCH_MTTCG=1: the bench multi-threaded,
# at the risk of the hang above), with the further qemu arguments of the
# array VM_QEMU_ARGS (the bench's instruction-count plugin). The console
# goes to build/logs/<kver>-<job>.log and, with "show", to stdout too.
# Returns qemu's status (124: timed out).
run_vm() {
	local k=$1 initrd=$2 secs=$3 job=$4 show=${5:-} out rc accel=tcg
	local append=$VM_APPEND
	out=$(vm_log "$k" "$job")
	# kmemleak makes ACPI PCI interrupt setup take ~8 s per NIC.
	is_debug_kernel "$k" && append+=" pci=noacpi"
	[[ $job == check-single ]] && accel=tcg,thread=single
	[[ $job == check ]] && is_trixie_kernel "$k" && accel=tcg,thread=single
	[[ $job == bench && ${NETLAT_BENCH_MTTCG:-} != 1 ]] &&
		accel=tcg,thread=single
	# /init's split of the selftests between the two check VMs
	append+=" netlat_single_tests=$(IFS=,; echo "${SINGLE_TCG_TESTS[*]}")"
	log "booting $k (job=$job, -accel $accel, timeout ${secs}s)"
	set +e
	# stdin from /dev/null: qemu must not put a terminal into raw mode.
	# --foreground: Ctrl-C must reach qemu too, not leave it running.
	timeout --foreground -k 10 "$secs" \
		qemu-system-x86_64 -accel "$accel" -smp 2 -m "$VM_MEM" -nographic -no-reboot \
		-kernel "$(vmlinuz "$k")" -initrd "$initrd" "${VM_NICS[@]}" \
		-append "$append netlat_job=$job ${NETLAT_APPEND:-}" \
		${VM_QEMU_ARGS[@]+"${VM_QEMU_ARGS[@]}"} \
		</dev/null 2>&1 | console_filter |
		if [[ -n $show ]]; then
			# what the host reads back (the bench's symbols and
			# instruction windows) stays in the log, off the screen
			tee "$out" | grep --line-buffered -v '^NETLAT-\(KSYM\|INSN\)'
		else
			cat >"$out"
		fi
	rc=${PIPESTATUS[0]}
	set -e
	if ((rc == 124)); then
		echo "NETLAT-HOST: timeout after ${secs}s" | tee -a "$out" >&2
	fi
	return "$rc"
}

# prepare_vm <kver> <job> <binary>...: module (must build), initramfs.
# Prints the initramfs path. Warnings are shown but not fatal here: only
# check.sh's verdict treats them as failures.
prepare_vm() {
	local k=$1 job=$2 initrd
	shift 2
	build_module "$k" || die "module build failed for $k"
	module_warnings "$k" >&2 || true
	initrd=$BUILD/initramfs-$k-$job.cpio.gz
	make_initramfs "$k" "$initrd" "$@"
	echo "$initrd"
}
