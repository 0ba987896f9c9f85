#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The packages installed for real: a Debian 12 system with systemd and the
# cloud kernels given (images and headers), made by debootstrap; apt
# installs make deb's four packages into it and DKMS builds netlat.ko for
# each kernel; the example is linked against libnetlat.so.1 through
# pkg-config. Then that system boots in QEMU (systemd as init, the newest
# kernel given) and, from a unit of the test's own: starts
# netlat-exporter.service, sends TCP between two namespaces, scrapes the
# metrics (checked here with promtool, against the namespaces' OutSegs),
# starts netlat-flight.service, purges the packages with dpkg while both
# services run and lists what is left: the module, units or files. TAP lines, then "N passed, N
# failed". Usage: install.sh <work dir> <kernel release>...
#
# The base system takes ~6 minutes to make, so it lives in $NETLAT_CACHE
# like the trixie chroot: <cache>/bookworm-<key>/, made under a lock in
# <cache>/.bookworm-tmp.* and renamed when complete; each run works on a
# copy.

set -uo pipefail
# shellcheck source=tests/qemu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../qemu/lib.sh"
set +e
mkdir -p "$LOGS"
dir=$1
shift
kernels=("$@")
pass=0 fail=0

ok() { echo "ok - $1"; pass=$((pass + 1)); }
not_ok() { echo "not ok - $1"; fail=$((fail + 1)); }
check() {
	if [[ -z $2 ]]; then ok "$1"; else not_ok "$1"; printf '%s\n' "$2" | sed 's/^/#   /'; fi
}
finish() {
	echo "$pass passed, $fail failed"
	exit $((fail > 0))
}

BOOKWORM_REV=1
# What an operator's host has, plus what the test drives it with (iperf3,
# busybox's wget, iproute2's netns).
BOOKWORM_PKGS=systemd-sysv,udev,kmod,dkms,initramfs-tools,iproute2,iperf3,busybox,pkgconf,libc6-dev,gcc,make,procps

bookworm_root() {
	local key
	key=$({ echo "rev $BOOKWORM_REV"; echo "$BOOKWORM_PKGS"; echo "$@"; } | sha256sum | cut -c1-16)
	echo "$NETLAT_CACHE/bookworm-$key"
}

# The host's own apt sources (it is a bookworm machine: the kernels come
# from its security suite) and Acquire settings.
bookworm_apt_config() {
	local root=$1
	cp /etc/apt/sources.list "$root/etc/apt/" 2>/dev/null || : >"$root/etc/apt/sources.list"
	cp -r /etc/apt/sources.list.d/. "$root/etc/apt/sources.list.d/" 2>/dev/null
	{ apt-config dump | grep -E '^Acquire::' | grep -vE '^Acquire::IndexTargets'
	  echo 'APT::Sandbox::User "root";'; } >"$root/etc/apt/apt.conf.d/50netlat-host"
}

# make_bookworm <kernel>...: the cached base system, made if missing, with
# BOOKWORM_LOCK held shared until the caller closes it (a run with another
# key removes the systems of other keys, under the lock held exclusive).
# Sets BOOKWORM to its path.
make_bookworm() {
	local root tmp k pkgs=() blog=$LOGS/bookworm-root.log t0=$SECONDS
	root=$(bookworm_root "$@")
	mkdir -p "$NETLAT_CACHE" "$LOGS"
	exec {BOOKWORM_LOCK}>"$NETLAT_CACHE/.bookworm.lock"
	flock -s "$BOOKWORM_LOCK"
	BOOKWORM=$root
	[[ -f $root/.netlat-ready ]] && return 0
	flock -x "$BOOKWORM_LOCK"
	if [[ ! -f $root/.netlat-ready ]]; then
		rm -rf --one-file-system "$NETLAT_CACHE"/bookworm-* "$NETLAT_CACHE"/.bookworm-tmp.*
		tmp=$(mktemp -d "$NETLAT_CACHE/.bookworm-tmp.XXXXXX")
		chmod 755 "$tmp"
		log "debootstrap bookworm with systemd and ${*} into $root (~6 min, once per machine)"
		for k; do pkgs+=("linux-image-$k" "linux-headers-$k"); done
		{ unshare --mount --propagation private -- debootstrap --variant=minbase \
			--include="$BOOKWORM_PKGS" bookworm "$tmp" "$(host_mirror)" &&
		  bookworm_apt_config "$tmp" &&
		  in_chroot "$tmp" "" apt-get update -qq &&
		  in_chroot "$tmp" "" apt-get install -y -qq --no-install-recommends "${pkgs[@]}"
		} >"$blog" 2>&1 || { tail -n 30 "$blog" >&2; return 1; }
		echo '/dev/vda / ext4 defaults 0 1' >"$tmp/etc/fstab"
		echo netlat-pkgtest >"$tmp/etc/hostname"
		touch "$tmp/.netlat-ready"
		mv "$tmp" "$root"
		log "bookworm system made in $((SECONDS - t0)) s"
	fi
	flock -s "$BOOKWORM_LOCK"
}

version=$(cat "$REPO/VERSION")
debs=()
for p in "netlat-dkms_${version}_all" "netlat_${version}_amd64" \
	"libnetlat1_${version}_amd64" "libnetlat-dev_${version}_amd64"; do
	debs+=("$BUILD/deb/$p.deb")
done
if [[ ! -f ${debs[0]} ]] && ! make -s -C "$REPO" deb >"$LOGS/deb.log" 2>&1; then
	not_ok "make deb (see $LOGS/deb.log)"
	finish
fi
((${#kernels[@]})) || { not_ok "no kernel given"; finish; }
boot_k=${kernels[-1]}

if ! make_bookworm "${kernels[@]}"; then
	not_ok "a bookworm system with systemd and ${kernels[*]} (see $LOGS/bookworm-root.log)"
	finish
fi
ok "a bookworm system with systemd and the images and headers of ${kernels[*]}"

root=$dir/root
rm -rf --one-file-system "$dir"
if [[ -e $dir ]] || ! mkdir -p "$dir" || ! cp -a "$BOOKWORM" "$root"; then
	not_ok "a copy of the system in $dir"
	finish
fi
exec {BOOKWORM_LOCK}>&-
mkdir -p "$root/tmp/debs"
cp "${debs[@]}" "$root/tmp/debs/"

# --- apt install; DKMS builds for every kernel -----------------------------
if in_chroot "$root" "" apt-get install -y --no-install-recommends \
	"${debs[@]/#$BUILD\/deb\//\/tmp\/debs\/}" >"$dir/apt-install.log" 2>&1; then
	ok "apt install ./netlat-dkms ./netlat ./libnetlat1 ./libnetlat-dev ($version)"
else
	not_ok "apt install of the four packages"
	tail -n 30 "$dir/apt-install.log" | sed 's/^/#   /'
	finish
fi
why=
for k in "${kernels[@]}"; do
	# compressed like the kernel's own modules (6.12: xz)
	ko=$(find "$root/lib/modules/$k/updates/dkms" -name 'netlat.ko*' 2>/dev/null | head -n 1)
	if [[ -z $ko ]]; then
		why+="$k: no updates/dkms/netlat.ko"$'\n'
		continue
	fi
	v=$(modinfo -F version "$ko") vm=$(modinfo -F vermagic "$ko")
	[[ $v == "$version" ]] || why+="$k: netlat.ko version '$v'"$'\n'
	[[ $vm == "$k "* ]] || why+="$k: vermagic '$vm'"$'\n'
done
in_chroot "$root" "" dkms status netlat 2>&1 | sed 's/^/# dkms status: /'
check "DKMS built netlat.ko $version for ${kernels[*]}" "$why"

# --- a vendor's program against the shared library --------------------------
why=
# shellcheck disable=SC2016 # expanded in the chroot
out=$(in_chroot "$root" "" sh -c 'cd /tmp &&
	gcc -Wall -Werror -o fr /usr/share/doc/libnetlat-dev/examples/flight_recorder.c \
		$(pkg-config --cflags --libs libnetlat) && ldd ./fr; ./fr; echo "rc=$?"' 2>&1)
grep -qE 'libnetlat.so.1 => (/usr)?/lib/x86_64-linux-gnu/libnetlat.so.1 ' <<<"$out" ||
	why+="not linked against the installed libnetlat.so.1:"$'\n'"$out"$'\n'
grep -q 'usage: flight_recorder' <<<"$out" && grep -q '^rc=2$' <<<"$out" ||
	why+="no usage and exit 2 without arguments:"$'\n'"$out"$'\n'
check "the example builds with pkg-config --cflags --libs libnetlat and runs on libnetlat.so.1" "$why"

# --- the booted system ---------------------------------------------------------
cat >"$root/usr/local/sbin/netlat-pkgtest" <<'EOF'
#!/bin/sh
# Runs once at boot; everything goes to the second serial port.
exec >/dev/ttyS1 2>&1
say() { echo "PKGTEST: $*"; }
outsegs() { ip netns exec "$1" awk '/^Tcp:/ { if (h) print $12; h = 1 }' /proc/net/snmp; }
systemctl start netlat-exporter.service
say "exporter $(systemctl is-active netlat-exporter.service)"
ip netns add a && ip netns add b
ip link add va netns a type veth peer name vb netns b
ip -n a addr add 192.0.2.1/24 dev va && ip -n b addr add 192.0.2.2/24 dev vb
ip -n a link set va up && ip -n b link set vb up
ip -n a link set lo up && ip -n b link set lo up
ip netns exec b iperf3 -s -1 -D && sleep 1
ip netns exec a iperf3 -c 192.0.2.2 -t 2 >/tmp/iperf.log 2>&1
say "iperf3 rc=$?"
echo PKGTEST-METRICS-BEGIN
busybox wget -q -O - http://127.0.0.1:9661/metrics
echo PKGTEST-METRICS-END
say "outsegs $(($(outsegs a) + $(outsegs b) + $(awk '/^Tcp:/ { if (h) print $12; h = 1 }' /proc/net/snmp)))"
systemctl start netlat-flight.service
sleep 2
say "flight $(systemctl is-active netlat-flight.service)"
[ -d /var/lib/netlat/flight ] && say "flight-dir yes"
say "$(systemd-analyze security netlat-exporter.service --no-pager 2>&1 | tail -n 1)"
# purged with both services running: the packages stop them and unload
# the module themselves
dpkg --purge libnetlat-dev libnetlat1 netlat netlat-dkms >/tmp/purge.log 2>&1
say "purge rc=$?"
echo PKGTEST-LEFT-BEGIN
find / -xdev \( -path /proc -o -path /sys -o -path /tmp \) -prune -o \
	-name '*netlat*' -print | grep -v pkgtest
lsmod | grep '^netlat ' && echo "module netlat still loaded"
systemctl list-unit-files 'netlat*' --no-legend | grep -v pkgtest
echo PKGTEST-LEFT-END
cat /tmp/purge.log | sed 's/^/purge: /'
say done
systemctl poweroff
EOF
chmod 755 "$root/usr/local/sbin/netlat-pkgtest"
cat >"$root/etc/systemd/system/netlat-pkgtest.service" <<'EOF'
[Unit]
Description=netlat package test
After=multi-user.target

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/netlat-pkgtest

[Install]
WantedBy=multi-user.target
EOF
ln -sf /etc/systemd/system/netlat-pkgtest.service \
	"$root/etc/systemd/system/multi-user.target.wants/netlat-pkgtest.service"
# No login prompt, no wait for a network that does not exist.
ln -sf /dev/null "$root/etc/systemd/system/getty@tty1.service"
ln -sf /dev/null "$root/etc/systemd/system/serial-getty@ttyS0.service"

# The test's own traces, so that what is left after the purge is netlat's.
rm -f "$root/.netlat-ready" "$root/etc/apt/apt.conf.d/50netlat-host"

img=$dir/root.img console=$dir/console.log raw=$dir/ttyS1.raw out=$dir/ttyS1.log
# boot_system <attempt>: a fresh image of the system, booted until the
# test unit powers it off.
boot_system() {
	local t0=$SECONDS rc
	rm -f "$img" "$raw" "$out"
	mkfs.ext4 -q -F -L root -d "$root" "$img" 4G >"$dir/mkfs.log" 2>&1 || return 1
	# thread=single: TCG's threads race the kernel's boot-time code
	# patching now and then (an int3 oops before init)
	timeout --foreground -k 10 900 qemu-system-x86_64 -accel tcg,thread=single \
		-smp 2 -m 2G -nographic -no-reboot -nic none \
		-kernel "$root/boot/vmlinuz-$boot_k" -initrd "$root/boot/initrd.img-$boot_k" \
		-drive "file=$img,if=virtio,format=raw" -serial mon:stdio -serial "file:$raw" \
		-append "root=/dev/vda rw console=ttyS0 systemd.show_status=0 panic=-1" \
		</dev/null >"$console" 2>&1
	rc=$?
	echo "# boot $1 of $boot_k with systemd: qemu rc $rc after $((SECONDS - t0)) s"
	# a terminal's line ends
	tr -d '\r' <"$raw" >"$out" 2>/dev/null
}
boot_system 1 || { not_ok "an ext4 image of the system"; tail -n 10 "$dir/mkfs.log" | sed 's/^/#   /'; finish; }
# A kernel that died before the test unit ran (no line of it) is booted
# once more, as the lane does with a VM that died before netlat was loaded.
if [[ ! -s $out ]] && grep -qE 'Kernel panic|Oops' "$console"; then
	grep -m1 -E 'Kernel panic|Oops' "$console" | sed 's/^/# died before the test unit: /'
	cp "$console" "$dir/console-1.log"
	boot_system 2
fi
if ! grep -q '^PKGTEST: done' "$out" 2>/dev/null; then
	not_ok "the system boots $boot_k with systemd and runs the test unit to its end"
	tail -n 40 "$console" | sed 's/^/#   /'
	finish
fi
ok "the system boots $boot_k with systemd and runs the test unit to its end"
grep '^PKGTEST: ' "$out" | sed 's/^/# /'

why=
grep -qx 'PKGTEST: exporter active' "$out" ||
	why="$(grep '^PKGTEST: exporter' "$out" || echo 'no word from the exporter')"
check "netlat-exporter.service starts (modprobe, probes, level, exporter)" "$why"

sed -n '/^PKGTEST-METRICS-BEGIN$/,/^PKGTEST-METRICS-END$/p' "$out" | sed '1d;$d' >"$dir/metrics.txt"
why=
promtool check metrics <"$dir/metrics.txt" >"$dir/promtool.log" 2>&1 ||
	why+="promtool check metrics:"$'\n'"$(head -n 10 "$dir/promtool.log")"$'\n'
n=$(awk '$1 == "netlat_tcp_stage_seconds_count{stage=\"xmit_ack\"}" {print $2}' "$dir/metrics.txt")
segs=$(sed -n 's/^PKGTEST: outsegs //p' "$out")
if [[ -z $n || -z $segs ]]; then
	why+="no xmit_ack count ('$n') or OutSegs ('$segs')"$'\n'
elif ! ((n > 0 && n <= segs)); then
	why+="xmit_ack count $n, OutSegs of the three namespaces $segs"$'\n'
fi
check "the service's metrics: promtool-clean, xmit_ack count ${n:-?} in (0, OutSegs ${segs:-?}]" "$why"

why=
grep -qx 'PKGTEST: flight active' "$out" || why+="netlat-flight.service not active"$'\n'
grep -qx 'PKGTEST: flight-dir yes' "$out" || why+="no /var/lib/netlat/flight"$'\n'
check "netlat-flight.service runs, writing under /var/lib/netlat/flight" "$why"

why=
grep -qx 'PKGTEST: purge rc=0' "$out" || why+="dpkg --purge failed:"$'\n'"$(grep '^purge: ' "$out" | tail -n 10)"$'\n'
left=$(sed -n '/^PKGTEST-LEFT-BEGIN$/,/^PKGTEST-LEFT-END$/p' "$out" | sed '1d;$d')
[[ -z $left ]] || why+="left behind:"$'\n'"$left"$'\n'
check "dpkg --purge leaves no module, unit or file behind" "$why"
finish
