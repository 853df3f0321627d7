#!/bin/bash
# A wall clock stepped back does not hold --jobs's group commit.  gather()
# waits a few microseconds for verdicts about to come back; its deadline
# is on the monotonic clock.  Here jobrun sees a wall clock an hour ahead
# of the kernel's (an LD_PRELOAD shim over clock_gettime: for a wait on
# CLOCK_REALTIME that is the clock stepped back an hour): with the wait
# on CLOCK_REALTIME the quick jobs' marks waited for the slow handler
# beside them; on the monotonic clock they are written at once.
. "${0%/*}/lib.sh"

plan 4
setup_db

if under_valgrind; then
	skip 4 "an LD_PRELOAD shim under valgrind"
	exit 0
fi
cat >"$T/shim.c" <<'EOF2'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <time.h>

/* CLOCK_REALTIME an hour ahead; every other clock as it is. */
int
clock_gettime(clockid_t id, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	int rc;

	if (real == NULL)
		*(void **)&real = dlsym(RTLD_NEXT, "clock_gettime");
	rc = real(id, ts);
	if (rc == 0 && id == CLOCK_REALTIME)
		ts->tv_sec += 3600;
	return rc;
}
EOF2
"${CC:-cc}" -shared -fPIC -o "$T/shim.so" "$T/shim.c" -ldl ||
    bail_out "cannot build the clock shim"

write_config <<EOF2
[run]
batch_size = 100

[type.slow]
handler = exec
command = $HANDLERS/wait-for-file $T/started $T/go

[type.quick]
handler = exec
command = /bin/true
EOF2
insert_job slow:1 slow
for i in 1 2 3; do
	insert_job quick:$i quick
done

quick_done() {
	[ "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE type = 'quick'
	    AND status = 'success'")" = 3 ]
}
# AddressSanitizer wants its runtime first among the libraries; the shim
# comes before it, which it may allow.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
    LD_PRELOAD=$T/shim.so jobrun_bg --jobs=2 >"$T/out" 2>"$T/err"
wait_for 30 test -e "$T/started" || bail_out "the slow handler did not start"
ok "the quick jobs are marked while the slow handler runs" wait_for 30 quick_done
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'slow:1'")" \
    processing "the slow job is still running then"
: >"$T/go"
wait "$bg"
is "$?" 0 "the run exits 0"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'")" 4 \
    "all four jobs succeeded"
