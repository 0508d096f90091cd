// SPDX-License-Identifier: GPL-2.0
/*
 * esa-ps: the parameter server of one or more ESA jobs, built on libesa.
 * It finishes the sums the switch could not (or all of them in
 * --host-only mode), sends results, answers resends, and exits once every
 * job has finished its expected sequences and the socket stayed quiet for
 * --linger-ms; once no packet of an unfinished job came for --idle-s (its
 * workers finished unseen or are gone); on SIGINT/SIGTERM (after taking
 * what already arrived); or (failing) at --deadline-s.
 * Statistics per job at exit, as text or JSON (-j).
 *
 * main is parse (the option table), serve (poll until a reason to stop),
 * report (the output layer).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "esa.h"
#include "esa_endpoint.h"
#include "esa_parse.h"
#include "opts.h"
#include "output.h"

#define MAX_JOBS 64

struct ps_opts {
	struct esa_ps_config cfg;
	struct esa_ps_job_config jobs[MAX_JOBS];
	unsigned	njobs;
	uint64_t	iterations, size, values, results;
	uint64_t	token;		/* ESA_TOKEN: of jobs given without one */
	uint64_t	linger_ms, idle_s, deadline_s;
	bool		host_only, no_result_on_complete;
	bool		json, progress;
};

/* "ID:FANIN[:TOKEN]" of a --job into @jc (@s, the whole, for errors). */
static int parse_job_head(struct ps_opts *o, char *head, const char *s,
			  struct esa_ps_job_config *jc)
{
	char *colon = strchr(head, ':'), *tcolon;
	uint64_t v;

	if (!colon)
		return esa_set_error(-EINVAL, "'%s' is not ID:FANIN[:TOKEN][@ADDR,...]", s);
	*colon++ = '\0';
	tcolon = strchr(colon, ':');
	if (tcolon)
		*tcolon++ = '\0';
	if (esa_parse_u64(head, 1, ESA_MAX_JOB_ID, &v))
		return esa_error_context(-EINVAL, "ID");
	jc->job_id = v;
	if (esa_parse_u64(colon, 1, ESA_MAX_WORKERS, &v))
		return esa_error_context(-EINVAL, "FANIN");
	jc->fan_in = v;
	jc->token = o->token;
	if (tcolon && esa_parse_token(tcolon, &jc->token))
		return esa_error_context(-EINVAL, "job %u: TOKEN", jc->job_id);
	return 0;
}

/* "ID:FANIN[:TOKEN][@ADDR[:PORT],...]": one more job to serve. */
static int parse_job(void *opts, const char *s)
{
	struct ps_opts *o = opts;
	struct esa_ps_job_config *jc = &o->jobs[o->njobs];
	char buf[1024], *at, *tok, *save;
	unsigned w = 0;
	int err;

	if (o->njobs == MAX_JOBS)
		return esa_set_error(-EINVAL, "at most %d jobs", MAX_JOBS);
	if (strlen(s) >= sizeof(buf))
		return esa_set_error(-EINVAL, "'%s' too long", s);
	strcpy(buf, s);
	memset(jc, 0, sizeof(*jc));
	at = strchr(buf, '@');
	if (at)
		*at++ = '\0';
	err = parse_job_head(o, buf, s, jc);
	if (err)
		return err;
	for (unsigned i = 0; i < o->njobs; i++)
		if (o->jobs[i].job_id == jc->job_id)
			return esa_set_error(-EINVAL, "job %u given twice", jc->job_id);
	for (tok = at ? strtok_r(at, ",", &save) : NULL; tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (w >= jc->fan_in)
			return esa_set_error(-EINVAL,
					     "job %u: more worker addresses than fan-in %u",
					     jc->job_id, jc->fan_in);
		if (esa_parse_addr(tok, ESA_UDP_PORT, &jc->worker[w]))
			return esa_error_context(-EINVAL, "job %u", jc->job_id);
		jc->worker_known |= 1u << w++;
	}
	if (at && w != jc->fan_in)
		return esa_set_error(-EINVAL,
				     "job %u: %u worker addresses for fan-in %u",
				     jc->job_id, w, jc->fan_in);
	o->njobs++;
	return 0;
}

static int parse_switch(void *opts, const char *arg)
{
	struct ps_opts *o = opts;

	return cli_parse_switch(arg, &o->cfg.sw);
}

static int parse_token(void *opts, const char *arg)
{
	struct ps_opts *o = opts;

	return esa_parse_token(arg, &o->token);
}

#define OPT(m)	CLI_MEMBER(struct ps_opts, m)
static const struct cli_opt ps_options[] = {
	{ "job", 0, CLI_CALL, .call = parse_job, .required = true,
	  .arg = "ID:FANIN[:TOKEN][@W0,W1..]",
	  .help = "serve job ID with FANIN workers (repeatable); TOKEN: the "
		  "job's token, 16 hex digits (ESA_TOKEN; none); worker i's "
		  "address (port 47000) is learned from its packets when not given" },
	{ "bind", 0, CLI_ADDR, OPT(cfg.bind), .port = ESA_UDP_PORT,
	  .arg = "ADDR[:PORT]", .help = "listen address (0.0.0.0:47000)" },
	{ "switch", 0, CLI_CALL, .call = parse_switch, .arg = "ADDR",
	  .help = "a one-armed switch's address: take packets only from it, "
		  "send results and pulls to it (env ESA_SWITCH; none)" },
	{ "host-only", 0, CLI_FLAG, OPT(host_only),
	  .help = "no aggregating switch: unicast each result to every worker "
		  "(the baseline)" },
	{ "no-result-on-complete", 0, CLI_FLAG, OPT(no_result_on_complete),
	  .help = "do not resend sums the switch completed (esa and static "
		  "multicast them already; atp needs them)" },
	{ "cache", 0, CLI_UINT, OPT(cfg.cache_entries), .min = 16,
	  .max = 1 << 20, .arg = "N",
	  .help = "result cache entries per job (>= 2 x window; 4096)" },
	{ "iterations", 0, CLI_UINT, OPT(iterations), .min = 1, .max = 1u << 30,
	  .arg = "K", .help = "expect K allreduces per job (with --size)" },
	{ "size", 0, CLI_SIZE, OPT(size), .min = 4, .max = 1ull << 34,
	  .arg = "BYTES", .help = "... of BYTES each, suffix K/M/G" },
	{ "values", 0, CLI_UINT, OPT(values), .min = 1, .max = ESA_MAX_VALUES,
	  .arg = "N", .help = "... at N values per packet (363; 361 for a job "
			      "with a token)" },
	{ "results", 0, CLI_UINT, OPT(results), .min = 1, .max = 1ull << 40,
	  .arg = "N", .help = "expect N finished sequences per job" },
	{ "linger-ms", 0, CLI_UINT, OPT(linger_ms), .min = 0, .max = 3600000,
	  .arg = "MS", .help = "quiet time before exiting once done (5000): "
			       "time to answer workers whose last result was lost" },
	{ "idle-s", 0, CLI_UINT, OPT(idle_s), .min = 0, .max = 86400 * 7,
	  .arg = "S", .help = "exit once no packet of any unfinished job came for S "
			      "seconds (60; 0 = never): its workers finished before "
			      "this PS could see them, or are gone (exit 1 if the "
			      "--iterations/--results target is not reached)" },
	{ "deadline-s", 0, CLI_UINT, OPT(deadline_s), .min = 0,
	  .max = 86400 * 7, .arg = "S",
	  .help = "give up (exit 1) after S seconds (0 = never)" },
	{ "json", 'j', CLI_FLAG, OPT(json), .help = "statistics as JSON" },
	{ "progress", 0, CLI_FLAG, OPT(progress),
	  .help = "progress line on stderr (default when a tty)" },
};
#undef OPT

static const struct cli_tool ps_tool = {
	.name = "esa-ps",
	.synopsis = "--job ID:FANIN[:TOKEN][@ADDR[:PORT],...] [--job ...]\n"
		    "              [--switch ADDR] [options]",
	.opts = ps_options,
	.nopts = OUT_ARRAY_SIZE(ps_options),
};

/* Options, defaults first; CLI_CONTINUE or the exit status. */
static int parse(int argc, char **argv, struct ps_opts *o)
{
	uint64_t seen;
	int ret;

	memset(o, 0, sizeof(*o));
	o->cfg.bind.sin_family = AF_INET;
	o->cfg.bind.sin_port = htons(ESA_UDP_PORT);
	o->linger_ms = 5000;
	o->idle_s = 60;
	o->progress = isatty(2);
	ret = cli_env(&ps_tool, "ESA_SWITCH", parse_switch, o);
	if (ret == CLI_CONTINUE)
		ret = cli_env(&ps_tool, "ESA_TOKEN", parse_token, o);
	if (ret == CLI_CONTINUE)
		ret = cli_parse(&ps_tool, argc, argv, o, &seen);
	if (ret != CLI_CONTINUE)
		return ret;
	if (o->host_only && o->cfg.sw.sin_family)
		return cli_usage_error(&ps_tool,
				       "--host-only and a switch address (--switch, ESA_SWITCH) exclude each other");
	for (unsigned i = 0; i < o->njobs; i++)
		if (o->jobs[i].token && o->values > ESA_MAX_VALUES_TOKEN)
			return cli_usage_error(&ps_tool,
					       "--values %llu above %u: job %u has a token, which leaves room for %u values per packet",
					       (unsigned long long)o->values,
					       ESA_MAX_VALUES_TOKEN,
					       o->jobs[i].job_id, ESA_MAX_VALUES_TOKEN);
	if (cli_given(&ps_tool, seen, "iterations") !=
	    cli_given(&ps_tool, seen, "size"))
		return cli_usage_error(&ps_tool, "--iterations and --size go together");
	if (o->iterations && o->results)
		return cli_usage_error(&ps_tool,
				       "--results and --iterations/--size exclude each other");
	o->cfg.mode = o->host_only ? ESA_PS_HOST_ONLY : ESA_PS_SWITCH;
	o->cfg.result_on_complete = !o->no_result_on_complete;
	return CLI_CONTINUE;
}

/*
 * Sequences job @i must finish: from --iterations/--size at --values (or
 * the most its packets hold), or --results.
 */
static uint64_t target_of(const struct ps_opts *o, unsigned i)
{
	uint64_t vpp = o->values ? o->values
				 : esa_wire_max_values(o->jobs[i].token);

	if (o->iterations)
		return o->iterations * ((o->size / 4 + vpp - 1) / vpp);
	return o->results;
}

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	stop_sig = sig;
}

/* What serve() follows per job between polls. */
struct job_watch {
	uint64_t	target;		/* sequences to finish, 0 = unknown */
	uint64_t	rx_seen;	/* rx_packets at the last look */
	uint64_t	last_rx_ns;	/* when it last grew */
	bool		done;		/* its last sequence showed up */
	bool		warned_plain;	/* the no-switch warning was given */
};

struct serve_state {
	bool		targeted;	/* every job has a target */
	uint64_t	start_ns, last_rx_ns;
	unsigned	done;		/* jobs done */
	struct job_watch w[MAX_JOBS];
};

/*
 * Through a switch the PS only ever gets what the switch flagged
 * (COMPLETE, PARTIAL, COLLISION, ...): a plain data packet means it
 * passed no aggregating switch. Said once per job, as early as it shows.
 */
static void warn_plain_data(const struct ps_opts *o, unsigned i,
			    const struct esa_ps_stats *s, struct job_watch *w)
{
	if (o->host_only || w->warned_plain || !s->rx_data)
		return;
	w->warned_plain = true;
	fprintf(stderr, "esa-ps: job %u: plain data packets arrive, which no aggregating switch passes on: "
		"no switch on the path from its workers, or a job record whose PS port is not %u "
		"(the switch takes only packets to that port); without a switch run esa-ps --host-only\n",
		o->jobs[i].job_id, ESA_UDP_PORT);
}

/* Look at every job after a poll: activity, done, warnings. */
static void watch_jobs(const struct esa_ps *ps, const struct ps_opts *o,
		       struct serve_state *st, uint64_t now)
{
	struct esa_ps_stats s;

	st->done = 0;
	for (unsigned i = 0; i < o->njobs; i++) {
		struct job_watch *w = &st->w[i];

		esa_ps_get_job_stats(ps, o->jobs[i].job_id, &s);
		if (s.rx_packets != w->rx_seen) {
			w->rx_seen = s.rx_packets;
			w->last_rx_ns = now;
		}
		w->done = w->target && (s.finished >= w->target ||
					s.seq_high >= w->target);
		st->done += w->done;
		warn_plain_data(o, i, &s, w);
	}
}

/*
 * No packet of any unfinished job for --idle-s: its workers finished
 * before this PS could see them, or are gone. Say, per job, what was seen.
 */
static const char *stop_idle(const struct esa_ps *ps, const struct ps_opts *o,
			     const struct serve_state *st, int *rc)
{
	struct esa_ps_stats s;

	for (unsigned i = 0; i < o->njobs; i++) {
		if (st->w[i].done)
			continue;
		esa_ps_get_job_stats(ps, o->jobs[i].job_id, &s);
		if (!s.rx_packets)
			fprintf(stderr, "esa-ps: job %u: no packet in %llu s (--idle-s): its workers finished before this PS started, never ran, or cannot reach it\n",
				o->jobs[i].job_id, (unsigned long long)o->idle_s);
		else if (st->targeted)
			fprintf(stderr, "esa-ps: job %u: no packet for %llu s (--idle-s) after %llu of %llu sequences: its workers are gone\n",
				o->jobs[i].job_id, (unsigned long long)o->idle_s,
				(unsigned long long)s.seq_high,
				(unsigned long long)st->w[i].target);
		else
			fprintf(stderr, "esa-ps: job %u: no packet for %llu s (--idle-s) after %llu sequences: its workers finished or are gone\n",
				o->jobs[i].job_id, (unsigned long long)o->idle_s,
				(unsigned long long)s.seq_high);
	}
	/* Without a target, gone and finished look alike: not a failure. */
	*rc = st->targeted ? 1 : 0;
	return "idle";
}

/* Whether to stop now, and why (NULL: go on). */
static const char *stop_reason(const struct esa_ps *ps, const struct ps_opts *o,
			       const struct serve_state *st, uint64_t now, int *rc)
{
	uint64_t active = st->start_ns;
	bool waiting = false;

	if (st->targeted && st->done == o->njobs &&
	    now - st->last_rx_ns >= o->linger_ms * 1000000ull)
		return "done";
	/* The latest packet of a job still unfinished (or the start). */
	for (unsigned i = 0; i < o->njobs; i++) {
		if (st->w[i].done)
			continue;
		waiting = true;
		if (st->w[i].last_rx_ns > active)
			active = st->w[i].last_rx_ns;
	}
	if (o->idle_s && waiting && now - active >= o->idle_s * 1000000000ull)
		return stop_idle(ps, o, st, rc);
	if (o->deadline_s && now - st->start_ns >= o->deadline_s * 1000000000ull) {
		fprintf(stderr, "esa-ps: deadline of %llu s reached before all jobs finished\n",
			(unsigned long long)o->deadline_s);
		*rc = 1;
		return "deadline";
	}
	return NULL;
}

/*
 * Packets already received when a signal came are still taken: the
 * workers may be done and gone, and the sums they left are the report.
 */
static void drain(struct esa_ps *ps)
{
	for (int i = 0; i < 64 && esa_ps_poll(ps, 0) > 0; i++)
		;
}

static void progress_line(const struct esa_ps *ps, const struct ps_opts *o,
			  unsigned done, bool targeted)
{
	struct esa_ps_stats s;
	bool tty = isatty(2);

	esa_ps_get_job_stats(ps, o->jobs[0].job_id, &s);
	fprintf(stderr, "%sesa-ps: %u/%u jobs done, job %u finished %llu%s%s",
		tty ? "\r" : "", done, o->njobs, o->jobs[0].job_id,
		(unsigned long long)s.finished, targeted ? "" : " (no target)",
		tty ? "   " : "\n");
}

/* Poll until a reason to stop; the reason, with *rc set on failure. */
static const char *serve(struct esa_ps *ps, const struct ps_opts *o, int *rc)
{
	struct serve_state st = { .targeted = o->iterations || o->results };
	const char *why;
	uint64_t now;
	int err;

	st.start_ns = st.last_rx_ns = esa_now_ns();
	for (unsigned i = 0; i < o->njobs; i++) {
		st.w[i].last_rx_ns = st.start_ns;
		st.w[i].target = target_of(o, i);
	}
	for (;;) {
		err = esa_ps_poll(ps, 100);
		now = esa_now_ns();
		if (stop_sig) {
			drain(ps);
			return "signal";
		}
		if (err < 0 && err != -EINTR) {
			fprintf(stderr, "esa-ps: %s\n", esa_last_error());
			*rc = 1;
			return "error";
		}
		if (err > 0)
			st.last_rx_ns = now;
		watch_jobs(ps, o, &st, now);
		if (o->progress)
			progress_line(ps, o, st.done, st.targeted);
		why = stop_reason(ps, o, &st, now, rc);
		if (why)
			return why;
	}
}

static const struct out_field global_fields[] = {
	OUT_U64(struct esa_ps_global_stats, rx_packets),
	OUT_U64(struct esa_ps_global_stats, malformed),
	OUT_U64(struct esa_ps_global_stats, unknown_job),
	OUT_U64(struct esa_ps_global_stats, unexpected),
	OUT_U64(struct esa_ps_global_stats, tx_drops),
	OUT_U64(struct esa_ps_global_stats, not_switch),
};

#define JF(m, key) OUT_U64_AS(struct esa_ps_stats, m, key)
static const struct out_field job_fields[] = {
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
	JF(bad_token, "bad_token"),
};
#undef JF

/* Why it stopped and the statistics, PS-wide and per job. */
static void report(const struct esa_ps *ps, const struct ps_opts *o,
		   const char *exit_reason)
{
	struct esa_ps_global_stats g;
	struct esa_ps_stats s;

	esa_ps_get_stats(ps, &g);
	out_init(o->json, false);
	out_open_object(NULL);
	out_text("ps");
	out_str("exit", NULL, exit_reason);
	out_fields(global_fields, OUT_ARRAY_SIZE(global_fields), &g);
	out_nl();
	out_open_array("jobs");
	for (unsigned i = 0; i < o->njobs; i++) {
		esa_ps_get_job_stats(ps, o->jobs[i].job_id, &s);
		out_open_object(NULL);
		out_u64("job", NULL, o->jobs[i].job_id);
		out_fields(job_fields, OUT_ARRAY_SIZE(job_fields), &s);
		out_close_object();
		out_nl();
	}
	out_close_array();
	out_close_object();
	out_finish();
}

static int open_ps(const struct ps_opts *o, struct esa_ps **ps)
{
	if (esa_ps_open(&o->cfg, ps))
		return -1;
	for (unsigned i = 0; i < o->njobs; i++) {
		if (esa_ps_add_job(*ps, &o->jobs[i])) {
			esa_ps_close(*ps);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	const char *exit_reason;
	struct esa_ps *ps;
	struct ps_opts o;
	int ret, rc = 0;

	ret = parse(argc, argv, &o);
	if (ret != CLI_CONTINUE)
		return ret;
	if (open_ps(&o, &ps)) {
		fprintf(stderr, "esa-ps: %s\n", esa_last_error());
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	exit_reason = serve(ps, &o, &rc);
	if (o.progress && isatty(2))
		fputc('\n', stderr);
	report(ps, &o, exit_reason);
	esa_ps_close(ps);
	return rc;
}
