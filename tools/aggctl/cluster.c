// SPDX-License-Identifier: GPL-2.0
/*
 * aggctl cluster file FILE [timeout SECONDS] job { add ARGS | del id ID }:
 * one job on every switch server named in a cluster file.
 *
 * Each server is reached by running aggctl there: on this host for
 * "local", through ssh otherwise, so that each server's own aggctl talks
 * to its own module (generic netlink) or module-less data plane, and ESA
 * itself opens nothing on the network. The job goes to that aggctl as one
 * -batch line on its standard input, so no word of it passes through a
 * remote shell. ssh runs with BatchMode (keys or agent only, never a
 * prompt) and ConnectTimeout, so a server that is down fails within the
 * timeout.
 *
 * job add is all or nothing: the servers are done in file order, and the
 * first that fails stops the command; the job is deleted again on those
 * already done (rollback). job del deletes the job on every server and
 * reports each. See aggctl(8), CLUSTER.
 */
#define _GNU_SOURCE	/* close_range() */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "aggctl.h"
#include "esa_dp.h"
#include "output.h"

#define CLUSTER_MAX_SERVERS	16	/* a job spans 1..16 switch servers */
#define CLUSTER_NAME_MAX	32
#define CLUSTER_DEST_MAX	256
#define CLUSTER_LINE_MAX	16384	/* one job as a -batch line */
#define CLUSTER_OUT_MAX		4096	/* a server's reply kept for the report */
#define CLUSTER_TIMEOUT_DEF	5	/* seconds, ssh ConnectTimeout */
#define CLUSTER_TIMEOUT_MAX	300
#define CLUSTER_LOCAL		"local"

struct cluster_server {
	char name[CLUSTER_NAME_MAX];
	char dest[CLUSTER_DEST_MAX];	/* ssh destination, or "local" */
	char pin_dir[PATH_MAX];		/* empty: the server's default */
};

struct cluster {
	struct cluster_server srv[CLUSTER_MAX_SERVERS];
	unsigned int n;
	uint32_t timeout_s;
	char self[PATH_MAX];		/* this aggctl, for "local" servers */
};

/* What one server answered: its aggctl's (or ssh's) status and output. */
struct server_reply {
	int status;			/* exit status; -1 if it did not run */
	char out[CLUSTER_OUT_MAX];	/* first line of its output */
};

static int cluster_usage(FILE *f)
{
	fputs("usage: aggctl cluster file FILE [timeout SECONDS] job add ARGS\n"
	      "       aggctl cluster file FILE [timeout SECONDS] job del id ID\n"
	      "  FILE: one server a line, NAME { local | SSH-DESTINATION } [PINDIR]\n"
	      "  ARGS: as for aggctl job add; timeout: ssh ConnectTimeout (default 5)\n", f);
	return f == stdout ? EXIT_OK : EXIT_USAGE;
}

/*
 * Words that go unquoted into a remote shell command (the pin directory
 * after "aggctl -d"): nothing the shell would expand or split.
 */
static bool shell_safe(const char *s)
{
	return *s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				"0123456789/._-+=:,@") == strlen(s);
}

/* A server's name in reports: letters, digits, '.', '_', '-'. */
static bool name_ok(const char *s)
{
	return *s && strlen(s) < CLUSTER_NAME_MAX &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789._-") == strlen(s);
}

static int file_error(const char *where, const char *fmt, const char *word)
{
	fprintf(stderr, "aggctl: cluster: %s: ", where);
	fprintf(stderr, fmt, word);
	fputc('\n', stderr);
	return EXIT_USAGE;
}

/* One line of the cluster file, "NAME DEST [PINDIR]", into @s. */
static int server_parse(struct cluster *cl, char *line, const char *where)
{
	struct cluster_server *s = &cl->srv[cl->n];
	char *word[4], *save = NULL;
	unsigned int n = 0, i;

	for (char *w = strtok_r(line, " \t\r\n", &save); w && *w != '#';
	     w = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == 3)
			return file_error(where, "\"%s\": a server line is NAME DEST [PINDIR]", w);
		word[n++] = w;
	}
	if (n == 0)
		return EXIT_OK;
	if (n < 2)
		return file_error(where, "server \"%s\" has no destination (local or an ssh destination)",
				  word[0]);
	if (cl->n == CLUSTER_MAX_SERVERS)
		return file_error(where, "more servers than %s", "16, the most a job spans");
	if (!name_ok(word[0]))
		return file_error(where, "bad server name \"%s\" (letters, digits, . _ - up to 31)",
				  word[0]);
	/* ssh would take a destination starting with '-' as an option. */
	if (word[1][0] == '-' || strlen(word[1]) >= sizeof(s->dest))
		return file_error(where, "bad destination \"%s\"", word[1]);
	if (n == 3 && (strlen(word[2]) >= sizeof(s->pin_dir) || !shell_safe(word[2])))
		return file_error(where, "bad pin directory \"%s\" (a path without blanks or shell characters)",
				  word[2]);
	for (i = 0; i < cl->n; i++)
		if (!strcmp(cl->srv[i].name, word[0]))
			return file_error(where, "server \"%s\" named twice", word[0]);
	strcpy(s->name, word[0]);
	strcpy(s->dest, word[1]);
	strcpy(s->pin_dir, n == 3 ? word[2] : "");
	cl->n++;
	return EXIT_OK;
}

static int cluster_load(struct cluster *cl, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, where[PATH_MAX + 16];
	size_t cap = 0;
	unsigned int lineno = 0;
	int ret = EXIT_OK;

	if (!f) {
		fprintf(stderr, "aggctl: cluster: %s: %s\n", path, strerror(errno));
		return EXIT_USAGE;
	}
	while (!ret && getline(&line, &cap, f) >= 0) {
		snprintf(where, sizeof(where), "%s:%u", path, ++lineno);
		ret = server_parse(cl, line, where);
	}
	free(line);
	fclose(f);
	if (!ret && cl->n == 0) {
		fprintf(stderr, "aggctl: cluster: %s names no server\n", path);
		ret = EXIT_USAGE;
	}
	return ret;
}

/*
 * The command that runs aggctl on @s, reading one -batch line from its
 * standard input, into @argv (NULL-terminated).
 */
static void server_argv(const struct cluster *cl, const struct cluster_server *s,
			char **argv, char *remote, size_t remote_len,
			char *opts, size_t opts_len)
{
	unsigned int n = 0;

	if (!strcmp(s->dest, CLUSTER_LOCAL)) {
		argv[n++] = (char *)cl->self;
		if (s->pin_dir[0]) {
			argv[n++] = "-d";
			argv[n++] = (char *)s->pin_dir;
		}
		argv[n++] = "-batch";
		argv[n++] = "-";
		argv[n] = NULL;
		return;
	}
	/*
	 * ServerAlive bounds a server that stops answering after the
	 * connection is up as ConnectTimeout bounds the connection itself.
	 */
	snprintf(opts, opts_len, "ConnectTimeout=%u", cl->timeout_s);
	snprintf(remote, remote_len, "aggctl%s%s -batch -",
		 s->pin_dir[0] ? " -d " : "", s->pin_dir);
	argv[n++] = "ssh";
	argv[n++] = "-T";
	argv[n++] = "-o";
	argv[n++] = "BatchMode=yes";
	argv[n++] = "-o";
	argv[n++] = opts;
	argv[n++] = "-o";
	argv[n++] = "ServerAliveInterval=5";
	argv[n++] = "-o";
	argv[n++] = "ServerAliveCountMax=2";
	argv[n++] = "-o";
	argv[n++] = "LogLevel=ERROR";
	argv[n++] = "--";
	argv[n++] = (char *)s->dest;
	argv[n++] = remote;
	argv[n] = NULL;
}

/*
 * Keep the first non-empty line of @buf: the cause (what follows is
 * batch's summary). ssh ends its lines with "\r\n".
 */
static void first_line(char *buf)
{
	char *p = buf + strspn(buf, "\r\n");

	memmove(buf, p, strlen(p) + 1);
	buf[strcspn(buf, "\r\n")] = '\0';
}

/* Run @line (a -batch line) on @s: its status and first line of output. */
static void server_run(const struct cluster *cl, const struct cluster_server *s,
		       const char *line, struct server_reply *r)
{
	char *argv[20], remote[PATH_MAX + 32], opts[64];
	int in[2], out[2], wstatus;
	size_t len = 0;
	ssize_t got;
	pid_t pid;

	r->status = -1;
	r->out[0] = '\0';
	server_argv(cl, s, argv, remote, sizeof(remote), opts, sizeof(opts));
	if (pipe(in) || pipe(out)) {
		snprintf(r->out, sizeof(r->out), "pipe: %s", strerror(errno));
		return;
	}
	fflush(NULL);	/* the reports so far before the child's own output */
	pid = fork();
	if (pid < 0) {
		snprintf(r->out, sizeof(r->out), "fork: %s", strerror(errno));
		close(in[0]);
		close(in[1]);
		close(out[0]);
		close(out[1]);
		return;
	}
	if (pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		dup2(out[1], STDERR_FILENO);
		/* Not the pipes' other ends, nor aggctl's netlink socket. */
		close_range(STDERR_FILENO + 1, ~0U, 0);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	/*
	 * One line, far below a pipe's buffer: written whole before the
	 * reply is read. A child that is gone already makes it EPIPE
	 * (SIGPIPE is ignored), and its output says why.
	 */
	if (write(in[1], line, strlen(line)) < 0 && errno != EPIPE)
		snprintf(r->out, sizeof(r->out), "write: %s", strerror(errno));
	close(in[1]);
	while ((got = read(out[0], r->out + len, sizeof(r->out) - 1 - len)) > 0 ||
	       (got < 0 && errno == EINTR)) {
		if (got > 0)
			len += got;
		if (len == sizeof(r->out) - 1) {
			char sink[512];

			while (read(out[0], sink, sizeof(sink)) > 0)
				;
			break;
		}
	}
	r->out[len] = '\0';
	close(out[0]);
	while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR)
		;
	r->status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
	first_line(r->out);
}

/* Why @s failed, for the report: its own words, or its exit status. */
static void report_failure(const struct cluster_server *s, const char *what,
			   const struct server_reply *r)
{
	fprintf(stderr, "aggctl: cluster: server %s (%s): %s failed: %s",
		s->name, s->dest, what, r->out[0] ? r->out : "no output");
	/* ssh's own failures (unreachable, refused, no key) exit 255. */
	if (r->status == 255 && strcmp(s->dest, CLUSTER_LOCAL))
		fprintf(stderr, " (ssh exit 255: server unreachable or login refused)");
	else
		fprintf(stderr, " (exit %d)", r->status);
	fputc('\n', stderr);
}

/*
 * Server @idx of @cl is done with job @id: its name, the result, and the
 * share of the job it holds, shard @idx of cl->n (include/esa_shard.h:
 * the job's global aggregator indices g with g mod S = idx), so that the
 * operator can give the endpoints the servers in that order.
 */
static void report_done(const struct cluster *cl, unsigned int idx, uint32_t id,
			const char *result)
{
	out_open_object(NULL);
	out_str("server", NULL, cl->srv[idx].name);
	out_u64("job", NULL, id);
	out_str("result", "", result);
	out_u64("shard", NULL, idx);
	out_u64("shards", "of", cl->n);
	out_close_object();
	out_nl();
}

/*
 * Append @words to @line as one -batch line: each word in double quotes,
 * so blanks and '#' in a word stay in it.
 */
static int line_add_words(char *line, size_t cap, int argc, char **argv)
{
	size_t len = strlen(line);
	int i, n;

	for (i = 0; i < argc; i++) {
		if (strpbrk(argv[i], "\"\n\r")) {
			fprintf(stderr, "aggctl: cluster: a word with a double quote or a line break cannot be sent: \"%s\"\n",
				argv[i]);
			return EXIT_USAGE;
		}
		n = snprintf(line + len, cap - len, "%s\"%s\"", len ? " " : "", argv[i]);
		if (n < 0 || (size_t)n >= cap - len) {
			fprintf(stderr, "aggctl: cluster: the job is longer than %d characters\n",
				CLUSTER_LINE_MAX);
			return EXIT_USAGE;
		}
		len += n;
	}
	return EXIT_OK;
}

/*
 * The job add line for server @idx of @cl. Every server gets the whole
 * job today; a rule that splits the aggregator index space between the
 * servers gives each its slice here, from @idx and cl->n.
 */
static int server_job_add_line(const struct cluster *cl, unsigned int idx,
			       int argc, char **argv, char *line, size_t cap)
{
	char *add[] = { "job", "add" };
	int ret;

	(void)cl;
	(void)idx;
	line[0] = '\0';
	ret = line_add_words(line, cap, 2, add);
	return ret ? ret : line_add_words(line, cap, argc, argv);
}

static void job_del_line(uint32_t id, char *line, size_t cap)
{
	snprintf(line, cap, "job del id %u\n", id);
}

/* The job id in job add / del ARGS ("id ID"), or EXIT_USAGE. */
static int args_job_id(int argc, char **argv, uint32_t *id)
{
	int i;

	for (i = 0; i + 1 < argc; i++)
		if (!strcmp(argv[i], "id"))
			return arg_job_id(argv[i + 1], id);
	fprintf(stderr, "aggctl: cluster: the job needs \"id ID\"\n");
	return EXIT_USAGE;
}

/* Delete job @id on the first @n servers, last first; EXIT_OK if all went. */
static int rollback(const struct cluster *cl, unsigned int n, uint32_t id)
{
	struct server_reply r;
	char line[64];
	int ret = EXIT_OK;

	job_del_line(id, line, sizeof(line));
	while (n-- > 0) {
		server_run(cl, &cl->srv[n], line, &r);
		if (r.status == 0) {
			report_done(cl, n, id, "rolled-back");
			continue;
		}
		report_failure(&cl->srv[n], "rollback (job del)", &r);
		fprintf(stderr, "aggctl: cluster: job %u is left on server %s\n",
			id, cl->srv[n].name);
		ret = EXIT_FAIL;
	}
	return ret;
}

static int cluster_job_add(const struct cluster *cl, int argc, char **argv)
{
	static char line[CLUSTER_LINE_MAX];
	struct server_reply r;
	unsigned int i;
	uint32_t id;
	int ret;

	ret = args_job_id(argc, argv, &id);
	if (ret)
		return ret;
	for (i = 0; i < cl->n; i++) {
		ret = server_job_add_line(cl, i, argc, argv, line, sizeof(line) - 1);
		if (ret)
			return ret;
		strcat(line, "\n");
		server_run(cl, &cl->srv[i], line, &r);
		if (r.status != 0) {
			report_failure(&cl->srv[i], "job add", &r);
			rollback(cl, i, id);
			fprintf(stderr, "aggctl: cluster: job %u is on no server\n", id);
			return EXIT_FAIL;
		}
		report_done(cl, i, id, "added");
	}
	return EXIT_OK;
}

/* job del on every server, each reported; EXIT_FAIL if any failed. */
static int cluster_job_del(const struct cluster *cl, int argc, char **argv)
{
	struct server_reply r;
	char line[64];
	unsigned int i;
	uint32_t id;
	int ret, status = EXIT_OK;

	if (argc != 2 || strcmp(argv[0], "id")) {
		fprintf(stderr, "aggctl: cluster: job del takes only \"id ID\"\n");
		return EXIT_USAGE;
	}
	ret = args_job_id(argc, argv, &id);
	if (ret)
		return ret;
	job_del_line(id, line, sizeof(line));
	for (i = 0; i < cl->n; i++) {
		server_run(cl, &cl->srv[i], line, &r);
		if (r.status == 0) {
			report_done(cl, i, id, "deleted");
		} else {
			report_failure(&cl->srv[i], "job del", &r);
			status = EXIT_FAIL;
		}
	}
	return status;
}

static int cluster_job(const struct cluster *cl, int argc, char **argv)
{
	int ret;

	if (argc < 1)
		return cluster_usage(stderr);
	out_open_array(NULL);
	if (!strcmp(*argv, "add"))
		ret = cluster_job_add(cl, argc - 1, argv + 1);
	else if (!strcmp(*argv, "del") || !strcmp(*argv, "delete"))
		ret = cluster_job_del(cl, argc - 1, argv + 1);
	else
		ret = usage_unknown("cluster job", *argv);
	out_close_array();
	out_finish();
	return ret;
}

int do_cluster(struct ctx *c, int argc, char **argv)
{
	static struct cluster cl;
	const char *file = NULL;
	ssize_t n;
	int ret;

	/* Each server's pin directory is its line's; one -d cannot say which. */
	if (strcmp(c->pin_dir, ESA_PIN_DIR_DEFAULT)) {
		fprintf(stderr, "aggctl: cluster: -d %s does not apply; give each server's pin directory in the cluster file\n",
			c->pin_dir);
		return EXIT_USAGE;
	}
	memset(&cl, 0, sizeof(cl));
	cl.timeout_s = CLUSTER_TIMEOUT_DEF;
	if (argc < 1 || matches(*argv, "help"))
		return cluster_usage(argc < 1 ? stderr : stdout);
	while (argc > 0 && strcmp(*argv, "job")) {
		if (!strcmp(*argv, "file")) {
			NEXT_ARG();
			file = *argv;
		} else if (!strcmp(*argv, "timeout")) {
			NEXT_ARG();
			ret = arg_u32("timeout (s)", *argv, 1, CLUSTER_TIMEOUT_MAX,
				      &cl.timeout_s);
			if (ret)
				return ret;
		} else {
			return usage_unknown("cluster", *argv);
		}
		argc--;
		argv++;
	}
	if (!file) {
		fprintf(stderr, "aggctl: cluster: needs \"file FILE\"\n");
		return EXIT_USAGE;
	}
	if (argc < 1) {
		fprintf(stderr, "aggctl: cluster: needs \"job add ...\" or \"job del id ID\"\n");
		return EXIT_USAGE;
	}
	ret = cluster_load(&cl, file);
	if (ret)
		return ret;
	n = readlink("/proc/self/exe", cl.self, sizeof(cl.self) - 1);
	if (n < 0) {
		fprintf(stderr, "aggctl: cluster: /proc/self/exe: %s\n", strerror(errno));
		return EXIT_FAIL;
	}
	cl.self[n] = '\0';
	signal(SIGPIPE, SIG_IGN);
	return cluster_job(&cl, argc - 1, argv + 1);
}
