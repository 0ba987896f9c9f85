# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# The debug kernel of the reliability lane, sourced by lib.sh: Debian's
# linux-source-6.1, tinyconfig plus tests/qemu/debug.config (KASAN,
# lockdep, kmemleak, ...), bzImage and modules built with -j$(nproc).
#
# The build takes a quarter of an hour, so it lives outside the work tree,
# in $NETLAT_CACHE (default ~/.cache/netlat), shared by every clone on the
# machine, keyed on the fragment, DEBUG_BUILD_REV (bump it when the build
# steps below change) and the source package version: an unchanged rebuild
# is a stamp comparison. Layout:
#   <cache>/debug-<key>/src/    the configured, built tree (KDIR for netlat.ko)
#   <cache>/debug-<key>/image/  like an unpacked linux-image package
#                               (boot/vmlinuz-*, lib/modules/*), linked as
#                               build/kernels/<DEBUG_KVER> so the rest of the
#                               lane treats it as one more kernel
#   <cache>/.debug-tmp.*        a build in progress, renamed when complete

DEBUG_KVER=6.1-netlat-debug
DEBUG_BUILD_REV=1
NETLAT_CACHE=${NETLAT_CACHE:-$HOME/.cache/netlat}

debug_key() {
	{ dpkg-query -W -f='${Version}' linux-source-6.1
	  echo "rev $DEBUG_BUILD_REV"
	  cat "$LANE/debug.config"; } | sha256sum | cut -c1-16
}

# True if $1 is the debug kernel's release name.
is_debug_kernel() { [[ $1 == "$DEBUG_KVER" ]]; }

# The built tree of the debug kernel (KDIR for netlat.ko).
debug_src() { echo "$NETLAT_CACHE/debug-$(debug_key)/src"; }

debug_ready() {
	[[ -f $1/image/.key && $(cat "$1/image/.key") == "$2" && -f $1/src/Module.symvers ]]
}

# Built once per key among the clones sharing the cache: under a lock (a
# second run waits, then reuses), in a temporary directory renamed into
# place when complete (a killed build is never taken for a finished one,
# and nobody removes a tree another run builds against).
build_debug_kernel() {
	local key root tmp src out lock t0=$SECONDS
	key=$(debug_key)
	root=$NETLAT_CACHE/debug-$key
	mkdir -p "$BUILD/kernels" "$NETLAT_CACHE" "$LOGS"
	ln -sfn "$root/image" "$(kdir "$DEBUG_KVER")"
	debug_ready "$root" "$key" && return 0
	exec {lock}>"$NETLAT_CACHE/.debug.lock"
	flock "$lock"
	if debug_ready "$root" "$key"; then
		exec {lock}>&-
		return 0
	fi
	log "building the debug kernel (key $key; ~15 min on 2 cores, once per machine)"
	local blog=$LOGS/debug-kernel-build.log
	# Earlier keys (2 GB each) and killed attempts.
	rm -rf "$NETLAT_CACHE"/debug-* "$NETLAT_CACHE"/.debug-tmp.*
	tmp=$(mktemp -d "$NETLAT_CACHE/.debug-tmp.XXXXXX")
	src=$tmp/src out=$tmp/image
	mkdir -p "$src"
	tar -xJf /usr/src/linux-source-6.1.tar.xz -C "$src" --strip-components=1
	{
		make -C "$src" tinyconfig &&
		(cd "$src" && scripts/kconfig/merge_config.sh -m .config \
			"$LANE/debug.config") &&
		make -C "$src" olddefconfig &&
		make -C "$src" -j"$(nproc)" LOCALVERSION= \
			KERNELRELEASE="$DEBUG_KVER" bzImage modules &&
		mkdir -p "$out/boot" &&
		cp "$src/arch/x86/boot/bzImage" "$out/boot/vmlinuz-$DEBUG_KVER" &&
		make -C "$src" KERNELRELEASE="$DEBUG_KVER" INSTALL_MOD_PATH="$out" \
			INSTALL_MOD_STRIP=1 DEPMOD=true modules_install
	} >"$blog" 2>&1 || { tail -n 60 "$blog" >&2; die "debug kernel build failed (see $blog)"; }
	debug_config_ok "$src/.config" || die "debug kernel config lost options (see above)"
	echo "$key" >"$out/.key"
	mv "$tmp" "$root"
	exec {lock}>&-
	log "debug kernel built in $((SECONDS - t0)) s"
}

# Every option the fragment sets must survive olddefconfig.
debug_config_ok() {
	local cfg=$1 line opt val bad=0
	while read -r line; do
		case $line in
		CONFIG_*=*) opt=${line%%=*} val=${line#*=} ;;
		"# CONFIG_"*" is not set") opt=${line#\# } opt=${opt%% *} val=n ;;
		*) continue ;;
		esac
		if [[ $val == n ]]; then
			grep -q "^$opt=" "$cfg" || continue
		else
			grep -qx "$opt=$val" "$cfg" && continue
		fi
		echo "debug.config: $opt=$val did not survive" >&2
		bad=1
	done <"$LANE/debug.config"
	return "$bad"
}
