/*
 * spawn.c - time whole processes, start to exit.
 *
 *   spawn [-n REPS] [-w WARMUP] [-o OUT] [-e ERR]
 *         -- @LABEL CMD [ARG...] [-- @LABEL CMD ...]
 *
 * Runs each command REPS times (after WARMUP untimed runs), the commands
 * taking turns so that a drift in the machine's speed touches them all
 * alike.  A run is timed from just before fork to just after wait4, with
 * stdin on /dev/null and stdout and stderr on /dev/null, or appended to
 * OUT and ERR.  For each command prints
 *
 *   LABEL.median_us=.. LABEL.p10_us=.. LABEL.p90_us=.. LABEL.mean_us=..
 *   LABEL.min_us=.. LABEL.cpu_us=.. LABEL.maxrss_kb=.. LABEL.fails=..
 *
 * one per line; cpu_us is the median user + system time of a run, and
 * maxrss_kb the largest peak resident set size (wait4's ru_maxrss) of its
 * runs.  Exits 1 if any run of any command failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_CMDS 32

static const char *out_path = "/dev/null", *err_path = "/dev/null";

struct cmd {
	const char *label;
	char **argv;
	double *us, *cpu;
	long maxrss;
	int fails;
};

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
percentile(const double *v, int n, double p)
{
	int i = (int)(p / 100.0 * (n - 1) + 0.5);

	return v[i < n ? i : n - 1];
}

static void
redirect(int to, const char *path, int flags)
{
	int fd = open(path, flags, 0644);

	if (fd < 0) {
		perror(path);
		_exit(127);
	}
	dup2(fd, to);
	close(fd);
}

/* One run of c: its wall time in microseconds, or -1 when it failed;
 * *cpu gets its user + system time. */
static double
run_once(struct cmd *c, double *cpu)
{
	struct rusage ru;
	double t0, t1;
	pid_t pid;
	int status;

	t0 = now_us();
	pid = fork();
	if (pid < 0) {
		perror("spawn: fork");
		exit(1);
	}
	if (pid == 0) {
		redirect(0, "/dev/null", O_RDONLY);
		redirect(1, out_path, O_WRONLY | O_CREAT | O_APPEND);
		redirect(2, err_path, O_WRONLY | O_CREAT | O_APPEND);
		execvp(c->argv[0], c->argv);
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("spawn: wait4");
			exit(1);
		}
	t1 = now_us();
	*cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	    (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
	if (ru.ru_maxrss > c->maxrss)
		c->maxrss = ru.ru_maxrss;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		c->fails++;
		return -1;
	}
	return t1 - t0;
}

int
main(int argc, char **argv)
{
	struct cmd cmds[MAX_CMDS];
	int ncmds = 0, reps = 100, warmup = 3, i, r, k, n, failed = 0;
	double sum, cpu;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (strcmp(argv[i], "-w") == 0 && i + 1 < argc)
			warmup = atoi(argv[++i]);
		else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out_path = argv[++i];
		else if (strcmp(argv[i], "-e") == 0 && i + 1 < argc)
			err_path = argv[++i];
		else {
			fprintf(stderr, "usage: spawn [-n REPS] [-w WARMUP] "
			    "[-o OUT] [-e ERR] -- @LABEL CMD [ARG...] "
			    "[-- @LABEL CMD ...]\n");
			return 64;
		}
	}
	/* Split the rest at "--" into commands; each starts with @LABEL. */
	while (i < argc && strcmp(argv[i], "--") == 0) {
		argv[i++] = NULL;
		if (i + 1 >= argc || argv[i][0] != '@' || ncmds == MAX_CMDS) {
			fprintf(stderr, "spawn: each command is @LABEL CMD "
			    "[ARG...] (at most %d)\n", MAX_CMDS);
			return 64;
		}
		cmds[ncmds].label = argv[i] + 1;
		cmds[ncmds].argv = &argv[i + 1];
		cmds[ncmds].us = calloc((size_t)(reps > 0 ? reps : 1),
		    sizeof(double));
		cmds[ncmds].cpu = calloc((size_t)(reps > 0 ? reps : 1),
		    sizeof(double));
		cmds[ncmds].maxrss = 0;
		cmds[ncmds].fails = 0;
		ncmds++;
		for (i += 2; i < argc && strcmp(argv[i], "--") != 0; i++)
			;
	}
	if (ncmds == 0 || reps < 1) {
		fprintf(stderr, "spawn: nothing to run\n");
		return 64;
	}
	for (r = 0; r < warmup; r++)
		for (k = 0; k < ncmds; k++)
			run_once(&cmds[k], &cpu);
	for (k = 0; k < ncmds; k++)
		cmds[k].fails = 0;
	for (r = 0; r < reps; r++)
		for (k = 0; k < ncmds; k++)
			cmds[k].us[r] = run_once(&cmds[k], &cmds[k].cpu[r]);
	for (k = 0; k < ncmds; k++) {
		struct cmd *c = &cmds[k];

		/* Failed runs (-1) sort first; leave them out. */
		qsort(c->us, (size_t)reps, sizeof *c->us, cmp_double);
		qsort(c->cpu, (size_t)reps, sizeof *c->cpu, cmp_double);
		n = reps - c->fails;
		if (n <= 0) {
			printf("%s.fails=%d\n", c->label, c->fails);
			failed = 1;
			continue;
		}
		sum = 0;
		for (r = c->fails; r < reps; r++)
			sum += c->us[r];
		printf("%s.median_us=%.0f\n%s.p10_us=%.0f\n%s.p90_us=%.0f\n"
		    "%s.mean_us=%.0f\n%s.min_us=%.0f\n%s.cpu_us=%.0f\n"
		    "%s.maxrss_kb=%ld\n%s.fails=%d\n", c->label,
		    percentile(c->us + c->fails, n, 50), c->label,
		    percentile(c->us + c->fails, n, 10), c->label,
		    percentile(c->us + c->fails, n, 90), c->label, sum / n,
		    c->label, c->us[c->fails], c->label,
		    percentile(c->cpu, reps, 50), c->label, c->maxrss,
		    c->label, c->fails);
		if (c->fails > 0)
			failed = 1;
	}
	return failed;
}
