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

struct ctx {
	struct genl g;
	int genl_err;		/* 0: the esa family is there */
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

/*
 * The esa family, or the one-line hint and EXIT_NOMOD (EXIT_FAIL when a
 * data plane is there but this user may not read it).
 */
bool have_module(struct ctx *c);
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
/* The pinned data plane, or a new one loaded and pinned (@cap slots). */
struct esa_switch *switch_get_or_load(struct ctx *c, uint32_t cap);
/* Remove the pins (and with the module restart occupancy). */
int switch_unload_pinned(struct ctx *c, const char *what);
int do_stats(struct ctx *c, int argc, char **argv);
int do_occupancy(struct ctx *c, int argc, char **argv);
int do_monitor(struct ctx *c, int argc, char **argv);
/* config save (config.c): the running switch as -batch lines. */
int do_config(struct ctx *c, int argc, char **argv);
/* One command, OBJECT COMMAND [ARGS] (aggctl.c): its exit status. */
int aggctl_run(const char *pin_dir, int argc, char **argv);
/* -batch FILE (batch.c): its lines through aggctl_run(). */
int batch_run(const char *pin_dir, const char *file, bool force);

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

/* Module-less flavour (maps.c). */
int maps_policy_show(struct ctx *c);
int maps_policy_set(struct ctx *c, uint32_t policy);
/* Switch settings; NULL leaves one unchanged. */
int maps_config_set(struct ctx *c, const uint32_t *slots,
		    const uint32_t *timeout_us);
/* Print the module-less config (switch show); false if there is none. */
bool maps_config_print(struct ctx *c);

#endif
