# SPDX-License-Identifier: GPL-2.0
#
# make            module (against KDIR) and userspace tools
# make module     netlat.ko against KDIR (default: the running kernel)
# make tools      userspace only; needs no kernel headers
# make demo       boot the demo VM: module loaded, records tailed and summarised
# make check      every test, in QEMU, on each supported Debian kernel
# make bench      benchmarks in QEMU (figures printed, not asserted)
# make deb        Debian packages in build/deb/ (netlat-dkms, netlat,
#                 libnetlat1, libnetlat-dev); needs debhelper and dh-dkms

KDIR ?= /lib/modules/$(shell uname -r)/build
W ?= 1

all: module tools

# No build tree: say so, instead of make's "No such file or directory".
module:
	@test -f $(KDIR)/Makefile || { echo "netlat: no kernel build tree at $(KDIR) (install the kernel's headers, or set KDIR)" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) W=$(W) modules

tools:
	$(MAKE) -C tools

# kselftest_harness.h comes from Debian's linux-source-6.1, never from git.
build/ksft/kselftest_harness.h:
	bash -c '. tests/qemu/lib.sh && fetch_ksft_headers'

selftests: build/ksft/kselftest_harness.h
	$(MAKE) -C selftests

check:
	bash tests/qemu/check.sh

demo:
	bash tests/qemu/demo.sh

bench:
	bash tests/qemu/bench.sh

# From a copy of the tree's files (tracked and new, not ignored), so the
# build never writes beside the sources; dpkg-buildpackage puts the
# packages in the copy's parent.
DEB_DIR = build/deb
deb:
	@command -v dh >/dev/null && test -x /usr/bin/dh_dkms || \
		{ echo "netlat: make deb needs debhelper and dh-dkms (apt install debhelper dh-dkms)" >&2; exit 1; }
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_DIR)/netlat-$$(cat VERSION)
	# an archive file, not a pipe: sh has no pipefail, and a failed copy
	# must stop here
	if git rev-parse --git-dir >/dev/null 2>&1; then \
		git ls-files -co --exclude-standard -z >$(DEB_DIR)/files && \
		tar -cf $(DEB_DIR)/src.tar --null -T $(DEB_DIR)/files --ignore-failed-read; \
	else tar -cf $(DEB_DIR)/src.tar --exclude=./build .; fi
	tar -xf $(DEB_DIR)/src.tar -C $(DEB_DIR)/netlat-$$(cat VERSION)
	rm -f $(DEB_DIR)/src.tar $(DEB_DIR)/files
	cd $(DEB_DIR)/netlat-$$(cat VERSION) && dpkg-buildpackage -b -us -uc
	@ls -1 $(DEB_DIR)/*.deb

install: module tools
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
	depmod -a $(notdir $(patsubst %/build,%,$(KDIR))) 2>/dev/null || depmod -a
	$(MAKE) -C tools install

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	$(MAKE) -C tools clean
	$(MAKE) -C selftests clean
	rm -rf build

.PHONY: all module tools selftests check demo bench deb install clean
