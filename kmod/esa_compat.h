/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What differs between the kernels the module is built for: Debian 12's
 * 6.1 and the 6.12 of Debian 13 and bookworm-backports. Each shim below
 * gives an older kernel the newer kernel's name, so the module's code is
 * written once, against the newer API, without version tests.
 */
#ifndef _ESA_COMPAT_H
#define _ESA_COMPAT_H

#include <linux/btf.h>
#include <linux/btf_ids.h>

/*
 * __bpf_kfunc: 6.3, commit 57e7c169cd6a ("bpf: Add __bpf_kfunc tag for
 * marking kernel functions as kfuncs"). It keeps a kfunc neither inlined
 * nor dropped as unused (later kernels add __retain and __noclone); before
 * it, noinline was the documented way.
 */
#ifndef __bpf_kfunc
#define __bpf_kfunc __used noinline
#endif

/*
 * __bpf_kfunc_start_defs()/__bpf_kfunc_end_defs(): 6.7, commit 391145ba2acc
 * ("bpf: Add __bpf_kfunc_{start,end}_defs macros"). Global functions with
 * no prototype in a header would warn; before them each file silenced the
 * warning by hand, as below.
 */
#ifndef __bpf_kfunc_start_defs
#define __bpf_kfunc_start_defs()					\
	__diag_push();							\
	__diag_ignore_all("-Wmissing-prototypes",			\
			  "Global kfuncs as their definitions will be in BTF")
#define __bpf_kfunc_end_defs()	__diag_pop()
#endif

/*
 * BTF_KFUNCS_START()/BTF_KFUNCS_END(): 6.9, commit a05e90427ef6 ("bpf:
 * btf: Add BTF_KFUNCS_START/END macro pair"), a BTF_SET8 flagged
 * BTF_SET8_KFUNCS (commit 79b47344bbc5). Since commit 6f3189f38a3e ("bpf:
 * treewide: Annotate BPF kfuncs in BTF"), also 6.9,
 * register_btf_kfunc_id_set() refuses a set without that flag with
 * -EINVAL. 6.1 has neither: a plain BTF_SET8 is its kfunc set.
 */
#ifndef BTF_KFUNCS_START
#define BTF_KFUNCS_START(name)	BTF_SET8_START(name)
#define BTF_KFUNCS_END(name)	BTF_SET8_END(name)
#endif

#endif /* _ESA_COMPAT_H */
