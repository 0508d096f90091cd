// SPDX-License-Identifier: GPL-2.0
/*
 * esa-job: one worker of an emulated training job. Each of K iterations
 * "computes" for --compute-ms (a sleep, as the GPU time the network
 * overlaps nothing with), fills its gradient of --size bytes with values
 * derived from (job, worker, iteration, index), and allreduces it through
 * libesa. With --verify every sum is checked against the sum of what all
 * fan_in workers must have sent: bit-exact for int32, within the documented
 * quantisation bound for float32 (Documentation/endpoints.rst).
 * Reports per-iteration times and the job completion time (JCT), as text
 * or JSON (-j); a progress line on stderr when it is a tty or --progress.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "esa.h"
#include "esa_endpoint.h"
#include "esa_endpoint_cli.h"
#include "esa_parse.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: esa-job --job ID --worker W --fan-in N --ps ADDR[:PORT]\n"
"               --bind ADDR[:PORT] --slots N [options]\n"
"  --job ID            job id, 1..%u\n"
"  --worker W          this worker's index, 0..fan-in-1\n"
"  --fan-in N          workers in the job, 1..%u\n"
"  --ps ADDR[:PORT]    the job's parameter server (port %u)\n"
"  --bind ADDR[:PORT]  own address and port (port %u)\n"
"  --slots N           aggregator index space: agg_slots (esa, atp) or the\n"
"                      job's static quota\n"
"  --agg-offset N      first aggregator index used (0)\n"
"  --agg-span N        consecutive aggregators cycled (min(window, slots))\n"
"  --priority P        job priority 0..255 (0)\n"
"  --window N          outstanding packets (128)\n"
"  --values N          values per packet, 1..%u (%u)\n"
"  --timeout-us N      resend timeout floor (10000)\n"
"  --max-resends N     resends of one packet with no other result meanwhile\n"
"                      before failing (100)\n"
"  --iterations K      training iterations (1)\n"
"  --size BYTES        gradient size per iteration, suffix K/M/G (1M)\n"
"  --compute-ms MS     compute time per iteration (0)\n"
"  --type T            int32 or float32 (int32)\n"
"  --scale-log2 K      float32 fixed-point scale 2^K (%d)\n"
"  --amplitude A       float32 values in [-A, A) (1.0)\n"
"  --verify            check every sum; exit 1 on a mismatch\n"
"  --progress          progress line on stderr (default when a tty)\n"
"  -j, --json          report as JSON\n"
"  -h, --help\n",
		ESA_MAX_JOB_ID, ESA_MAX_WORKERS, ESA_UDP_PORT, ESA_UDP_PORT,
		ESA_MAX_VALUES, ESA_MAX_VALUES, ESA_F32_SCALE_LOG2_DEFAULT);
}

/* splitmix64 of the value's coordinates: every worker can recompute it. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t coord(unsigned job, unsigned w, uint64_t it, size_t i)
{
	return mix(((uint64_t)job << 48) ^ ((uint64_t)w << 40) ^ (it << 32) ^
		   mix(i));
}

/* int32 values in [-2^23, 2^23): 32 workers sum without saturating. */
static int32_t gen_i32(unsigned job, unsigned w, uint64_t it, size_t i)
{
	return (int32_t)(coord(job, w, it, i) >> 40) - (1 << 23);
}

static float gen_f32(unsigned job, unsigned w, uint64_t it, size_t i,
		     double amp)
{
	double u = (double)(coord(job, w, it, i) >> 40) / (double)(1 << 24);

	return (float)((2 * u - 1) * amp);
}

static double ms_since(uint64_t t0)
{
	return (double)(esa_now_ns() - t0) / 1e6;
}

struct iter_rec {
	double compute_ms;
	double allreduce_ms;
};

#define FAIL_USAGE(...) do { \
	fprintf(stderr, "esa-job: " __VA_ARGS__); fputc('\n', stderr); \
	fprintf(stderr, "Try 'esa-job --help'.\n"); return 2; } while (0)

/* The worker's statistics printed, in order. */
#define SF(f) ESA_CLI_U64(struct esa_endpoint_stats, f, #f)
static const struct esa_cli_field stat_fields[] = {
	SF(allreduces), SF(packets_sent), SF(bytes_sent), SF(resends),
	SF(timeouts), SF(results), SF(duplicate_results), SF(pulls),
	SF(ignored), SF(overflow_results), SF(f32_redo_packets),
	ESA_CLI_INT(struct esa_endpoint_stats, f32_min_scale_log2,
		    "f32_min_scale_log2"),
	SF(tx_drops), SF(send_batches), SF(recv_batches),
};
#undef SF

int main(int argc, char **argv)
{
	enum { O_JOB = 256, O_WORKER, O_FANIN, O_PS, O_BIND, O_SLOTS, O_OFFSET,
	       O_SPAN, O_PRIO, O_WINDOW, O_VALUES, O_TIMEOUT, O_MAXRS, O_ITER,
	       O_SIZE, O_COMPUTE, O_TYPE, O_SCALE, O_AMP, O_VERIFY, O_PROGRESS };
	static const struct option opts[] = {
		{ "job", required_argument, NULL, O_JOB },
		{ "worker", required_argument, NULL, O_WORKER },
		{ "fan-in", required_argument, NULL, O_FANIN },
		{ "ps", required_argument, NULL, O_PS },
		{ "bind", required_argument, NULL, O_BIND },
		{ "slots", required_argument, NULL, O_SLOTS },
		{ "agg-offset", required_argument, NULL, O_OFFSET },
		{ "agg-span", required_argument, NULL, O_SPAN },
		{ "priority", required_argument, NULL, O_PRIO },
		{ "window", required_argument, NULL, O_WINDOW },
		{ "values", required_argument, NULL, O_VALUES },
		{ "timeout-us", required_argument, NULL, O_TIMEOUT },
		{ "max-resends", required_argument, NULL, O_MAXRS },
		{ "iterations", required_argument, NULL, O_ITER },
		{ "size", required_argument, NULL, O_SIZE },
		{ "compute-ms", required_argument, NULL, O_COMPUTE },
		{ "type", required_argument, NULL, O_TYPE },
		{ "scale-log2", required_argument, NULL, O_SCALE },
		{ "amplitude", required_argument, NULL, O_AMP },
		{ "verify", no_argument, NULL, O_VERIFY },
		{ "progress", no_argument, NULL, O_PROGRESS },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	struct esa_endpoint_config cfg = { 0 };
	uint64_t v, iters = 1, size = 1 << 20, compute_ms = 0;
	bool have_job = false, have_worker = false, have_fanin = false;
	bool have_ps = false, have_bind = false, is_f32 = false, verify = false;
	bool json = false, progress = isatty(2);
	double amp = 1.0, max_err = 0;
	uint64_t checked = 0, mismatches = 0;
	struct esa_endpoint_stats st;
	struct esa_endpoint *ep;
	struct iter_rec *rec;
	uint64_t t_start;
	size_t count;
	void *buf;
	int c, err = 0;
	int64_t sv;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case O_JOB:
			if (esa_parse_u64(optarg, 1, ESA_MAX_JOB_ID, &v))
				FAIL_USAGE("--job: %s", esa_last_error());
			cfg.job_id = v;
			have_job = true;
			break;
		case O_WORKER:
			if (esa_parse_u64(optarg, 0, ESA_MAX_WORKERS - 1, &v))
				FAIL_USAGE("--worker: %s", esa_last_error());
			cfg.worker_id = v;
			have_worker = true;
			break;
		case O_FANIN:
			if (esa_parse_u64(optarg, 1, ESA_MAX_WORKERS, &v))
				FAIL_USAGE("--fan-in: %s", esa_last_error());
			cfg.fan_in = v;
			have_fanin = true;
			break;
		case O_PS:
			if (esa_parse_addr(optarg, ESA_UDP_PORT, &cfg.ps))
				FAIL_USAGE("--ps: %s", esa_last_error());
			have_ps = true;
			break;
		case O_BIND:
			if (esa_parse_addr(optarg, ESA_UDP_PORT, &cfg.self))
				FAIL_USAGE("--bind: %s", esa_last_error());
			have_bind = true;
			break;
		case O_SLOTS:
			if (esa_parse_u64(optarg, 1, ESA_MAX_AGGREGATORS, &v))
				FAIL_USAGE("--slots: %s", esa_last_error());
			cfg.agg_slots = v;
			break;
		case O_OFFSET:
			if (esa_parse_u64(optarg, 0, ESA_MAX_AGGREGATORS - 1, &v))
				FAIL_USAGE("--agg-offset: %s", esa_last_error());
			cfg.agg_offset = v;
			break;
		case O_SPAN:
			if (esa_parse_u64(optarg, 1, ESA_MAX_AGGREGATORS, &v))
				FAIL_USAGE("--agg-span: %s", esa_last_error());
			cfg.agg_span = v;
			break;
		case O_PRIO:
			if (esa_parse_u64(optarg, 0, ESA_MAX_PRIORITY, &v))
				FAIL_USAGE("--priority: %s", esa_last_error());
			cfg.priority = v;
			break;
		case O_WINDOW:
			if (esa_parse_u64(optarg, 1, 65536, &v))
				FAIL_USAGE("--window: %s", esa_last_error());
			cfg.window = v;
			break;
		case O_VALUES:
			if (esa_parse_u64(optarg, 1, ESA_MAX_VALUES, &v))
				FAIL_USAGE("--values: %s", esa_last_error());
			cfg.values_per_packet = v;
			break;
		case O_TIMEOUT:
			if (esa_parse_u64(optarg, 1, 60000000, &v))
				FAIL_USAGE("--timeout-us: %s", esa_last_error());
			cfg.timeout_us = v;
			break;
		case O_MAXRS:
			if (esa_parse_u64(optarg, 1, 1000000, &v))
				FAIL_USAGE("--max-resends: %s", esa_last_error());
			cfg.max_resends = v;
			break;
		case O_ITER:
			if (esa_parse_u64(optarg, 1, 1000000, &iters))
				FAIL_USAGE("--iterations: %s", esa_last_error());
			break;
		case O_SIZE:
			if (esa_parse_size(optarg, 4, 1ull << 32, &size))
				FAIL_USAGE("--size: %s", esa_last_error());
			if (size % 4)
				FAIL_USAGE("--size: %llu is not a multiple of 4 bytes",
					   (unsigned long long)size);
			break;
		case O_COMPUTE:
			if (esa_parse_u64(optarg, 0, 3600000, &compute_ms))
				FAIL_USAGE("--compute-ms: %s", esa_last_error());
			break;
		case O_TYPE:
			if (!strcmp(optarg, "int32"))
				is_f32 = false;
			else if (!strcmp(optarg, "float32"))
				is_f32 = true;
			else
				FAIL_USAGE("--type: '%s' is not int32 or float32", optarg);
			break;
		case O_SCALE:
			if (esa_parse_s64(optarg, ESA_F32_SCALE_LOG2_MIN, 62, &sv))
				FAIL_USAGE("--scale-log2: %s", esa_last_error());
			cfg.scale_log2 = sv;
			cfg.scale_log2_set = true;
			break;
		case O_AMP:
			if (esa_parse_double(optarg, 0, 1e30, &amp))
				FAIL_USAGE("--amplitude: %s", esa_last_error());
			break;
		case O_VERIFY:
			verify = true;
			break;
		case O_PROGRESS:
			progress = true;
			break;
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			fprintf(stderr, "Try 'esa-job --help'.\n");
			return 2;
		}
	}
	if (optind < argc)
		FAIL_USAGE("unexpected argument '%s'", argv[optind]);
	if (!have_job || !have_worker || !have_fanin || !have_ps || !have_bind ||
	    !cfg.agg_slots)
		FAIL_USAGE("--job, --worker, --fan-in, --ps, --bind and --slots are required");
	if (cfg.worker_id >= cfg.fan_in)
		FAIL_USAGE("--worker %u not below --fan-in %u", cfg.worker_id, cfg.fan_in);

	count = size / 4;
	buf = malloc(size);
	rec = calloc(iters, sizeof(*rec));
	if (!buf || !rec) {
		fprintf(stderr, "esa-job: out of memory for %llu bytes\n",
			(unsigned long long)size);
		return 1;
	}
	err = esa_endpoint_open(&cfg, &ep);
	if (err) {
		fprintf(stderr, "esa-job: %s\n", esa_last_error());
		return err == -EINVAL ? 2 : 1;
	}

	t_start = esa_now_ns();
	uint64_t it;
	for (it = 0; it < iters; it++) {
		uint64_t t0 = esa_now_ns();
		struct timespec ts = { compute_ms / 1000, (compute_ms % 1000) * 1000000 };

		if (compute_ms)
			while (nanosleep(&ts, &ts) && errno == EINTR)
				;
		for (size_t i = 0; i < count; i++) {
			if (is_f32)
				((float *)buf)[i] = gen_f32(cfg.job_id, cfg.worker_id, it, i, amp);
			else
				((int32_t *)buf)[i] = gen_i32(cfg.job_id, cfg.worker_id, it, i);
		}
		rec[it].compute_ms = ms_since(t0);
		t0 = esa_now_ns();
		err = is_f32 ? esa_allreduce_f32(ep, buf, count)
			     : esa_allreduce_i32(ep, buf, count);
		rec[it].allreduce_ms = ms_since(t0);
		if (err) {
			fprintf(stderr, "%sesa-job: job %u worker %u: iteration %llu: %s\n",
				progress && isatty(2) ? "\n" : "", cfg.job_id,
				cfg.worker_id, (unsigned long long)it + 1,
				esa_last_error());
			break;
		}
		if (verify) {
			esa_endpoint_get_stats(ep, &st);
			/* Bound of Documentation/endpoints.rst, "Float32". */
			double q = cfg.fan_in * ldexp(1.0, -st.f32_min_scale_log2 - 1);

			for (size_t i = 0; i < count; i++) {
				if (is_f32) {
					double ref = 0, got = ((float *)buf)[i], e;

					for (unsigned w = 0; w < cfg.fan_in; w++)
						ref += gen_f32(cfg.job_id, w, it, i, amp);
					e = fabs(got - ref);
					if (e > max_err)
						max_err = e;
					if (e > q * (1 + 0x1p-23) + fabs(ref) * 0x1p-23)
						mismatches++;
				} else {
					int64_t ref = 0;

					for (unsigned w = 0; w < cfg.fan_in; w++)
						ref += gen_i32(cfg.job_id, w, it, i);
					if (ref != ((int32_t *)buf)[i])
						mismatches++;
				}
				checked++;
			}
		}
		if (progress)
			fprintf(stderr, "%sjob %u worker %u: iteration %llu/%llu allreduce %.2f ms%s%s",
				isatty(2) ? "\r" : "", cfg.job_id, cfg.worker_id,
				(unsigned long long)it + 1, (unsigned long long)iters,
				rec[it].allreduce_ms,
				verify ? (mismatches ? " MISMATCH" : " verified") : "",
				isatty(2) ? "   " : "\n");
	}
	double jct_ms = ms_since(t_start);

	if (progress && isatty(2))
		fputc('\n', stderr);
	esa_endpoint_get_stats(ep, &st);
	if (json) {
		printf("{\"job\":%u,\"worker\":%u,\"fan_in\":%u,\"type\":\"%s\","
		       "\"size\":%llu,\"iterations_done\":%llu,\"iterations\":[",
		       cfg.job_id, cfg.worker_id, cfg.fan_in,
		       is_f32 ? "float32" : "int32", (unsigned long long)size,
		       (unsigned long long)it);
		for (uint64_t i = 0; i < it; i++)
			printf("%s{\"iter\":%llu,\"compute_ms\":%.3f,\"allreduce_ms\":%.3f,"
			       "\"goodput_gbps\":%.4f}", i ? "," : "",
			       (unsigned long long)i + 1, rec[i].compute_ms,
			       rec[i].allreduce_ms,
			       size * 8 / (rec[i].allreduce_ms * 1e6));
		printf("],\"jct_ms\":%.3f,\"ok\":%s,", jct_ms,
		       err || mismatches ? "false" : "true");
		if (verify)
			printf("\"verify\":{\"checked\":%llu,\"mismatches\":%llu,\"max_abs_error\":%.9g},",
			       (unsigned long long)checked,
			       (unsigned long long)mismatches, max_err);
		printf("\"stats\":{");
		esa_cli_print_fields(stat_fields, ESA_ARRAY_SIZE(stat_fields), &st,
				     true, true);
		printf("}}\n");
	} else {
		for (uint64_t i = 0; i < it; i++)
			printf("iteration %llu compute_ms %.3f allreduce_ms %.3f goodput_gbps %.4f\n",
			       (unsigned long long)i + 1, rec[i].compute_ms,
			       rec[i].allreduce_ms,
			       size * 8 / (rec[i].allreduce_ms * 1e6));
		printf("jct_ms %.3f\n", jct_ms);
		if (verify)
			printf("verify checked %llu mismatches %llu max_abs_error %.9g\n",
			       (unsigned long long)checked,
			       (unsigned long long)mismatches, max_err);
		printf("stats");
		esa_cli_print_fields(stat_fields, ESA_ARRAY_SIZE(stat_fields), &st,
				     false, false);
		printf("\n");
	}
	esa_endpoint_close(ep);
	free(buf);
	free(rec);
	if (err)
		return 1;
	if (mismatches) {
		fprintf(stderr, "esa-job: job %u worker %u: %llu of %llu sums wrong\n",
			cfg.job_id, cfg.worker_id, (unsigned long long)mismatches,
			(unsigned long long)checked);
		return 1;
	}
	return 0;
}
