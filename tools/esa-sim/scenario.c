// SPDX-License-Identifier: GPL-2.0
/*
 * Scenario files: parsing, validation, model templates and Poisson
 * arrivals (scenario.h). Every error names the file, the line and the key.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "esa_genl.h"
#include "esa_shard.h"
#include "scenario.h"
#include "rng.h"

#define MAX_LINE	4096

const struct scn_limits scn_sim_limits = {
	.who = "the simulator", .max_jobs = SCN_MAX_JOBS,
	.max_workers = ESA_MAX_WORKERS, .max_slots = ESA_MAX_AGGREGATORS,
	.max_size = 16ull << 30, .sim_keys = true,
};

const struct scn_limits scn_bench_limits = {
	.who = "esa-bench", .max_jobs = 8,
	.max_workers = 8,	/* a namespace each: bound the topology */
	.max_slots = ESA_AGG_CAPACITY_DEFAULT,
	.max_size = 1ull << 30, .sim_keys = false,
};

/*
 * Model templates. Gradient: the parameter count (torchvision's
 * num_params, or the paper's figure) at 4 bytes each. Compute: one training
 * iteration at NVIDIA's published single-GPU throughput for the stated
 * batch (DeepLearningExamples, mixed precision): batch / (samples per
 * second). Sources in Documentation/esa-sim.rst.
 */
const struct scn_model scn_models[] = {
	/* 25,557,032 params; batch 256 at 1,200 img/s */
	{ "resnet50",		25557032,	213333,	"V100 16GB" },
	/* 5,288,548 params; batch 128 at 1,301 img/s */
	{ "efficientnet-b0",	5288548,	98386,	"V100 16GB" },
	/* 340M params; SQuAD fine-tuning batch 16 at 52 sequences/s */
	{ "bert-large",		340000000,	307692,	"V100 32GB" },
};
const unsigned scn_nmodels = sizeof(scn_models) / sizeof(scn_models[0]);

static const char *const policy_names[__ESA_POLICY_MAX] = {
	[ESA_POLICY_ESA] = "esa", [ESA_POLICY_ATP] = "atp",
	[ESA_POLICY_STATIC] = "static",
};

static const char *const prio_names[__SCN_PRIO_MAX] = {
	[SCN_PRIO_LAS] = "las", [SCN_PRIO_SJF] = "sjf",
	[SCN_PRIO_FIXED] = "fixed",
};

const char *scn_policy_name(uint32_t policy)
{
	return policy < __ESA_POLICY_MAX ? policy_names[policy] : "?";
}

int scn_policy_parse(const char *s, uint32_t *policy)
{
	for (uint32_t p = 0; p < __ESA_POLICY_MAX; p++) {
		if (!strcmp(s, policy_names[p])) {
			*policy = p;
			return 0;
		}
	}
	return -1;
}

const char *scn_prio_name(enum scn_prio_rule r)
{
	return r < __SCN_PRIO_MAX ? prio_names[r] : "?";
}

int scn_prio_parse(const char *s, enum scn_prio_rule *r)
{
	for (int i = 0; i < __SCN_PRIO_MAX; i++) {
		if (!strcmp(s, prio_names[i])) {
			*r = i;
			return 0;
		}
	}
	return -1;
}

int scn_policies_parse(struct scn_switch *sw, const char *list, char *why,
		       size_t whylen)
{
	char buf[64], *tok, *save = NULL;
	uint32_t p;

	if (strlen(list) >= sizeof(buf) || !*list) {
		snprintf(why, whylen, "policies is empty or too long");
		return -1;
	}
	strcpy(buf, list);
	sw->npolicies = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (scn_policy_parse(tok, &p)) {
			snprintf(why, whylen,
				 "unknown policy '%s' (esa, atp, static)", tok);
			return -1;
		}
		for (uint32_t i = 0; i < sw->npolicies; i++) {
			if (sw->policies[i] == p) {
				snprintf(why, whylen, "policy '%s' given twice",
					 tok);
				return -1;
			}
		}
		sw->policies[sw->npolicies++] = p;
	}
	if (!sw->npolicies) {
		snprintf(why, whylen, "policies is empty");
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------- parsing */

struct parse {
	struct scenario	*sc;
	unsigned	line;
	bool		seen_switch;
	bool		seen_values;	/* values= given on the switch line */
};

static int perr(const struct parse *ps, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int perr(const struct parse *ps, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "esa-sim: %s:", ps->sc->file);
	if (ps->line)
		fprintf(stderr, "%u: ", ps->line);
	else
		fprintf(stderr, "end: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

/* A decimal whole number within [min, max]. */
static int get_uint(const struct parse *ps, const char *key, const char *v,
		    uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long n;
	char *end;

	if (!*v || !isdigit((unsigned char)*v))
		return perr(ps, "%s must be a whole number, not '%s'", key, v);
	errno = 0;
	n = strtoull(v, &end, 10);
	if (*end)
		return perr(ps, "%s must be a whole number, not '%s'", key, v);
	if (errno || n < min || n > max)
		return perr(ps, "%s=%s is out of range %llu..%llu", key, v,
			    (unsigned long long)min, (unsigned long long)max);
	*out = n;
	return 0;
}

static int get_u32(const struct parse *ps, const char *key, const char *v,
		   uint32_t min, uint32_t max, uint32_t *out)
{
	uint64_t n;

	if (get_uint(ps, key, v, min, max, &n))
		return -1;
	*out = (uint32_t)n;
	return 0;
}

/* Bytes with an optional K, M or G suffix; a multiple of 4 (int32). */
static int get_size(const struct parse *ps, const char *key, const char *v,
		    uint64_t *out)
{
	unsigned long long n, mult = 1;
	char *end;

	if (!*v || !isdigit((unsigned char)*v))
		goto bad;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		goto range;
	switch (*end) {
	case 'K': case 'k': mult = 1ull << 10; end++; break;
	case 'M': case 'm': mult = 1ull << 20; end++; break;
	case 'G': case 'g': mult = 1ull << 30; end++; break;
	}
	if (*end)
		goto bad;
	if (n > ps->sc->lim->max_size / mult)
		goto range;
	n *= mult;
	if (n < 4 || n % 4)
		goto range;
	*out = n;
	return 0;
bad:
	return perr(ps, "%s must be bytes with an optional K/M/G suffix, not '%s'",
		    key, v);
range:
	return perr(ps, "%s=%s must be 4 B..%llu GiB and a multiple of 4", key,
		    v, (unsigned long long)(ps->sc->lim->max_size >> 30));
}

/* A decimal fraction in (0, 1], e.g. 0.25. */
static int get_fraction(const struct parse *ps, const char *key,
			const char *v, double *out)
{
	char *end;
	double d;

	if (!*v || !(isdigit((unsigned char)*v) || *v == '.'))
		return perr(ps, "%s must be a decimal fraction, not '%s'", key, v);
	errno = 0;
	d = strtod(v, &end);
	if (*end || errno)
		return perr(ps, "%s must be a decimal fraction, not '%s'", key, v);
	if (!(d > 0) || d > 1)
		return perr(ps, "%s=%s is out of range (0, 1]", key, v);
	*out = d;
	return 0;
}

static int get_priority(const struct parse *ps, const char *v, int *out)
{
	uint32_t p;

	if (!strcmp(v, "auto")) {
		*out = -1;
		return 0;
	}
	if (get_u32(ps, "priority", v, 0, ESA_MAX_PRIORITY, &p))
		return -1;
	*out = (int)p;
	return 0;
}

static const struct scn_model *model_find(const char *name)
{
	for (unsigned i = 0; i < scn_nmodels; i++)
		if (!strcmp(scn_models[i].name, name))
			return &scn_models[i];
	return NULL;
}

static int bad_model(const struct parse *ps, const char *name)
{
	char list[256] = "";

	for (unsigned i = 0; i < scn_nmodels; i++) {
		strncat(list, i ? ", " : "", sizeof(list) - strlen(list) - 1);
		strncat(list, scn_models[i].name,
			sizeof(list) - strlen(list) - 1);
	}
	return perr(ps, "unknown model '%s' (%s)", name, list);
}

/* Split "KEY=VALUE" in place. */
static int split_kv(const struct parse *ps, char *word, char **k, char **v)
{
	char *eq = strchr(word, '=');

	*k = *v = NULL;
	if (!eq || eq == word)
		return perr(ps, "expected KEY=VALUE, not '%s'", word);
	*eq = 0;
	*k = word;
	*v = eq + 1;
	return 0;
}

/* A key only the simulator reads: noted, or refused outside it. */
static int note_sim_only(struct parse *ps, const char *key)
{
	if (!ps->sc->lim->sim_keys)
		return perr(ps, "'%s' is for the simulator only, not %s", key,
			    ps->sc->lim->who);
	if (!ps->sc->sim_only_line) {
		ps->sc->sim_only_line = ps->line;
		ps->sc->sim_only_key = strdup(key);
	}
	return 0;
}

/* A key only the simulator reads; 1 if it is none. */
static int switch_sim_key(struct parse *ps, const char *k, const char *v)
{
	struct scn_switch *sw = &ps->sc->sw;
	uint64_t n;

	if (!strcmp(k, "link_gbps")) {
		if (get_u32(ps, k, v, 1, 1000, &sw->link_mbps))
			return -1;
		sw->link_mbps *= 1000;
		return 0;
	}
	if (!strcmp(k, "link_mbps"))
		return get_u32(ps, k, v, 1, 1000000, &sw->link_mbps);
	if (!strcmp(k, "delay_ns"))
		return get_u32(ps, k, v, 0, 100000000, &sw->delay_ns);
	if (!strcmp(k, "buffer_kb"))
		return get_u32(ps, k, v, 2, 1048576, &sw->buffer_kb);
	if (!strcmp(k, "switch_ns"))
		return get_u32(ps, k, v, 0, 100000000, &sw->switch_ns);
	if (!strcmp(k, "cpu_ns"))
		return get_u32(ps, k, v, 0, 100000000, &sw->cpu_ns);
	if (!strcmp(k, "rto_us"))
		return get_u32(ps, k, v, 1, 10000000, &sw->rto_us);
	if (!strcmp(k, "aging_ms"))
		return get_u32(ps, k, v, 1, 3600000, &sw->aging_ms);
	if (!strcmp(k, "jitter"))
		return get_u32(ps, k, v, 0, 100, &sw->jitter_pct);
	if (!strcmp(k, "servers"))
		return get_u32(ps, k, v, 1, ESA_MAX_SHARDS, &sw->servers);
	if (!strcmp(k, "server_ns"))
		return get_u32(ps, k, v, 0, 100000000, &sw->server_ns);
	if (!strcmp(k, "rack_hosts"))
		return get_u32(ps, k, v, 0, 4096, &sw->rack_hosts);
	if (!strcmp(k, "oversub"))
		return get_u32(ps, k, v, 1, 64, &sw->oversub);
	if (!strcmp(k, "interval_us"))
		return get_u32(ps, k, v, 10, 10000000, &sw->interval_us);
	if (!strcmp(k, "scale"))
		return get_fraction(ps, k, v, &sw->scale);
	if (!strcmp(k, "partition")) {
		if (get_size(ps, k, v, &n))
			return -1;
		sw->partition = n;
		return 0;
	}
	if (!strcmp(k, "priorities")) {
		if (scn_prio_parse(v, &sw->prio_rule))
			return perr(ps, "unknown priorities '%s' (las, sjf, fixed)",
				    v);
		return 0;
	}
	return 1;
}

/* One key of a switch line; 1 if the key is not a switch key. */
static int switch_key(struct parse *ps, const char *k, const char *v)
{
	struct scn_switch *sw = &ps->sc->sw;
	char why[128];
	int r;

	if (!strcmp(k, "slots"))
		return get_u32(ps, k, v, 1, ps->sc->lim->max_slots, &sw->slots);
	if (!strcmp(k, "timeout_us"))
		return get_u32(ps, k, v, 100, 10000000, &sw->timeout_us);
	if (!strcmp(k, "loss"))
		return get_u32(ps, k, v, 0, 50, &sw->loss_pct);
	if (!strcmp(k, "interval_ms")) {
		if (get_u32(ps, k, v, 10, 10000, &sw->interval_us))
			return -1;
		sw->interval_us *= 1000;
		return 0;
	}
	if (!strcmp(k, "values")) {
		ps->seen_values = true;
		return get_u32(ps, k, v, ESA_MIN_VALUES, ESA_MAX_VALUES,
			       &sw->values);
	}
	if (!strcmp(k, "mode")) {
		if (strcmp(v, "one-armed") && strcmp(v, "per-host"))
			return perr(ps, "unknown mode '%s' (per-host, one-armed)",
				    v);
		sw->one_armed = !strcmp(v, "one-armed");
		return 0;
	}
	if (!strcmp(k, "window"))
		return get_u32(ps, k, v, 1, 4096, &sw->window);
	if (!strcmp(k, "policies")) {
		if (scn_policies_parse(sw, v, why, sizeof(why)))
			return perr(ps, "%s", why);
		return 0;
	}
	r = switch_sim_key(ps, k, v);
	if (!r)
		r = note_sim_only(ps, k);
	return r;
}

static int switch_line(struct parse *ps, char **words, int n)
{
	char *k, *v;
	int r;

	if (ps->seen_switch)
		return perr(ps, "a second 'switch' line");
	ps->seen_switch = true;
	for (int i = 0; i < n; i++) {
		if (split_kv(ps, words[i], &k, &v))
			return -1;
		r = switch_key(ps, k, v);
		if (r < 0)
			return -1;
		if (r > 0)
			return perr(ps, "unknown switch key '%s'", k);
	}
	if (!ps->sc->sw.slots)
		return perr(ps, "switch needs slots=N");
	/* A one-armed switch's jobs carry a token, which takes two values. */
	if (ps->sc->sw.one_armed && ps->sc->sw.values > ESA_MAX_VALUES_TOKEN) {
		if (ps->seen_values)
			return perr(ps, "values=%u: mode=one-armed carries a job token, at most %u values",
				    ps->sc->sw.values, ESA_MAX_VALUES_TOKEN);
		ps->sc->sw.values = ESA_MAX_VALUES_TOKEN;
	}
	return 0;
}

/*
 * One key of a job (or of a poisson line's job template); 1 if it is not
 * a job key.
 */
static int job_key(struct parse *ps, struct scn_job *j, const char *k,
		   const char *v, bool *has_compute)
{
	const struct scn_model *m;
	uint64_t n;

	if (!strcmp(k, "id"))
		return get_u32(ps, k, v, 1, ESA_MAX_JOB_ID, &j->id);
	if (!strcmp(k, "workers"))
		return get_u32(ps, k, v, 1, ps->sc->lim->max_workers,
			       &j->workers);
	if (!strcmp(k, "size")) {
		if (j->model)
			return perr(ps, "size= and model= both given");
		return get_size(ps, k, v, &j->size);
	}
	if (!strcmp(k, "iterations"))
		return get_u32(ps, k, v, 1, 100000, &j->iterations);
	if (!strcmp(k, "compute_ms")) {
		if (get_uint(ps, k, v, 0, 600000, &n))
			return -1;
		j->compute_us = n * 1000;
		*has_compute = true;
		return 0;
	}
	if (!strcmp(k, "arrival_ms")) {
		if (get_uint(ps, k, v, 0, 3600000, &n))
			return -1;
		j->arrival_us = n * 1000;
		return 0;
	}
	if (!strcmp(k, "priority"))
		return get_priority(ps, v, &j->priority);
	if (!strcmp(k, "model")) {
		if (note_sim_only(ps, k))
			return -1;
		if (j->size)
			return perr(ps, "size= and model= both given");
		m = model_find(v);
		if (!m)
			return bad_model(ps, v);
		j->model = m->name;
		j->size = m->params * 4;
		if (!*has_compute)
			j->compute_us = m->compute_us;
		return 0;
	}
	return 1;
}

static int job_needs(struct parse *ps, const struct scn_job *j, bool want_id)
{
	if (want_id && !j->id)
		return perr(ps, "job needs id=...");
	if (!j->workers)
		return perr(ps, "job needs workers=...");
	if (!j->size)
		return perr(ps, ps->sc->lim->sim_keys ? "job needs size=... or model=..." :
			    "job needs size=...");
	if (!j->iterations)
		return perr(ps, "job needs iterations=...");
	return 0;
}

static int add_job(struct parse *ps, const struct scn_job *j)
{
	struct scenario *sc = ps->sc;
	struct scn_job *nj;

	for (uint32_t i = 0; i < sc->njobs; i++)
		if (sc->jobs[i].id == j->id)
			return perr(ps, "job id=%u is defined twice (line %u)",
				    j->id, sc->jobs[i].line);
	if (sc->njobs >= ps->sc->lim->max_jobs)
		return perr(ps, "more than %u jobs", ps->sc->lim->max_jobs);
	nj = realloc(sc->jobs, (sc->njobs + 1) * sizeof(*nj));
	if (!nj)
		return perr(ps, "out of memory");
	sc->jobs = nj;
	sc->jobs[sc->njobs++] = *j;
	return 0;
}

static int job_line(struct parse *ps, char **words, int n)
{
	struct scn_job j = { .priority = -1, .line = ps->line };
	bool has_compute = false;
	char *k, *v;
	int r;

	for (int i = 0; i < n; i++) {
		if (split_kv(ps, words[i], &k, &v))
			return -1;
		r = job_key(ps, &j, k, v, &has_compute);
		if (r < 0)
			return -1;
		if (r > 0)
			return perr(ps, "unknown job key '%s'", k);
	}
	if (job_needs(ps, &j, true))
		return -1;
	return add_job(ps, &j);
}

static int poisson_line(struct parse *ps, char **words, int n)
{
	struct scn_poisson p = {
		.tmpl = { .priority = -1, .line = ps->line },
	};
	struct scenario *sc = ps->sc;
	bool has_compute = false;
	struct scn_poisson *np;
	uint64_t u;
	char *k, *v;
	int r;

	if (note_sim_only(ps, "poisson"))
		return -1;
	for (int i = 0; i < n; i++) {
		if (split_kv(ps, words[i], &k, &v))
			return -1;
		if (!strcmp(k, "jobs")) {
			if (get_u32(ps, k, v, 1, SCN_MAX_JOBS, &p.count))
				return -1;
			continue;
		}
		if (!strcmp(k, "mean_ms") || !strcmp(k, "mean_us")) {
			uint64_t unit = k[5] == 'm' ? 1000 : 1;

			if (get_uint(ps, k, v, 1, 3600000000ull / unit, &u))
				return -1;
			p.mean_us = u * unit;
			continue;
		}
		if (!strcmp(k, "start_ms") || !strcmp(k, "start_us")) {
			uint64_t unit = k[6] == 'm' ? 1000 : 1;

			if (get_uint(ps, k, v, 0, 3600000000ull / unit, &u))
				return -1;
			p.start_us = u * unit;
			continue;
		}
		if (!strcmp(k, "first_id")) {
			if (get_u32(ps, k, v, 1, ESA_MAX_JOB_ID, &p.first_id))
				return -1;
			continue;
		}
		if (!strcmp(k, "id") || !strcmp(k, "arrival_ms"))
			return perr(ps, "poisson key '%s': use first_id= and start_ms= (or start_us=)",
				    k);
		r = job_key(ps, &p.tmpl, k, v, &has_compute);
		if (r < 0)
			return -1;
		if (r > 0)
			return perr(ps, "unknown poisson key '%s'", k);
	}
	if (!p.count)
		return perr(ps, "poisson needs jobs=N");
	if (!p.mean_us)
		return perr(ps, "poisson needs mean_ms=N or mean_us=N (mean gap between arrivals)");
	if (job_needs(ps, &p.tmpl, false))
		return -1;
	if (!p.first_id)
		p.first_id = 1;
	if (p.first_id + p.count - 1 > ESA_MAX_JOB_ID)
		return perr(ps, "job ids %u..%u: the last is above %u",
			    p.first_id, p.first_id + p.count - 1, ESA_MAX_JOB_ID);
	np = realloc(sc->poisson, (sc->npoisson + 1) * sizeof(*np));
	if (!np)
		return perr(ps, "out of memory");
	sc->poisson = np;
	sc->poisson[sc->npoisson++] = p;
	return 0;
}

static void set_defaults(struct scn_switch *sw)
{
	*sw = (struct scn_switch){
		.timeout_us = 2000, .interval_us = 100000,
		.values = ESA_MAX_VALUES, .window = 32,
		.npolicies = 3,
		.policies = { ESA_POLICY_ESA, ESA_POLICY_ATP, ESA_POLICY_STATIC },
		.link_mbps = 100000, .delay_ns = 1000, .buffer_kb = 512,
		.switch_ns = 1000, .rto_us = 0,
		.partition = 4096000, .prio_rule = SCN_PRIO_LAS,
		.aging_ms = ESA_AGING_MS_DEFAULT, .scale = 1.0,
		.servers = 1, .oversub = 1,
	};
}

/* Split @s at whitespace into at most @max words; -1 if more. */
static int split_words(char *s, char **words, int max)
{
	int n = 0;
	char *save = NULL, *w;

	for (w = strtok_r(s, " \t\r\n", &save); w;
	     w = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == max)
			return -1;
		words[n++] = w;
	}
	return n;
}

static int parse_line(struct parse *ps, char *line)
{
	char *words[64], *hash = strchr(line, '#');
	int n;

	if (hash)
		*hash = 0;
	n = split_words(line, words, 64);
	if (n < 0)
		return perr(ps, "more than 63 keys on a line");
	if (!n)
		return 0;
	if (!strcmp(words[0], "switch"))
		return switch_line(ps, words + 1, n - 1);
	if (!strcmp(words[0], "job"))
		return job_line(ps, words + 1, n - 1);
	if (!strcmp(words[0], "poisson"))
		return poisson_line(ps, words + 1, n - 1);
	return perr(ps, "unknown directive '%s' (switch, job%s)", words[0],
		    ps->sc->lim->sim_keys ? ", poisson" : "");
}

int scn_load(struct scenario *sc, const char *path,
	     const struct scn_limits *lim)
{
	struct parse ps = { .sc = sc };
	char line[MAX_LINE];
	FILE *f;
	int err = 0;

	memset(sc, 0, sizeof(*sc));
	sc->file = path;
	sc->lim = lim;
	set_defaults(&sc->sw);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "esa-sim: cannot read scenario '%s': %s\n",
			path, strerror(errno));
		return -1;
	}
	while (!err && fgets(line, sizeof(line), f)) {
		ps.line++;
		if (!strchr(line, '\n') && !feof(f))
			err = perr(&ps, "line longer than %d characters",
				   MAX_LINE - 2);
		else
			err = parse_line(&ps, line);
	}
	fclose(f);
	if (err)
		return -1;
	ps.line = 0;
	if (!ps.seen_switch)
		return perr(&ps, "no 'switch' line");
	if (!sc->njobs && !sc->npoisson)
		return perr(&ps, "no 'job' line");
	return 0;
}

void scn_free(struct scenario *sc)
{
	free(sc->jobs);
	free(sc->poisson);
	free((char *)sc->sim_only_key);
	memset(sc, 0, sizeof(*sc));
}

/* ----------------------------------------------------------- expansion */

int scn_expand(struct scenario *sc, uint64_t seed, double load)
{
	struct parse ps = { .sc = sc };
	struct rng r;

	rng_seed(&r, seed);
	for (uint32_t k = 0; k < sc->npoisson; k++) {
		struct scn_poisson *p = &sc->poisson[k];
		double t = (double)p->start_us;

		ps.line = p->tmpl.line;
		for (uint32_t i = 0; i < p->count; i++) {
			struct scn_job j = p->tmpl;

			t += -log(1.0 - rng_unit(&r)) * (double)p->mean_us;
			j.id = p->first_id + i;
			j.arrival_us = (uint64_t)llround(t);
			if (add_job(&ps, &j))
				return -1;
		}
	}
	sc->npoisson = 0;
	/*
	 * libesa's timeout floor is a bound on a real run's round trips,
	 * software endpoints' included; a smaller copy of the workload (scale)
	 * gets it scaled like its job lengths unless the scenario sets it.
	 */
	if (!sc->sw.rto_us) {
		long rto = llround(SCN_RTO_US_DEFAULT * sc->sw.scale);

		sc->sw.rto_us = rto > 1 ? (uint32_t)rto : 1;
	}
	for (uint32_t i = 0; i < sc->njobs; i++) {
		struct scn_job *j = &sc->jobs[i];
		uint64_t words = (uint64_t)llround(j->size / 4 * sc->sw.scale);

		j->size = 4 * (words ? words : 1);
		j->compute_us = (uint64_t)llround(j->compute_us * sc->sw.scale);
		j->arrival_us = (uint64_t)llround(j->arrival_us / load);
	}
	return 0;
}

uint8_t scn_sjf_priority(const struct scenario *sc, uint32_t i)
{
	uint64_t mine = sc->jobs[i].size * sc->jobs[i].iterations;
	uint32_t rank = 0, step, prio;

	/* 10 + 10 per bigger job, as far as 255 allows */
	step = sc->njobs > 1 ? 245 / (sc->njobs - 1) : 10;
	if (step > 10)
		step = 10;
	if (!step)
		step = 1;
	for (uint32_t k = 0; k < sc->njobs; k++)
		if (sc->jobs[k].size * sc->jobs[k].iterations > mine)
			rank++;
	prio = 10 + rank * step;
	return prio > ESA_MAX_PRIORITY ? ESA_MAX_PRIORITY : (uint8_t)prio;
}
