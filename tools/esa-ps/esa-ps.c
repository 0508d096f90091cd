// SPDX-License-Identifier: GPL-2.0
/*
 * esa-ps: the parameter server of one or more ESA jobs, built on libesa.
 * It finishes the sums the switch could not (or all of them in
 * --host-only mode), sends results, answers resends, and exits once every
 * job has finished its expected sequences and the socket stayed quiet for
 * --linger-ms, on SIGINT/SIGTERM, or (failing) at --deadline-s.
 * Statistics per job at exit, as text or JSON (-j).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "esa.h"
#include "esa_endpoint.h"
#include "esa_endpoint_cli.h"
#include "esa_parse.h"

#define MAX_JOBS 64

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: esa-ps --job ID:FANIN[@ADDR[:PORT],...] [--job ...] [options]\n"
"  --bind ADDR[:PORT]       listen address (default 0.0.0.0:%u)\n"
"  --job ID:FANIN[@W0,W1..] serve job ID with FANIN workers; worker i's\n"
"                           address (port default %u) is learned from its\n"
"                           packets when not given\n"
"  --host-only              no aggregating switch: unicast each result to\n"
"                           every worker (the baseline)\n"
"  --no-result-on-complete  do not resend sums the switch completed (esa and\n"
"                           static multicast them already; atp needs them)\n"
"  --cache N                result cache entries per job (>= 2 x window)\n"
"  --iterations K --size BYTES [--values N]\n"
"                           expect K allreduces of BYTES per job\n"
"  --results N              expect N finished sequences per job\n"
"  --linger-ms MS           quiet time before exiting once done (5000):\n"
"                           time to answer workers whose last result was lost\n"
"  --deadline-s S           give up (exit 1) after S seconds (0 = never)\n"
"  -j, --json               statistics as JSON\n"
"  --progress               progress line on stderr (default when a tty)\n"
"  -h, --help\n", ESA_UDP_PORT, ESA_UDP_PORT);
}

static int parse_job(const char *s, struct esa_ps_job_config *jc)
{
	char buf[1024], *at, *colon, *tok, *save;
	uint64_t v;
	unsigned w = 0;

	if (strlen(s) >= sizeof(buf))
		return esa_set_error(-EINVAL, "--job: '%s' too long", s);
	strcpy(buf, s);
	memset(jc, 0, sizeof(*jc));
	at = strchr(buf, '@');
	if (at)
		*at++ = '\0';
	colon = strchr(buf, ':');
	if (!colon)
		return esa_set_error(-EINVAL, "--job: '%s' is not ID:FANIN[@ADDR,...]", s);
	*colon++ = '\0';
	if (esa_parse_u64(buf, 1, ESA_MAX_JOB_ID, &v))
		return esa_error_context(-EINVAL, "--job ID");
	jc->job_id = v;
	if (esa_parse_u64(colon, 1, ESA_MAX_WORKERS, &v))
		return esa_error_context(-EINVAL, "--job FANIN");
	jc->fan_in = v;
	if (!at)
		return 0;
	for (tok = strtok_r(at, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (w >= jc->fan_in)
			return esa_set_error(-EINVAL,
					     "--job %u: more worker addresses than fan-in %u",
					     jc->job_id, jc->fan_in);
		if (esa_parse_addr(tok, ESA_UDP_PORT, &jc->worker[w]))
			return esa_error_context(-EINVAL, "--job %u", jc->job_id);
		jc->worker_known |= 1u << w;
		w++;
	}
	if (w != jc->fan_in)
		return esa_set_error(-EINVAL,
				     "--job %u: %u worker addresses for fan-in %u",
				     jc->job_id, w, jc->fan_in);
	return 0;
}

/* The statistics printed, in order. */
#define GF(f, n) ESA_CLI_U64(struct esa_ps_global_stats, f, n)
static const struct esa_cli_field global_fields[] = {
	GF(rx_packets, "rx_packets"), GF(malformed, "malformed"),
	GF(unknown_job, "unknown_job"), GF(unexpected, "unexpected"),
	GF(tx_drops, "tx_drops"),
};
#undef GF

#define JF(f, n) ESA_CLI_U64(struct esa_ps_stats, f, n)
static const struct esa_cli_field job_fields[] = {
	JF(rx_packets, "rx"), JF(rx_complete, "complete"),
	JF(rx_partial, "partial"), JF(rx_preempted, "preempted"),
	JF(rx_collision, "collision"), JF(rx_resend, "resend"),
	JF(rx_data, "data"), JF(merged, "merged"),
	JF(duplicates, "duplicates"), JF(overlaps, "overlaps"),
	JF(finished, "finished"), JF(finished_by_ps, "finished_by_ps"),
	JF(result_packets, "result_packets"),
	JF(resend_answers, "resend_answers"), JF(pulls, "pulls"),
	JF(overflows, "overflows"), JF(stale, "stale"),
	JF(conflicts, "conflicts"), JF(bad, "bad"),
	JF(no_address, "no_address"), JF(seq_high, "seq_high"),
};
#undef JF

static void print_stats(struct esa_ps *ps, struct esa_ps_job_config *jobs,
			unsigned n, const char *exit_reason, bool json)
{
	struct esa_ps_global_stats g;
	struct esa_ps_stats s;

	esa_ps_get_stats(ps, &g);
	printf(json ? "{\"exit\":\"%s\"" : "ps exit=%s", exit_reason);
	esa_cli_print_fields(global_fields, ESA_ARRAY_SIZE(global_fields), &g,
			     json, false);
	printf(json ? ",\"jobs\":[" : "\n");
	for (unsigned i = 0; i < n; i++) {
		esa_ps_get_job_stats(ps, jobs[i].job_id, &s);
		if (json)
			printf("%s{\"job\":%u", i ? "," : "", jobs[i].job_id);
		else
			printf("job %u", jobs[i].job_id);
		esa_cli_print_fields(job_fields, ESA_ARRAY_SIZE(job_fields), &s,
				     json, false);
		printf(json ? "}" : "\n");
	}
	if (json)
		printf("]}\n");
}

#define FAIL_USAGE(...) do { \
	fprintf(stderr, "esa-ps: " __VA_ARGS__); fputc('\n', stderr); \
	fprintf(stderr, "Try 'esa-ps --help'.\n"); return 2; } while (0)

int main(int argc, char **argv)
{
	enum { O_BIND = 256, O_JOB, O_HOST, O_NORC, O_CACHE, O_ITER, O_SIZE,
	       O_VALUES, O_RESULTS, O_LINGER, O_DEADLINE, O_PROGRESS };
	static const struct option opts[] = {
		{ "bind", required_argument, NULL, O_BIND },
		{ "job", required_argument, NULL, O_JOB },
		{ "host-only", no_argument, NULL, O_HOST },
		{ "no-result-on-complete", no_argument, NULL, O_NORC },
		{ "cache", required_argument, NULL, O_CACHE },
		{ "iterations", required_argument, NULL, O_ITER },
		{ "size", required_argument, NULL, O_SIZE },
		{ "values", required_argument, NULL, O_VALUES },
		{ "results", required_argument, NULL, O_RESULTS },
		{ "linger-ms", required_argument, NULL, O_LINGER },
		{ "deadline-s", required_argument, NULL, O_DEADLINE },
		{ "json", no_argument, NULL, 'j' },
		{ "progress", no_argument, NULL, O_PROGRESS },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct esa_ps_config cfg = { .result_on_complete = true };
	struct esa_ps_job_config jobs[MAX_JOBS];
	uint64_t iters = 0, size = 0, values = ESA_MAX_VALUES, results = 0;
	uint64_t linger_ms = 5000, deadline_s = 0, v;
	bool json = false, progress = isatty(2), have_size = false;
	const char *exit_reason = "done";
	unsigned njobs = 0;
	struct esa_ps *ps;
	uint64_t start, last_rx, target = 0;
	int c, err, rc = 0;

	cfg.bind.sin_family = AF_INET;
	cfg.bind.sin_port = htons(ESA_UDP_PORT);
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case O_BIND:
			if (esa_parse_addr(optarg, ESA_UDP_PORT, &cfg.bind))
				FAIL_USAGE("--bind: %s", esa_last_error());
			break;
		case O_JOB:
			if (njobs == MAX_JOBS)
				FAIL_USAGE("--job: at most %d jobs", MAX_JOBS);
			if (parse_job(optarg, &jobs[njobs]))
				FAIL_USAGE("%s", esa_last_error());
			for (unsigned i = 0; i < njobs; i++)
				if (jobs[i].job_id == jobs[njobs].job_id)
					FAIL_USAGE("--job %u given twice", jobs[i].job_id);
			njobs++;
			break;
		case O_HOST:
			cfg.mode = ESA_PS_HOST_ONLY;
			break;
		case O_NORC:
			cfg.result_on_complete = false;
			break;
		case O_CACHE:
			if (esa_parse_u64(optarg, 16, 1 << 20, &v))
				FAIL_USAGE("--cache: %s", esa_last_error());
			cfg.cache_entries = v;
			break;
		case O_ITER:
			if (esa_parse_u64(optarg, 1, 1u << 30, &iters))
				FAIL_USAGE("--iterations: %s", esa_last_error());
			break;
		case O_SIZE:
			if (esa_parse_size(optarg, 4, 1ull << 34, &size))
				FAIL_USAGE("--size: %s", esa_last_error());
			if (size % 4)
				FAIL_USAGE("--size: %llu is not a multiple of 4 bytes",
					   (unsigned long long)size);
			have_size = true;
			break;
		case O_VALUES:
			if (esa_parse_u64(optarg, 1, ESA_MAX_VALUES, &values))
				FAIL_USAGE("--values: %s", esa_last_error());
			break;
		case O_RESULTS:
			if (esa_parse_u64(optarg, 1, 1ull << 40, &results))
				FAIL_USAGE("--results: %s", esa_last_error());
			break;
		case O_LINGER:
			if (esa_parse_u64(optarg, 0, 3600000, &linger_ms))
				FAIL_USAGE("--linger-ms: %s", esa_last_error());
			break;
		case O_DEADLINE:
			if (esa_parse_u64(optarg, 0, 86400 * 7, &deadline_s))
				FAIL_USAGE("--deadline-s: %s", esa_last_error());
			break;
		case 'j':
			json = true;
			break;
		case O_PROGRESS:
			progress = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Try 'esa-ps --help'.\n");
			return 2;
		}
	}
	if (optind < argc)
		FAIL_USAGE("unexpected argument '%s'", argv[optind]);
	if (!njobs)
		FAIL_USAGE("no --job given");
	if (!!iters != have_size)
		FAIL_USAGE("--iterations and --size go together");
	if (iters && results)
		FAIL_USAGE("--results and --iterations/--size exclude each other");
	if (iters)
		target = iters * ((size / 4 + values - 1) / values);
	else
		target = results;

	err = esa_ps_open(&cfg, &ps);
	if (err) {
		fprintf(stderr, "esa-ps: %s\n", esa_last_error());
		return 1;
	}
	for (unsigned i = 0; i < njobs; i++) {
		if (esa_ps_add_job(ps, &jobs[i])) {
			fprintf(stderr, "esa-ps: %s\n", esa_last_error());
			esa_ps_close(ps);
			return 1;
		}
	}
	struct sigaction sa = { .sa_handler = on_signal };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	start = last_rx = esa_now_ns();
	for (;;) {
		uint64_t now, done_jobs = 0;
		struct esa_ps_stats s;

		err = esa_ps_poll(ps, 100);
		now = esa_now_ns();
		if (stop_sig) {
			exit_reason = "signal";
			break;
		}
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "esa-ps: %s\n", esa_last_error());
			exit_reason = "error";
			rc = 1;
			break;
		}
		if (err > 0)
			last_rx = now;
		for (unsigned i = 0; i < njobs; i++) {
			esa_ps_get_job_stats(ps, jobs[i].job_id, &s);
			/* A job is through once its last sequence showed up. */
			if (target && (s.finished >= target || s.seq_high >= target))
				done_jobs++;
		}
		if (progress) {
			esa_ps_get_job_stats(ps, jobs[0].job_id, &s);
			fprintf(stderr, "%sesa-ps: %llu/%u jobs done, job %u finished %llu%s%s",
				isatty(2) ? "\r" : "", (unsigned long long)done_jobs,
				njobs, jobs[0].job_id, (unsigned long long)s.finished,
				target ? "" : " (no target)", isatty(2) ? "   " : "\n");
		}
		if (target && done_jobs == njobs &&
		    now - last_rx >= linger_ms * 1000000ull)
			break;
		if (deadline_s && now - start >= deadline_s * 1000000000ull) {
			fprintf(stderr, "esa-ps: deadline of %llu s reached before all jobs finished\n",
				(unsigned long long)deadline_s);
			exit_reason = "deadline";
			rc = 1;
			break;
		}
	}
	if (progress && isatty(2))
		fputc('\n', stderr);
	print_stats(ps, jobs, njobs, exit_reason, json);
	esa_ps_close(ps);
	return rc;
}
