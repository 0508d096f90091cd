# Test lists of a selftests area, kselftest style (included by each
# selftests/<area>/Makefile after it sets OUT and its lists):
#   TEST_GEN_PROGS      programs built into $(OUT), run on this host
#   TEST_PROGS          scripts of this directory, run on this host
#   TEST_GEN_PROGS_VM   the same, run inside the Debian test VM
#   TEST_PROGS_VM
#   TEST_VM_EVERY_KERNEL  those of the two VM lists that test the module:
#                       `make check` runs them on every kernel
#                       (scripts/kabi.sh --list), the rest on the default
#   <name>_ARGS, <name>_VM_ARGS   arguments of one test (host, VM)
# `make -s print-tests-host` / `print-tests-vm` / `print-tests-vm-every-kernel`
# print one command line per test, paths from the repository root,
# programs first, for selftests/run_tests.sh. The area's timeout is in its
# `settings` file.
AREA_DIR := $(patsubst $(ROOT)/%,%,$(CURDIR))
AREA_OUT := $(patsubst $(ROOT)/%,%,$(OUT))

.PHONY: print-tests-host print-tests-vm print-tests-vm-every-kernel
print-tests-host:
	@:$(foreach t,$(TEST_GEN_PROGS),;echo '$(strip $(AREA_OUT)/$(t) $($(t)_ARGS))')$(foreach t,$(TEST_PROGS),;echo '$(strip $(AREA_DIR)/$(t) $($(t)_ARGS))')
print-tests-vm:
	@:$(foreach t,$(TEST_GEN_PROGS_VM),;echo '$(strip $(AREA_OUT)/$(t) $($(t)_VM_ARGS))')$(foreach t,$(TEST_PROGS_VM),;echo '$(strip $(AREA_DIR)/$(t) $($(t)_VM_ARGS))')
print-tests-vm-every-kernel:
	@:$(foreach t,$(filter $(TEST_VM_EVERY_KERNEL),$(TEST_GEN_PROGS_VM)),;echo '$(strip $(AREA_OUT)/$(t) $($(t)_VM_ARGS))')$(foreach t,$(filter $(TEST_VM_EVERY_KERNEL),$(TEST_PROGS_VM)),;echo '$(strip $(AREA_DIR)/$(t) $($(t)_VM_ARGS))')
