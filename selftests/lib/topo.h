/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The topology library (selftests/lib/topo.sh) for the C tests: one
 * definition of how a test veth is made, whichever language asks.
 */
#ifndef _TOPO_H
#define _TOPO_H

/*
 * topo_veth_add() - a veth pair @a - @b in the caller's network namespace,
 * both up, made by `topo.sh veth_add root @a root @b`. It stays after the
 * call: the caller deletes it, or runs in a namespace of its own
 * (unshare(CLONE_NEWNET)) that takes it along when the test ends.
 * Return: 0, or -1 (topo.sh said why on stderr).
 */
int topo_veth_add(const char *a, const char *b);

#endif
