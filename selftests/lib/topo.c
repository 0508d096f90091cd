// SPDX-License-Identifier: GPL-2.0
/* The C tests' way to topo.sh (selftests/lib/topo.h). */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "topo.h"

#ifndef TOPO_SH
#error "TOPO_SH: the path of selftests/lib/topo.sh (the Makefile defines it)"
#endif

int topo_veth_add(const char *a, const char *b)
{
	pid_t pid;
	int status;

	fflush(NULL);	/* the child must not write the parent's buffers again */
	pid = fork();
	if (pid < 0) {
		perror("topo_veth_add: fork");
		return -1;
	}
	if (pid == 0) {
		execl(TOPO_SH, "topo.sh", "veth_add", "root", a, "root", b, (char *)NULL);
		perror("topo_veth_add: exec " TOPO_SH);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("topo_veth_add: waitpid");
		return -1;
	}
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}
