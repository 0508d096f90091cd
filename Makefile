# ESA: preemptive in-network aggregation on a commodity server.
# `make deps` installs what the build needs; `make` builds the module, the
# BPF objects and the tools; `make check` runs every test; `make demo` runs
# the default multi-job experiment; `make bench` measures allreduce goodput
# against gloo; `make demo-torch` trains a PyTorch DDP job through the
# switch; `make install` installs the tools, libesa and the Python package;
# `make docs` builds Documentation/ as HTML into build/docs;
# `make check-mutants` and `make coverage` measure the tests themselves
# (Documentation/testing.rst).
# KERNEL=6.12 builds the module for, and boots the VM on, Debian's 6.12
# instead of 6.1 (`make vm-run KERNEL=6.12 CMD=...`, `make check-vm
# KERNEL=6.12`). See README.md.
include scripts/common.mk

.PHONY: all deps kmod bpf tools check check-vm vm-run demo demo-torch \
	bench-dataplane bench-fanout bench clean install docs install-dkms-src install-dkms \
	uninstall-dkms deb check-deb check-mutants coverage

all: bpf tools kmod

deps:
	$(Q)$(ROOT)/scripts/deps.sh

bpf:
	$(Q)$(MAKE) -s -C bpf

tools: bpf
	$(Q)$(MAKE) -s -C tools

kmod:
	$(Q)$(MAKE) -s -C kmod

selftests: all
	$(Q)$(MAKE) -s -C selftests

# Every test: on this host, the whole VM list on the default kernel, and
# the module's VM tests on each other kernel (selftests/run_tests.sh).
check: deps
	$(Q)$(MAKE) -s all selftests
	$(Q)$(foreach k,$(filter-out $(KERNEL),$(KERNELS)),$(MAKE) -s selftests KERNEL=$(k) &&) true
	$(Q)$(ROOT)/selftests/run_tests.sh

# The whole VM list on one kernel: `make check-vm KERNEL=6.12`.
check-vm: deps
	$(Q)$(MAKE) -s all selftests
	$(Q)$(ROOT)/selftests/run_tests.sh --vm-only

# Documentation/testing.rst: the mutation campaign (scripts/mutants.list;
# MUTANTS_ARGS, e.g. "--sample 8" or "--host-only"; not part of check)
# and the coverage of the user-space C (build/coverage).
check-mutants: deps
	$(Q)$(MAKE) -s all selftests
	$(Q)$(ROOT)/scripts/mutants.py $(MUTANTS_ARGS)

coverage: deps
	$(Q)$(ROOT)/scripts/coverage.sh

vm-run: deps
	$(Q)$(MAKE) -s kmod
	$(Q)$(ROOT)/scripts/vm-run.sh $(if $(CMD),"$(CMD)",)

bench-dataplane: deps
	$(Q)$(MAKE) -s all
	$(Q)$(MAKE) -s -C bench
	$(Q)$(ROOT)/bench/bench_dataplane.sh

# Copies per second of a one-armed port's fan-out (Documentation/dataplane.rst).
bench-fanout: deps
	$(Q)$(MAKE) -s all
	$(Q)$(MAKE) -s -C bench
	$(Q)$(ROOT)/bench/bench_fanout.sh

# Documentation/performance.rst: one table (data plane per packet, goodput
# of esa through the switch, one-armed on one and on two servers, host-only
# and gloo), progress on stderr.
bench: deps
	$(Q)$(MAKE) -s all selftests
	$(Q)$(MAKE) -s -C bench
	$(Q)$(ROOT)/bench/allreduce.sh

demo: deps
	$(Q)$(MAKE) -s all
	$(Q)VM=$(VM) $(ROOT)/tools/demo.sh

demo-torch: deps
	$(Q)$(MAKE) -s all
	$(Q)FAULT=$(FAULT) $(ROOT)/tools/demo-torch.sh

# Documentation/ as HTML (Documentation/conf.py), every warning an error;
# read afresh each time (-E), so that no warning hides in a saved state.
# Sphinx and what it reads with are installed here when missing, not by
# `make deps` (scripts/deps.sh docs).
docs:
	$(Q)$(ROOT)/scripts/deps.sh docs
	$(Q)sphinx-build -q -E -W --keep-going -b html -d $(BUILD)/docs/.doctrees \
		$(ROOT)/Documentation $(BUILD)/docs
	@echo "documentation in $(BUILD)/docs/index.html"

# Installed under $(DESTDIR)$(PREFIX): the tools, libesa.so with its
# headers (esa.h and the project headers it includes, as the compiler
# lists them) and pkg-config file, the Python package esa for $(PYTHON)
# (which finds the library through the _install.py written here),
# aggctl's man page and its bash completion (where bash-completion looks),
# and esa-switch.service with the script it runs (tools/service).
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
LIBEXECDIR ?= $(PREFIX)/libexec
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
PYTHON     ?= /usr/bin/python3
PYTHONDIR  ?= $(LIBDIR)/python$(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')/dist-packages
INSTALL_BINS := $(BUILD)/tools/aggctl $(BUILD)/tools/esa-job $(BUILD)/tools/esa-ps
INSTALL_HEADERS = $(filter $(ROOT)/%,$(shell $(CC) -MM -I$(ROOT)/uapi \
	$(ROOT)/tools/lib/esa.h | sed 's/^[^:]*://; s/\\$$//'))

install: tools
	$(Q)install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR)/pkgconfig \
		$(DESTDIR)$(INCLUDEDIR)/esa $(DESTDIR)$(PYTHONDIR)/esa
	$(Q)install -m 755 $(INSTALL_BINS) $(DESTDIR)$(BINDIR)
	$(Q)install -m 755 $(BUILD)/$(LIBESA_SONAME) $(DESTDIR)$(LIBDIR)
	$(Q)ln -sf $(LIBESA_SONAME) $(DESTDIR)$(LIBDIR)/libesa.so
	$(Q)install -m 644 $(INSTALL_HEADERS) $(DESTDIR)$(INCLUDEDIR)/esa
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|' \
		-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(ESA_VERSION)|' \
		$(ROOT)/tools/lib/libesa.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libesa.pc
	$(Q)install -m 644 $(ROOT)/tools/python/esa/*.py $(DESTDIR)$(PYTHONDIR)/esa
	$(Q)echo 'LIBRARY = "$(LIBDIR)/$(LIBESA_SONAME)"  # written by make install' \
		> $(DESTDIR)$(PYTHONDIR)/esa/_install.py
	$(Q)install -d $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(BASHCOMPDIR)
	$(Q)install -m 644 $(ROOT)/Documentation/aggctl.8 $(DESTDIR)$(MANDIR)/man8
	$(Q)install -m 644 $(ROOT)/tools/aggctl/aggctl.bash-completion \
		$(DESTDIR)$(BASHCOMPDIR)/aggctl
	$(Q)install -d $(DESTDIR)$(LIBEXECDIR)/esa $(DESTDIR)$(SYSTEMDUNITDIR)
	$(Q)install -m 755 $(ROOT)/tools/service/esa-switch $(DESTDIR)$(LIBEXECDIR)/esa
	$(Q)sed 's|@LIBEXECDIR@|$(LIBEXECDIR)|' $(ROOT)/tools/service/esa-switch.service.in \
		> $(DESTDIR)$(SYSTEMDUNITDIR)/esa-switch.service
	$(Q)if [ -z "$(DESTDIR)" ]; then ldconfig; fi
	@echo "installed under $(DESTDIR)$(PREFIX)"

# The module's source as DKMS builds it (dkms.conf, the top-level Kbuild):
# the module, the headers and rules it includes, and its BTF step.
# install-dkms-src puts it where DKMS looks (the esa-dkms package uses
# it); install-dkms then has DKMS build and install it for the running
# kernel, and later for every kernel installed.
DKMS_SRCDIR := /usr/src/esa-$(ESA_VERSION)
DKMS_FILES := Kbuild dkms.conf VERSION lib/esa_rules.c \
	$(filter-out %.mod.c,$(patsubst $(ROOT)/%,%,$(wildcard $(ROOT)/kmod/Kbuild \
	$(ROOT)/kmod/*.[ch] $(ROOT)/uapi/*.h $(ROOT)/include/*.h)))
DKMS_SCRIPTS := scripts/dkms-build.sh scripts/mod-btf.sh

install-dkms-src:
	$(Q)cd $(ROOT) && for f in $(DKMS_FILES); do \
		install -D -m 644 $$f $(DESTDIR)$(DKMS_SRCDIR)/$$f || exit 1; done
	$(Q)cd $(ROOT) && for f in $(DKMS_SCRIPTS); do \
		install -D -m 755 $$f $(DESTDIR)$(DKMS_SRCDIR)/$$f || exit 1; done

# Debian packages into build/deb/ (scripts/make-deb.sh): esa-dkms,
# esa-tools, libesa0, libesa-dev, python3-esa.
deb:
	$(Q)$(ROOT)/scripts/make-deb.sh

# The packages installed and purged in a fresh Debian 12 root
# (scripts/check-deb.sh); ~20 min cold, so not part of make check.
FRESH_ROOT_CHECK ?= $(ROOT)/../shared/tools/fresh-root-check
check-deb:
	$(Q)if [ ! -x "$(FRESH_ROOT_CHECK)" ]; then \
		echo "check-deb: no fresh-root-check at $(FRESH_ROOT_CHECK) (FRESH_ROOT_CHECK=PATH)" >&2; \
		exit 1; fi
	$(Q)SUITE=bookworm $(FRESH_ROOT_CHECK) scripts/check-deb.sh --fresh-root

install-dkms: install-dkms-src
	$(Q)install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	$(Q)install -m 644 $(ROOT)/tools/service/esa-dkms.service $(DESTDIR)$(SYSTEMDUNITDIR)
	$(Q)dkms add esa/$(ESA_VERSION)
	$(Q)dkms install esa/$(ESA_VERSION)

uninstall-dkms:
	$(Q)dkms remove esa/$(ESA_VERSION) --all
	$(Q)rm -rf $(DKMS_SRCDIR)

clean:
	$(Q)$(MAKE) -s -C kmod clean
	rm -rf $(BUILD)
