#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host-side test of what gets installed (no VM): one version everywhere,
# SPDX tags against COPYING, libnetlat's ABI (soname, symbol versions, the
# header, the map and the exports one set), make install with pkg-config,
# and make deb: the four packages, lintian, their contents, the DKMS
# source building netlat.ko. tests/pkg/install.sh then installs the
# packages in a booted Debian system. TAP lines, then "N passed, N failed".
# Usage: test.sh <work dir> [<kernel release with headers on this host>]

set -uo pipefail
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
dir=$1 kver=${2:-}
rm -rf "$dir"
mkdir -p "$dir"
pass=0 fail=0

ok() { echo "ok - $1"; pass=$((pass + 1)); }
not_ok() { echo "not ok - $1"; fail=$((fail + 1)); }
# check <name> <why-not>: ok when the reason is empty.
check() {
	if [[ -z $2 ]]; then ok "$1"; else not_ok "$1"; printf '%s\n' "$2" | sed 's/^/#   /'; fi
}
arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)

# --- one version ---------------------------------------------------------
version=$(cat "$repo/VERSION")
why=
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || why+="VERSION '$version' is not N.N.N"$'\n'
v=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$repo/dkms.conf")
[[ $v == "$version" ]] || why+="dkms.conf says '$v'"$'\n'
v=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version)
[[ $v == "$version" ]] || why+="debian/changelog says '$v'"$'\n'
v=$(awk '$1 == "(symver)LIBNETLAT_1" {print $2}' "$repo/debian/libnetlat1.symbols")
[[ $v == "$version" ]] || why+="libnetlat1.symbols' first version is '$v'"$'\n'
grep -q 'MODULE_VERSION(NETLAT_VERSION)' "$repo/module/main.c" || why+="MODULE_VERSION is not NETLAT_VERSION"$'\n'
check "one version ($version): dkms.conf, debian/changelog, symbols, module" "$why"

# --- licences ------------------------------------------------------------
# The SPDX tag each file must carry, from COPYING's table.
want_spdx() {
	case $1 in
	uapi/linux/netlat.h) echo 'GPL-2.0 WITH Linux-syscall-note' ;;
	tools/lib/*|tools/examples/*) echo 'LGPL-2.1-only OR BSD-2-Clause' ;;
	*) echo 'GPL-2.0' ;;
	esac
}
why=
while read -r f; do
	case $f in
	*.c|*.h|*.sh|*.map|Makefile|*/Makefile|Kbuild|*/Kbuild|dkms.conf|debian/rules) ;;
	*) continue ;;
	esac
	tag=$(head -n 3 "$repo/$f" | sed -n 's/.*SPDX-License-Identifier: \(.*\)$/\1/p' |
		sed 's| \*/$||')
	want=$(want_spdx "$f")
	[[ $tag == "$want" ]] || why+="$f: '${tag:-no tag}', COPYING says '$want'"$'\n'
done < <(git -C "$repo" ls-files -co --exclude-standard)
for l in GPL-2.0 LGPL-2.1 BSD-2-Clause; do
	[[ -s $repo/LICENSES/$l ]] || why+="no LICENSES/$l"$'\n'
done
check "every source file's SPDX tag is the one COPYING gives it" "$why"

# --- the shared library ----------------------------------------------------
so=$repo/tools/lib/libnetlat.so.$version
if make -s -C "$repo/tools" all >"$dir/tools.log" 2>&1 && [[ -f $so ]]; then
	ok "tools: libnetlat.so.$version builds"
else
	not_ok "tools: libnetlat.so.$version builds"
	sed 's/^/#   /' "$dir/tools.log" | tail -n 20
fi
why=
soname=$(readelf -d "$so" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libnetlat.so.1 ]] || why+="soname '$soname'"$'\n'
# Exports, with their version node: one the map defines (LIBNETLAT_1 and
# the nodes added after it), each of which the symbols file names.
nodes=$(sed -n 's/^\(LIBNETLAT_[0-9.]*\) {$/\1/p' "$repo/tools/lib/libnetlat.map" | paste -sd ' ')
for n in $nodes; do
	grep -q "^ (symver)$n " "$repo/debian/libnetlat1.symbols" ||
		why+="debian/libnetlat1.symbols has no (symver)$n"$'\n'
done
objdump -T "$so" | awk -v nodes="$nodes" 'BEGIN { split(nodes, v, " "); for (i in v) node[v[i]] = 1 }
	$2 == "g" && $4 != "*UND*" && !($NF in node) {print $NF, $(NF-1)}' \
	| sort >"$dir/exports"
awk -v nodes="$nodes" 'BEGIN { split(nodes, v, " "); for (i in v) node[v[i]] = 1 }
	!($2 in node) {print "unversioned or other node: " $0}' "$dir/exports" >"$dir/bad"
[[ -s $dir/bad ]] && why+=$(cat "$dir/bad")$'\n'
awk '{print $1}' "$dir/exports" | sort >"$dir/exported"
sed -n 's/^[[:space:]]*\(netlat_[a-z0-9_]*\);$/\1/p' "$repo/tools/lib/libnetlat.map" | sort >"$dir/mapped"
# Functions the header declares ("name(" outside a static inline).
grep -v 'static inline' "$repo/tools/lib/libnetlat.h" |
	grep -oE '\bnetlat_[a-z0-9_]+\(' | tr -d '(' | sort -u >"$dir/declared"
d=$(diff "$dir/mapped" "$dir/exported") || why+="map vs exports:"$'\n'"$d"$'\n'
d=$(diff "$dir/mapped" "$dir/declared") || why+="map vs libnetlat.h:"$'\n'"$d"$'\n'
[[ -s $dir/mapped ]] || why+="empty map"$'\n'
check "libnetlat.so: soname libnetlat.so.1, $(wc -l <"$dir/mapped") functions of libnetlat.h exported, each in a node of the map ($nodes)" "$why"

# --- make install and pkg-config -----------------------------------------
root=$dir/root
if make -s -C "$repo/tools" install DESTDIR="$root" PREFIX=/usr LIBDIR="/usr/lib/$arch" \
	UNITDIR=/lib/systemd/system >"$dir/install.log" 2>&1; then
	ok "make install DESTDIR= PREFIX=/usr LIBDIR=/usr/lib/$arch"
else
	not_ok "make install DESTDIR= PREFIX=/usr LIBDIR=/usr/lib/$arch"
	sed 's/^/#   /' "$dir/install.log" | tail -n 20
fi
why=
export PKG_CONFIG_SYSROOT_DIR=$root PKG_CONFIG_LIBDIR=$root/usr/lib/$arch/pkgconfig
v=$(pkg-config --modversion libnetlat 2>&1)
[[ $v == "$version" ]] || why+="pkg-config --modversion: '$v'"$'\n'
# shellcheck disable=SC2046 # pkg-config's words
if ! gcc -Wall -Wextra -Werror -o "$dir/flight_recorder" \
	"$repo/tools/examples/flight_recorder.c" $(pkg-config --cflags --libs libnetlat) \
	>"$dir/cc.log" 2>&1; then
	why+="the example does not build with pkg-config's flags:"$'\n'"$(tail -n 10 "$dir/cc.log")"$'\n'
else
	readelf -d "$dir/flight_recorder" | grep -q 'NEEDED.*\[libnetlat.so.1\]' ||
		why+="the example does not need libnetlat.so.1"$'\n'
	out=$(LD_LIBRARY_PATH=$root/usr/lib/$arch LD_DEBUG=libs "$dir/flight_recorder" 2>&1)
	rc=$?
	[[ $rc == 2 ]] || why+="the example exited $rc without arguments (usage: 2)"$'\n'
	grep -q "calling init: $root/usr/lib/$arch/libnetlat.so.1" <<<"$out" ||
		why+="the example did not load the installed libnetlat.so.1"$'\n'
	grep -q 'usage: flight_recorder' <<<"$out" || why+="no usage line"$'\n'
fi
unset PKG_CONFIG_SYSROOT_DIR PKG_CONFIG_LIBDIR
check "the example links libnetlat.so.1 through pkg-config --cflags --libs libnetlat and runs" "$why"

# --- make deb --------------------------------------------------------------
deb=$repo/build/deb
if make -s -C "$repo" deb >"$dir/deb.log" 2>&1; then
	ok "make deb"
else
	not_ok "make deb"
	sed 's/^/#   /' "$dir/deb.log" | tail -n 30
fi
why=
for p in "netlat-dkms_${version}_all" "netlat_${version}_amd64" \
	"libnetlat1_${version}_amd64" "libnetlat-dev_${version}_amd64"; do
	[[ -f $deb/$p.deb ]] || why+="no $p.deb"$'\n'
done
check "make deb: netlat-dkms, netlat, libnetlat1, libnetlat-dev $version" "$why"

# lintian at its most talkative; overrides are in debian/*.lintian-overrides,
# each with its reason.
lintian -E --pedantic --display-level '>=pedantic' "$deb"/*.changes >"$dir/lintian.log" 2>&1
grep -v 'running with root privileges' "$dir/lintian.log" >"$dir/lintian.tags"
check "lintian --pedantic -E: no tag but the overridden ones" "$(cat "$dir/lintian.tags")"

# contents: what each package must hold (dpkg-deb -c, paths without ./)
contents() { dpkg-deb -c "$deb/$1" | awk '{print $6}' | sed 's|^\./|/|'; }
why=
c=$(contents "libnetlat1_${version}_amd64.deb")
grep -qx "/usr/lib/$arch/libnetlat.so.$version" <<<"$c" || why+="libnetlat1: no .so.$version"$'\n'
grep -q '\.a$\|\.h$\|\.pc$' <<<"$c" && why+="libnetlat1: development files"$'\n'
c=$(contents "libnetlat-dev_${version}_amd64.deb")
for f in /usr/include/netlat/libnetlat.h /usr/include/netlat/linux/netlat.h \
	"/usr/lib/$arch/libnetlat.a" "/usr/lib/$arch/pkgconfig/libnetlat.pc" \
	/usr/share/doc/libnetlat-dev/examples/flight_recorder.c; do
	grep -qx "$f" <<<"$c" || why+="libnetlat-dev: no $f"$'\n'
done
c=$(contents "netlat_${version}_amd64.deb")
for f in /usr/bin/netlat /usr/share/man/man1/netlat.1.gz /etc/default/netlat \
	/lib/systemd/system/netlat-exporter.service /lib/systemd/system/netlat-flight.service; do
	grep -qx "$f" <<<"$c" || why+="netlat: no $f"$'\n'
done
dpkg-deb --fsys-tarfile "$deb/netlat_${version}_amd64.deb" |
	tar -xO ./lib/systemd/system/netlat-exporter.service >"$dir/exporter.service"
# shellcheck disable=SC2016 # systemd's variable, not the shell's
grep -qx 'ExecStart=/usr/bin/netlat exporter $NETLAT_EXPORTER_ARGS' "$dir/exporter.service" ||
	why+="netlat-exporter.service does not run /usr/bin/netlat"$'\n'
dpkg-deb -f "$deb/netlat_${version}_amd64.deb" Depends | grep -q libc6 ||
	why+="netlat: no shlibs dependency"$'\n'
dpkg-deb -f "$deb/libnetlat-dev_${version}_amd64.deb" Depends |
	grep -q "libnetlat1 (= $version)" || why+="libnetlat-dev does not depend on libnetlat1 (= $version)"$'\n'
dpkg-deb -f "$deb/netlat-dkms_${version}_all.deb" Depends | grep -q dkms ||
	why+="netlat-dkms does not depend on dkms"$'\n'
check "the packages' contents and dependencies" "$why"

# The DKMS source tree alone builds netlat.ko (what dkms does on a target)
why=
rm -rf "$dir/dkms"
mkdir -p "$dir/dkms"
dpkg-deb -x "$deb/netlat-dkms_${version}_all.deb" "$dir/dkms"
src=$dir/dkms/usr/src/netlat-$version
v=$(bash -c '. "$1/dkms.conf"; echo "$PACKAGE_NAME/$PACKAGE_VERSION"' sh "$src")
[[ $v == "netlat/$version" ]] || why+="dkms.conf names $v"$'\n'
if [[ -n $kver && -d /lib/modules/$kver/build ]]; then
	if make -C "$src" KDIR="/lib/modules/$kver/build" W= module >"$dir/dkms.log" 2>&1; then
		v=$(modinfo -F version "$src/netlat.ko")
		[[ $v == "$version" ]] || why+="netlat.ko says version '$v'"$'\n'
	else
		why+="the DKMS source does not build for $kver:"$'\n'"$(tail -n 15 "$dir/dkms.log")"$'\n'
	fi
	check "netlat-dkms's source builds netlat.ko $version for $kver" "$why"
else
	check "netlat-dkms's dkms.conf names netlat/$version" "$why"
fi

echo "$pass passed, $fail failed"
((fail == 0))
