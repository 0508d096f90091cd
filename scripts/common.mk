# Shared build settings, included by the top-level Makefile and every
# per-directory Makefile. Paths are absolute so sub-makes agree.
ROOT      := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/..)
BUILD     := $(ROOT)/build
CACHE     := $(ROOT)/.cache

# The kernel series the module is built for and the VM boots: 6.1
# (Debian 12, the default) or 6.12 (Debian 13, bookworm-backports), as
# scripts/kabi.sh lists them; `make ... KERNEL=6.12`. Its Debian ABI is
# resolved from apt by scripts/deps.sh (never hard-coded); empty until
# `make deps` ran.
KERNELS   := $(shell $(ROOT)/scripts/kabi.sh --list)
KERNEL    ?= $(firstword $(KERNELS))
export KERNEL
KABI      := $(shell $(ROOT)/scripts/kabi.sh $(KERNEL))
ifeq ($(.SHELLSTATUS),2)
$(error KERNEL=$(KERNEL) is not a supported kernel series ($(KERNELS)))
endif
KDIR      := $(CACHE)/kernel/$(KABI)
# The module build tree: headers unpacked into the cache (6.12), else
# the installed linux-headers package (6.1): scripts/kabi.sh decides.
KHEADERS  := $(shell $(ROOT)/scripts/kabi.sh --headers $(KERNEL))
# The kernel's vmlinux, extracted from its image: BTF base of modules.
VMLINUX   := $(KDIR)/vmlinux
# Headers that ship vmlinux and resolve_btfids (6.12's) let kbuild's
# modfinal step add module BTF itself ("BTF [M]"): scripts/mod-btf.sh only
# checks its result. 6.1's ship neither: mod-btf.sh adds the BTF, with
# resolve_btfids built from linux-source-6.1.
ifneq ($(wildcard $(KHEADERS)/vmlinux),)
RESOLVE_BTFIDS := $(KHEADERS)/tools/bpf/resolve_btfids/resolve_btfids
MOD_BTF   := $(ROOT)/scripts/mod-btf.sh --check
else
RESOLVE_BTFIDS := $(CACHE)/resolve_btfids/resolve_btfids
MOD_BTF   := $(ROOT)/scripts/mod-btf.sh
endif
# Where the module for $(KABI) is built (kmod/Makefile): one directory per
# kernel, so modules for several kernels stand side by side.
KMOD_OUT  := $(BUILD)/kmod/$(KABI)
ESA_KO    := $(KMOD_OUT)/esa.ko
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
