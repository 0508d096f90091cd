// SPDX-License-Identifier: GPL-2.0
/*
 * esa_smoke - the smallest module that proves the ESA kernel toolchain.
 *
 * It registers one kfunc for XDP programs and one generic netlink family,
 * exactly the two kernel interfaces the real module (kmod/) depends on.
 * The VM smoke test loads it, runs XDP traffic through a program that calls
 * the kfunc, and reads the call count back over netlink. If the module was
 * built without BTF (or against the wrong vmlinux) the kfunc registration
 * fails and so does the module load, instead of loading with no kfuncs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bpf.h>
#include <linux/btf.h>
#include <linux/btf_ids.h>
#include <linux/module.h>
#include <net/genetlink.h>

#include "esa_compat.h"	/* kmod/'s: the 6.12 kfunc API on 6.1 too */
#include "esa_smoke_uapi.h"

static atomic64_t esa_smoke_calls = ATOMIC64_INIT(0);

__bpf_kfunc_start_defs();

/**
 * esa_smoke_count() - count calls from an XDP program
 * @n: how much to add to the call counter (the smoke program passes 1)
 *
 * Runs in softirq context under RCU; an atomic is all it needs.
 *
 * Return: the counter after adding @n.
 */
__bpf_kfunc u64 esa_smoke_count(u32 n)
{
	return atomic64_add_return(n, &esa_smoke_calls);
}

__bpf_kfunc_end_defs();

BTF_KFUNCS_START(esa_smoke_kfunc_ids)
BTF_ID_FLAGS(func, esa_smoke_count)
BTF_KFUNCS_END(esa_smoke_kfunc_ids)

static const struct btf_kfunc_id_set esa_smoke_kfunc_set = {
	.owner = THIS_MODULE,
	.set = &esa_smoke_kfunc_ids,
};

/*
 * 6.1's register_btf_kfunc_id_set() only warns and returns 0 when the
 * module has no BTF, and registers nothing useful when .BTF_ids was never
 * resolved (count and ids left at 0). Refuse both, so a module from a
 * broken build cannot load without its kfunc.
 */
static int esa_smoke_check_btf(void)
{
	u32 i;

#if IS_ENABLED(CONFIG_DEBUG_INFO_BTF_MODULES)
	if (!THIS_MODULE->btf_data_size) {
		pr_err("cannot register the XDP kfunc: the module has no BTF (give it BTF with scripts/mod-btf.sh)\n");
		return -ENOEXEC;
	}
#endif
	for (i = 0; i < esa_smoke_kfunc_ids.cnt; i++)
		if (!esa_smoke_kfunc_ids.pairs[i].id)
			break;
	if (!esa_smoke_kfunc_ids.cnt || i < esa_smoke_kfunc_ids.cnt) {
		pr_err("cannot register the XDP kfunc: .BTF_ids unresolved (run resolve_btfids through scripts/mod-btf.sh)\n");
		return -ENOEXEC;
	}
	return 0;
}

/* GET takes no attributes: strict validation rejects any it is sent. */
static const struct nla_policy esa_smoke_get_policy[ESA_SMOKE_A_MAX + 1] = {
	[ESA_SMOKE_A_PAD] = { .type = NLA_REJECT },
	[ESA_SMOKE_A_CALLS] = { .type = NLA_REJECT },
};

static struct genl_family esa_smoke_genl_family;

static int esa_smoke_get_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(nla_total_size_64bit(sizeof(u64)), GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &esa_smoke_genl_family, 0,
				ESA_SMOKE_CMD_GET);
	if (!hdr)
		goto nospace;
	if (nla_put_u64_64bit(msg, ESA_SMOKE_A_CALLS,
			      atomic64_read(&esa_smoke_calls), ESA_SMOKE_A_PAD))
		goto nospace;
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);

nospace:
	nlmsg_free(msg);
	GENL_SET_ERR_MSG(info, "reply does not fit");
	return -EMSGSIZE;
}

static const struct genl_ops esa_smoke_genl_ops[] = {
	{
		.cmd = ESA_SMOKE_CMD_GET,
		.doit = esa_smoke_get_doit,
		.policy = esa_smoke_get_policy,
		.maxattr = ESA_SMOKE_A_MAX,
	},
};

static struct genl_family esa_smoke_genl_family __ro_after_init = {
	.name = ESA_SMOKE_GENL_NAME,
	.version = ESA_SMOKE_GENL_VERSION,
	.maxattr = ESA_SMOKE_A_MAX,
	.netnsok = true,
	.module = THIS_MODULE,
	.ops = esa_smoke_genl_ops,
	.n_ops = ARRAY_SIZE(esa_smoke_genl_ops),
};

static int __init esa_smoke_init(void)
{
	int err;

	err = esa_smoke_check_btf();
	if (err)
		return err;
	err = register_btf_kfunc_id_set(BPF_PROG_TYPE_XDP, &esa_smoke_kfunc_set);
	if (err) {
		pr_err("cannot register the XDP kfunc (error %d)\n", err);
		return err;
	}
	err = genl_register_family(&esa_smoke_genl_family);
	if (err) {
		pr_err("cannot register generic netlink family %s (error %d)\n",
		       ESA_SMOKE_GENL_NAME, err);
		return err;
	}
	return 0;
}

static void __exit esa_smoke_exit(void)
{
	/* 6.1 has no kfunc unregister: the set goes with the module BTF. */
	genl_unregister_family(&esa_smoke_genl_family);
}

module_init(esa_smoke_init);
module_exit(esa_smoke_exit);
MODULE_DESCRIPTION("ESA toolchain smoke test: one XDP kfunc, one genl family");
MODULE_LICENSE("GPL");
