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
 *
 * main is parse (the option table), run (iterations), verify (each sum),
 * report (the output layer).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "esa.h"
#include "esa_endpoint.h"
#include "esa_parse.h"
#include "opts.h"
#include "output.h"

struct job_opts {
	struct esa_endpoint_config cfg;
	uint64_t	iterations;
	uint64_t	size;		/* bytes per allreduce */
	uint64_t	compute_ms;
	bool		is_f32;
	double		amplitude;	/* float32 values in [-A, A) */
	uint64_t	silence_s;	/* report a silence this long (0: no) */
	bool		verify;
	bool		progress;
	bool		json;
};

static int parse_type(void *opts, const char *arg)
{
	struct job_opts *o = opts;

	if (strcmp(arg, "int32") && strcmp(arg, "float32"))
		return esa_set_error(-EINVAL, "'%s' is not int32 or float32", arg);
	o->is_f32 = !strcmp(arg, "float32");
	return 0;
}

static int parse_scale(void *opts, const char *arg)
{
	struct job_opts *o = opts;
	int64_t v;

	if (esa_parse_s64(arg, ESA_F32_SCALE_LOG2_MIN, 62, &v))
		return -EINVAL;
	o->cfg.scale_log2 = (int)v;
	o->cfg.scale_log2_set = true;
	return 0;
}

static int parse_switch(void *opts, const char *arg)
{
	struct job_opts *o = opts;

	return cli_parse_switch(arg, &o->cfg.sw);
}

static int parse_token(void *opts, const char *arg)
{
	struct job_opts *o = opts;

	return esa_parse_token(arg, &o->cfg.token);
}

#define CFG(m)	CLI_MEMBER(struct job_opts, cfg.m)
#define OPT(m)	CLI_MEMBER(struct job_opts, m)
static const struct cli_opt job_options[] = {
	{ "job", 0, CLI_UINT, CFG(job_id), .min = 1, .max = ESA_MAX_JOB_ID,
	  .required = true, .arg = "ID",
	  .help = "job id, 1..1023, as registered with the switch" },
	{ "worker", 0, CLI_UINT, CFG(worker_id), .min = 0,
	  .max = ESA_MAX_WORKERS - 1, .required = true, .arg = "W",
	  .help = "this worker's index, 0..fan-in-1" },
	{ "fan-in", 0, CLI_UINT, CFG(fan_in), .min = 1, .max = ESA_MAX_WORKERS,
	  .required = true, .arg = "N", .help = "workers in the job, 1..32" },
	{ "ps", 0, CLI_ADDR, CFG(ps), .port = ESA_UDP_PORT, .required = true,
	  .arg = "ADDR[:PORT]", .help = "the job's parameter server (port 47000)" },
	{ "bind", 0, CLI_ADDR, CFG(self), .port = ESA_UDP_PORT, .required = true,
	  .arg = "ADDR[:PORT]",
	  .help = "own address and port (47000), as in the job record" },
	{ "switch", 0, CLI_CALL, .call = parse_switch, .arg = "ADDR",
	  .help = "a one-armed switch's address: send to it, take results only "
		  "from it (env ESA_SWITCH; none: the switch is on the path)" },
	{ "token", 0, CLI_CALL, .call = parse_token, .arg = "HEX16",
	  .help = "the job's token, 16 hex digits, as given to the switch "
		  "(env ESA_TOKEN, which other local users cannot read; none)" },
	{ "slots", 0, CLI_UINT, CFG(agg_slots), .min = 1,
	  .max = ESA_MAX_AGGREGATORS, .required = true, .arg = "N",
	  .help = "aggregator index space: agg_slots (esa, atp) or the static quota" },
	{ "agg-offset", 0, CLI_UINT, CFG(agg_offset), .min = 0,
	  .max = ESA_MAX_AGGREGATORS - 1, .arg = "N",
	  .help = "first aggregator index used (0)" },
	{ "agg-span", 0, CLI_UINT, CFG(agg_span), .min = 1,
	  .max = ESA_MAX_AGGREGATORS, .arg = "N",
	  .help = "consecutive aggregators cycled (min(window, slots))" },
	{ "priority", 0, CLI_UINT, CFG(priority), .min = 0,
	  .max = ESA_MAX_PRIORITY, .arg = "P", .help = "job priority 0..255 (0)" },
	{ "window", 0, CLI_UINT, CFG(window), .min = 1, .max = 65536,
	  .arg = "N", .help = "outstanding packets (128)" },
	{ "values", 0, CLI_UINT, CFG(values_per_packet), .min = 1,
	  .max = ESA_MAX_VALUES, .arg = "N",
	  .help = "values per packet, 1..363 (363); with a token 1..361 (361)" },
	{ "timeout-us", 0, CLI_UINT, CFG(timeout_us), .min = 1, .max = 60000000,
	  .arg = "N", .help = "resend timeout floor (10000)" },
	{ "max-resends", 0, CLI_UINT, CFG(max_resends), .min = 1,
	  .max = 1000000, .arg = "N",
	  .help = "resends of a packet, none answered meanwhile, before failing (100)" },
	{ "iterations", 0, CLI_UINT, OPT(iterations), .min = 1, .max = 1000000,
	  .arg = "K", .help = "training iterations (1)" },
	{ "size", 0, CLI_SIZE, OPT(size), .min = 4, .max = 1ull << 32,
	  .arg = "BYTES", .help = "gradient size per iteration, suffix K/M/G (1M)" },
	{ "compute-ms", 0, CLI_UINT, OPT(compute_ms), .min = 0, .max = 3600000,
	  .arg = "MS", .help = "compute time per iteration (0)" },
	{ "type", 0, CLI_CALL, .call = parse_type,
	  .arg = "T", .help = "int32 or float32 (int32)" },
	{ "scale-log2", 0, CLI_CALL, .call = parse_scale,
	  .arg = "K", .help = "float32 fixed-point scale 2^K (16)" },
	{ "amplitude", 0, CLI_DOUBLE, OPT(amplitude), .dmin = 0, .dmax = 1e30,
	  .arg = "A", .help = "float32 values in [-A, A) (1.0)" },
	{ "silence-s", 0, CLI_UINT, OPT(silence_s), .min = 0, .max = 3600,
	  .arg = "S", .help = "nothing back for S seconds: say the likely cause "
			      "on stderr, and go on trying (3; 0 = never)" },
	{ "verify", 0, CLI_FLAG, OPT(verify),
	  .help = "check every sum; exit 1 on a mismatch" },
	{ "progress", 0, CLI_FLAG, OPT(progress),
	  .help = "progress line on stderr (default when a tty)" },
	{ "json", 'j', CLI_FLAG, OPT(json), .help = "report as JSON" },
};
#undef CFG
#undef OPT

static const struct cli_tool job_tool = {
	.name = "esa-job",
	.synopsis = "--job ID --worker W --fan-in N --ps ADDR[:PORT]\n"
		    "               --bind ADDR[:PORT] --slots N [--switch ADDR]\n"
		    "               [--token HEX16] [options]",
	.opts = job_options,
	.nopts = OUT_ARRAY_SIZE(job_options),
};

/* Options, defaults first; CLI_CONTINUE or the exit status. */
static int parse(int argc, char **argv, struct job_opts *o)
{
	uint64_t seen;
	int ret;

	*o = (struct job_opts){
		.iterations = 1, .size = 1 << 20, .amplitude = 1.0,
		.silence_s = 3,
		.progress = isatty(2),
	};
	ret = cli_env(&job_tool, "ESA_SWITCH", parse_switch, o);
	if (ret == CLI_CONTINUE)
		ret = cli_env(&job_tool, "ESA_TOKEN", parse_token, o);
	if (ret == CLI_CONTINUE)
		ret = cli_parse(&job_tool, argc, argv, o, &seen);
	if (ret != CLI_CONTINUE)
		return ret;
	if (o->cfg.worker_id >= o->cfg.fan_in)
		return cli_usage_error(&job_tool, "--worker %u not below --fan-in %u",
				       o->cfg.worker_id, o->cfg.fan_in);
	if (o->cfg.token && o->cfg.values_per_packet > ESA_MAX_VALUES_TOKEN)
		return cli_usage_error(&job_tool,
				       "--values %u above %u: a job with a token (--token, ESA_TOKEN) has room for %u values per packet",
				       o->cfg.values_per_packet, ESA_MAX_VALUES_TOKEN,
				       ESA_MAX_VALUES_TOKEN);
	if (o->size % 4)
		return cli_usage_error(&job_tool,
				       "--size: %llu is not a multiple of 4 bytes",
				       (unsigned long long)o->size);
	return CLI_CONTINUE;
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

/* What a run did: per iteration, the verification, the endpoint's view. */
struct job_result {
	struct iter_rec	*iter;
	uint64_t	done;		/* iterations completed */
	double		jct_ms;
	int		err;		/* the failed allreduce's, or 0 */
	uint64_t	checked, mismatches;
	double		max_err;
	struct esa_endpoint_stats st;
};

/* This worker's gradient of iteration @it. */
static void fill(const struct job_opts *o, void *buf, size_t count, uint64_t it)
{
	const struct esa_endpoint_config *c = &o->cfg;

	for (size_t i = 0; i < count; i++) {
		if (o->is_f32)
			((float *)buf)[i] = gen_f32(c->job_id, c->worker_id, it,
						    i, o->amplitude);
		else
			((int32_t *)buf)[i] = gen_i32(c->job_id, c->worker_id, it, i);
	}
}

/*
 * Check iteration @it's sums against what all workers sent: int32 exactly,
 * float32 within the bound of Documentation/endpoints.rst ("Float32") at
 * the smallest scale the call used.
 */
static void verify(const struct job_opts *o, const void *buf, size_t count,
		   uint64_t it, int min_scale_log2, struct job_result *r)
{
	const struct esa_endpoint_config *c = &o->cfg;
	double q = c->fan_in * ldexp(1.0, -min_scale_log2 - 1);

	for (size_t i = 0; i < count; i++, r->checked++) {
		if (o->is_f32) {
			double ref = 0, got = ((const float *)buf)[i], e;

			for (unsigned w = 0; w < c->fan_in; w++)
				ref += gen_f32(c->job_id, w, it, i, o->amplitude);
			e = fabs(got - ref);
			if (e > r->max_err)
				r->max_err = e;
			if (e > q * (1 + 0x1p-23) + fabs(ref) * 0x1p-23)
				r->mismatches++;
		} else {
			int64_t ref = 0;

			for (unsigned w = 0; w < c->fan_in; w++)
				ref += gen_i32(c->job_id, w, it, i);
			if (ref != ((const int32_t *)buf)[i])
				r->mismatches++;
		}
	}
}

static void compute(uint64_t ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (ms && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void progress_line(const struct job_opts *o, const struct job_result *r,
			  uint64_t it)
{
	bool tty = isatty(2);

	fprintf(stderr, "%sjob %u worker %u: iteration %llu/%llu allreduce %.2f ms%s%s",
		tty ? "\r" : "", o->cfg.job_id, o->cfg.worker_id,
		(unsigned long long)it + 1, (unsigned long long)o->iterations,
		r->iter[it].allreduce_ms,
		o->verify ? (r->mismatches ? " MISMATCH" : " verified") : "",
		tty ? "   " : "\n");
}

/* A silence: the library's likely cause, as a warning (it goes on). */
static void on_quiet(void *arg, const char *why)
{
	const struct job_opts *o = arg;

	fprintf(stderr, "%sesa-job: job %u worker %u: nothing back for %llu s: %s; still trying\n",
		o->progress && isatty(2) ? "\n" : "", o->cfg.job_id,
		o->cfg.worker_id, (unsigned long long)o->silence_s, why);
}

/* Every iteration until one fails; fills @r. */
static void run(const struct job_opts *o, struct esa_endpoint *ep, void *buf,
		struct job_result *r)
{
	size_t count = o->size / 4;
	uint64_t t_start = esa_now_ns(), t0;
	uint64_t it;

	for (it = 0; it < o->iterations; it++) {
		t0 = esa_now_ns();
		compute(o->compute_ms);
		fill(o, buf, count, it);
		r->iter[it].compute_ms = ms_since(t0);
		t0 = esa_now_ns();
		r->err = o->is_f32 ? esa_allreduce_f32(ep, buf, count)
				   : esa_allreduce_i32(ep, buf, count);
		r->iter[it].allreduce_ms = ms_since(t0);
		if (r->err) {
			fprintf(stderr, "%sesa-job: job %u worker %u: iteration %llu: %s\n",
				o->progress && isatty(2) ? "\n" : "", o->cfg.job_id,
				o->cfg.worker_id, (unsigned long long)it + 1,
				esa_last_error());
			break;
		}
		if (o->verify) {
			esa_endpoint_get_stats(ep, &r->st);
			verify(o, buf, count, it, r->st.f32_min_scale_log2, r);
		}
		if (o->progress)
			progress_line(o, r, it);
	}
	r->done = it;
	r->jct_ms = ms_since(t_start);
	if (o->progress && isatty(2))
		fputc('\n', stderr);
	esa_endpoint_get_stats(ep, &r->st);
}

static const struct out_field stat_fields[] = {
	OUT_U64(struct esa_endpoint_stats, allreduces),
	OUT_U64(struct esa_endpoint_stats, packets_sent),
	OUT_U64(struct esa_endpoint_stats, bytes_sent),
	OUT_U64(struct esa_endpoint_stats, resends),
	OUT_U64(struct esa_endpoint_stats, timeouts),
	OUT_U64(struct esa_endpoint_stats, results),
	OUT_U64(struct esa_endpoint_stats, duplicate_results),
	OUT_U64(struct esa_endpoint_stats, pulls),
	OUT_U64(struct esa_endpoint_stats, ignored),
	OUT_U64(struct esa_endpoint_stats, overflow_results),
	OUT_U64(struct esa_endpoint_stats, f32_redo_packets),
	OUT_INT(struct esa_endpoint_stats, f32_min_scale_log2),
	OUT_U64(struct esa_endpoint_stats, tx_drops),
	OUT_U64(struct esa_endpoint_stats, send_batches),
	OUT_U64(struct esa_endpoint_stats, recv_batches),
	OUT_U64(struct esa_endpoint_stats, bad_token),
};

/* The report (Documentation/endpoints.rst, "Tools"): text or JSON. */
static void report(const struct job_opts *o, const struct job_result *r)
{
	out_init(o->json, false);
	out_open_object(NULL);
	out_u64("job", NULL, o->cfg.job_id);
	out_u64("worker", NULL, o->cfg.worker_id);
	out_u64("fan_in", "fan-in", o->cfg.fan_in);
	out_str("type", NULL, o->is_f32 ? "float32" : "int32");
	out_u64("size", NULL, o->size);
	out_u64("iterations_done", "iterations-done", r->done);
	out_nl();
	out_open_array("iterations");
	for (uint64_t i = 0; i < r->done; i++) {
		out_open_object(NULL);
		out_u64("iter", "iteration", i + 1);
		out_double("compute_ms", NULL, 3, r->iter[i].compute_ms);
		out_double("allreduce_ms", NULL, 3, r->iter[i].allreduce_ms);
		out_double("goodput_gbps", NULL, 4, r->iter[i].allreduce_ms > 0 ?
			   o->size * 8 / (r->iter[i].allreduce_ms * 1e6) : 0);
		out_close_object();
		out_nl();
	}
	out_close_array();
	out_double("jct_ms", NULL, 3, r->jct_ms);
	out_bool("ok", NULL, !r->err && !r->mismatches);
	out_nl();
	if (o->verify) {
		out_text("verify");
		out_open_object("verify");
		out_u64("checked", NULL, r->checked);
		out_u64("mismatches", NULL, r->mismatches);
		out_double("max_abs_error", NULL, -9, r->max_err);
		out_close_object();
		out_nl();
	}
	out_text("stats");
	out_open_object("stats");
	out_fields(stat_fields, OUT_ARRAY_SIZE(stat_fields), &r->st);
	out_close_object();
	out_close_object();
	out_finish();
}

int main(int argc, char **argv)
{
	struct job_result r = { 0 };
	struct esa_endpoint *ep;
	struct job_opts o;
	void *buf;
	int ret;

	ret = parse(argc, argv, &o);
	if (ret != CLI_CONTINUE)
		return ret;
	buf = malloc(o.size);
	r.iter = calloc(o.iterations, sizeof(*r.iter));
	if (!buf || !r.iter) {
		fprintf(stderr, "esa-job: out of memory for %llu bytes\n",
			(unsigned long long)o.size);
		return 1;
	}
	ret = esa_endpoint_open(&o.cfg, &ep);
	if (ret) {
		fprintf(stderr, "esa-job: %s\n", esa_last_error());
		return ret == -EINVAL ? 2 : 1;
	}
	if (o.silence_s)
		esa_endpoint_on_quiet(ep, o.silence_s * 1000, on_quiet, &o);
	run(&o, ep, buf, &r);
	report(&o, &r);
	esa_endpoint_close(ep);
	free(buf);
	free(r.iter);
	if (r.err)
		return 1;
	if (r.mismatches) {
		fprintf(stderr, "esa-job: job %u worker %u: %llu of %llu sums wrong\n",
			o.cfg.job_id, o.cfg.worker_id,
			(unsigned long long)r.mismatches,
			(unsigned long long)r.checked);
		return 1;
	}
	return 0;
}
