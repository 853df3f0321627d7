#!/bin/bash
# Configuration errors exit 78 and name the file, the line and the key;
# JOBRUN_CONFIG is honoured.
. "${0%/*}/lib.sh"

plan 38
setup_db

run jobrun_raw --config="$T/missing.conf"
is "$rc" 78 "a missing config file exits 78"
like "$err" "$T/missing.conf" "the message names the file"

JOBRUN_CONFIG=$T/from-env.conf run jobrun_raw
is "$rc" 78 "a missing JOBRUN_CONFIG file exits 78"
like "$err" "$T/from-env.conf" "the message names the JOBRUN_CONFIG file"

write_config <<EOF2
[type.email]
handler = noop
EOF2
JOBRUN_CONFIG=$CONF run jobrun_raw --json
is "$rc" 0 "a good JOBRUN_CONFIG is used when --config is absent"
is "$(jget claimed <<<"$out")" 0 "it ran (nothing due)"

# Line 6 is the first line after the [database] section write_config adds.
write_config <<EOF2
[run]
this line is not ini
EOF2
run jobrun
is "$rc" 78 "a syntax error exits 78"
like "$err" "$CONF:7" "the message names file:line of the syntax error"

write_config <<EOF2
[run]
batch_size = 5
bogus_key = 1
EOF2
run jobrun
is "$rc" 78 "an unknown key exits 78"
like "$err" "$CONF:8" "the message names file:line of the unknown key"
like "$err" "bogus_key" "the message names the unknown key"

write_config <<EOF2
[nosuch]
x = 1
EOF2
run jobrun
is "$rc" 78 "an unknown section exits 78"
like "$err" "nosuch" "the message names the unknown section"

write_config <<EOF2
[run]
batch_size = abc
EOF2
run jobrun
is "$rc" 78 "a bad number exits 78"
like "$err" "$CONF:7" "the message names file:line of the bad value"
like "$err" "batch_size" "the message names the key"

write_config <<EOF2
[run]
batch_size = 5
batch_size = 6

[type.email]
handler = noop
EOF2
run jobrun
is "$rc" 78 "a key given twice exits 78"
like "$err" "$CONF:8.*batch_size|batch_size.*$CONF:8" "the message names the second line and the key"

# A section opened again: the key was given at its first opening, and the
# message says so (not the hint about lines that begin with a blank).
write_config <<EOF2
[run]
batch_size = 5

[type.email]
handler = noop

[run]
batch_size = 6
EOF2
run jobrun
is "$rc/$err" "78/jobrun: $CONF:13: [run] batch_size: given twice: already given at line 7" \
    "a key repeated in a reopened section names the line it was first given at"

# A UTF-8 byte order mark, as some editors write, is not a key outside any
# section.
write_config <<EOF2
[type.email]
handler = noop
EOF2
{ printf '\357\273\277'; cat "$CONF"; } >"$T/bom.conf"
run jobrun_raw --config="$T/bom.conf" --json
is "$rc/$(jget ok <<<"$out")" 0/true "a config that starts with a byte order mark works"
run jobrun_raw status --config="$T/bom.conf"
is "$rc" 0 "for every command"
is "$(head -c 3 "$T/bom.conf" | od -An -tx1 | tr -d " \n")" efbbbf "(the file does start with one)"

write_config <<EOF2
[type.email]
handler = carrier-pigeon
EOF2
run jobrun
is "$rc" 78 "an unknown handler kind exits 78"
like "$err" "carrier-pigeon" "the message shows the bad value"

write_config <<EOF2
[run]
backoff_base = 100
backoff_cap = 50

[type.email]
handler = noop
EOF2
run jobrun
is "$rc" 78 "backoff_cap below backoff_base exits 78"
like "$err" "backoff_cap" "the message names backoff_cap"

# An unknown [run] key is refused by name; it never lands in another key
# (as one once could in backoff_cap).
write_config <<EOF2
[run]
backoff_ceiling = 5

[type.email]
handler = noop
EOF2
run jobrun
is "$rc/$err" "78/jobrun: $CONF:7: [run] backoff_ceiling: unknown key" \
    "an unknown [run] key exits 78 and names file, line and key"

# Both ends of a range, through the binary too.
write_config <<EOF2
[run]
lock_seconds = 2

[type.email]
handler = noop
EOF2
run jobrun
is "$rc/$err" "78/jobrun: $CONF:7: [run] lock_seconds: not a number in 3..86400: \"2\"" \
    "lock_seconds below its range exits 78"
write_config <<EOF2
[run]
lock_seconds = 86401

[type.email]
handler = noop
EOF2
run jobrun
like "$err" "lock_seconds: not a number in 3..86400: \"86401\"" \
    "and above it"

# An indented [section] line after a key continues that key (inih): it is
# the key given again, not a header that would start type b.
write_config <<EOF2
[type.a]
handler = exec
command = /bin/true
 [type.b]
handler = exec
EOF2
run jobrun
is "$rc/$err" "78/jobrun: $CONF:9: [type.a] command: given twice: the line starts with a blank, which continues the key of line 8 (keys start in column 1, a value fits on one line)" \
    "an indented section header exits 78 as the key given again"

# An empty value is an error but for the keys jobrun.conf(5) lets it unset.
write_config <<EOF2
[schedule.s]
type = email
cron = @daily
payload =

[type.email]
handler = noop
EOF2
run jobrun
is "$rc/$err" "78/jobrun: $CONF:9: [schedule.s] payload: an empty value (give one, or leave the key out)" \
    "an empty payload exits 78 and names file, line and key"

# the table must exist
{
	printf '[database]\nsocket = %s\nuser = root\ndatabase = %s\n' \
	    "$JOBRUN_TEST_SOCKET" "$DB"
	printf 'table = no_such_table\n\n[type.email]\nhandler = noop\n'
} >"$CONF"
run jobrun
is "$rc" 78 "a missing table exits 78"
like "$err" "no_such_table" "the message names the table"

write_config <<EOF2
[type.email]
handler = noop
EOF2
sql "RENAME TABLE polling_jobs TO old_jobs"
run jobrun
is "$rc" 78 "a dropped polling_jobs exits 78"
like "$err" "polling_jobs" "the message names the table"
sql "RENAME TABLE old_jobs TO polling_jobs"

run jobrun --type=sms
is "$rc" 78 "--type without a [type.NAME] section exits 78"
like "$err" "sms" "the message names the type"

run jobrun
is "$rc" 0 "the good config still runs"
