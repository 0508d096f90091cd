// SPDX-License-Identifier: GPL-2.0
/*
 * The data plane loader (esa_dp.h): loading, pinning and reading the XDP
 * data plane's maps, module-less commits.
 * Both flavours are embedded as libbpf skeleton ELF images, so a tool
 * needs no path to the BPF objects at run time.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "esa_dp.h"
#include "esa_rules.h"
#include "esa_switch.skel.h"
#include "esa_switch_kmod.skel.h"

enum {
	M_AGGS, M_STATS, M_SCRATCH, M_NEIGH, M_LEARNED, M_FDB,
	M_LEARN_PORTS, M_MCAST, M_CONFIG, M_JOBS, M_OCC, M_CLOCK, M_LEARN_GEN,
	M_PORT_ROLES, M_OA_ADDRS, M_OA_JOBS, M__MAX,
};

static const char *const map_names[M__MAX] = {
	[M_AGGS] = "esa_aggs", [M_STATS] = "esa_stats",
	[M_SCRATCH] = "esa_scratch", [M_NEIGH] = "esa_neigh",
	[M_LEARNED] = "esa_learned", [M_FDB] = "esa_fdb",
	[M_LEARN_PORTS] = "esa_learn_ports", [M_MCAST] = "esa_mcast",
	[M_CONFIG] = "esa_config", [M_JOBS] = "esa_jobs",
	[M_OCC] = "esa_occupancy", [M_CLOCK] = "esa_clock",
	[M_LEARN_GEN] = "esa_learn_gen",
	[M_PORT_ROLES] = "esa_port_roles", [M_OA_ADDRS] = "esa_oa_addrs",
	[M_OA_JOBS] = "esa_oa_jobs",
};

/*
 * The programs, by their pin names. P_SWITCH and P_EGRESS are in every
 * pinned data plane; the one-armed ports' two may be missing from one
 * pinned by an older build.
 */
enum { P_SWITCH, P_EGRESS, P_EGRESS_NONE, P_FANOUT, P__MAX };

static const char *const prog_names[P__MAX] = {
	[P_SWITCH] = "esa_switch", [P_EGRESS] = "esa_egress",
	[P_EGRESS_NONE] = "esa_egress_none", [P_FANOUT] = "esa_fanout",
};

static const char *const counter_names[__ESA_CNT_MAX] = {
	[ESA_CNT_RX] = "rx",
	[ESA_CNT_AGGREGATED] = "aggregated",
	[ESA_CNT_COMPLETED] = "completed",
	[ESA_CNT_COLLISIONS] = "collisions",
	[ESA_CNT_PREEMPTIONS] = "preemptions",
	[ESA_CNT_EVICTIONS] = "evictions",
	[ESA_CNT_RESENDS] = "resends",
	[ESA_CNT_DUPLICATES] = "duplicates",
	[ESA_CNT_RESULTS] = "results",
	[ESA_CNT_OVERFLOWS] = "overflows",
	[ESA_CNT_FORWARDED] = "forwarded",
	[ESA_CNT_DROP_MALFORMED] = "drop_malformed",
	[ESA_CNT_DROP_TRUNCATED] = "drop_truncated",
	[ESA_CNT_DROP_UNKNOWN_JOB] = "drop_unknown_job",
	[ESA_CNT_DROP_RANGE] = "drop_range",
	[ESA_CNT_DROP_PORT] = "drop_port",
	[ESA_CNT_PULLS] = "pulls",
	[ESA_CNT_STRANDED] = "stranded",
	[ESA_CNT_STRANDED_US] = "stranded_us",
	[ESA_CNT_EARLY_PARTIALS] = "early_partials",
	[ESA_CNT_DROP_SPOOF] = "drop_spoof",
	[ESA_CNT_DROP_BUSY] = "drop_busy",
	[ESA_CNT_DROP_TOKEN] = "drop_token",
	[ESA_CNT_DROP_MODE] = "drop_mode",
	[ESA_CNT_DROP_NEXTHOP] = "drop_nexthop",
};

struct esa_switch {
	/* loaded here: one of the two skeletons (they own the fds) */
	struct esa_switch_bpf *skel;		/* module-less flavour */
	struct esa_switch_kmod_bpf *kskel;	/* module flavour */
	struct bpf_object *obj;		/* the loaded object; NULL from pins */
	int map_fd[M__MAX];		/* -1: not in this flavour */
	int prog[P__MAX];		/* -1: not in this build */
	__u32 agg_capacity;
};

const char *esa_counter_name(unsigned int c)
{
	return c < __ESA_CNT_MAX ? counter_names[c] : NULL;
}

static struct esa_switch *sw_new(void)
{
	struct esa_switch *sw = calloc(1, sizeof(*sw));
	int i;

	if (!sw)
		return NULL;
	for (i = 0; i < M__MAX; i++)
		sw->map_fd[i] = -1;
	for (i = 0; i < P__MAX; i++)
		sw->prog[i] = -1;
	return sw;
}

void esa_switch_close(struct esa_switch *sw)
{
	int i;

	if (!sw)
		return;
	if (sw->skel || sw->kskel) {
		esa_switch_bpf__destroy(sw->skel);	/* they own the fds */
		esa_switch_kmod_bpf__destroy(sw->kskel);
	} else {
		for (i = 0; i < M__MAX; i++)
			if (sw->map_fd[i] >= 0)
				close(sw->map_fd[i]);
		for (i = 0; i < P__MAX; i++)
			if (sw->prog[i] >= 0)
				close(sw->prog[i]);
	}
	free(sw);
}

static int agg_capacity_of(int fd, __u32 *cap)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int err = bpf_obj_get_info_by_fd(fd, &info, &len);

	if (err)
		return -errno;
	*cap = info.max_entries;
	return 0;
}

/*
 * The maps and programs both flavours have, from either skeleton (the
 * same member names): typed, no lookup by string.
 */
#define DP_COMMON_FDS(sw, s) do {					\
	(sw)->map_fd[M_AGGS] = bpf_map__fd((s)->maps.esa_aggs);	\
	(sw)->map_fd[M_STATS] = bpf_map__fd((s)->maps.esa_stats);	\
	(sw)->map_fd[M_SCRATCH] = bpf_map__fd((s)->maps.esa_scratch);	\
	(sw)->map_fd[M_NEIGH] = bpf_map__fd((s)->maps.esa_neigh);	\
	(sw)->map_fd[M_LEARNED] = bpf_map__fd((s)->maps.esa_learned);	\
	(sw)->map_fd[M_FDB] = bpf_map__fd((s)->maps.esa_fdb);		\
	(sw)->map_fd[M_LEARN_PORTS] = bpf_map__fd((s)->maps.esa_learn_ports); \
	(sw)->map_fd[M_MCAST] = bpf_map__fd((s)->maps.esa_mcast);	\
	(sw)->map_fd[M_CLOCK] = bpf_map__fd((s)->maps.esa_clock);	\
	(sw)->map_fd[M_LEARN_GEN] = bpf_map__fd((s)->maps.esa_learn_gen); \
	(sw)->map_fd[M_PORT_ROLES] = bpf_map__fd((s)->maps.esa_port_roles); \
	(sw)->map_fd[M_OA_ADDRS] = bpf_map__fd((s)->maps.esa_oa_addrs);	\
	(sw)->map_fd[M_OA_JOBS] = bpf_map__fd((s)->maps.esa_oa_jobs);	\
	(sw)->prog[P_SWITCH] = bpf_program__fd((s)->progs.esa_switch);	\
	(sw)->prog[P_EGRESS] = bpf_program__fd((s)->progs.esa_egress);	\
	(sw)->prog[P_EGRESS_NONE] = bpf_program__fd((s)->progs.esa_egress_none); \
	(sw)->prog[P_FANOUT] = bpf_program__fd((s)->progs.esa_fanout);	\
	(sw)->obj = (s)->obj;						\
} while (0)

/*
 * What loading either flavour starts with: open the skeleton (@open, into
 * *@skelp, which @sw's close frees from then on), size its aggregator
 * array, set its clock. 0 or -errno.
 */
#define DP_OPEN(skelp, open, o, cap) ({					\
	int err_ = 0;							\
									\
	*(skelp) = open();						\
	if (!*(skelp))							\
		err_ = -errno;						\
	else								\
		err_ = bpf_map__set_max_entries((*(skelp))->maps.esa_aggs, \
						cap);			\
	if (!err_)							\
		(*(skelp))->rodata->esa_virtual_clock = (o)->virtual_clock; \
	err_;								\
})

static int load_maps_flavour(struct esa_switch *sw,
			     const struct esa_switch_opts *o, __u32 cap)
{
	int err = DP_OPEN(&sw->skel, esa_switch_bpf__open, o, cap);

	if (!err)
		err = esa_switch_bpf__load(sw->skel);
	if (err)
		return err;
	DP_COMMON_FDS(sw, sw->skel);
	sw->map_fd[M_CONFIG] = bpf_map__fd(sw->skel->maps.esa_config);
	sw->map_fd[M_JOBS] = bpf_map__fd(sw->skel->maps.esa_jobs);
	sw->map_fd[M_OCC] = bpf_map__fd(sw->skel->maps.esa_occupancy);
	return 0;
}

static int load_kmod_flavour(struct esa_switch *sw,
			     const struct esa_switch_opts *o, __u32 cap)
{
	int err = DP_OPEN(&sw->kskel, esa_switch_kmod_bpf__open, o, cap);

	if (err)
		return err;
	sw->kskel->rodata->esa_generation = o->generation;
	err = esa_switch_kmod_bpf__load(sw->kskel);
	if (err)
		return err;
	DP_COMMON_FDS(sw, sw->kskel);
	return 0;
}

__u32 esa_switch_new_generation(void)
{
	__u32 g = 0;

	while (!g)
		if (getrandom(&g, sizeof(g), 0) != sizeof(g))
			g = (__u32)time(NULL) ^ ((__u32)getpid() << 16);
	return g;
}

__u32 esa_switch_opts_capacity(const struct esa_switch_opts *o)
{
	return o && o->agg_capacity ? o->agg_capacity : ESA_AGG_CAPACITY_DEFAULT;
}

__u32 esa_switch_agg_capacity(const struct esa_switch *sw)
{
	return sw->agg_capacity;
}

__u64 esa_switch_agg_bytes(__u32 capacity)
{
	/* an array map's elements are 8-byte aligned */
	return (__u64)capacity * ((sizeof(struct esa_agg) + 7) & ~7ULL);
}

const char *esa_switch_load_strerror(int err, const struct esa_switch_opts *o,
				     char *buf, size_t n)
{
	__u32 cap = esa_switch_opts_capacity(o);

	/* the array is allocated whole at load: the one large allocation */
	if (err == -ENOMEM)
		snprintf(buf, n, "cannot allocate %u aggregators (%llu MiB of kernel memory): %s",
			 cap, (unsigned long long)(esa_switch_agg_bytes(cap) >> 20),
			 strerror(ENOMEM));
	else
		snprintf(buf, n, "%s", strerror(-err));
	return buf;
}

int esa_switch_load(struct esa_switch **out, const struct esa_switch_opts *o)
{
	static const struct esa_switch_opts defaults;
	struct esa_switch *sw;
	__u32 cap;
	int err;

	if (!o)
		o = &defaults;
	cap = esa_switch_opts_capacity(o);
	if (cap > ESA_MAX_AGGREGATORS || (o->flavour != ESA_FLAVOUR_MAPS &&
					  o->flavour != ESA_FLAVOUR_KMOD))
		return -EINVAL;
	sw = sw_new();
	if (!sw)
		return -ENOMEM;
	err = o->flavour == ESA_FLAVOUR_KMOD ? load_kmod_flavour(sw, o, cap) :
					       load_maps_flavour(sw, o, cap);
	if (!err)	/* what the kernel made, as for a pinned one */
		err = agg_capacity_of(sw->map_fd[M_AGGS], &sw->agg_capacity);
	if (err) {
		esa_switch_close(sw);
		return err;
	}
	*out = sw;
	return 0;
}

static int pin_path(char *buf, size_t n, const char *dir, const char *name)
{
	int len = snprintf(buf, n, "%s/%s", dir, name);

	/* an error (< 0) is too long as well: huge as a size_t */
	return (size_t)len >= n ? -ENAMETOOLONG : 0;
}

/*
 * Pins live on a bpf filesystem. A fresh machine may have none mounted on
 * /sys/fs/bpf (systemd mounts it, a minimal or container boot may not):
 * mount it there, as bpftool and iproute2 do, when @dir is under it.
 */
static int bpffs_ensure(const char *dir)
{
	static const char root[] = "/sys/fs/bpf";
	struct statfs st;

	if (strncmp(dir, root, sizeof(root) - 1) ||
	    (dir[sizeof(root) - 1] != '/' && dir[sizeof(root) - 1]))
		return 0;	/* elsewhere: the caller's choice */
	if (statfs(root, &st))
		return -errno;
	if (st.f_type == BPF_FS_MAGIC)
		return 0;
	if (mount("bpf", root, "bpf", 0, "mode=0700"))
		return -errno;
	return 0;
}

/* One of the maps this library knows by name (not .rodata and the like). */
static bool dp_map_named(const char *name)
{
	unsigned int i;

	for (i = 0; i < M__MAX; i++)
		if (!strcmp(map_names[i], name))
			return true;
	return false;
}

/* Pin @prog as @dir/@name; 0 or -errno. */
static int dp_pin_prog(struct bpf_program *prog, const char *dir,
		       const char *name)
{
	char path[PATH_MAX];
	int err = pin_path(path, sizeof(path), dir, name);

	return err ? err : bpf_program__pin(prog, path);
}

static void dp_unpin_prog(struct bpf_program *prog, const char *dir,
			  const char *name)
{
	char path[PATH_MAX];

	if (!pin_path(path, sizeof(path), dir, name))
		bpf_program__unpin(prog, path);
}

/*
 * Every named map gets its pin path and libbpf pins them in one call that
 * undoes itself when one fails; then the programs. A step that fails
 * takes back what the steps before it pinned, and the directory if it
 * made it: a failed pin leaves nothing behind.
 */
int esa_switch_pin(struct esa_switch *sw, const char *dir)
{
	struct bpf_program *prog[P__MAX];
	char path[PATH_MAX];
	struct bpf_map *m;
	bool made;
	int i, err;

	if (!sw->obj)
		return -EINVAL;		/* opened from pins: pinned already */
	for (i = 0; i < P__MAX; i++) {
		prog[i] = bpf_object__find_program_by_name(sw->obj, prog_names[i]);
		if (!prog[i])
			return -ENOENT;
	}
	err = bpffs_ensure(dir);
	if (err)
		return err;
	made = !mkdir(dir, 0700);
	if (!made && errno != EEXIST)
		return -errno;
	bpf_object__for_each_map(m, sw->obj) {
		if (!dp_map_named(bpf_map__name(m)))
			continue;
		err = pin_path(path, sizeof(path), dir, bpf_map__name(m));
		if (!err)
			err = bpf_map__set_pin_path(m, path);
		if (err)
			goto undo_dir;
	}
	err = bpf_object__pin_maps(sw->obj, NULL);
	if (err)
		goto undo_dir;
	for (i = 0; i < P__MAX; i++) {
		err = dp_pin_prog(prog[i], dir, prog_names[i]);
		if (err)
			break;
	}
	if (!err)
		return 0;
	while (i-- > 0)
		dp_unpin_prog(prog[i], dir, prog_names[i]);
	bpf_object__unpin_maps(sw->obj, NULL);
undo_dir:
	if (made)
		rmdir(dir);
	return err;
}

int esa_switch_unpin(const char *dir)
{
	/* Maps an older build pinned and this one no longer has. */
	static const char *const retired[] = { "esa_ports" };
	char path[PATH_MAX];
	unsigned int i;

	for (i = 0; i < M__MAX; i++)
		if (!pin_path(path, sizeof(path), dir, map_names[i]))
			unlink(path);
	for (i = 0; i < P__MAX; i++)
		if (!pin_path(path, sizeof(path), dir, prog_names[i]))
			unlink(path);
	for (i = 0; i < sizeof(retired) / sizeof(retired[0]); i++)
		if (!pin_path(path, sizeof(path), dir, retired[i]))
			unlink(path);
	if (rmdir(dir) && errno != ENOENT)
		return -errno;
	return 0;
}

int esa_switch_open_pinned(struct esa_switch **out, const char *dir)
{
	struct esa_switch *sw = sw_new();
	char path[PATH_MAX];
	int i, err;

	if (!sw)
		return -ENOMEM;
	for (i = 0; i < M__MAX; i++) {
		err = pin_path(path, sizeof(path), dir, map_names[i]);
		if (err)
			goto fail;
		sw->map_fd[i] = bpf_obj_get(path);
		if (sw->map_fd[i] < 0 && i < M_CONFIG) {
			err = -errno;
			goto fail;
		}
	}
	for (i = 0; i < P__MAX && !err; i++) {
		err = pin_path(path, sizeof(path), dir, prog_names[i]);
		if (!err && (sw->prog[i] = bpf_obj_get(path)) < 0 &&
		    i < P_EGRESS_NONE)
			err = -errno;
	}
	if (!err)
		err = agg_capacity_of(sw->map_fd[M_AGGS], &sw->agg_capacity);
	if (err)
		goto fail;
	*out = sw;
	return 0;
fail:
	esa_switch_close(sw);
	return err;
}

bool esa_switch_has_job_maps(const struct esa_switch *sw)
{
	return sw->map_fd[M_CONFIG] >= 0 && sw->map_fd[M_JOBS] >= 0;
}

int esa_switch_set_config(struct esa_switch *sw,
			  const struct esa_switch_config *cfg)
{
	__u32 zero = 0;

	if (!esa_switch_has_job_maps(sw))
		return -EOPNOTSUPP;
	if (cfg->policy >= __ESA_POLICY_MAX ||
	    cfg->agg_slots > sw->agg_capacity)
		return -EINVAL;
	return bpf_map_update_elem(sw->map_fd[M_CONFIG], &zero, cfg, 0) ?
	       -errno : 0;
}

int esa_switch_get_config(struct esa_switch *sw,
			  struct esa_switch_config *cfg)
{
	__u32 zero = 0;

	if (!esa_switch_has_job_maps(sw))
		return -EOPNOTSUPP;
	return bpf_map_lookup_elem(sw->map_fd[M_CONFIG], &zero, cfg) ?
	       -errno : 0;
}

/*
 * The record of @key as stored, job or none: a deleted job's record keeps
 * its incarnation (esa_switch_job_del()), so the id's next job gets a
 * new one.
 */
static int job_record(struct esa_switch *sw, __u32 key,
		      struct esa_job_info *rec)
{
	return bpf_map_lookup_elem(sw->map_fd[M_JOBS], &key, rec) ? -errno : 0;
}

/*
 * A job that replaces one of its id keeps its incarnation; a new job gets
 * the next one of its id, and holds no aggregator yet: its occupancy
 * starts at 0 before its record is there to take claims.
 */
int esa_switch_job_put(struct esa_switch *sw, const struct esa_job_info *job)
{
	struct esa_job_info rec, next = *job;
	__u32 key = job->job_id;
	__s32 none = 0;
	int err;

	if (!esa_switch_has_job_maps(sw))
		return -EOPNOTSUPP;
	if (esa_rules_check_job(job, NULL))
		return -EINVAL;
	err = job_record(sw, key, &rec);
	if (err)
		return err;
	if (rec.job_id == key) {
		next.incarnation = rec.incarnation;
	} else {
		next.incarnation = rec.incarnation + 1 ?: 1;
		if (bpf_map_update_elem(sw->map_fd[M_OCC], &key, &none, 0))
			return -errno;
	}
	return bpf_map_update_elem(sw->map_fd[M_JOBS], &key, &next, 0) ?
	       -errno : 0;
}

/* esa_jobs is an array by job id: a record whose job_id is not its id is none. */
int esa_switch_job_get(struct esa_switch *sw, __u32 job_id,
		       struct esa_job_info *job)
{
	if (!esa_switch_has_job_maps(sw))
		return -EOPNOTSUPP;
	if (!job_id || job_id > ESA_MAX_JOB_ID)
		return -ENOENT;
	if (bpf_map_lookup_elem(sw->map_fd[M_JOBS], &job_id, job))
		return -errno;
	return job->job_id == job_id ? 0 : -ENOENT;
}

/*
 * The record becomes none but keeps the incarnation: what the job held in
 * the aggregators is nobody's from now on (the data plane compares
 * incarnations), and the id's next job gets a new one.
 */
int esa_switch_job_del(struct esa_switch *sw, __u32 job_id)
{
	struct esa_job_info cur, none = { 0 };
	int err = esa_switch_job_get(sw, job_id, &cur);

	if (err)
		return err;
	none.incarnation = cur.incarnation;
	return bpf_map_update_elem(sw->map_fd[M_JOBS], &job_id, &none, 0) ?
	       -errno : 0;
}

static int dp_fail(struct esa_rules_err *err, int ret, const char *msg,
		   enum esa_rules_field field)
{
	if (err) {
		err->msg = msg;
		err->field = field;
		err->index = 0;
	}
	return ret;
}

/* One write of a commit, with what it replaced, so it can be undone. */
struct dp_write {
	__u32 job_id;			/* 0: the config */
	bool existed;			/* the job was there before */
	struct esa_job_info old_job;
};

/*
 * A module-less change being prepared: the jobs after it in id order with
 * their slices, the config after it, and the writes done so far.
 */
/* One address a job member uses, and the port it is bound to. */
struct dp_bind {
	__be32	addr;
	__u32	ifindex;		/* 0: first sight */
	__u16	job_id;			/* the first job that binds it */
};

/* Room for every member of every job. */
#define DP_BINDS_MAX	(ESA_MAX_JOB_ID * (ESA_MAX_WORKERS + 1))

struct dp_plan {
	struct esa_switch_config cfg, old_cfg;
	unsigned int n, nw;
	struct esa_job_info job[ESA_MAX_JOB_ID];
	struct esa_rules_slice sl[ESA_MAX_JOB_ID];
	bool write[ESA_MAX_JOB_ID];	/* new, or its slice moves */
	struct dp_write log[ESA_MAX_JOB_ID + 2];
	struct dp_bind bind[DP_BINDS_MAX];	/* the members' ports */
	unsigned int nbind;
};

/* The jobs after the change: @job in (replacing its id), @del_id out. */
static int dp_plan_gather(struct esa_switch *sw, struct dp_plan *p,
			  const struct esa_job_info *job, __u32 del_id)
{
	struct esa_job_info cur;
	__u32 id;
	int err;

	for (id = 1; id <= ESA_MAX_JOB_ID; id++) {
		err = esa_switch_job_get(sw, id, &cur);
		if (err && err != -ENOENT)
			return err;
		if (id == del_id)
			continue;
		if (job && job->job_id == id) {
			p->job[p->n] = *job;
			p->write[p->n] = true;
		} else if (!err) {
			p->job[p->n] = cur;
		} else {
			continue;
		}
		p->sl[p->n].quota = p->job[p->n].quota;
		p->n++;
	}
	return 0;
}

/* Undo the writes of @p, newest first (best effort: it is the undo). */
static void dp_plan_undo(struct esa_switch *sw, struct dp_plan *p)
{
	struct dp_write *w;
	__u32 zero = 0;

	while (p->nw) {
		w = &p->log[--p->nw];
		if (!w->job_id)
			bpf_map_update_elem(sw->map_fd[M_CONFIG], &zero,
					    &p->old_cfg, 0);
		else if (w->existed)
			bpf_map_update_elem(sw->map_fd[M_JOBS], &w->job_id,
					    &w->old_job, 0);
		else
			esa_switch_job_del(sw, w->job_id);
	}
}

/* Write job record @job (NULL: delete @id), logged for dp_plan_undo(). */
static int dp_plan_put(struct esa_switch *sw, struct dp_plan *p, __u32 id,
		       const struct esa_job_info *job)
{
	struct dp_write *w = &p->log[p->nw];
	int err;

	w->job_id = id;
	w->existed = !esa_switch_job_get(sw, id, &w->old_job);
	err = job ? esa_switch_job_put(sw, job) : esa_switch_job_del(sw, id);
	if (!err)
		p->nw++;
	return err;
}

static int dp_plan_put_config(struct esa_switch *sw, struct dp_plan *p)
{
	int err = esa_switch_set_config(sw, &p->cfg);

	if (!err)
		p->log[p->nw++].job_id = 0;
	return err;
}

/* Every job whose record changes, @del_id removed first. */
static int dp_plan_put_jobs(struct esa_switch *sw, struct dp_plan *p,
			    __u32 del_id)
{
	struct esa_job_info *j;
	unsigned int i;
	int err;

	if (del_id) {
		err = dp_plan_put(sw, p, del_id, NULL);
		if (err)
			return err;
	}
	for (i = 0; i < p->n; i++) {
		j = &p->job[i];
		if (!p->write[i] && j->agg_base == p->sl[i].base &&
		    j->agg_slice == p->sl[i].slice)
			continue;
		j->agg_base = p->sl[i].base;
		j->agg_slice = p->sl[i].slice;
		err = dp_plan_put(sw, p, j->job_id, j);
		if (err)
			return err;
	}
	return 0;
}

#define DP_STR_(x)	#x
#define DP_STR(x)	DP_STR_(x)

/* What went wrong writing the bindings (dp_bind_write()'s @ret). */
static const char *dp_bind_strerror(int ret)
{
	if (ret == -E2BIG)
		return "the member binding table (esa_neigh) is full: "
		       DP_STR(ESA_NEIGH_ENTRIES) " job member addresses are bound; "
		       "delete a job, or let jobs share member addresses";
	return "writing the member binding table (esa_neigh)";
}

/* Add member @addr on port @ifindex of @job_id to the plan @b. */
static int dp_bind_add(struct dp_bind *b, unsigned int *nb, __be32 addr,
		       __u32 ifindex, __u32 job_id, struct esa_rules_err *err,
		       enum esa_rules_field field)
{
	unsigned int i;

	for (i = 0; i < *nb; i++) {
		if (b[i].addr != addr)
			continue;
		if (ifindex && b[i].ifindex && b[i].ifindex != ifindex)
			return dp_fail(err, -EADDRINUSE,
				       "this address is bound to another port by a member of a job",
				       field);
		if (!b[i].ifindex)
			b[i].ifindex = ifindex;
		return 0;
	}
	b[*nb].addr = addr;
	b[*nb].ifindex = ifindex;
	b[(*nb)++].job_id = job_id;
	return 0;
}

/*
 * The bindings @jobs ask for, one per address, in @b (DP_BINDS_MAX);
 * -EADDRINUSE when two members want one address on two ports.
 */
static int dp_bind_plan(const struct esa_job_info *jobs, unsigned int n,
			struct dp_bind *b, unsigned int *nb,
			struct esa_rules_err *err)
{
	const struct esa_job_info *j;
	unsigned int k, i;
	int ret;

	*nb = 0;
	for (k = 0; k < n; k++) {
		j = &jobs[k];
		ret = dp_bind_add(b, nb, j->ps_addr, j->ps_ifindex, j->job_id,
				  err, ESA_RULES_F_PS_ADDR);
		for (i = 0; !ret && i < j->fan_in && i < ESA_MAX_WORKERS; i++) {
			ret = dp_bind_add(b, nb, j->worker_addr[i],
					  j->worker_ifindex[i], j->job_id, err,
					  ESA_RULES_F_WORKER_ADDR);
			if (ret && err)
				err->index = i;
		}
		if (ret)
			return ret;
	}
	/* checked before any write: a bind fails whole, never half done */
	if (*nb > ESA_NEIGH_ENTRIES)
		return dp_fail(err, -E2BIG, dp_bind_strerror(-E2BIG),
			       ESA_RULES_F_NONE);
	return 0;
}

/* Is @addr one of the @nb bindings of @b? */
static bool dp_bind_has(const struct dp_bind *b, unsigned int nb, __be32 addr)
{
	unsigned int i;

	for (i = 0; i < nb; i++)
		if (b[i].addr == addr)
			return true;
	return false;
}

/*
 * Make esa_neigh hold the bindings of @b and nothing else: an address no
 * job uses any more is unbound (its host's next frame learns it again,
 * into esa_learned); an address given a port is bound to it; one to bind
 * at first sight keeps the port it was bound on or, from esa_learned, was
 * learned on, if any, else waits for its first frame. Learned entries
 * never take a binding's room: they live in their own table.
 */
static int dp_bind_write(struct esa_switch *sw, const struct dp_bind *b,
			 unsigned int nb)
{
	int fd = sw->map_fd[M_NEIGH];
	__be32 key, *prev = NULL, *gone;
	unsigned int i, ngone = 0;
	struct esa_neigh v;

	gone = calloc(ESA_NEIGH_ENTRIES, sizeof(*gone));
	if (!gone)
		return -ENOMEM;
	/* collected first: deleting while walking would restart the walk */
	while (ngone < ESA_NEIGH_ENTRIES &&
	       !bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (!dp_bind_has(b, nb, key))
			gone[ngone++] = key;
	}
	for (i = 0; i < ngone; i++)
		if (bpf_map_delete_elem(fd, &gone[i]) && errno != ENOENT) {
			free(gone);
			return -errno;
		}
	free(gone);
	for (i = 0; i < nb; i++) {
		if (bpf_map_lookup_elem(fd, &b[i].addr, &v) &&
		    bpf_map_lookup_elem(sw->map_fd[M_LEARNED], &b[i].addr, &v))
			memset(&v, 0, sizeof(v));
		if (b[i].ifindex)
			v.ifindex = b[i].ifindex;
		v.bound_job = b[i].job_id;
		v.learned_s = 0;
		if (bpf_map_update_elem(fd, &b[i].addr, &v, 0))
			return -errno;
	}
	return 0;
}

/* dp_bind_write(), then void the memos even after a partial write. */
static int dp_bind_apply(struct esa_switch *sw, const struct dp_bind *b,
			 unsigned int nb)
{
	int ret = dp_bind_write(sw, b, nb);
	int changed = esa_switch_learned_changed(sw);

	return ret ? ret : changed;
}

/* Plan the bindings of @jobs and, with @sw, write them. */
static int dp_bind(struct esa_switch *sw, const struct esa_job_info *jobs,
		   unsigned int n, struct esa_rules_err *err)
{
	struct dp_bind *b = calloc(DP_BINDS_MAX, sizeof(*b));
	unsigned int nb;
	int ret;

	if (!b)
		return -ENOMEM;
	ret = dp_bind_plan(jobs, n, b, &nb, err);
	if (!ret && sw) {
		ret = dp_bind_apply(sw, b, nb);
		if (ret)
			dp_fail(err, ret, dp_bind_strerror(ret),
				ESA_RULES_F_NONE);
	}
	free(b);
	return ret;
}

int esa_switch_bind_check(const struct esa_job_info *jobs, unsigned int n,
			  struct esa_rules_err *err)
{
	return dp_bind(NULL, jobs, n, err);
}

int esa_switch_bind_jobs(struct esa_switch *sw,
			 const struct esa_job_info *jobs, unsigned int n,
			 struct esa_rules_err *err)
{
	return dp_bind(sw, jobs, n, err);
}

static int dp_plan_check(struct esa_switch *sw, struct dp_plan *p,
			 const struct esa_switch_config *cfg,
			 const struct esa_job_info *job,
			 struct esa_rules_err *err)
{
	struct esa_job_info j;
	int ret;

	ret = esa_switch_get_config(sw, &p->old_cfg);
	if (ret)
		return dp_fail(err, ret, "reading the switch config",
			       ESA_RULES_F_NONE);
	p->cfg = cfg ? *cfg : p->old_cfg;
	ret = esa_rules_check_config(&p->cfg, err);
	if (ret)
		return ret;
	if (p->cfg.agg_slots > sw->agg_capacity)
		return dp_fail(err, -ERANGE,
			       "slots above the aggregator array's capacity (switch attach capacity)",
			       ESA_RULES_F_AGG_SLOTS);
	if (!job)
		return 0;
	j = *job;
	j.agg_base = j.agg_slice = 0;	/* laid out below */
	return esa_rules_check_job(&j, err);
}

int esa_switch_commit(struct esa_switch *sw,
		      const struct esa_switch_config *cfg,
		      const struct esa_job_info *job, __u32 del_id,
		      struct esa_rules_err *err)
{
	struct dp_plan *p;
	__u32 need;
	int ret;

	if (!esa_switch_has_job_maps(sw))
		return -EOPNOTSUPP;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	ret = dp_plan_check(sw, p, cfg, job, err);
	if (!ret && del_id && esa_switch_job_get(sw, del_id, &p->job[0]))
		ret = dp_fail(err, -ENOENT, "no such job", ESA_RULES_F_JOB_ID);
	if (!ret) {
		ret = dp_plan_gather(sw, p, job, del_id);
		if (ret)
			dp_fail(err, ret, "reading the job map",
				ESA_RULES_F_NONE);
	}
	if (ret)
		goto out;
	ret = dp_bind_plan(p->job, p->n, p->bind, &p->nbind, err);
	if (ret)
		goto out;
	ret = esa_rules_layout(p->cfg.policy, p->cfg.agg_slots, p->sl, p->n,
			       &need);
	if (ret) {
		dp_fail(err, ret, ESA_RULES_LAYOUT_NOSPC_MSG, ESA_RULES_F_QUOTA);
		goto out;
	}
	if (esa_rules_jobs_first(p->cfg.policy)) {
		ret = dp_plan_put_jobs(sw, p, del_id);
		if (!ret)
			ret = dp_plan_put_config(sw, p);
	} else {
		ret = dp_plan_put_config(sw, p);
		if (!ret)
			ret = dp_plan_put_jobs(sw, p, del_id);
	}
	/* the members' bindings follow the jobs (the data plane enforces them) */
	if (ret) {
		dp_fail(err, ret, "writing the data plane's maps",
			ESA_RULES_F_NONE);
	} else {
		ret = dp_bind_apply(sw, p->bind, p->nbind);
		if (ret)
			dp_fail(err, ret, dp_bind_strerror(ret),
				ESA_RULES_F_NONE);
	}
	if (ret)
		dp_plan_undo(sw, p);
out:
	free(p);
	return ret;
}

int esa_switch_counters(struct esa_switch *sw, __u32 job_id,
			__u64 out[__ESA_CNT_MAX])
{
	int ncpu = libbpf_num_possible_cpus(), c, i;
	struct esa_counter_block *v;

	if (ncpu < 0)
		return ncpu;
	if (job_id >= ESA_STATS_ENTRIES)
		return -EINVAL;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	if (bpf_map_lookup_elem(sw->map_fd[M_STATS], &job_id, v)) {
		free(v);
		return -errno;
	}
	memset(out, 0, sizeof(__u64) * __ESA_CNT_MAX);
	for (c = 0; c < ncpu; c++)
		for (i = 0; i < __ESA_CNT_MAX; i++)
			out[i] += v[c].cnt[i];
	free(v);
	return 0;
}

int esa_switch_counters_reset(struct esa_switch *sw)
{
	int ncpu = libbpf_num_possible_cpus();
	struct esa_counter_block *v;
	__u32 k;
	int err = 0;

	if (ncpu < 0)
		return ncpu;
	v = calloc(ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (k = 0; k < ESA_STATS_ENTRIES && !err; k++)
		if (bpf_map_update_elem(sw->map_fd[M_STATS], &k, v, 0))
			err = -errno;
	free(v);
	return err;
}

int esa_switch_agg_read(struct esa_switch *sw, __u32 slot,
			struct esa_agg *out)
{
	if (slot >= sw->agg_capacity)
		return -ERANGE;
	return bpf_map_lookup_elem(sw->map_fd[M_AGGS], &slot, out) ?
	       -errno : 0;
}

/* Tally one snapshot of an aggregator by its owner. */
static void agg_tally(const struct esa_agg *a, __u32 *per_job)
{
	if (a->state != ESA_AGG_FREE && a->job_id && a->job_id <= ESA_MAX_JOB_ID)
		per_job[a->job_id]++;
}

/* Aggregators per batch: an esa_agg is ~1.5 KiB, so 96 KiB at a time. */
#define AGG_BATCH 64

int esa_switch_agg_owners(struct esa_switch *sw, __u32 slots,
			  __u32 per_job[ESA_MAX_JOB_ID + 1])
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 keys[AGG_BATCH], token = 0, done = 0, n, i;
	struct esa_agg *vals;
	void *in = NULL;
	int err = 0;

	memset(per_job, 0, sizeof(__u32) * (ESA_MAX_JOB_ID + 1));
	if (slots > sw->agg_capacity)
		slots = sw->agg_capacity;
	vals = calloc(AGG_BATCH, sizeof(*vals));
	if (!vals)
		return -ENOMEM;
	while (done < slots) {
		n = slots - done < AGG_BATCH ? slots - done : AGG_BATCH;
		err = bpf_map_lookup_batch(sw->map_fd[M_AGGS], in, &token,
					   keys, vals, &n, &opts) ? -errno : 0;
		if (err && err != -ENOENT)
			break;
		for (i = 0; i < n && done + i < slots; i++)
			agg_tally(&vals[i], per_job);
		done += n;
		in = &token;
		if (err || !n) {	/* -ENOENT: the end of the array */
			err = 0;
			break;
		}
	}
	free(vals);
	return err;
}

int esa_switch_agg_clear(struct esa_switch *sw, __u32 slots)
{
	struct esa_agg zero = {};
	__s32 none = 0;
	__u32 k;

	if (slots > sw->agg_capacity)
		slots = sw->agg_capacity;
	for (k = 0; k < slots; k++)
		if (bpf_map_update_elem(sw->map_fd[M_AGGS], &k, &zero, 0))
			return -errno;
	/* module-less: nobody holds anything any more */
	for (k = 0; sw->map_fd[M_OCC] >= 0 && k <= ESA_MAX_JOB_ID; k++)
		if (bpf_map_update_elem(sw->map_fd[M_OCC], &k, &none, 0))
			return -errno;
	return 0;
}

/* The kernel's id of program @fd, 0 if unknown. */
static __u32 prog_id_of(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ? info.id : 0;
}

/*
 * Port @ifindex's clsact ingress hook and our filter's place on it (the
 * caller sets .prog_fd to attach, or reads .prog_id after a query).
 */
#define DP_TC_HOOK(name, ifindex)					\
	LIBBPF_OPTS(bpf_tc_hook, name, .ifindex = (ifindex),		\
		    .attach_point = BPF_TC_INGRESS)
#define DP_TC_FILTER(name)						\
	LIBBPF_OPTS(bpf_tc_opts, name, .handle = ESA_TC_HANDLE,		\
		    .priority = ESA_TC_PRIO)

/* Remove our fan-out filter from port @ifindex if it is still ours. */
static void dp_tc_detach(struct esa_switch *sw, int ifindex)
{
	DP_TC_HOOK(hook, ifindex);
	DP_TC_FILTER(q);
	DP_TC_FILTER(d);
	__u32 ours = prog_id_of(sw->prog[P_FANOUT]);

	if (!ours || bpf_tc_query(&hook, &q) || q.prog_id != ours)
		return;
	bpf_tc_detach(&hook, &d);
}

/* Take port @ifindex's one-armed role and address out of the maps. */
static void dp_forget_role(struct esa_switch *sw, int ifindex)
{
	struct esa_port_role r;
	__u32 key = ifindex;

	if (sw->map_fd[M_PORT_ROLES] < 0 ||
	    bpf_map_lookup_elem(sw->map_fd[M_PORT_ROLES], &key, &r))
		return;
	bpf_map_delete_elem(sw->map_fd[M_PORT_ROLES], &key);
	bpf_map_delete_elem(sw->map_fd[M_OA_ADDRS], &r.addr);
	dp_tc_detach(sw, ifindex);
}

int esa_switch_attach_port(struct esa_switch *sw, int ifindex,
			   __u32 xdp_flags)
{
	struct bpf_devmap_val mcast = { .ifindex = ifindex };
	__u32 key = ifindex;
	int err;

	if (ifindex <= 0)
		return -EINVAL;
	if (!(xdp_flags & XDP_FLAGS_MODES))
		xdp_flags |= XDP_FLAGS_DRV_MODE;
	dp_forget_role(sw, ifindex);	/* one-armed before: per-host now */
	mcast.bpf_prog.fd = sw->prog[P_EGRESS];
	if (bpf_map_update_elem(sw->map_fd[M_MCAST], &key, &mcast, 0))
		return -errno;
	err = bpf_xdp_attach(ifindex, sw->prog[P_SWITCH], xdp_flags, NULL);
	if (err)
		bpf_map_delete_elem(sw->map_fd[M_MCAST], &key);
	return err;
}

/* The XDP attach flag of the mode a program is attached in. */
static __u32 xdp_mode_flag(__u8 attach_mode)
{
	return attach_mode == XDP_ATTACHED_SKB ? XDP_FLAGS_SKB_MODE :
	       attach_mode == XDP_ATTACHED_HW ? XDP_FLAGS_HW_MODE :
	       XDP_FLAGS_DRV_MODE;
}

int esa_switch_detach_prog(struct esa_switch *sw, int ifindex)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	LIBBPF_OPTS(bpf_xdp_attach_opts, a, .old_prog_fd = sw->prog[P_SWITCH]);
	int err;

	/*
	 * A port that does not exist runs nothing. libbpf 1.1 (Debian 12)
	 * finds no such link in its dump and answers 0, nothing attached;
	 * libbpf 1.5 (Debian 13) also asks the netdev family for the link's
	 * XDP features and passes on its -ENODEV.
	 */
	err = bpf_xdp_query(ifindex, 0, &q);
	if (err == -ENODEV)
		return 0;
	if (err)
		return err;
	if (q.attach_mode == XDP_ATTACHED_NONE)
		return 0;
	/*
	 * XDP_FLAGS_REPLACE with our program as the expected one: the kernel
	 * detaches only if the port still runs it (-EEXIST otherwise), so
	 * another program is never removed, even one attached since the
	 * caller looked.
	 */
	return bpf_xdp_detach(ifindex, XDP_FLAGS_REPLACE |
			      xdp_mode_flag(q.attach_mode), &a);
}

void esa_switch_forget_port(struct esa_switch *sw, int ifindex)
{
	__u32 key = ifindex;

	bpf_map_delete_elem(sw->map_fd[M_MCAST], &key);
	dp_forget_role(sw, ifindex);
}

int esa_switch_port_role(const struct esa_switch *sw, int ifindex,
			 struct esa_port_role *r)
{
	__u32 key = ifindex;

	memset(r, 0, sizeof(*r));
	if (sw->map_fd[M_PORT_ROLES] < 0 ||
	    !bpf_map_lookup_elem(sw->map_fd[M_PORT_ROLES], &key, r))
		return 0;
	memset(r, 0, sizeof(*r));
	return errno == ENOENT ? 0 : -errno;
}

/*
 * The fan-out filter on port @ifindex's clsact ingress, the qdisc made if
 * missing. 0 or -errno (-EEXIST: another filter holds our handle and
 * priority).
 */
static int dp_tc_attach(struct esa_switch *sw, int ifindex)
{
	DP_TC_HOOK(hook, ifindex);
	DP_TC_FILTER(f);
	DP_TC_FILTER(q);
	int err = bpf_tc_hook_create(&hook);

	if (err && err != -EEXIST)
		return err;
	f.prog_fd = sw->prog[P_FANOUT];
	err = bpf_tc_attach(&hook, &f);
	/* attached already (the port is one-armed and attached again) */
	if (err == -EEXIST && !bpf_tc_query(&hook, &q) &&
	    q.prog_id == prog_id_of(sw->prog[P_FANOUT]))
		return 0;
	return err;
}

int esa_switch_attach_one_armed(struct esa_switch *sw, int ifindex,
				__u32 xdp_flags, __be32 addr)
{
	struct bpf_devmap_val mcast = { .ifindex = ifindex };
	struct esa_port_role role = {
		.role = ESA_PORT_ONE_ARMED,
		.addr = addr,
	};
	__u32 key = ifindex, other;
	int err;

	if (ifindex <= 0 || !addr)
		return -EINVAL;
	if (sw->map_fd[M_PORT_ROLES] < 0 || sw->map_fd[M_OA_ADDRS] < 0 ||
	    sw->prog[P_FANOUT] < 0 || sw->prog[P_EGRESS_NONE] < 0)
		return -EOPNOTSUPP;
	if (!bpf_map_lookup_elem(sw->map_fd[M_OA_ADDRS], &addr, &other) &&
	    other != key)
		return -EADDRINUSE;
	if (!(xdp_flags & XDP_FLAGS_MODES))
		xdp_flags |= XDP_FLAGS_DRV_MODE;
	dp_forget_role(sw, ifindex);	/* an address it had before */
	err = dp_tc_attach(sw, ifindex);
	if (err)
		return err;
	mcast.bpf_prog.fd = sw->prog[P_EGRESS_NONE];
	if (bpf_map_update_elem(sw->map_fd[M_PORT_ROLES], &key, &role, 0) ||
	    bpf_map_update_elem(sw->map_fd[M_OA_ADDRS], &addr, &key, 0) ||
	    bpf_map_update_elem(sw->map_fd[M_MCAST], &key, &mcast, 0))
		err = -errno;
	if (!err)
		err = bpf_xdp_attach(ifindex, sw->prog[P_SWITCH], xdp_flags, NULL);
	if (err) {
		esa_switch_forget_port(sw, ifindex);
		dp_tc_detach(sw, ifindex);
	}
	return err;
}

int esa_switch_detach_port(struct esa_switch *sw, int ifindex)
{
	int err = esa_switch_detach_prog(sw, ifindex);

	if (!err)
		esa_switch_forget_port(sw, ifindex);
	return err;
}

/*
 * After the writes, as the data plane's own esa_learned_changed() does:
 * an atomic add on the mapped counter, so that two writers (or one and the
 * data plane) never set it back to a value a memo was taken at.
 */
int esa_switch_learned_changed(const struct esa_switch *sw)
{
	long page = sysconf(_SC_PAGESIZE);
	__u64 *gen;

	gen = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED,
		   sw->map_fd[M_LEARN_GEN], 0);
	if (gen == MAP_FAILED)
		return -errno;
	__atomic_fetch_add(gen, 1, __ATOMIC_SEQ_CST);
	munmap(gen, page);
	return 0;
}

int esa_switch_prog_fd(const struct esa_switch *sw)
{
	return sw->prog[P_SWITCH];
}

int esa_switch_map_fd(const struct esa_switch *sw, const char *name)
{
	int i;

	for (i = 0; i < M__MAX; i++)
		if (!strcmp(map_names[i], name))
			return sw->map_fd[i];
	return -1;
}
