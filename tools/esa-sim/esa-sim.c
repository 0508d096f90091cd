// SPDX-License-Identifier: GPL-2.0
/*
 * esa-sim: paper-scale evaluation in virtual time (Documentation/esa-sim.rst).
 *
 *   esa-sim [options] SCENARIO
 *   esa-sim sweep [options] --slots N,... [--load X,...] SCENARIO
 *   esa-sim check [--seed N] SCENARIO
 *   esa-sim parse [--policy LIST] SCENARIO
 *
 * Runs a scenario (esa-bench's format, extended) under each policy on the
 * project's own data plane with a virtual clock and libesa's endpoints,
 * and writes esa-bench's outputs (jct.csv, stats.csv, summary, plots) plus
 * a JCT CDF per policy. The sweep runs it for every array size and load.
 * parse validates a scenario for esa-bench and prints it for its shell.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "esa_csv.h"
#include "esa_dp.h"
#include "esa_parse.h"
#include "esa_rules.h"
#include "opts.h"
#include "scenario.h"
#include "sim.h"

#define MAX_POINTS	64

struct cli {
	const char	*scenario;
	const char	*out;
	uint64_t	seed;
	bool		seed_set;
	const char	*policies;	/* NULL: the scenario's */
	enum scn_prio_rule prio;
	bool		prio_set;
	bool		quiet;
	bool		report;		/* summary and plots */
	const char	*trace;
	bool		sweep;
	bool		check;
	bool		parse;		/* for esa-bench */
	uint32_t	slots[MAX_POINTS];
	unsigned	nslots;
	double		load[MAX_POINTS];
	unsigned	nload;
};

static void usage(FILE *f)
{
	fprintf(f,
"usage: esa-sim [options] SCENARIO\n"
"       esa-sim sweep [options] --slots N,N,... [--load X,X,...] SCENARIO\n"
"       esa-sim check [--seed N] SCENARIO    parse it and list its jobs\n"
"       esa-sim parse [--policy LIST] SCENARIO\n"
"                    validate it for esa-bench (its limits, none of the\n"
"                    simulator's own keys), print it as bash assignments\n"
"  -o DIR           output directory (default build/esa-sim/NAME)\n"
"  --seed N         seed of the Poisson arrivals and link loss (1)\n"
"  --policy LIST    policies to run, in order (default: the scenario's)\n"
"  --prio RULE      priority of jobs with priority=auto: las (the module's\n"
"                   least attained service), sjf (shortest job first) or\n"
"                   fixed (all equal); default: the scenario's (las)\n"
"  --trace FILE     every frame into and out of the switch (one policy)\n"
"  --no-plots       CSVs and summary only\n"
"  --quiet          no progress line\n"
"  -h, --help\n"
"  -V, --version\n"
"sweep: every aggregator array size in --slots times every load in --load\n"
"(a factor on the arrival rate: arrival times are divided by it); writes\n"
"sweep.csv and each point's outputs in DIR/slotsS-loadL/.\n");
}

static int die_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "esa-sim: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (see --help)\n");
	return 2;
}

/* A decimal number 0..@max, by the tools' one parser (esa_parse.h). */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	return esa_parse_u64(s, 0, max, out);
}

/* A comma-separated list of 1..MAX_POINTS numbers, each through @one. */
static int parse_list(const char *arg, unsigned *n,
		      int (*one)(const char *tok, unsigned i, struct cli *c),
		      struct cli *c)
{
	char buf[1024], *tok, *save = NULL;

	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_POINTS || one(tok, *n, c))
			return -1;
		(*n)++;
	}
	return *n ? 0 : -1;
}

static int one_slots(const char *tok, unsigned i, struct cli *c)
{
	uint64_t v;

	if (parse_u64(tok, ESA_MAX_AGGREGATORS, &v) || !v)
		return -1;
	c->slots[i] = (uint32_t)v;
	return 0;
}

static int one_load(const char *tok, unsigned i, struct cli *c)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(tok, &end);
	if (errno || *end || !(v > 0) || v > 1000)
		return -1;
	c->load[i] = v;
	return 0;
}

static int parse_args(struct cli *c, int argc, char **argv)
{
	enum { O_SEED = 256, O_POLICY, O_PRIO, O_TRACE, O_NOPLOTS, O_QUIET,
	       O_SLOTS, O_LOAD };
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, O_SEED },
		{ "policy", required_argument, NULL, O_POLICY },
		{ "prio", required_argument, NULL, O_PRIO },
		{ "trace", required_argument, NULL, O_TRACE },
		{ "no-plots", no_argument, NULL, O_NOPLOTS },
		{ "quiet", no_argument, NULL, O_QUIET },
		{ "slots", required_argument, NULL, O_SLOTS },
		{ "load", required_argument, NULL, O_LOAD },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int opt;

	*c = (struct cli){ .seed = 1, .report = true };
	if (argc > 1 && (!strcmp(argv[1], "sweep") || !strcmp(argv[1], "check") ||
			 !strcmp(argv[1], "parse"))) {
		c->sweep = !strcmp(argv[1], "sweep");
		c->check = !strcmp(argv[1], "check");
		c->parse = !strcmp(argv[1], "parse");
		argv++;
		argc--;
	}
	while ((opt = getopt_long(argc, argv, "o:hV", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			c->out = optarg;
			break;
		case O_SEED:
			if (parse_u64(optarg, UINT64_MAX, &c->seed))
				return die_usage("--seed needs a whole number, not '%s'",
						 optarg);
			c->seed_set = true;
			break;
		case O_POLICY:
			c->policies = optarg;
			break;
		case O_PRIO:
			if (scn_prio_parse(optarg, &c->prio))
				return die_usage("--prio: unknown rule '%s' (las, sjf, fixed)",
						 optarg);
			c->prio_set = true;
			break;
		case O_TRACE:
			c->trace = optarg;
			break;
		case O_NOPLOTS:
			c->report = false;
			break;
		case O_QUIET:
			c->quiet = true;
			break;
		case O_SLOTS:
			if (!c->sweep)
				return die_usage("%s belongs to 'sweep'", "--slots");
			if (parse_list(optarg, &c->nslots, one_slots, c))
				return die_usage("--slots needs N,N,... in 1.."
						 ESA_RULES_STR(ESA_MAX_AGGREGATORS) ", not '%s'",
						 optarg);
			break;
		case O_LOAD:
			if (!c->sweep)
				return die_usage("%s belongs to 'sweep'", "--load");
			if (parse_list(optarg, &c->nload, one_load, c))
				return die_usage("--load needs factors X,X,... above 0, not '%s'",
						 optarg);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			cli_version("esa-sim");
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	c->scenario = argv[optind];
	if (c->sweep && !c->nslots)
		return die_usage("%s", "sweep needs --slots N,N,...");
	if (c->sweep && !c->nload) {
		c->load[0] = 1.0;
		c->nload = 1;
	}
	if (c->sweep && c->trace)
		return die_usage("%s", "--trace is for one run, not a sweep");
	return 0;
}

/* The tree this binary was built in (build/tools/esa-sim -> ../../..). */
static int tree_root(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return -1;
	exe[n] = 0;
	snprintf(buf, len, "%s", dirname(dirname(dirname(exe))));
	return 0;
}

static int mkdir_p(const char *dir)
{
	char tmp[PATH_MAX], *p;

	if (snprintf(tmp, sizeof(tmp), "%s", dir) >= (int)sizeof(tmp))
		return -1;
	for (p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(tmp, 0755) && errno != EEXIST ? -1 : 0;
}

static FILE *open_csv(const char *dir, const char *name, const char *header)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "esa-sim: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	fprintf(f, "%s\n", header);
	return f;
}

/* summary.txt and the plots, by tools/esa-sim/report.sh. */
static int report(const struct cli *c, const char *dir, uint32_t slots)
{
	char root[PATH_MAX], script[PATH_MAX + 32], slots_s[16];
	pid_t pid;
	int st;

	if (tree_root(root, sizeof(root)))
		return -1;
	snprintf(script, sizeof(script), "%s/tools/esa-sim/report.sh", root);
	snprintf(slots_s, sizeof(slots_s), "%u", slots);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		execl("/bin/bash", "bash", script, dir, slots_s,
		      c->report ? "plots" : "no-plots", (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st) ? -1 : 0;
}

/*
 * stats.csv's columns (include/esa_csv.h): the fixed ones, then for each
 * further column the data plane counter of that name.
 */
struct columns {
	unsigned	counters[__ESA_CNT_MAX];
	unsigned	n;
};

static int stats_columns(struct columns *cols)
{
	static const char fixed[] = ESA_CSV_STATS_FIXED;
	char buf[] = ESA_CSV_STATS, *tok, *save = NULL;
	unsigned k;

	cols->n = 0;
	/* ESA_CSV_STATS is ESA_CSV_STATS_FIXED "," and the counters */
	for (tok = strtok_r(buf + sizeof(fixed), ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < __ESA_CNT_MAX; k++)
			if (!strcmp(esa_counter_name(k), tok))
				break;
		if (k == __ESA_CNT_MAX || cols->n == __ESA_CNT_MAX) {
			fprintf(stderr, "esa-sim: stats.csv column '%s' is no data plane counter\n",
				tok);
			return -1;
		}
		cols->counters[cols->n++] = k;
	}
	return 0;
}

struct point {
	double	avg[SCN_MAX_POLICIES];
	bool	ok;
};

/* perf.txt's line of the frames each switch server ran, in server order. */
static void print_server_packets(FILE *perf, uint32_t policy,
				 const struct sim_result *res)
{
	fprintf(perf, "policy %s: frames per server", scn_policy_name(policy));
	for (uint32_t k = 0; k < res->servers; k++)
		fprintf(perf, " %llu",
			(unsigned long long)res->server_packets[k]);
	fputc('\n', perf);
}

/* Every policy of @sc into @dir; 0 ok, 1 a job failed, -1 error. */
static int run_point(const struct cli *c, struct scenario *sc,
		     const char *dir, struct point *pt)
{
	FILE *jct, *stats, *perf, *trace = NULL;
	struct columns cols;
	char path[PATH_MAX];
	int rc = 0, r;

	if (mkdir_p(dir)) {
		fprintf(stderr, "esa-sim: cannot create %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	if (stats_columns(&cols))
		return -1;
	jct = open_csv(dir, "jct.csv", ESA_CSV_JCT);
	stats = open_csv(dir, "stats.csv", ESA_CSV_STATS);
	snprintf(path, sizeof(path), "%s/perf.txt", dir);
	perf = fopen(path, "w");
	if (c->trace)
		trace = fopen(c->trace, "w");
	if (!jct || !stats || !perf || (c->trace && !trace)) {
		rc = -1;
		goto out;
	}
	pt->ok = true;
	for (uint32_t k = 0; k < sc->sw.npolicies; k++) {
		struct sim_opts o = {
			.policy = sc->sw.policies[k],
			.prio = c->prio_set ? c->prio : sc->sw.prio_rule,
			.run = 1, .seed = c->seed, .progress = !c->quiet,
			.jct_csv = jct, .stats_csv = stats, .trace = trace,
			.stats_counters = cols.counters,
			.nstats_counters = cols.n,
		};
		struct sim_result res;
		double wall;

		r = sim_run(sc, &o, &res);
		if (r < 0) {
			rc = -1;
			goto out;
		}
		if (r)
			pt->ok = false;
		pt->avg[k] = res.avg_jct_s;
		wall = (double)res.wall_ns / 1e9;
		fprintf(perf,
			"policy %s: %llu events, %llu switch packets, virtual %.6f s, wall %.2f s, %.0f events/s, %llu queue drops, %llu lost, %u/%u jobs ok\n",
			scn_policy_name(o.policy),
			(unsigned long long)res.events,
			(unsigned long long)res.switch_packets,
			(double)res.end_ps / 1e12, wall,
			wall > 0 ? (double)res.events / wall : 0.0,
			(unsigned long long)res.queue_drops,
			(unsigned long long)res.loss_drops, res.jobs_ok,
			res.jobs);
		if (res.servers > 1)
			print_server_packets(perf, o.policy, &res);
		if (res.unexpected)
			fprintf(stderr, "esa-sim: %s: %llu frames went nowhere known\n",
				scn_policy_name(o.policy),
				(unsigned long long)res.unexpected);
	}
out:
	if (jct)
		fclose(jct);
	if (stats)
		fclose(stats);
	if (perf)
		fclose(perf);
	if (trace)
		fclose(trace);
	if (rc)
		return rc;
	if (report(c, dir, sc->sw.slots)) {
		fprintf(stderr, "esa-sim: the report for %s failed\n", dir);
		return -1;
	}
	return pt->ok ? 0 : 1;
}

/* Load, apply the command line's overrides, expand. */
static int load(const struct cli *c, struct scenario *sc, uint32_t slots,
		double load)
{
	char why[128];

	if (scn_load(sc, c->scenario,
		     c->parse ? &scn_bench_limits : &scn_sim_limits))
		return -1;
	if (c->policies && scn_policies_parse(&sc->sw, c->policies, why,
					      sizeof(why))) {
		fprintf(stderr, "esa-sim: --policy: %s\n", why);
		return -1;
	}
	if (c->trace && sc->sw.npolicies != 1) {
		fprintf(stderr, "esa-sim: --trace needs one policy (--policy P)\n");
		return -1;
	}
	if (sc->sw.one_armed && !c->parse && !c->check) {
		fprintf(stderr, "esa-sim: %s: mode=one-armed: the simulator models a port per host; run it with esa-bench\n",
			c->scenario);
		return -1;
	}
	if (slots)
		sc->sw.slots = slots;
	return scn_expand(sc, c->seed, load);
}

static void default_out(const struct cli *c, char *buf, size_t len)
{
	char root[PATH_MAX], name[PATH_MAX], *dot;

	snprintf(name, sizeof(name), "%s", c->scenario);
	snprintf(name, sizeof(name), "%s", basename(name));
	dot = strrchr(name, '.');
	if (dot)
		*dot = 0;
	if (tree_root(root, sizeof(root)))
		snprintf(root, sizeof(root), ".");
	if (snprintf(buf, len, "%s/build/esa-sim/%s", root, name) >= (int)len)
		snprintf(buf, len, "esa-sim-out");
}

static int run_one(const struct cli *c, const char *out)
{
	struct scenario sc;
	struct point pt;
	int rc;

	if (load(c, &sc, 0, 1.0))
		return 2;
	rc = run_point(c, &sc, out, &pt);
	scn_free(&sc);
	return rc < 0 ? 2 : rc;
}

static int run_sweep(const struct cli *c, const char *out)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct scenario sc;
	struct point pt;
	FILE *f;
	int rc = 0, r;

	if (mkdir_p(out) ||
	    snprintf(path, sizeof(path), "%s/sweep.csv", out) >= (int)sizeof(path)) {
		fprintf(stderr, "esa-sim: cannot create %s\n", out);
		return 2;
	}
	f = fopen(path, "w");
	if (!f || load(c, &sc, 0, 1.0))
		return 2;
	fprintf(f, "slots,load");
	for (uint32_t k = 0; k < sc.sw.npolicies; k++)
		fprintf(f, ",avg_jct_%s", scn_policy_name(sc.sw.policies[k]));
	fprintf(f, ",esa_vs_atp,esa_vs_static\n");
	scn_free(&sc);
	for (unsigned l = 0; l < c->nload; l++) {
		for (unsigned i = 0; i < c->nslots; i++) {
			double esa = 0, atp = 0, stat = 0;

			if (snprintf(dir, sizeof(dir), "%s/slots%u-load%g", out,
				     c->slots[i], c->load[l]) >= (int)sizeof(dir)) {
				fclose(f);
				return 2;
			}
			if (!c->quiet)
				fprintf(stderr, "== sweep point: slots=%u load=%g\n",
					c->slots[i], c->load[l]);
			if (load(c, &sc, c->slots[i], c->load[l])) {
				fclose(f);
				return 2;
			}
			r = run_point(c, &sc, dir, &pt);
			if (r < 0) {
				scn_free(&sc);
				fclose(f);
				return 2;
			}
			rc |= r;
			fprintf(f, "%u,%g", c->slots[i], c->load[l]);
			for (uint32_t k = 0; k < sc.sw.npolicies; k++) {
				fprintf(f, ",%.6f", pt.avg[k]);
				if (sc.sw.policies[k] == ESA_POLICY_ESA)
					esa = pt.avg[k];
				else if (sc.sw.policies[k] == ESA_POLICY_ATP)
					atp = pt.avg[k];
				else
					stat = pt.avg[k];
			}
			fprintf(f, ",");
			if (esa > 0 && atp > 0)
				fprintf(f, "%.3f", atp / esa);
			fprintf(f, ",");
			if (esa > 0 && stat > 0)
				fprintf(f, "%.3f", stat / esa);
			fprintf(f, "\n");
			fflush(f);
			scn_free(&sc);
		}
	}
	fclose(f);
	printf("sweep: %s\n", path);
	return rc;
}

/* check: the scenario as the simulator will run it (seed applied). */
static int check(const struct cli *c)
{
	struct scenario sc;

	if (load(c, &sc, 0, 1.0))
		return 2;
	printf("%s: %u jobs, %u aggregators, %u values per packet, window %u, %g Gbit/s, policies",
	       c->scenario, sc.njobs, sc.sw.slots, sc.sw.values, sc.sw.window,
	       sc.sw.link_mbps / 1000.0);
	for (uint32_t k = 0; k < sc.sw.npolicies; k++)
		printf("%s%s", k ? "," : " ", scn_policy_name(sc.sw.policies[k]));
	printf(", priorities %s\n", scn_prio_name(sc.sw.prio_rule));
	printf("%6s %7s %12s %10s %12s %12s %8s %s\n", "job", "workers",
	       "size", "iterations", "compute_us", "arrival_us", "priority",
	       "model");
	for (uint32_t i = 0; i < sc.njobs; i++) {
		const struct scn_job *j = &sc.jobs[i];
		char prio[16];

		if (j->priority < 0)
			snprintf(prio, sizeof(prio), "auto");
		else
			snprintf(prio, sizeof(prio), "%d", j->priority);
		printf("%6u %7u %12llu %10u %12llu %12llu %8s %s\n", j->id,
		       j->workers, (unsigned long long)j->size, j->iterations,
		       (unsigned long long)j->compute_us,
		       (unsigned long long)j->arrival_us, prio,
		       j->model ? j->model : "-");
	}
	scn_free(&sc);
	return 0;
}

/*
 * parse: the scenario as esa-bench's variables (tools/esa-bench/
 * scenario.sh), every value a number or a policy name.
 */
static int parse(const struct cli *c)
{
	const struct scn_switch *sw;
	struct scenario sc;

	if (load(c, &sc, 0, 1.0))
		return 2;
	sw = &sc.sw;
	printf("SCN_MAX_SLOTS=%u\n", scn_bench_limits.max_slots);
	printf("SW_SLOTS=%u SW_TIMEOUT_US=%u SW_LOSS=%u SW_INTERVAL_MS=%u\n",
	       sw->slots, sw->timeout_us, sw->loss_pct, sw->interval_us / 1000);
	printf("SW_VALUES=%u SW_WINDOW=%u SW_MODE=%s\n", sw->values,
	       sw->window, sw->one_armed ? "one-armed" : "per-host");
	printf("SW_POLICIES=(");
	for (uint32_t k = 0; k < sw->npolicies; k++)
		printf("%s%s", k ? " " : "", scn_policy_name(sw->policies[k]));
	printf(")\nJOB_IDS=(");
	for (uint32_t i = 0; i < sc.njobs; i++)
		printf("%s%u", i ? " " : "", sc.jobs[i].id);
	printf(")\n");
	for (uint32_t i = 0; i < sc.njobs; i++) {
		const struct scn_job *j = &sc.jobs[i];

		printf("JOB_WORKERS[%u]=%u JOB_SIZE[%u]=%llu JOB_ITERS[%u]=%u\n",
		       j->id, j->workers, j->id, (unsigned long long)j->size,
		       j->id, j->iterations);
		printf("JOB_COMPUTE_MS[%u]=%llu JOB_ARRIVAL_MS[%u]=%llu JOB_PRIO[%u]=",
		       j->id, (unsigned long long)(j->compute_us / 1000), j->id,
		       (unsigned long long)(j->arrival_us / 1000), j->id);
		if (j->priority < 0)
			printf("auto\n");
		else
			printf("%d\n", j->priority);
	}
	scn_free(&sc);
	return 0;
}

int main(int argc, char **argv)
{
	char out[PATH_MAX];
	struct cli c;
	int rc;

	rc = parse_args(&c, argc, argv);
	if (rc)
		return rc;
	if (c.check)
		return check(&c);
	if (c.parse)
		return parse(&c);
	if (c.out)
		snprintf(out, sizeof(out), "%s", c.out);
	else
		default_out(&c, out, sizeof(out));
	return c.sweep ? run_sweep(&c, out) : run_one(&c, out);
}
