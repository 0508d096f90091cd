// SPDX-License-Identifier: GPL-2.0
/*
 * The data plane loader's refusals and failures (tools/lib/dp/esa_dp.c):
 * pin directories it cannot use, pins missing or of another size, the
 * module flavour's pinned layout, writes the kernel refuses in the middle
 * of a commit (what was written before is put back), out-of-memory, ports
 * it cannot attach to or that run another program. Each case checks the
 * error returned (and the message a commit gives) and what is left
 * behind. test_esa_maps.c has the working paths.
 *
 * Maps whose writes fail are made by pinning, under a data plane's pin
 * name, a real map of the same key and value size but another type or
 * fewer entries, then opening the pins: the loader meets a real kernel
 * refusal. Allocation failures come from wrapping calloc() at link time
 * (-Wl,--wrap=calloc), for this program's objects only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/stat.h>
#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "kselftest_harness.h"
#include "dp_util.h"

#define CAP	16		/* aggregators of each test's data plane */
/* A directory path the kernel takes, with no room for a pin's name. */
#define LONG_DIR	(PATH_MAX - 6)

/* calloc() calls to let through before one fails (-1: none fails). */
static int calloc_fail_after = -1;

void *__real_calloc(size_t n, size_t size);
void *__wrap_calloc(size_t n, size_t size)
{
	if (calloc_fail_after >= 0 && !calloc_fail_after--) {
		errno = ENOMEM;
		return NULL;
	}
	return __real_calloc(n, size);
}

/* Fail the calloc() after @n that succeed (the next one for 0). */
static void fail_calloc(int n)
{
	calloc_fail_after = n;
}

static int load(struct esa_switch **sw)
{
	struct esa_switch_opts o = { .agg_capacity = CAP };

	return esa_switch_load(sw, &o);
}

static void pin_name(char *buf, size_t n, const char *dir, const char *name)
{
	snprintf(buf, n, "%s/%s", dir, name);
}

static bool exists(const char *path)
{
	return !access(path, F_OK);
}

static bool pin_exists(const char *dir, const char *name)
{
	char path[PATH_MAX];

	pin_name(path, sizeof(path), dir, name);
	return exists(path);
}

static int unpin_one(const char *dir, const char *name)
{
	char path[PATH_MAX];

	pin_name(path, sizeof(path), dir, name);
	return unlink(path);
}

/*
 * Put in place of the pinned map @name of @dir a new map of @type with
 * @entries entries and the same key and value size, @frozen (the syscall
 * side may only read it; the data plane's own stays loaded, unpinned).
 * Returns the new map's fd or -1.
 */
static int swap_pin_frozen(const char *dir, const char *name,
			   enum bpf_map_type type, __u32 entries, bool frozen)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX];
	int fd;

	pin_name(path, sizeof(path), dir, name);
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -1;
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		close(fd);
		return -1;
	}
	close(fd);
	if (unlink(path))
		return -1;
	fd = bpf_map_create(type, NULL, info.key_size, info.value_size,
			    entries, NULL);
	if (fd >= 0 && ((frozen && bpf_map_freeze(fd)) ||
			bpf_obj_pin(fd, path))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int swap_pin(const char *dir, const char *name,
		    enum bpf_map_type type, __u32 entries)
{
	return swap_pin_frozen(dir, name, type, entries, false);
}

/* A data plane loaded and pinned under a directory of its own. */
FIXTURE(pinned)
{
	struct esa_switch *loaded;
	char dir[64];
};

FIXTURE_SETUP(pinned)
{
	struct esa_switch_config cfg = { .policy = ESA_POLICY_ESA,
					 .agg_slots = CAP };

	snprintf(self->dir, sizeof(self->dir), "/sys/fs/bpf/esa-ldr-%d",
		 getpid());
	ASSERT_EQ(0, load(&self->loaded));
	ASSERT_EQ(0, esa_switch_pin(self->loaded, self->dir));
	ASSERT_EQ(0, esa_switch_set_config(self->loaded, &cfg));
}

FIXTURE_TEARDOWN(pinned)
{
	esa_switch_close(self->loaded);
	esa_switch_unpin(self->dir);
}

/*
 * A directory whose parent is missing, one that is no bpf filesystem, one
 * whose pin paths would pass PATH_MAX: refused, and a directory the pin
 * made is taken back while one that was there stays.
 */
TEST(pin_refuses_bad_dirs)
{
	char dir[PATH_MAX], parent[64];
	struct esa_switch *sw, *p;
	size_t n;

	ASSERT_EQ(0, load(&sw));
	snprintf(parent, sizeof(parent), "/sys/fs/bpf/esa-ldr-none-%d",
		 getpid());
	snprintf(dir, sizeof(dir), "%s/sub", parent);
	EXPECT_EQ(-ENOENT, esa_switch_pin(sw, dir));
	EXPECT_FALSE(exists(parent));

	/* not on a bpf filesystem: made, refused by libbpf, taken back */
	snprintf(dir, sizeof(dir), "/tmp/esa-ldr-%d", getpid());
	EXPECT_EQ(-EINVAL, esa_switch_pin(sw, dir));
	EXPECT_FALSE(exists(dir));
	/* the same, there before: it stays, empty */
	ASSERT_EQ(0, mkdir(dir, 0700));
	EXPECT_EQ(-EINVAL, esa_switch_pin(sw, dir));
	EXPECT_EQ(0, rmdir(dir));

	/*
	 * A directory the kernel takes (4090 bytes, in components of up to
	 * 200) whose pins' paths are too long: the pin makes its last
	 * component, finds no room for "/esa_aggs", and takes it back.
	 */
	snprintf(dir, sizeof(dir), "/tmp/esa-ldr-long-%d", getpid());
	ASSERT_EQ(0, mkdir(dir, 0700));
	strcpy(parent, dir);
	while ((n = strlen(dir)) < LONG_DIR) {
		size_t left = LONG_DIR - n - 1, c;

		/* a component of up to 200, and never an empty last one */
		c = left <= 200 ? left : left > 201 ? 200 : 100;

		dir[n] = '/';
		memset(dir + n + 1, 'd', c);
		dir[n + 1 + c] = 0;
		if (n + 1 + c < LONG_DIR)
			ASSERT_EQ(0, mkdir(dir, 0700));
	}
	EXPECT_EQ(-ENAMETOOLONG, esa_switch_pin(sw, dir));
	EXPECT_FALSE(exists(dir));
	EXPECT_EQ(-ENAMETOOLONG, esa_switch_open_pinned(&p, dir));
	/* no pin path fits: only the directory goes */
	ASSERT_EQ(0, mkdir(dir, 0700));
	EXPECT_EQ(0, esa_switch_unpin(dir));
	EXPECT_FALSE(exists(dir));
	for (;;) {
		*strrchr(dir, '/') = 0;
		if (!strcmp(dir, parent))
			break;
		EXPECT_EQ(0, rmdir(dir));
	}
	EXPECT_EQ(0, rmdir(parent));
	esa_switch_close(sw);
}

/* A data plane opened from pins is pinned already: no second pin. */
TEST_F(pinned, pin_of_pins_refused)
{
	struct esa_switch *p;

	ASSERT_EQ(0, esa_switch_open_pinned(&p, self->dir));
	EXPECT_EQ(-EINVAL, esa_switch_pin(p, "/sys/fs/bpf/esa-ldr-again"));
	EXPECT_FALSE(exists("/sys/fs/bpf/esa-ldr-again"));
	esa_switch_close(p);
}

/*
 * A second data plane pinned where one is: refused at the first map, and
 * the first one's pins are untouched.
 */
TEST_F(pinned, pin_over_another_refused)
{
	struct esa_switch *sw, *p;
	struct esa_job_info j, back;

	dp_job(&j, 4, 2, 0, 0, 0);
	ASSERT_EQ(0, esa_switch_job_put(self->loaded, &j));
	ASSERT_EQ(0, load(&sw));
	EXPECT_EQ(-EEXIST, esa_switch_pin(sw, self->dir));
	esa_switch_close(sw);
	ASSERT_EQ(0, esa_switch_open_pinned(&p, self->dir));
	EXPECT_EQ(0, esa_switch_job_get(p, 4, &back));
	esa_switch_close(p);
}

/* Each pin a data plane cannot run without, missing: -ENOENT. */
TEST_F(pinned, open_needs_maps_and_programs)
{
	static const char *const needed[] = {
		"esa_egress", "esa_switch", "esa_mcast", "esa_aggs",
	};
	struct esa_switch *p = NULL;
	unsigned int i;

	for (i = 0; i < sizeof(needed) / sizeof(needed[0]); i++) {
		ASSERT_EQ(0, unpin_one(self->dir, needed[i]));
		EXPECT_EQ(-ENOENT, esa_switch_open_pinned(&p, self->dir)) {
			TH_LOG("without %s", needed[i]);
		}
		EXPECT_EQ(NULL, p);
	}
}

/*
 * Unpinning removes the data plane's pins and nothing else: a file of
 * someone else's keeps the directory (-ENOTEMPTY); a missing directory
 * is unpinned already.
 */
TEST_F(pinned, unpin_leaves_other_files)
{
	char path[PATH_MAX];
	int fd;

	pin_name(path, sizeof(path), self->dir, "not-ours");
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bpf_obj_pin(fd, path));
	close(fd);
	EXPECT_EQ(-ENOTEMPTY, esa_switch_unpin(self->dir));
	EXPECT_TRUE(exists(path));
	EXPECT_FALSE(pin_exists(self->dir, "esa_aggs"));
	EXPECT_FALSE(pin_exists(self->dir, "esa_switch"));
	EXPECT_EQ(0, unlink(path));
	EXPECT_EQ(0, esa_switch_unpin(self->dir));
	EXPECT_FALSE(exists(self->dir));
	EXPECT_EQ(0, esa_switch_unpin(self->dir));
}

/*
 * The module flavour's pins have no config, job or occupancy map: what
 * needs them is -EOPNOTSUPP, the rest works. A layout with a config map
 * but no job map is no module-less data plane either.
 */
TEST_F(pinned, module_layout_has_no_job_maps)
{
	struct esa_switch_config cfg = { .policy = ESA_POLICY_ESA,
					 .agg_slots = CAP };
	struct esa_rules_err e = {};
	struct esa_job_info j;
	__u64 cnt[__ESA_CNT_MAX];
	struct esa_switch *p;

	ASSERT_EQ(0, unpin_one(self->dir, "esa_jobs"));
	ASSERT_EQ(0, esa_switch_open_pinned(&p, self->dir));
	EXPECT_FALSE(esa_switch_has_job_maps(p));
	esa_switch_close(p);

	ASSERT_EQ(0, unpin_one(self->dir, "esa_config"));
	ASSERT_EQ(0, unpin_one(self->dir, "esa_occupancy"));
	ASSERT_EQ(0, esa_switch_open_pinned(&p, self->dir));
	EXPECT_FALSE(esa_switch_has_job_maps(p));
	dp_job(&j, 3, 2, 0, 0, 0);
	EXPECT_EQ(-EOPNOTSUPP, esa_switch_set_config(p, &cfg));
	EXPECT_EQ(-EOPNOTSUPP, esa_switch_get_config(p, &cfg));
	EXPECT_EQ(-EOPNOTSUPP, esa_switch_job_put(p, &j));
	EXPECT_EQ(-EOPNOTSUPP, esa_switch_job_get(p, 3, &j));
	EXPECT_EQ(-EOPNOTSUPP, esa_switch_job_del(p, 3));
	EXPECT_EQ(-EOPNOTSUPP, esa_switch_commit(p, &cfg, NULL, 0, &e));
	/* no occupancy to clear: the aggregators only */
	EXPECT_EQ(0, esa_switch_agg_clear(p, CAP));
	EXPECT_EQ(0, esa_switch_counters(p, 0, cnt));
	EXPECT_EQ(CAP, esa_switch_agg_capacity(p));
	esa_switch_close(p);
}

/*
 * Without the module its flavour cannot load (its kfuncs are the
 * module's): an error and no data plane.
 */
TEST(kmod_flavour_needs_the_module)
{
	struct esa_switch_opts o = { .flavour = ESA_FLAVOUR_KMOD,
				     .agg_capacity = CAP };
	struct esa_switch *sw = NULL;

	if (!access("/sys/module/esa", F_OK))
		SKIP(return, "the module is loaded");
	EXPECT_GT(0, esa_switch_load(&sw, &o));
	EXPECT_EQ(NULL, sw);
}

/* A job record whose occupancy cannot be reset is not written. */
TEST_F(pinned, job_put_needs_occupancy)
{
	struct esa_job_info j, back;
	struct esa_switch *p;
	int fd;

	fd = swap_pin(self->dir, "esa_occupancy", BPF_MAP_TYPE_ARRAY, 1);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, esa_switch_open_pinned(&p, self->dir));
	dp_job(&j, 3, 2, 0, 0, 0);
	EXPECT_EQ(-E2BIG, esa_switch_job_put(p, &j));
	EXPECT_EQ(-ENOENT, esa_switch_job_get(p, 3, &back));
	EXPECT_EQ(-E2BIG, esa_switch_agg_clear(p, CAP));
	esa_switch_close(p);
	close(fd);
}

/*
 * A config map the kernel refuses: set and get return its error, and a
 * commit says it could not read the config and writes nothing.
 */
TEST_F(pinned, config_map_refusing)
{
	struct esa_switch_config cfg = { .policy = ESA_POLICY_ESA,
					 .agg_slots = CAP }, other = {};
	struct esa_rules_err e = {};
	struct esa_job_info j, back;
	struct esa_switch *p;
	__u32 key = 7;
	int fd;

	/* a full hash of one entry, at key 7: key 0 neither is nor fits */
	fd = swap_pin(self->dir, "esa_config", BPF_MAP_TYPE_HASH, 1);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, bpf_map_update_elem(fd, &key, &other, 0));
	ASSERT_EQ(0, esa_switch_open_pinned(&p, self->dir));
	EXPECT_EQ(-E2BIG, esa_switch_set_config(p, &cfg));
	EXPECT_EQ(-ENOENT, esa_switch_get_config(p, &cfg));
	dp_job(&j, 3, 2, 0, 0, 0);
	EXPECT_EQ(-ENOENT, esa_switch_commit(p, &cfg, &j, 0, &e));
	EXPECT_STREQ("reading the switch config", e.msg);
	EXPECT_EQ(-ENOENT, esa_switch_job_get(p, 3, &back));
	esa_switch_close(p);
	close(fd);
}

/* Counters and aggregators in maps smaller than the data plane's. */
TEST_F(pinned, counter_and_agg_maps_refusing)
{
	__u64 cnt[__ESA_CNT_MAX];
	struct esa_switch *p;
	struct esa_agg a = {};
	int sfd, afd;
	__u32 key = 5;

	sfd = swap_pin(self->dir, "esa_stats", BPF_MAP_TYPE_PERCPU_ARRAY, 1);
	ASSERT_LE(0, sfd);
	/* a full hash of one aggregator, at slot 5 */
	afd = swap_pin(self->dir, "esa_aggs", BPF_MAP_TYPE_HASH, 1);
	ASSERT_LE(0, afd);
	ASSERT_EQ(0, bpf_map_update_elem(afd, &key, &a, 0));
	ASSERT_EQ(0, esa_switch_open_pinned(&p, self->dir));
	EXPECT_EQ(0, esa_switch_counters(p, 0, cnt));
	EXPECT_EQ(-ENOENT, esa_switch_counters(p, 5, cnt));
	EXPECT_EQ(-E2BIG, esa_switch_counters_reset(p));
	EXPECT_EQ(1, esa_switch_agg_capacity(p));
	EXPECT_EQ(-ENOENT, esa_switch_agg_read(p, 0, &a));
	EXPECT_EQ(-E2BIG, esa_switch_agg_clear(p, CAP));
	esa_switch_close(p);
	close(sfd);
	close(afd);
}

/* Out of range for every data plane: a job id past the counters. */
TEST_F(pinned, counters_of_no_job_refused)
{
	__u64 cnt[__ESA_CNT_MAX];

	EXPECT_EQ(-EINVAL, esa_switch_counters(self->loaded, ESA_STATS_ENTRIES,
					       cnt));
	EXPECT_EQ(0, esa_switch_counters(self->loaded, ESA_STATS_ENTRIES - 1,
					 cnt));
}

/*
 * A commit whose bindings do not fit (a binding table of 3 entries):
 * -E2BIG with the message that says what to do, and every job record and
 * the config as they were before it.
 */
TEST_F(pinned, commit_undone_when_bindings_fail)
{
	struct esa_switch_config cfg = { .policy = ESA_POLICY_ESA,
					 .agg_slots = CAP }, back_cfg;
	struct esa_switch_config cfg2 = cfg;
	struct esa_rules_err e = {};
	struct esa_job_info j, back;
	struct esa_switch *p;
	int fd;

	fd = swap_pin(self->dir, "esa_neigh", BPF_MAP_TYPE_HASH, 3);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, esa_switch_open_pinned(&p, self->dir));
	ASSERT_EQ(0, esa_switch_set_config(p, &cfg));
	dp_job(&j, 1, 2, 5, 0, 0);	/* its PS and 2 workers: 3 entries */
	ASSERT_EQ(0, esa_switch_commit(p, NULL, &j, 0, &e));

	/* a change of job 1 to 3 workers, with a config: all undone */
	dp_job(&j, 1, 3, 6, 0, 0);
	cfg2.agg_slots = CAP / 2;
	EXPECT_EQ(-E2BIG, esa_switch_commit(p, &cfg2, &j, 0, &e));
	EXPECT_STREQ("the member binding table (esa_neigh) is full: 4096 job member addresses are bound; delete a job, or let jobs share member addresses",
		     e.msg);
	ASSERT_EQ(0, esa_switch_job_get(p, 1, &back));
	EXPECT_EQ(2, back.fan_in);
	EXPECT_EQ(5, back.priority);
	ASSERT_EQ(0, esa_switch_get_config(p, &back_cfg));
	EXPECT_EQ(CAP, back_cfg.agg_slots);

	/* a new job 2: undone, so gone again */
	dp_job(&j, 2, 1, 0, 0, 0);
	EXPECT_EQ(-E2BIG, esa_switch_commit(p, NULL, &j, 0, &e));
	EXPECT_EQ(-ENOENT, esa_switch_job_get(p, 2, &back));
	esa_switch_close(p);
	close(fd);
}

/*
 * A binding table the kernel cannot delete from (an array): the write
 * fails with its error and the message names the table.
 */
TEST_F(pinned, bindings_write_refused)
{
	struct esa_rules_err e = {};
	struct esa_job_info j;
	struct esa_switch *p;
	int fd;

	fd = swap_pin(self->dir, "esa_neigh", BPF_MAP_TYPE_ARRAY, 1);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, esa_switch_open_pinned(&p, self->dir));
	dp_job(&j, 1, 2, 0, 0, 0);
	EXPECT_EQ(-EINVAL, esa_switch_bind_jobs(p, &j, 1, &e));
	EXPECT_STREQ("writing the member binding table (esa_neigh)", e.msg);
	EXPECT_EQ(ESA_RULES_F_NONE, e.field);
	esa_switch_close(p);
	close(fd);
}

/*
 * The learning generation must be mappable: when it is not, the bindings
 * are written but the memos cannot be voided, and that is an error.
 */
TEST_F(pinned, learn_gen_not_mappable)
{
	struct esa_rules_err e = {};
	struct esa_job_info j;
	struct esa_switch *p;
	int fd;

	fd = swap_pin(self->dir, "esa_learn_gen", BPF_MAP_TYPE_ARRAY, 1);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, esa_switch_open_pinned(&p, self->dir));
	EXPECT_GT(0, esa_switch_learned_changed(p));
	dp_job(&j, 1, 2, 0, 0, 0);
	EXPECT_EQ(esa_switch_learned_changed(p),
		  esa_switch_bind_jobs(p, &j, 1, &e));
	esa_switch_close(p);
	close(fd);
}

/*
 * What a commit refuses before writing anything: a job to delete that is
 * not there, more slots than the array has, two members of one address
 * on two ports; the same check without a switch, with or without @err.
 */
TEST_F(pinned, commit_refusals)
{
	struct esa_switch_config cfg = { .policy = ESA_POLICY_ESA,
					 .agg_slots = CAP + 1 };
	struct esa_rules_err e = {};
	struct esa_job_info jobs[2], back;

	EXPECT_EQ(-ENOENT, esa_switch_commit(self->loaded, NULL, NULL, 9, &e));
	EXPECT_STREQ("no such job", e.msg);
	EXPECT_EQ(ESA_RULES_F_JOB_ID, e.field);
	EXPECT_EQ(-ENOENT, esa_switch_commit(self->loaded, NULL, NULL, 9, NULL));
	EXPECT_EQ(-ERANGE, esa_switch_commit(self->loaded, &cfg, NULL, 0, &e));
	EXPECT_STREQ("slots above the aggregator array's capacity (switch attach capacity)",
		     e.msg);
	EXPECT_EQ(ESA_RULES_F_AGG_SLOTS, e.field);

	/* job 2's worker 1 has job 1's worker 0's address, on another port */
	dp_job(&jobs[0], 1, 2, 0, 0, 0);
	jobs[0].worker_ifindex[0] = 3;
	ASSERT_EQ(0, esa_switch_commit(self->loaded, NULL, &jobs[0], 0, &e));
	dp_job(&jobs[1], 2, 2, 0, 0, 0);
	jobs[1].worker_addr[1] = jobs[0].worker_addr[0];
	jobs[1].worker_ifindex[1] = 4;
	EXPECT_EQ(-EADDRINUSE, esa_switch_commit(self->loaded, NULL, &jobs[1],
						 0, &e));
	EXPECT_EQ(ESA_RULES_F_WORKER_ADDR, e.field);
	EXPECT_EQ(1, e.index);
	EXPECT_EQ(-ENOENT, esa_switch_job_get(self->loaded, 2, &back));
	EXPECT_EQ(-EADDRINUSE, esa_switch_bind_check(jobs, 2, NULL));
	/* on the same port, or one of them at first sight: one binding */
	jobs[1].worker_ifindex[1] = 3;
	EXPECT_EQ(0, esa_switch_bind_check(jobs, 2, NULL));
	jobs[1].worker_ifindex[1] = 0;
	EXPECT_EQ(0, esa_switch_bind_check(jobs, 2, &e));
}

/*
 * Maps the syscall side may only read (frozen): a commit fails at
 * the write the kernel refuses and puts back the ones before it, in
 * either order of writes (static writes the jobs first, the others the
 * config first).
 */
TEST_F(pinned, commit_undone_when_writes_fail)
{
	struct esa_switch_config cfg = { .policy = ESA_POLICY_STATIC,
					 .agg_slots = CAP }, back_cfg;
	struct esa_rules_err e = {};
	struct esa_job_info j, back;
	char path[PATH_MAX];
	struct esa_switch *p;
	int fd;

	/* static: job 3 is written, then the config is refused */
	fd = swap_pin_frozen(self->dir, "esa_config", BPF_MAP_TYPE_ARRAY, 1,
			     true);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, esa_switch_open_pinned(&p, self->dir));
	EXPECT_EQ(-EPERM, esa_switch_set_config(p, &cfg));
	dp_job(&j, 3, 2, 0, 0, 0);
	EXPECT_EQ(-EPERM, esa_switch_commit(p, &cfg, &j, 0, &e));
	EXPECT_STREQ("writing the data plane's maps", e.msg);
	EXPECT_EQ(-ENOENT, esa_switch_job_get(p, 3, &back));
	esa_switch_close(p);
	close(fd);

	/* esa: the config is written, then job 3 is refused */
	ASSERT_EQ(0, unpin_one(self->dir, "esa_config"));
	pin_name(path, sizeof(path), self->dir, "esa_config");
	ASSERT_EQ(0, bpf_obj_pin(esa_switch_map_fd(self->loaded, "esa_config"),
				 path));
	fd = swap_pin_frozen(self->dir, "esa_jobs", BPF_MAP_TYPE_ARRAY,
			     ESA_MAX_JOB_ID + 1, true);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, esa_switch_open_pinned(&p, self->dir));
	EXPECT_EQ(-EPERM, esa_switch_job_put(p, &j));
	cfg.policy = ESA_POLICY_ESA;
	cfg.agg_slots = CAP / 2;
	EXPECT_EQ(-EPERM, esa_switch_commit(p, &cfg, &j, 0, &e));
	EXPECT_STREQ("writing the data plane's maps", e.msg);
	ASSERT_EQ(0, esa_switch_get_config(p, &back_cfg));
	EXPECT_EQ(CAP, back_cfg.agg_slots);
	esa_switch_close(p);
	close(fd);
}

/*
 * A new job takes the next incarnation of its id, and never 0 (0 would
 * match an aggregator nobody ever claimed): past 2^32 - 1 it is 1.
 */
TEST_F(pinned, incarnation_wraps_past_zero)
{
	struct esa_job_info j, back, none = { .incarnation = UINT32_MAX };
	int fd = esa_switch_map_fd(self->loaded, "esa_jobs");
	__u32 key = 3;

	ASSERT_EQ(0, bpf_map_update_elem(fd, &key, &none, 0));
	dp_job(&j, 3, 2, 0, 0, 0);
	ASSERT_EQ(0, esa_switch_job_put(self->loaded, &j));
	ASSERT_EQ(0, esa_switch_job_get(self->loaded, 3, &back));
	EXPECT_EQ(1, back.incarnation);
	ASSERT_EQ(0, esa_switch_job_del(self->loaded, 3));
	ASSERT_EQ(0, esa_switch_job_put(self->loaded, &j));
	ASSERT_EQ(0, esa_switch_job_get(self->loaded, 3, &back));
	EXPECT_EQ(2, back.incarnation);
}

/*
 * Every allocation the loader makes can fail: -ENOMEM, no data plane
 * made, and a commit that fails after writing puts back what it wrote.
 */
TEST_F(pinned, out_of_memory)
{
	struct esa_switch_config cfg = { .policy = ESA_POLICY_ESA,
					 .agg_slots = CAP };
	__u32 per_job[ESA_MAX_JOB_ID + 1];
	struct esa_switch *sw = NULL;
	struct esa_rules_err e = {};
	struct esa_job_info j, back;
	__u64 cnt[__ESA_CNT_MAX];

	fail_calloc(0);
	EXPECT_EQ(-ENOMEM, load(&sw));
	EXPECT_EQ(NULL, sw);
	fail_calloc(0);
	EXPECT_EQ(-ENOMEM, esa_switch_open_pinned(&sw, self->dir));
	EXPECT_EQ(NULL, sw);
	fail_calloc(0);
	EXPECT_EQ(-ENOMEM, esa_switch_counters(self->loaded, 0, cnt));
	fail_calloc(0);
	EXPECT_EQ(-ENOMEM, esa_switch_counters_reset(self->loaded));
	fail_calloc(0);
	EXPECT_EQ(-ENOMEM, esa_switch_agg_owners(self->loaded, CAP, per_job));
	dp_job(&j, 1, 2, 0, 0, 0);
	fail_calloc(0);
	EXPECT_EQ(-ENOMEM, esa_switch_bind_jobs(self->loaded, &j, 1, &e));
	fail_calloc(0);
	EXPECT_EQ(-ENOMEM, esa_switch_bind_check(&j, 1, &e));
	fail_calloc(0);
	EXPECT_EQ(-ENOMEM, esa_switch_commit(self->loaded, &cfg, &j, 0, &e));
	/* the plan is made, the jobs are written, the bindings fail */
	fail_calloc(1);
	EXPECT_EQ(-ENOMEM, esa_switch_commit(self->loaded, &cfg, &j, 0, &e));
	EXPECT_EQ(-ENOENT, esa_switch_job_get(self->loaded, 1, &back));
	fail_calloc(-1);
	EXPECT_EQ(0, esa_switch_commit(self->loaded, &cfg, &j, 0, &e));
	EXPECT_EQ(0, esa_switch_job_get(self->loaded, 1, &back));
}

/*
 * Held aggregators are counted by their owner's id; one whose id is out
 * of range (a map written by something else) is not counted, and never
 * outside @per_job. Slots past the array are no slots.
 */
TEST_F(pinned, agg_owners_bounds)
{
	struct {
		__u32 per_job[ESA_MAX_JOB_ID + 1];
		__u32 after;	/* a count past the end would land here */
	} c = { .after = 0 };
	int fd = esa_switch_map_fd(self->loaded, "esa_aggs");
	struct esa_agg a = { .state = ESA_AGG_PARTIAL };
	__u32 k, sum = 0;

	a.job_id = ESA_MAX_JOB_ID + 1;
	k = 0;
	ASSERT_EQ(0, bpf_map_update_elem(fd, &k, &a, 0));
	a.job_id = 0;
	k = 1;
	ASSERT_EQ(0, bpf_map_update_elem(fd, &k, &a, 0));
	a.job_id = 7;
	k = CAP - 1;
	ASSERT_EQ(0, bpf_map_update_elem(fd, &k, &a, 0));
	ASSERT_EQ(0, esa_switch_agg_owners(self->loaded, 1 << 20, c.per_job));
	EXPECT_EQ(1, c.per_job[7]);
	for (k = 0; k <= ESA_MAX_JOB_ID; k++)
		sum += c.per_job[k];
	EXPECT_EQ(1, sum);
	EXPECT_EQ(0, c.after);
}

/*
 * Ports, in a network namespace of the test's own (its lo): a port that
 * does not exist is refused by the devmap and left out of it (and has
 * nothing to detach); a port running
 * another data plane's program is not detached (-EEXIST) and keeps it; a
 * program attached in generic (skb) mode is detached in that mode.
 */
TEST(ports_of_others)
{
	struct esa_switch *a, *b;
	__u32 id_a = 0, id = 0, key;
	struct bpf_devmap_val v;
	int lo;

	if (unshare(CLONE_NEWNET))
		SKIP(return, "no network namespace: %s", strerror(errno));
	lo = 1;
	ASSERT_EQ(0, load(&a));
	ASSERT_EQ(0, load(&b));

	EXPECT_EQ(-EINVAL, esa_switch_attach_port(a, 99, 0));
	key = 99;
	EXPECT_NE(0, bpf_map_lookup_elem(esa_switch_map_fd(a, "esa_mcast"),
					 &key, &v));
	EXPECT_EQ(0, esa_switch_detach_port(a, 99));	/* nothing to detach */

	ASSERT_EQ(0, esa_switch_attach_port(a, lo, XDP_FLAGS_SKB_MODE));
	ASSERT_EQ(0, bpf_xdp_query_id(lo, XDP_FLAGS_SKB_MODE, &id_a));
	EXPECT_NE(0, id_a);
	EXPECT_EQ(-EEXIST, esa_switch_detach_port(b, lo));
	EXPECT_EQ(0, bpf_xdp_query_id(lo, XDP_FLAGS_SKB_MODE, &id));
	EXPECT_EQ(id_a, id);
	EXPECT_EQ(0, esa_switch_detach_port(a, lo));
	EXPECT_EQ(0, bpf_xdp_query_id(lo, XDP_FLAGS_SKB_MODE, &id));
	EXPECT_EQ(0, id);
	key = lo;
	EXPECT_NE(0, bpf_map_lookup_elem(esa_switch_map_fd(a, "esa_mcast"),
					 &key, &v));
	/* nothing attached: only out of the devmap */
	EXPECT_EQ(0, esa_switch_detach_port(b, lo));
	esa_switch_close(a);
	esa_switch_close(b);
}

TEST_HARNESS_MAIN
