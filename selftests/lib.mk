# Test lists of a selftests area, kselftest style (included by each
# selftests/<area>/Makefile after it sets OUT and its lists):
#   TEST_GEN_PROGS      programs built into $(OUT), run on this host
#   TEST_PROGS          scripts of this directory, run on this host
#   TEST_GEN_PROGS_VM   the same, run inside the Debian 6.1 test VM
#   TEST_PROGS_VM
#   <name>_ARGS, <name>_VM_ARGS   arguments of one test (host, VM)
# `make -s print-tests-host` / `print-tests-vm` print one command line per
# test, paths from the repository root, programs first, for
# selftests/run_tests.sh. The area's timeout is in its `settings` file.
AREA_DIR := $(patsubst $(ROOT)/%,%,$(CURDIR))
AREA_OUT := $(patsubst $(ROOT)/%,%,$(OUT))

.PHONY: print-tests-host print-tests-vm
print-tests-host:
	@:$(foreach t,$(TEST_GEN_PROGS),;echo '$(strip $(AREA_OUT)/$(t) $($(t)_ARGS))')$(foreach t,$(TEST_PROGS),;echo '$(strip $(AREA_DIR)/$(t) $($(t)_ARGS))')
print-tests-vm:
	@:$(foreach t,$(TEST_GEN_PROGS_VM),;echo '$(strip $(AREA_OUT)/$(t) $($(t)_VM_ARGS))')$(foreach t,$(TEST_PROGS_VM),;echo '$(strip $(AREA_DIR)/$(t) $($(t)_VM_ARGS))')
