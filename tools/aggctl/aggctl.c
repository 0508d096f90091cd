// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl: control the ESA aggregation switch.
 *
 *   aggctl [-j] [-p] [-d PINDIR] OBJECT COMMAND [ARGS]
 *   aggctl [-j] [-p] [-d PINDIR] [-force] -batch FILE
 *
 * OBJECT is switch, job, policy, stats, occupancy, monitor or config. Jobs,
 * policy, switch settings, statistics and occupancy come from the esa
 * kernel module over generic netlink; without the module, job and policy
 * commands fall back to the maps of a module-less data plane pinned under
 * PINDIR. See aggctl(8).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "aggctl.h"
#include "esa_dp.h"
#include "opts.h"
#include "output.h"

static void usage(FILE *f)
{
	fputs("usage: aggctl [-j] [-p] [-d PINDIR] OBJECT COMMAND [ARGS]\n"
	      "       aggctl [-j] [-p] [-d PINDIR] [-force] -batch FILE\n"
	      "       aggctl { -V | -h }\n"
	      "  OBJECT := { switch | job | policy | stats | occupancy | monitor | config }\n"
	      "  aggctl switch { show | attach dev IF... [mode native|generic] [capacity SLOTS]\n"
	      "                  [role per-host|one-armed] [address A.B.C.D] |\n"
	      "                  detach dev IF... | unload |\n"
	      "                  set [slots N] [timeout US] [aging MS] }\n"
	      "  aggctl job add id ID ps ADDR:PORT [dev IF] worker ADDR:PORT [dev IF]\n"
	      "                 [worker ADDR:PORT [dev IF]]... [fan-in N]\n"
	      "                 [priority { 0..255 | auto }] [quota N]\n"
	      "  aggctl job change id ID [ps ADDR:PORT [dev IF]] [worker ADDR:PORT [dev IF]]...\n"
	      "                 [fan-in N] [priority { 0..255 | auto }] [quota N]\n"
	      "  aggctl job { del | show } [id ID]\n"
	      "  aggctl policy { show | set { esa | atp | static } }\n"
	      "  aggctl stats [show] [job ID]\n"
	      "  aggctl occupancy [show] [job ID]\n"
	      "  aggctl monitor\n"
	      "  aggctl config save\n"
	      "  -j json output, -p pretty json, -d pin directory (default "
	      ESA_PIN_DIR_DEFAULT "),\n"
	      "  -batch read commands from FILE (- for stdin), one per line,\n"
	      "  stopping at the first that fails unless -force,\n"
	      "  -V version, -h this help\n", f);
}

static const struct {
	const char *name;
	int (*fn)(struct ctx *c, int argc, char **argv);
} objects[] = {
	{ "switch", do_switch },
	{ "job", do_job },
	{ "policy", do_policy },
	{ "stats", do_stats },
	{ "occupancy", do_occupancy },
	{ "monitor", do_monitor },
	{ "config", do_config },
};

int aggctl_run(const char *pin_dir, int argc, char **argv)
{
	struct ctx c = { .pin_dir = pin_dir };
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(objects) / sizeof(objects[0]); i++) {
		if (!matches(argv[0], objects[i].name))
			continue;
		c.genl_err = genl_open(&c.g);
		ret = objects[i].fn(&c, argc - 1, argv + 1);
		genl_close(&c.g);
		if (c.sw)
			esa_switch_close(c.sw);
		return ret;
	}
	fprintf(stderr, "aggctl: unknown object \"%s\"\n", argv[0]);
	usage(stderr);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	bool json = false, pretty = false, force = false;
	const char *pin_dir = ESA_PIN_DIR_DEFAULT, *batch = NULL;

	argc--;
	argv++;
	while (argc > 0 && argv[0][0] == '-') {
		if (!strcmp(argv[0], "-j") || !strcmp(argv[0], "-json")) {
			json = true;
		} else if (!strcmp(argv[0], "-p") || !strcmp(argv[0], "-pretty")) {
			pretty = true;
		} else if (!strcmp(argv[0], "-d")) {
			if (argc < 2)
				return usage_missing("-d");
			pin_dir = argv[1];
			argc--;
			argv++;
		} else if (!strcmp(argv[0], "-batch") || !strcmp(argv[0], "-b")) {
			if (argc < 2)
				return usage_missing(argv[0]);
			batch = argv[1];
			argc--;
			argv++;
		} else if (!strcmp(argv[0], "-force")) {
			force = true;
		} else if (!strcmp(argv[0], "-h") || !strcmp(argv[0], "-help") ||
			   !strcmp(argv[0], "--help")) {
			usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(argv[0], "-V") || !strcmp(argv[0], "-Version") ||
			   !strcmp(argv[0], "--version")) {
			cli_version("aggctl");
			return EXIT_OK;
		} else {
			fprintf(stderr, "aggctl: unknown option \"%s\"\n", argv[0]);
			usage(stderr);
			return EXIT_USAGE;
		}
		argc--;
		argv++;
	}
	if (batch && argc > 0) {
		fprintf(stderr, "aggctl: -batch %s takes its commands from the file, not \"%s\"\n",
			batch, argv[0]);
		return EXIT_USAGE;
	}
	if (force && !batch) {
		fprintf(stderr, "aggctl: -force goes with -batch FILE\n");
		return EXIT_USAGE;
	}
	if (!batch && argc < 1) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!batch && !strcmp(argv[0], "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	/* libbpf's own chatter (verifier logs) only on request. */
	if (!getenv("AGGCTL_VERBOSE"))
		libbpf_set_print(NULL);
	/* -p alone implies -j, as in iproute2. */
	out_init(json || pretty, pretty);
	if (batch)
		return batch_run(pin_dir, batch, force);
	return aggctl_run(pin_dir, argc, argv);
}
