/* SPDX-License-Identifier: GPL-2.0 */
/* aggctl: shared state of the object handlers and argument helpers. */
#ifndef _AGGCTL_H
#define _AGGCTL_H

#include <stdbool.h>
#include <stdint.h>
#include "genl.h"

/* Exit codes (aggctl.8, EXIT STATUS). */
enum {
	EXIT_OK		= 0,
	EXIT_FAIL	= 1,	/* the kernel or the data plane refused */
	EXIT_USAGE	= 2,	/* bad command line */
	EXIT_NOMOD	= 3,	/* neither the esa module nor a module-less switch */
};

struct esa_switch;

/* Where a command's work is done: picked once per command (aggctl_run()). */
enum backend {
	BACKEND_MAPS,		/* the pinned maps of a module-less data plane */
	BACKEND_MODULE,		/* the esa module, over generic netlink */
};

struct backend_cmd_impl;

struct ctx {
	struct genl g;
	int genl_err;		/* 0: the esa family is there */
	enum backend backend;	/* the module when its family is there */
	/*
	 * The command table (backend.c), handed down by aggctl_run(): the
	 * files whose functions it names reach it only through here.
	 */
	const struct backend_cmd_impl *cmds;
	const char *pin_dir;
	struct esa_switch *sw;	/* pinned data plane, opened on demand */
	int sw_err;
};

/* argv walking, iproute2 style: NEXT_ARG() moves to a keyword's value. */
#define NEXT_ARG() do { argc--; argv++; \
	if (argc <= 0) return usage_missing(argv[-1]); } while (0)

int usage_missing(const char *kw);
int usage_bad(const char *what, const char *val);
int usage_unknown(const char *obj, const char *kw);

bool matches(const char *arg, const char *kw);
/*
 * Keyword values through the one parser of the tools (esa_parse.h:
 * decimal only, ports 1..65535): EXIT_OK, or EXIT_USAGE after a message
 * that names @kw and says what is wrong.
 */
int arg_u32(const char *kw, const char *s, uint32_t min, uint32_t max,
	    uint32_t *out);
int arg_job_id(const char *s, uint32_t *id);
/*
 * "token HEX16|random": a job's token (exactly 16 hex digits, not all 0),
 * or a fresh one from getrandom() (*random set).
 */
int arg_token(const char *s, uint64_t *token, bool *random);
int arg_addr_port(const char *kw, const char *s, uint32_t *addr_be,
		  uint16_t *port_be);
const char *fmt_addr_port(uint32_t addr_be, uint16_t port_be);

/* Whether the module is this command's backend. */
bool have_module(struct ctx *c);
/*
 * Neither backend for @what: the one-line hint and EXIT_NOMOD (EXIT_FAIL
 * when a data plane is there but this user may not read it).
 */
int no_module(struct ctx *c, const char *what);
/*
 * @feature of @what needs the module: with a module-less data plane
 * there, say it has none (EXIT_FAIL); without any, as no_module().
 */
int needs_module(struct ctx *c, const char *what, const char *feature);
/* The pinned data plane (NULL with c->sw_err set). */
struct esa_switch *pinned_switch(struct ctx *c);
/*
 * No data plane for @what: not pinned under the pin directory, or not
 * readable (permission). Says which; EXIT_FAIL.
 */
int no_dataplane(struct ctx *c, const char *what);
/* Report a negative errno from the kernel for @what: EXIT_FAIL. */
int fail(struct ctx *c, const char *what, int err);

int do_job(struct ctx *c, int argc, char **argv);
int do_policy(struct ctx *c, int argc, char **argv);
int do_switch(struct ctx *c, int argc, char **argv);
/* switch attach / detach (attach.c), all-or-nothing over the ports. */
int switch_attach(struct ctx *c, int argc, char **argv);
int switch_detach(struct ctx *c, int argc, char **argv);
/*
 * The pinned data plane, or a new one loaded and pinned (@cap slots)
 * (dataplane.c, as switch_unload_pinned()).
 */
struct esa_switch *switch_get_or_load(struct ctx *c, uint32_t cap);
/* Remove the pins (and with the module restart occupancy). */
int switch_unload_pinned(struct ctx *c, const char *what);
int do_stats(struct ctx *c, int argc, char **argv);
int do_occupancy(struct ctx *c, int argc, char **argv);
int do_monitor(struct ctx *c, int argc, char **argv);
/*
 * The managed neighbour entries of the one-armed ports made those their
 * jobs' members need (neigh.c), on this data plane's ports and the @nleft
 * in @left it just detached; what fails is a warning naming @what.
 */
void neigh_sync(struct ctx *c, const char *what, const int *left,
		unsigned int nleft);
/* config save (config.c): the running switch as -batch lines. */
int do_config(struct ctx *c, int argc, char **argv);
/* cluster (cluster.c): a job on every server of a cluster file. */
int do_cluster(struct ctx *c, int argc, char **argv);
/* One command, OBJECT COMMAND [ARGS] (aggctl.c): its exit status. */
int aggctl_run(const char *pin_dir, int argc, char **argv);
/*
 * -batch FILE (batch.c): each line's words through @cmd (with @data),
 * as iproute2's do_batch() runs them; the first failure's exit status.
 */
typedef int (*batch_cmd_fn)(int argc, char **argv, void *data);
int batch_run(const char *file, bool force, batch_cmd_fn cmd, void *data);

/* Printing of netlink replies shared by show and monitor. */
struct esa_job_info;
void print_job(struct ctx *c, const struct nlattr **tb);
void print_attr_u32(const struct nlattr **tb, int type, const char *key,
		    const char *label);
void print_slice(const struct nlattr **tb);
void print_members(struct ctx *c, const struct esa_job_info *j);
/* A module job record's members into @j (j->fan_in: the workers listed). */
void job_members_of(const struct nlattr **tb, struct esa_job_info *j);
struct job_args;
int module_bind_jobs(struct ctx *c, const char *what, uint8_t cmd,
		     const struct job_args *a);
int print_job_cb(const struct nlmsghdr *nlh, void *data);
void print_config(const struct nlattr **tb);

/* Print the module-less config (switch show); false if there is none. */
bool maps_config_print(struct ctx *c);

/* What switch set asks for (has_*: given). */
struct cfg_req {
	bool has_s, has_t, has_a;
	uint32_t slots, timeout, aging;
};

/*
 * What a command line asks, parsed once by its object's do_*() and handed
 * to the backend's implementation of the command (backend.c).
 */
struct saved_switch;
struct job_list;
struct cmd_req {
	const char *what;		/* the command, as messages name it */
	uint8_t cmd;			/* job add/change/delete: ESA_CMD_JOB_* */
	const struct job_args *job;	/* job commands */
	uint32_t id;			/* stats, occupancy: the job asked for, */
	bool has_id;			/* if any */
	uint32_t policy;		/* policy set */
	const struct cfg_req *cfg;	/* switch set */
	struct saved_switch *saved;	/* config save: what is read into */
	struct job_list *jobs;		/* job list: what is read into */
};

/* The commands whose work differs by backend: the rows of backend.c. */
enum backend_cmd {
	CMD_JOB_SHOW,
	CMD_JOB_SET,		/* add, change, delete */
	CMD_JOB_LIST,		/* every job's members, into a job_list */
	CMD_POLICY_SHOW,
	CMD_POLICY_SET,
	CMD_SWITCH_SET,
	CMD_STATS,
	CMD_OCCUPANCY,
	CMD_MONITOR,
	CMD_CONFIG_READ,	/* config save: settings, policy and jobs */
	__CMD_MAX
};

/*
 * One command's two implementations, a row of backend.c's table: over the
 * module, and over the pinned maps (NULL: the module-less switch cannot;
 * maps_lacks says what it needs).
 */
typedef int (*cmd_fn)(struct ctx *c, const struct cmd_req *r);
struct backend_cmd_impl {
	cmd_fn module;
	cmd_fn maps;
	const char *maps_lacks;
};
extern const struct backend_cmd_impl backend_cmds[__CMD_MAX];

/* Command @cmd on this command line's backend: its exit status. */
static inline int run_cmd(struct ctx *c, enum backend_cmd cmd,
			  const struct cmd_req *r)
{
	const struct backend_cmd_impl *impl = &c->cmds[cmd];

	if (c->backend == BACKEND_MODULE)
		return impl->module(c, r);
	if (!impl->maps)
		return needs_module(c, r->what, impl->maps_lacks);
	return impl->maps(c, r);
}

/* Each command's two implementations, as backend.c's table pairs them. */
int module_job_show(struct ctx *c, const struct cmd_req *r);
int maps_job_show(struct ctx *c, const struct cmd_req *r);
int module_job_set(struct ctx *c, const struct cmd_req *r);
int maps_job_set(struct ctx *c, const struct cmd_req *r);
int module_job_list(struct ctx *c, const struct cmd_req *r);
int maps_job_list(struct ctx *c, const struct cmd_req *r);
int module_policy_show(struct ctx *c, const struct cmd_req *r);
int maps_policy_show(struct ctx *c, const struct cmd_req *r);
int module_policy_set(struct ctx *c, const struct cmd_req *r);
int maps_policy_set(struct ctx *c, const struct cmd_req *r);
int module_switch_set(struct ctx *c, const struct cmd_req *r);
int maps_switch_set(struct ctx *c, const struct cmd_req *r);
int module_stats(struct ctx *c, const struct cmd_req *r);
int maps_stats(struct ctx *c, const struct cmd_req *r);
int module_occupancy(struct ctx *c, const struct cmd_req *r);
int maps_occupancy(struct ctx *c, const struct cmd_req *r);
int module_monitor(struct ctx *c, const struct cmd_req *r);
int module_config_read(struct ctx *c, const struct cmd_req *r);
int maps_config_read(struct ctx *c, const struct cmd_req *r);

#endif
