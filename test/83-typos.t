#!/bin/bash
# A typo is caught where it is made (issue 30, item 5): an unknown key or
# section in the configuration gets the known one it most likely meant;
# purge --older-than without a unit is refused, not taken as seconds.
. "${0%/*}/lib.sh"

plan 7
setup_db
write_config <<EOF2
[type.order_sync]
handler = noop
EOF2
count() {
	sql "SELECT COUNT(*) FROM polling_jobs${1:+ WHERE $1}"
}

# --- the configuration: did you mean ...? -------------------------------------

# Line 6 is the first line after the [database] section write_config adds.
write_config <<EOF2
[run]
batchsize = 5
EOF2
run jobrun status
is "$rc/$err" "78/jobrun: $CONF:7: [run] batchsize: unknown key; did you mean batch_size?" \
    "a misspelt key: exit 78, file:line, and the key meant"
write_config <<EOF2
[type.order_sync]
hander = exec
command = /bin/true
EOF2
run jobrun status
is "$rc/$err" "78/jobrun: $CONF:7: [type.order_sync] hander: unknown key; did you mean handler?" \
    "a misspelt handler key: named at its line, not \"handler: missing\""
write_config <<EOF2
[types.order_sync]
handler = noop
EOF2
run jobrun status
is "$rc/$err" "78/jobrun: $CONF:7: [types.order_sync]: unknown section (known: database, run, type.NAME, schedule.NAME); did you mean [type.order_sync]?" \
    "a misspelt section: the known ones, and the one meant"
write_config <<EOF2
[type.order_sync]
handler = noop
EOF2

# --- purge --older-than=30: thirty what? ----------------------------------------

# A job finished a minute ago, which "30 seconds" would purge.
sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
        next_run_at, created_at, updated_at, finished_at)
     VALUES ('done:1', 'order_sync', 'success', 1, NOW() - INTERVAL 2 MINUTE,
        NOW() - INTERVAL 2 MINUTE, NOW(), NOW() - INTERVAL 1 MINUTE)"
run jobrun purge --status=success --older-than=30
is "$rc/$out" 64/ "purge --older-than=30 (no unit): usage error (64), nothing printed"
is "$err" "jobrun: --older-than: \"30\" has no unit: write 30s, 30m, 30h, 30d or 30w
Try 'jobrun --help'." "the message says to add a unit"
is "$(count)" 1 "the job finished a minute ago is still there"
run jobrun purge --status=success --older-than=30d
is "$rc/$out/$(count)" "0/purge: 0 job(s)/1" "with the unit meant (30d) it stays too"
