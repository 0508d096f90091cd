# ESA: preemptive in-network aggregation on a commodity server.
# `make deps` installs what the build needs; `make` builds the module, the
# BPF objects and the tools; `make check` runs every test; `make demo` runs
# the default multi-job experiment. See README.md.
include scripts/common.mk

.PHONY: all deps kmod bpf tools check vm-run demo bench-dataplane clean

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

vm-run:
	$(Q)$(ROOT)/scripts/vm-run.sh $(if $(CMD),"$(CMD)",)

bench-dataplane: deps
	$(Q)$(MAKE) -s all selftests
	$(Q)$(ROOT)/selftests/bpf/bench_dataplane.sh

demo: deps
	$(Q)$(MAKE) -s all
	$(Q)VM=$(VM) $(ROOT)/tools/demo.sh

clean:
	$(Q)$(MAKE) -s -C kmod clean
	rm -rf $(BUILD)
