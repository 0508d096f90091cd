// SPDX-License-Identifier: GPL-2.0
/*
 * Data plane benchmark (`make bench-dataplane`, bench/bench_dataplane.sh).
 * On one core (CPU 0), for 64 and ESA_MAX_VALUES values per packet:
 *  - add_ns: the switch program's time for a packet whose values are added
 *    into a partial aggregate (workers 1..30 of a 32-worker job);
 *  - complete_ns: for the packet that completes it (worker 31: add, sum
 *    written back into the frame, COMPLETE + RESULT multicast redirect);
 *  - cloop_ns: a plain C loop doing the same saturating big-endian add of
 *    the same packet into an int32 array on the same core.
 * Program times are BPF_PROG_TEST_RUN's own in-kernel duration (no syscall
 * or copy cost), one distinct packet per run: with repeat > 1 the same
 * frame would hit the duplicate path from its second run on. The timer
 * cost of a run, measured on an empty XDP program with the same frame, is
 * subtracted (printed as nop_ns). Each figure is the median of its runs
 * (the C loop: of one round of 64 packets per sequence, run between the
 * sequence's packets), so a stray interrupt or a busy neighbour on the
 * host does not move it, and the program and the loop are timed in the
 * same moments.
 *
 * Data planes compared run side by side: every packet runs on each in
 * turn (which one first alternates), so a change of load on the host
 * hits all alike; their ratio
 * (vs_maps=, ratio= of --scale) is the median over packets of one's time
 * against the other's for the same packet.
 *  --against OBJ         another build of the module-less flavour (its
 *                        esa_switch.bpf.o) next to the tree's, on maps of
 *                        the tree's layout (an esa_aggs of its own if its
 *                        aggregator lock differs): a change measured
 *                        before it is kept;
 *  --flavours maps,kmod  the module flavour next to the module-less one
 *                        (the module must hold job 1 of dp_util.h's plan);
 *  --scale               the module-less flavour with 1 and with 1023 jobs
 *                        (sequences dealt out to them in turn, 1023 under
 *                        way at once), and with 1024 and ESA_MAX_AGGREGATORS
 *                        (1 << 20) aggregators, 1023 sequences at once, in
 *                        three placements (traffic=):
 *                        job: as the endpoints place one job's sequences
 *                        when its slots are the whole array (slot seq %
 *                        slots: 1023 in a row, sliding; on the 1M array
 *                        every sequence takes an aggregator untouched for
 *                        1.6 GB), the same rule and traffic on both: what
 *                        the capacity alone costs;
 *                        spread: the same 1023 aggregators reused, spread
 *                        evenly over each array (on the 1M one each on its
 *                        own page, 1.6 MB apart: jobs with slices spread
 *                        over the array);
 *                        worst: on the 1M array 32736 sequences at once,
 *                        each on its own aggregator spread over the whole
 *                        array (every packet another one, ~50 MB touched
 *                        between two packets of a sequence: cache and TLB
 *                        misses), against the 1024 array's 1023 at once.
 *                        A claim's time (claim_ns, a sequence's first
 *                        packet) is printed apart: a cold aggregator's
 *                        cost falls on it first.
 * Last line:
 *   dataplane values=<max> add_ns=<x> complete_ns=<y> cloop_ns=<z> ratio=<x/z>
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "dp_util.h"

#define FAN_IN	32
#define NSEQ	3000
#define SLOTS	64
/* --scale: sequences under way at once, sequences, the smaller array. */
#define SCALE_WINDOW	(ESA_MAX_JOB_ID)
#define SCALE_SEQ	(3 * SCALE_WINDOW)
#define SCALE_SLOTS_FEW	1024
/*
 * --scale, worst case: sequences under way at once on the 1M array, each
 * on its own aggregator: 32 x 1023 (the smaller array's side runs them
 * 1023 at once), ~48 MB of aggregators, more than the last-level cache
 * (32 MB here) and than the TLB reaches.
 */
#define WORST_WINDOW	(32 * SCALE_WINDOW)
/* The C loop: rounds of this many packets, one round per sequence. */
#define CLOOP_ITERS	64
/* Where a frame's values start (bpf/esa_pkt.h's ESA_OFF_VALS). */
#define FRAME_VALS	(14 + 20 + 8 + ESA_HDR_LEN)

static __u32 run_ns(int prog, const struct dp_frame *in)
{
	static __u8 out[DP_FRAME_MAX];
	LIBBPF_OPTS(bpf_test_run_opts, t, .data_in = in->buf,
		    .data_size_in = in->len, .data_out = out,
		    .data_size_out = sizeof(out), .repeat = 1);

	if (bpf_prog_test_run_opts(prog, &t)) {
		perror("BPF_PROG_TEST_RUN");
		exit(1);
	}
	return t.duration;
}

static int nop_prog(void)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0,
		  .imm = XDP_DROP },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_XDP, "esa_nop", "GPL", insns, 2,
			     NULL);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_u32(const void *a, const void *b)
{
	__u32 x = *(const __u32 *)a, y = *(const __u32 *)b;

	return x < y ? -1 : x > y;
}

static double median(__u32 *v, long n)
{
	qsort(v, n, sizeof(*v), cmp_u32);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

/*
 * The same work as the switch's add, in plain C: the ns per packet of one
 * short round (tens of microseconds, so a round rarely shares the CPU
 * with another task: on a busy host long rounds all do).
 */
static double cloop_round(const __be32 *pkt, int n)
{
	static __s32 acc[ESA_MAX_VALUES];
	const long iters = CLOOP_ITERS;
	double t0, t1;
	long k;
	int i;

	t0 = now_ns();
	for (k = 0; k < iters; k++) {
		for (i = 0; i < n; i++) {
			__s64 t = (__s64)acc[i] + (__s32)ntohl(pkt[i]);

			if (t > 0x7fffffffLL)
				t = 0x7fffffffLL;
			else if (t < -0x80000000LL)
				t = -0x80000000LL;
			acc[i] = (__s32)t;
		}
		asm volatile("" : : "r"(acc) : "memory");
	}
	t1 = now_ns();
	return (t1 - t0) / iters;
}

/*
 * The median over packets of data plane @b's time against @a's for the
 * same packet, each minus the timer's @nop: the two ran one right after
 * the other, so a slow moment of the host (a busy sibling CPU) slows both.
 */
static double paired_ratio(const __u32 *a, const __u32 *b, long n, double nop)
{
	__u32 *r = calloc(n, sizeof(*r));
	double m;

	if (!r)
		return 0;
	for (long k = 0; k < n; k++)
		r[k] = (__u32)(1000.0 * (b[k] - nop) / (a[k] > nop ? a[k] - nop : 1));
	m = median(r, n) / 1000.0;
	free(r);
	return m;
}

/*
 * L2 forwarding of a TCP frame (not for the aggregator) with a complete
 * checksum and with one left to offload (CHECKSUM_PARTIAL, which the switch
 * completes), each run on a fresh copy of the frame (repeat 1: with repeat
 * the second run would see the checksum the first one completed), minus the
 * empty program's time; medians of NSEQ runs.
 */
static void bench_forward(struct esa_switch *sw, int nop, __u32 payload)
{
	static const char *const what[] = { "full", "partial" };
	static __u32 t[2][NSEQ], tn[NSEQ];
	struct dp_frame f[2], out;
	double nopm;
	int r, k;

	dp_build_l4(&f[0], IPPROTO_TCP, payload, 5, DP_CSUM_FULL, 1);
	dp_build_l4(&f[1], IPPROTO_TCP, payload, 5, DP_CSUM_PARTIAL, 1);
	if (dp_run(sw, &f[1], &out) != XDP_REDIRECT ||
	    !dp_l4_csum_ok(out.buf, out.len)) {
		fprintf(stderr, "the partial checksum was not completed\n");
		exit(1);
	}
	for (r = 0; r < NSEQ; r++) {
		for (k = 0; k < 2; k++)
			t[k][r] = run_ns(esa_switch_prog_fd(sw), &f[k]);
		tn[r] = run_ns(nop, &f[0]);
	}
	nopm = median(tn, NSEQ);
	printf("# forward tcp payload=%u frame=%u", payload, f[0].len);
	for (k = 0; k < 2; k++)
		printf(" %s_ns=%.1f", what[k], median(t[k], NSEQ) - nopm);
	printf(" (nop_ns=%.1f)\n", nopm);
}

/*
 * One case: @jobs jobs of FAN_IN workers (sequences dealt out to them in
 * turn), @window sequences under way at once, @nseq sequences (a multiple
 * of @window) of @n values each. Sequence seq is on slot seq % @slots, or
 * with a @stride on slot (seq % @window) * @stride: @window aggregators
 * spread over the array, each reused by every @window-th sequence.
 */
struct bcase {
	int	n;
	__u32	jobs;
	__u32	slots;
	__u32	window;
	__u32	nseq;
	__u32	stride;
};

static __u32 bench_slot(const struct bcase *c, __u32 seq)
{
	return c->stride ? seq % c->window * c->stride : seq % c->slots;
}

/* A data plane under test, the case it runs, and its times. */
struct dut {
	const char		*name;
	struct esa_switch	*sw;
	const struct bcase	*c;
	__u32			*add_t, *comp_t, *claim_t;
	long			nadd, ncomp, nclaim;
	double			add, comp, claim; /* medians minus the timer's */
	double			vs_first;	/* add: paired_ratio() to d[0] */
	int			prog;		/* its esa_switch program */
};

/*
 * Job j's worker i sits at one address for every job (hosts that run a
 * worker of each job) with a UDP port per job (DP_WORKER_PORT); its PS at
 * DP_PS_ADDR(j).
 */
#define BENCH_WORKER_ADDR(i)	DP_WORKER_ADDR(1, i)

static void bench_job(struct esa_job_info *job, __u32 j)
{
	dp_job(job, j, FAN_IN, 1, 0, 0);
	for (int i = 0; i < ESA_MAX_WORKERS; i++)
		job->worker_addr[i] = htonl(BENCH_WORKER_ADDR(i));
}

/*
 * Module-less flavour: set @sw up for its case. Module flavour: aggctl set
 * config and job; only the counters start again (the completions are
 * counted per case).
 */
static int bench_setup(struct dut *d)
{
	struct esa_job_info job;
	int err;

	if (!d->prog)
		d->prog = esa_switch_prog_fd(d->sw);
	if (!esa_switch_has_job_maps(d->sw))
		return esa_switch_counters_reset(d->sw);
	err = dp_reset(d->sw, ESA_POLICY_ESA, d->c->slots, 0);
	if (!err && d->c->slots > DP_SLOTS)
		err = esa_switch_agg_clear(d->sw, d->c->slots);
	for (__u32 j = 1; !err && j <= d->c->jobs; j++) {
		bench_job(&job, j);
		err = esa_switch_job_put(d->sw, &job);
	}
	return err;
}

static void bench_frame(struct dp_frame *f, const struct bcase *c, int w,
			__u32 seq, const __s32 *vals)
{
	struct dp_pkt p;

	dp_pkt_worker(&p, seq % c->jobs + 1, FAN_IN, w, seq, bench_slot(c, seq),
		      vals, c->n);
	p.saddr = BENCH_WORKER_ADDR(w);
	dp_build(f, &p);
}

/*
 * The @p-th packet of case @c: rounds of c->window sequences, in each
 * round worker 0 of every sequence, then worker 1 of every sequence, ...
 */
static void bench_packet(const struct bcase *c, long p, int *w, __u32 *seq)
{
	long per_round = (long)c->window * FAN_IN, q = p % per_round;

	*w = (int)(q / c->window);
	*seq = (__u32)(p / per_round * c->window + q % c->window);
}

/*
 * Every data plane runs its case, packet by packet in turn, so all of
 * them see the same load on the host: worker 0 claims (its time is not
 * kept; the empty program runs on the frame for the timer's cost), workers
 * 1..FAN_IN-2 add, worker FAN_IN-1 completes. The cases must agree on
 * sequences and values; each may have its own window (a multiple of
 * sequences): the k-th add of one is paired with the k-th add of another.
 */
static int run_cases(struct dut *d, int nd, int nop, double *cloop_ns)
{
	const struct bcase *c = d[0].c;
	long per = (long)c->nseq * (FAN_IN - 2);
	static __s32 vals[ESA_MAX_VALUES];
	__u32 *nop_t, *cl_t, nnop = 0;
	struct dp_frame f, f0;
	double nopm;
	int i, w;

	for (i = 0; i < c->n; i++)
		vals[i] = (i * 7919) % 20001 - 10000;
	nop_t = calloc(c->nseq, sizeof(*nop_t));
	cl_t = calloc(c->nseq, sizeof(*cl_t));
	for (i = 0; i < nd; i++) {
		d[i].add_t = calloc(per, sizeof(__u32));
		d[i].comp_t = calloc(c->nseq, sizeof(__u32));
		d[i].claim_t = calloc(c->nseq, sizeof(__u32));
		d[i].nadd = d[i].ncomp = d[i].nclaim = 0;
		if (!d[i].add_t || !d[i].comp_t || !d[i].claim_t || !nop_t || !cl_t ||
		    d[i].c->nseq % d[i].c->window || d[i].c->nseq != c->nseq ||
		    d[i].c->n != c->n || bench_setup(&d[i])) {
			fprintf(stderr, "bench_dataplane: cannot set up %s\n",
				d[i].name);
			return -1;
		}
	}
	for (long p = 0; p < (long)c->nseq * FAN_IN; p++) {
		int w0 = 0;

		for (int o = 0; o < nd; o++) {
			__u32 t, seq;

			/*
			 * Which runs first alternates: the second of two
			 * runs back to back is about 10% faster (warm
			 * kernel paths).
			 */
			i = p % 2 ? nd - 1 - o : o;
			bench_packet(d[i].c, p, &w, &seq);
			bench_frame(i ? &f : &f0, d[i].c, w, seq, vals);
			t = run_ns(d[i].prog, i ? &f : &f0);
			if (w > 0 && w < FAN_IN - 1)
				d[i].add_t[d[i].nadd++] = t;
			else if (w == FAN_IN - 1)
				d[i].comp_t[d[i].ncomp++] = t;
			else
				d[i].claim_t[d[i].nclaim++] = t;
			if (!i)
				w0 = w;
		}
		if (w0 == 0) {
			/*
			 * The C loop's round in the same moment (x16:
			 * sub-ns), timed warm as when it runs alone: the
			 * first round after a system call is slower.
			 */
			const __be32 *v = (const void *)(f0.buf + FRAME_VALS);

			cloop_round(v, c->n);
			cl_t[nnop] = (__u32)(16 * cloop_round(v, c->n));
			nop_t[nnop++] = run_ns(nop, &f0);
		}
	}
	nopm = median(nop_t, nnop);
	printf("# n=%d window=%u", c->n, c->window);
	for (i = 1; i < nd; i++)
		printf(",%u", d[i].c->window);
	printf(" sequences=%u: nop_ns=%.1f (timer cost per run, subtracted)\n",
	       c->nseq, nopm);
	*cloop_ns = median(cl_t, nnop) / 16;
	free(nop_t);
	free(cl_t);
	for (i = 0; i < nd; i++) {
		__u64 done = 0;

		for (__u32 j = 1; j <= d[i].c->jobs; j++)
			done += dp_cnt(d[i].sw, j, ESA_CNT_COMPLETED);
		if (done != c->nseq) {
			fprintf(stderr, "bench_dataplane: %s completed %llu of %u sequences\n",
				d[i].name, (unsigned long long)done, c->nseq);
			return -1;
		}
		d[i].vs_first = paired_ratio(d[0].add_t, d[i].add_t, d[i].nadd, nopm);
	}
	for (i = nd - 1; i >= 0; i--) {
		d[i].add = median(d[i].add_t, d[i].nadd) - nopm;
		d[i].comp = median(d[i].comp_t, d[i].ncomp) - nopm;
		d[i].claim = median(d[i].claim_t, d[i].nclaim) - nopm;
		free(d[i].add_t);
		free(d[i].comp_t);
		free(d[i].claim_t);
	}
	return 0;
}

/*
 * Per packet at @n values on every data plane (one job, one sequence at a
 * time), and the C loop. Last line: the first data plane against the loop.
 */
static int bench_values(struct dut *d, int nd, int nop, int n)
{
	const struct bcase c = { .n = n, .jobs = 1, .slots = SLOTS,
				 .window = 1, .nseq = NSEQ };
	double cl;

	for (int i = 0; i < nd; i++)
		d[i].c = &c;
	if (run_cases(d, nd, nop, &cl))
		return -1;
	for (int i = 1; i < nd; i++)
		printf("dataplane values=%d flavour=%s add_ns=%.1f complete_ns=%.1f vs_%s=%.2f\n",
		       n, d[i].name, d[i].add, d[i].comp, d[0].name,
		       d[i].vs_first);
	printf("dataplane values=%d add_ns=%.1f complete_ns=%.1f cloop_ns=%.1f "
	       "ratio=%.2f\n", n, d[0].add, d[0].comp, cl, d[0].add / cl);
	return 0;
}

/*
 * The module-less flavour with case @a and, loaded a second time, with
 * case @b, side by side; prints how @what (jobs or slots) moves the cost,
 * after "traffic=@traffic" if the pair has a name for its traffic.
 */
static int bench_pair(int nop, const char *traffic, const char *what,
		      const struct bcase *a, const struct bcase *b, __u32 va,
		      __u32 vb)
{
	struct esa_switch_opts oa = { .agg_capacity = a->slots },
			       ob = { .agg_capacity = b->slots };
	struct dut two[2] = {
		{ .name = "a", .c = a }, { .name = "b", .c = b },
	};
	const struct esa_switch_opts *o = &oa;
	char msg[160];
	double cl;
	int err;

	err = esa_switch_load(&two[0].sw, o);
	if (!err)
		err = esa_switch_load(&two[1].sw, o = &ob);
	if (err) {
		fprintf(stderr, "bench_dataplane: load a switch of %u slots: %s\n",
			o->agg_capacity,
			esa_switch_load_strerror(err, o, msg, sizeof(msg)));
		esa_switch_close(two[0].sw);
		return -1;
	}
	err = run_cases(two, 2, nop, &cl);
	if (!err)
		printf("dataplane %s%s%s%s=%u add_ns=%.1f complete_ns=%.1f claim_ns=%.1f "
		       "%s=%u add_ns=%.1f complete_ns=%.1f claim_ns=%.1f ratio=%.2f\n",
		       traffic ? "traffic=" : "", traffic ? traffic : "",
		       traffic ? " " : "", what, va, two[0].add, two[0].comp,
		       two[0].claim, what, vb, two[1].add, two[1].comp,
		       two[1].claim, two[1].vs_first);
	esa_switch_close(two[0].sw);
	esa_switch_close(two[1].sw);
	return err;
}

/*
 * Open another build's object (@path) on @sw's maps, all of them or all
 * but esa_aggs (@own_aggs: it creates its own); its esa_switch program in
 * *@prog, the only one loaded.
 */
static struct bpf_object *open_against(struct esa_switch *sw,
				       const char *path, int own_aggs,
				       struct bpf_program **prog)
{
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *p;
	struct bpf_map *m;
	int fd, err;

	*prog = NULL;
	if (!obj) {
		fprintf(stderr, "bench_dataplane: --against %s: %s\n", path,
			strerror(errno));
		return NULL;
	}
	bpf_object__for_each_map(m, obj) {
		if (own_aggs && !strcmp(bpf_map__name(m), "esa_aggs"))
			continue;
		fd = esa_switch_map_fd(sw, bpf_map__name(m));
		err = fd >= 0 ? bpf_map__reuse_fd(m, fd) : 0;
		if (err) {
			fprintf(stderr, "bench_dataplane: --against %s: its map %s differs from the tree's: %s\n",
				path, bpf_map__name(m), strerror(-err));
			bpf_object__close(obj);
			return NULL;
		}
	}
	bpf_object__for_each_program(p, obj) {
		int mine = !strcmp(bpf_program__name(p), "esa_switch");

		bpf_program__set_autoload(p, mine);
		if (mine)
			*prog = p;
	}
	if (!*prog) {
		fprintf(stderr, "bench_dataplane: --against %s: no esa_switch program\n",
			path);
		bpf_object__close(obj);
		return NULL;
	}
	return obj;
}

/*
 * The esa_switch program of another build of the module-less flavour
 * (@path, its object file) on @sw's maps: a change measured side by side
 * with the tree's. Its maps must have the tree's layout, but for the
 * aggregators': a build whose struct esa_agg differs in its lock (a
 * bpf_spin_lock, which the kernel's map must know of, against the tree's
 * word) gets an esa_aggs of its own. The bench's sequences all complete,
 * so its slots are free again after each case as the tree's are.
 */
static int load_against(struct esa_switch *sw, const char *path)
{
	libbpf_print_fn_t print = libbpf_set_print(NULL);
	struct bpf_program *sw_prog;
	struct bpf_object *obj;
	int err = -1, own_aggs;

	/* the first try's verifier log is no news when the second loads */
	for (own_aggs = 0; own_aggs < 2 && err; own_aggs++) {
		if (own_aggs)
			libbpf_set_print(print);
		obj = open_against(sw, path, own_aggs, &sw_prog);
		if (!obj)
			break;
		err = bpf_object__load(obj);
		if (err)
			bpf_object__close(obj);
		else if (own_aggs)
			printf("# --against %s: on an esa_aggs of its own "
			       "(the tree's does not load with it)\n", path);
	}
	libbpf_set_print(print);
	if (!obj)
		return -1;
	if (err) {
		fprintf(stderr, "bench_dataplane: --against %s: load: %s\n", path,
			strerror(-err));
		return -1;
	}
	return bpf_program__fd(sw_prog);	/* obj stays open until exit */
}

static void usage(void)
{
	fprintf(stderr,
"usage: bench_dataplane [--flavours maps[,kmod] | --against OBJ] [--scale]\n"
"  --flavours  data planes to run side by side on every packet (maps);\n"
"              kmod needs the esa module with job 1 of dp_util.h's plan\n"
"              (bench_dataplane.sh sets it up with aggctl)\n"
"  --against   another build of the module-less flavour (its esa_switch.bpf.o)\n"
"              side by side with the tree's\n"
"  --scale     also 1 vs %u jobs and %u vs %u aggregators (module-less)\n",
		ESA_MAX_JOB_ID, SCALE_SLOTS_FEW, ESA_MAX_AGGREGATORS);
	exit(2);
}

int main(int argc, char **argv)
{
	struct dut d[2] = { { .name = "maps" } };
	int nd = 1, scale = 0, err = 0, nop;
	const char *against = NULL;
	cpu_set_t set;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--scale")) {
			scale = 1;
		} else if (!strcmp(argv[i], "--against") && i + 1 < argc) {
			if (nd == 2)
				usage();
			against = argv[++i];
			nd = 2;
		} else if (!strcmp(argv[i], "--flavours") && i + 1 < argc) {
			i++;
			if (!strcmp(argv[i], "maps,kmod") && !against)
				nd = 2;
			else if (strcmp(argv[i], "maps"))
				usage();
		} else {
			usage();
		}
	}
	if (!against)
		d[1].name = "kmod";
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		return 1;
	}
	for (int i = 0; i < nd && !err; i++) {
		struct esa_switch_opts o = {
			.agg_capacity = SLOTS,
			.flavour = i && !against ? ESA_FLAVOUR_KMOD : ESA_FLAVOUR_MAPS,
		};

		err = esa_switch_load(&d[i].sw, &o);
		if (err)
			fprintf(stderr, "bench_dataplane: load the %s flavour: %s\n",
				d[i].name, strerror(-err));
	}
	if (!err && against) {
		d[1].name = "against";
		d[1].prog = load_against(d[1].sw, against);
		err = d[1].prog < 0;
	}
	if (err)
		return 1;
	nop = nop_prog();
	if (nop < 0) {
		perror("load nop program");
		return 1;
	}
	if (esa_switch_has_job_maps(d[0].sw)) {
		bench_forward(d[0].sw, nop, 0);
		bench_forward(d[0].sw, nop, 1460);
	}
	if (scale) {
		const struct bcase j1 = { .n = ESA_MAX_VALUES, .jobs = 1,
			.slots = SCALE_WINDOW + 1, .window = SCALE_WINDOW,
			.nseq = SCALE_SEQ };
		struct bcase jn = j1, jf = j1, jm = j1, sf = j1, sm = j1, wf, wm;

		jn.jobs = ESA_MAX_JOB_ID;
		/* a job on the whole array: 1023 in a row at once, sliding */
		jf.slots = SCALE_SLOTS_FEW;
		jm.slots = ESA_MAX_AGGREGATORS;
		/* the same 1023 aggregators at once, spread over each array */
		sf.slots = SCALE_SLOTS_FEW;
		sf.stride = SCALE_SLOTS_FEW / SCALE_WINDOW;
		sm.slots = ESA_MAX_AGGREGATORS;
		sm.stride = ESA_MAX_AGGREGATORS / SCALE_WINDOW;
		/* worst: 32736 at once on the 1M, each packet another */
		wf = sf;
		wf.nseq = WORST_WINDOW;
		wm = sm;
		wm.window = wm.nseq = WORST_WINDOW;
		wm.stride = ESA_MAX_AGGREGATORS / WORST_WINDOW;
		err = bench_pair(nop, NULL, "jobs", &j1, &jn, 1, ESA_MAX_JOB_ID) ||
		      bench_pair(nop, "job", "slots", &jf, &jm, SCALE_SLOTS_FEW,
				 ESA_MAX_AGGREGATORS) ||
		      bench_pair(nop, "spread", "slots", &sf, &sm, SCALE_SLOTS_FEW,
				 ESA_MAX_AGGREGATORS) ||
		      bench_pair(nop, "worst", "slots", &wf, &wm,
				 SCALE_SLOTS_FEW, ESA_MAX_AGGREGATORS);
	}
	if (!err)
		err = bench_values(d, nd, nop, ESA_MIN_VALUES) ||
		      bench_values(d, nd, nop, ESA_MAX_VALUES);
	for (int i = 0; i < nd; i++)
		esa_switch_close(d[i].sw);
	return err ? 1 : 0;
}
