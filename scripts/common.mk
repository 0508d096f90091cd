# Shared build settings, included by the top-level Makefile and every
# per-directory Makefile. Paths are absolute so sub-makes agree.
ROOT      := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
BUILD     := $(ROOT)/build
CACHE     := $(ROOT)/.cache

# The Debian 6.1 kernel ABI the module and VM use, resolved from apt by
# scripts/deps.sh (never hard-coded). Empty until `make deps` ran.
KABI      := $(shell cat $(CACHE)/kernel-abi 2>/dev/null)
KDIR      := $(CACHE)/kernel/$(KABI)
KHEADERS  := /usr/src/linux-headers-$(KABI)
VMLINUX   := $(KDIR)/vmlinux
RESOLVE_BTFIDS := $(CACHE)/resolve_btfids/resolve_btfids
KSELFTEST := $(CACHE)/kselftest

CC        ?= gcc
CLANG     ?= clang
BPFTOOL   ?= bpftool
CFLAGS    ?= -O2 -g
CFLAGS    += -Wall -Wextra -Wno-unused-parameter -std=gnu11 \
	     -I$(ROOT)/uapi -I$(ROOT)/include -I$(ROOT)/tools/lib -I$(BUILD)
# clang -target bpf searches none of the host's system directories (the
# multiarch one holds asm/types.h): take the host's list from clang
# itself, as libbpf-bootstrap does, rather than naming one architecture.
CLANG_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS := -O2 -g -target bpf -mcpu=v3 -D__BPF__ -Wall \
	     -I$(ROOT)/uapi -I$(ROOT)/include -I$(BUILD) $(CLANG_SYS_INCLUDES)

# The project's version (libesa.pc; the tools' --version through
# scripts/version.sh): the one definition is the top-level VERSION file.
ESA_VERSION := $(shell cat $(ROOT)/VERSION)
# The endpoint library's soname (tools/lib): its major version changes
# when esa.h changes incompatibly.
LIBESA_SONAME := libesa.so.0
# Users of the data plane loader (tools/lib/dp): its header and libraries.
DP_CFLAGS := -I$(ROOT)/tools/lib/dp
DP_LIBS   := $(BUILD)/libesa_dp.a -lbpf -lelf -lz

Q ?= @
