# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
#
# Kernels from Debian 13 (trixie), sourced by lib.sh: the newest cloud
# kernel of the 7.x line in trixie-backports (and any "+deb13" release named
# in NETLAT_KVERS). Their headers need trixie's gcc-14 and a glibc newer than
# bookworm's, so netlat.ko is built for them in a trixie chroot; the host's
# own apt sources are never touched (nothing trixie may upgrade the bookworm
# host). The kernel itself is downloaded with the chroot's apt and unpacked
# into build/kernels/<release> like the bookworm ones.
#
# The chroot takes ~3.5 minutes to debootstrap, so it lives in $NETLAT_CACHE
# (see debugkernel.sh), shared by every clone on the machine:
#   <cache>/trixie-<key>/   the finished chroot (stamp .netlat-ready)
#   <cache>/.trixie-tmp.*   an attempt in progress; renamed when complete,
#                           so a killed attempt is never mistaken for one
# The key covers the package list and TRIXIE_REV (bump it when the steps
# below change). The chroot's package lists are refreshed when older than
# a day, so a newer kernel upload is picked up without any edit here.

TRIXIE_REV=1
TRIXIE_PKGS=gcc-14,make,libc6-dev,bc,flex,bison,libelf-dev,libssl-dev,kmod,xz-utils,pahole
# Headers of the 7.x line; the newest one is used.
TRIXIE_HEADERS_RE='^linux-headers-7\.[0-9.]+\+deb13-cloud-amd64$'
TRIXIE_LISTS_MAX_AGE=86400

# True for a release whose packages come from trixie (built in the chroot).
is_trixie_kernel() { [[ $1 == *+deb13-* ]]; }

trixie_root() {
	local key
	key=$({ echo "rev $TRIXIE_REV"; echo "$TRIXIE_PKGS"; } | sha256sum | cut -c1-16)
	echo "$NETLAT_CACHE/trixie-$key"
}

# The Debian archive the host's apt uses (sources.list, *.list and deb822
# *.sources, as apt itself parses them): the bookworm "main" entry, and of
# those one whose Release file says Origin Debian if apt has fetched it
# (a third-party repository may name its suite "bookworm" too). Read at
# run time, so no mirror is named in the project.
host_mirror() {
	local uri
	# shellcheck disable=SC2016 # apt's format fields, not shell
	uri=$(apt-get indextargets \
		--format '$(REPO_URI)|$(RELEASE)|$(CODENAME)|$(COMPONENT)|$(ORIGIN)' \
		'Identifier: Packages' 2>/dev/null |
		awk -F'|' '$1 ~ /^(https?|ftp):\/\// && $4 == "main" &&
			($2 == "bookworm" || $3 == "bookworm") && $5 ~ /^(Debian)?$/ {
				if ($5 == "Debian") { print $1; found = 1; exit }
				if (first == "") first = $1
			}
			END { if (!found && first != "") print first }')
	[[ -n $uri ]] || die "no Debian bookworm archive in the host's apt sources (/etc/apt/sources.list*)"
	echo "${uri%/}"
}

# in_chroot <root> <bind-dir> <command>...: run a command in the chroot at
# <root> with /proc mounted (objtool reads it) and <bind-dir> (if not
# empty) bound at the same path, all in a private mount namespace: the
# mounts vanish with the command, even when it is killed. A clean
# environment: the host's PATH and make's jobserver mean nothing inside.
in_chroot() {
	local root=$1 bind=$2
	shift 2
	cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --propagation private -- /bin/sh -ec '
		root=$1 bind=$2; shift 2
		mount -t proc proc "$root/proc"
		if [ -n "$bind" ]; then
			mkdir -p "$root$bind"
			mount --bind "$bind" "$root$bind"
		fi
		exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"' \
		sh "$root" "$bind" "$@"
}

# in_trixie [-b <dir>] <command>...: in_chroot on the lane's chroot.
in_trixie() {
	local bind=
	if [[ $1 == -b ]]; then bind=$2; shift 2; fi
	in_chroot "$(trixie_root)" "$bind" "$@"
}

# Point the chroot's apt at the host's mirror (it may have changed since
# the chroot was made) with the host's Acquire settings (proxies, a frozen
# mirror's Valid-Until), trixie and trixie-backports only.
trixie_apt_config() {
	local root=$1 mirror
	mirror=$(host_mirror)
	printf 'deb %s trixie main\ndeb %s trixie-backports main\n' \
		"$mirror" "$mirror" >"$root/etc/apt/sources.list"
	{ apt-config dump | grep -E '^Acquire::' | grep -vE '^Acquire::IndexTargets'
	  # apt's _apt user cannot read what root's downloads leave behind
	  echo 'APT::Sandbox::User "root";'; } >"$root/etc/apt/apt.conf.d/50netlat-host" || true
}

# trixie_apt_update: refresh the chroot's package lists.
trixie_apt_update() {
	local root
	root=$(trixie_root)
	trixie_apt_config "$root"
	log "apt-get update (trixie chroot)"
	in_trixie apt-get update -qq -o DPkg::Lock::Timeout=600 >/dev/null
	touch "$root/.netlat-lists"
}

# Make the chroot if it is not there; refresh its lists when stale.
setup_trixie() {
	local root t0=$SECONDS tmp lock blog=$LOGS/trixie-chroot.log
	root=$(trixie_root)
	mkdir -p "$NETLAT_CACHE" "$LOGS"
	if [[ ! -f $root/.netlat-ready ]]; then
		# One attempt at a time among the clones sharing the cache.
		exec {lock}>"$NETLAT_CACHE/.trixie.lock"
		flock "$lock"
		if [[ ! -f $root/.netlat-ready ]]; then
			# Earlier keys and killed attempts. --one-file-system: a
			# killed debootstrap may have left /proc mounted inside.
			rm -rf --one-file-system "$NETLAT_CACHE"/trixie-* \
				"$NETLAT_CACHE"/.trixie-tmp.*
			tmp=$(mktemp -d "$NETLAT_CACHE/.trixie-tmp.XXXXXX")
			chmod 755 "$tmp"	# the chroot's /: mktemp made it 0700
			log "debootstrap trixie into $root (~3.5 min, once per machine)"
			# debootstrap's own /proc and /sys mounts stay private too.
			unshare --mount --propagation private -- debootstrap \
				--variant=minbase --include="$TRIXIE_PKGS" \
				trixie "$tmp" "$(host_mirror)" >"$blog" 2>&1 ||
				{ tail -n 30 "$blog" >&2; die "debootstrap failed (see $blog)"; }
			trixie_apt_config "$tmp"
			in_chroot "$tmp" "" apt-get update -qq >>"$blog" 2>&1 ||
				{ tail -n 30 "$blog" >&2; die "apt-get update in the chroot failed (see $blog)"; }
			touch "$tmp/.netlat-lists" "$tmp/.netlat-ready"
			mv "$tmp" "$root"
			log "trixie chroot made in $((SECONDS - t0)) s"
		fi
		exec {lock}>&-
	fi
	trixie_lists_stale "$root" || return 0
	exec {lock}>"$NETLAT_CACHE/.trixie.lock"
	flock "$lock"
	! trixie_lists_stale "$root" || trixie_apt_update
	exec {lock}>&-
}

trixie_lists_stale() {
	local age
	age=$(($(date +%s) - $(stat -c %Y "$1/.netlat-lists" 2>/dev/null || echo 0)))
	((age > TRIXIE_LISTS_MAX_AGE))
}

# The newest 7.x cloud kernel release in the chroot's lists (trixie-backports).
newest_trixie_kernel() {
	in_trixie apt-cache search --names-only "$TRIXIE_HEADERS_RE" |
		sed -E 's/^linux-headers-([^ ]+) .*/\1/' | sort -V | tail -n 1
}

# trixie_kernel <release>: its headers installed in the chroot and the
# kernel (linux-binary-*) with its modules (linux-modules-*) unpacked into
# build/kernels/<release>, laid out like a bookworm linux-image package.
trixie_kernel() {
	local k=$1 root dir tmp lock t0=$SECONDS
	root=$(trixie_root)
	# The chroot's apt is shared by every clone: one at a time.
	exec {lock}>"$NETLAT_CACHE/.trixie.lock"
	flock "$lock"
	# dpkg's word, not the files: an install killed half-way has files too.
	# shellcheck disable=SC2016 # dpkg-query's format
	if [[ $(in_trixie dpkg-query -W -f='${db:Status-Status}' "linux-headers-$k" \
		2>/dev/null) != installed ]]; then
		log "installing linux-headers-$k in the trixie chroot"
		# Finish what a killed earlier install left half-configured.
		in_trixie dpkg --configure -a >/dev/null 2>&1 || true
		in_trixie apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 \
			-t trixie-backports "linux-headers-$k" >"$LOGS/trixie-headers.log" 2>&1 || {
			# An upload newer than the lists: refresh once and retry.
			trixie_apt_update
			in_trixie apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=600 \
				-t trixie-backports "linux-headers-$k" \
				>"$LOGS/trixie-headers.log" 2>&1 ||
				{ tail -n 20 "$LOGS/trixie-headers.log" >&2
				  die "cannot install linux-headers-$k in the chroot"; }
		}
		log "headers of $k installed in $((SECONDS - t0)) s"
	fi
	exec {lock}>&-
	dir=$(kdir "$k")
	[[ -f $(vmlinuz "$k") ]] && return 0
	t0=$SECONDS
	log "downloading linux-binary-$k and linux-modules-$k"
	tmp=$(mktemp -d "$BUILD/kernels/.dl.XXXXXX")
	# shellcheck disable=SC2016 # expanded by the inner shell
	in_trixie -b "$tmp" sh -ec 'cd "$1"; shift
		apt-get download -qq -o APT::Sandbox::User=root "$@"
		for d in *.deb; do dpkg-deb -x "$d" root; done' \
		sh "$tmp" "linux-binary-$k" "linux-modules-$k"
	# 7.x puts everything under /usr/lib/modules/<release>/ (vmlinuz too,
	# no /boot): give it the paths the rest of the lane uses.
	if [[ ! -e $tmp/root/lib && -d $tmp/root/usr/lib/modules ]]; then
		ln -s usr/lib "$tmp/root/lib"
	fi
	if [[ ! -e $tmp/root/boot/vmlinuz-$k ]]; then
		mkdir -p "$tmp/root/boot"
		ln -s "../usr/lib/modules/$k/vmlinuz" "$tmp/root/boot/vmlinuz-$k"
	fi
	[[ -f $tmp/root/boot/vmlinuz-$k ]] || die "no vmlinuz in linux-binary-$k"
	rm -rf "$dir"
	mv "$tmp/root" "$dir"
	rm -rf "$tmp"
	log "kernel $k unpacked in $((SECONDS - t0)) s"
}
