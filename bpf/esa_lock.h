/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The aggregator's lock (struct esa_agg.lock), taken with BPF atomics in
 * the program itself rather than with bpf_spin_lock(): on hosts with
 * return-thunk mitigations (SRSO on AMD) every helper call costs a
 * mispredicted return, and bpf_spin_lock()/bpf_spin_unlock() are two
 * calls that also save and restore interrupts. The aggregator's step is
 * the only code that holds it (Documentation/dataplane.rst,
 * "Concurrency").
 *
 * Why a spin of our own is safe here: XDP runs in softirq (NAPI) context
 * with preemption off, and it does not nest with itself on one CPU, so a
 * holder is another CPU's program inside a critical section bounded by
 * ESA_MAX_VALUES (no helper, kfunc or call inside, esa_agg.h). Yet the
 * wait must be bounded, for the verifier (every loop is) and because a
 * holder can stall: a generic-XDP program preempted on a PREEMPT_RT
 * kernel, BPF_PROG_TEST_RUN interrupted by a softirq that runs the same
 * program on the same CPU, a vCPU descheduled by its host. When the wait
 * below runs out the frame is dropped and counted ESA_CNT_DROP_BUSY;
 * endpoints recover it as any loss, by their resend.
 *
 * Memory order: the acquire is a BPF_CMPXCHG and the release a BPF_XCHG,
 * both fully ordered on every JIT (x86: lock cmpxchg, xchg; arm64:
 * casal/swpal or an LL/SC loop between barriers). A plain store would
 * not be a release on arm64, and 6.1 has no store-release instruction.
 * The compiler barriers keep clang from moving the step's loads and
 * stores across either. Needs -mcpu=v3 (atomics with a result) and
 * Linux 5.12 (BPF_CMPXCHG, BPF_XCHG); the wait, 5.17 (bpf_loop()).
 */
#ifndef _ESA_LOCK_H
#define _ESA_LOCK_H

#include "esa_maps.bpf.h"

/*
 * How long a frame waits for a held lock: ESA_LOCK_WAIT_NS by the clock
 * (ESA_LOCK_TRIES only bounds the loop for the verifier: each try reads
 * the clock, a helper call of tens of ns, so the tries outlast the wait).
 * A holder's step is under a microsecond at ESA_MAX_VALUES values, and
 * the workers of one sequence, arriving on different CPUs, meet on the
 * same aggregator, so the wait covers hundreds of holders in a row; what
 * outlasts it is a holder that stopped running (a vCPU descheduled by its
 * host: in the TCG VM a 50 us wait dropped 0.3 % of test_hammer's frames).
 */
#define ESA_LOCK_WAIT_NS	1000000
#define ESA_LOCK_TRIES		(1 << 20)

#define esa_barrier()	asm volatile("" ::: "memory")

static __always_inline int esa_agg_trylock(struct esa_agg *a)
{
	if (__sync_val_compare_and_swap(&a->lock, 0, 1) != 0)
		return 0;
	esa_barrier();
	return 1;
}

struct esa_lock_wait {
	struct esa_agg	*a;
	__u64		start;
	int		taken;
};

/* One try of the wait (a bpf_loop() callback): 1 ends the wait. */
static long esa_lock_try(__u32 i, void *data)
{
	struct esa_lock_wait *w = data;
	struct esa_agg *a = w->a;

	/* waiters only read the word until it looks free */
	if (!*(volatile __u32 *)&a->lock && esa_agg_trylock(a)) {
		w->taken = 1;
		return 1;
	}
	return bpf_ktime_get_ns() - w->start > ESA_LOCK_WAIT_NS;
}

/*
 * The wait for a held lock: 1 once taken, 0 when it stayed held. A global
 * function around bpf_loop(), so the verifier walks one try once, not
 * every try once per state the callers reach it in (inlined, each try
 * cost about 450 processed instructions). Reached only when the first
 * try failed, so its calls cost nothing when nobody else holds the lock.
 */
__attribute__((noinline)) int esa_agg_lock_wait(struct esa_agg *a)
{
	struct esa_lock_wait w = {};

	if (!a)		/* a global function's pointer may be NULL */
		return 0;
	w.a = a;
	w.start = bpf_ktime_get_ns();
	bpf_loop(ESA_LOCK_TRIES, esa_lock_try, &w, 0);
	return w.taken;
}

/* Take @a's lock: 1, or 0 when it stayed held through the wait. */
static __always_inline int esa_agg_lock(struct esa_agg *a)
{
	return esa_agg_trylock(a) || esa_agg_lock_wait(a);
}

static __always_inline void esa_agg_unlock(struct esa_agg *a)
{
	esa_barrier();
	__atomic_exchange_n(&a->lock, 0, __ATOMIC_SEQ_CST);
}

#endif /* _ESA_LOCK_H */
