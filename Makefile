# ESA: preemptive in-network aggregation on a commodity server.
# `make deps` installs what the build needs; `make` builds the module, the
# BPF objects and the tools; `make check` runs every test; `make demo` runs
# the default multi-job experiment; `make bench` measures allreduce goodput
# against gloo; `make demo-torch` trains a PyTorch DDP job through the
# switch; `make install` installs the tools, libesa and the Python package;
# `make check-mutants` and `make coverage` measure the tests themselves
# (Documentation/testing.rst). See README.md.
include scripts/common.mk

.PHONY: all deps kmod bpf tools check vm-run demo demo-torch bench-dataplane \
	bench clean install check-mutants coverage

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

check: deps
	$(Q)$(MAKE) -s all selftests
	$(Q)$(ROOT)/selftests/run_tests.sh

# Documentation/testing.rst: the mutation campaign (scripts/mutants.list;
# MUTANTS_ARGS, e.g. "--sample 8" or "--host-only"; not part of check)
# and the coverage of the user-space C (build/coverage).
check-mutants: deps
	$(Q)$(MAKE) -s all selftests
	$(Q)$(ROOT)/scripts/mutants.py $(MUTANTS_ARGS)

coverage: deps
	$(Q)$(ROOT)/scripts/coverage.sh

vm-run:
	$(Q)$(ROOT)/scripts/vm-run.sh $(if $(CMD),"$(CMD)",)

bench-dataplane: deps
	$(Q)$(MAKE) -s all selftests
	$(Q)$(ROOT)/selftests/bpf/bench_dataplane.sh

# Documentation/performance.rst: one table (data plane per packet, goodput
# of esa through the switch, host-only and gloo), progress on stderr.
bench: deps
	$(Q)$(MAKE) -s all selftests
	$(Q)$(ROOT)/selftests/endpoint/bench.sh

demo: deps
	$(Q)$(MAKE) -s all
	$(Q)VM=$(VM) $(ROOT)/tools/demo.sh

demo-torch: deps
	$(Q)$(MAKE) -s all
	$(Q)$(ROOT)/tools/demo-torch.sh

# Installed under $(DESTDIR)$(PREFIX): the tools, libesa.so with its
# headers (esa.h and the project headers it includes, as the compiler
# lists them) and pkg-config file, the Python package esa for $(PYTHON)
# (which finds the library through the _install.py written here),
# aggctl's man page and its bash completion (where bash-completion looks).
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
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
	$(Q)if [ -z "$(DESTDIR)" ]; then ldconfig; fi
	@echo "installed under $(DESTDIR)$(PREFIX)"

clean:
	$(Q)$(MAKE) -s -C kmod clean
	rm -rf $(BUILD)
