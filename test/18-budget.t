#!/bin/bash
# Budgets: --max (or batch_size) caps the jobs claimed in one run;
# --max-seconds (or max_seconds) stops claiming once the time is spent.
. "${0%/*}/lib.sh"

plan 16
setup_db
write_config <<EOF2
[type.quick]
handler = noop

[type.slow]
handler = exec
command = $HANDLERS/sleep-then-ok 1
timeout = 10
EOF2
for i in 1 2 3 4 5; do insert_job "q$i" quick; done
pending() {
	sql "SELECT COUNT(*) FROM polling_jobs WHERE type = '$1' AND status = 'pending' AND attempts = 0"
}

run jobrun --max=3 --json
is "$rc" 0 "--max=3 exits 0"
is "$(jget claimed <<<"$out")" 3 "--max=3 claims 3"
is "$(pending quick)" 2 "2 left pending, untouched"

run jobrun -n 1 --json
is "$(jget claimed <<<"$out")" 1 "-n 1 claims 1"
is "$(pending quick)" 1 "1 left pending"

for i in 6 7 8; do insert_job "q$i" quick; done
write_config <<EOF2
[run]
batch_size = 2

[type.quick]
handler = noop

[type.slow]
handler = exec
command = $HANDLERS/sleep-then-ok 1
timeout = 10
EOF2
run jobrun --json
is "$(jget claimed <<<"$out")" 2 "batch_size = 2 claims 2"
run jobrun --max=10 --json
is "$(jget claimed <<<"$out")" 2 "--max overrides batch_size"
is "$(pending quick)" 0 "no quick job left"

# 1-second jobs: the first claim at 0 s, the second once the first is done
# (1 s), none at 2 s, when the time is spent.  Each job takes at least its
# second, so no third can start; load can only leave fewer than two.
base=$(baseline_ms --type=slow --json)
for i in 1 2 3 4 5 6; do insert_job "s$i" slow; done
start=$(date +%s%N)
run jobrun --type=slow --max=100 --max-seconds=2 --json
took=$(( ($(date +%s%N) - start) / 1000000 ))
claimed=$(jget claimed <<<"$out")
is "$rc" 0 "--max-seconds=2 exits 0"
is "$claimed" 2 "--max-seconds=2 with 1-second jobs claims 2"
is "$(jget succeeded <<<"$out")" "$claimed" "every claimed job finished"
took_between_ms "$took" 2000 $((2000 + base + 1000)) "the run stops after the second job, at about 2 s ($took ms)"
is "$(pending slow)" $((6 - claimed)) "the rest stay pending, untouched"
took_between_ms "$(jget elapsed_ms <<<"$out")" 2000 $((2000 + base + 1000)) "elapsed_ms agrees"

write_config <<EOF2
[run]
max_seconds = 1

[type.slow]
handler = exec
command = $HANDLERS/sleep-then-ok 1
timeout = 10
EOF2
run jobrun --json
is "$(jget claimed <<<"$out")" 1 "max_seconds = 1 in the config: one 1-second job, then the time is spent"
run jobrun --max-seconds=abc
is "$rc" 64 "--max-seconds=abc exits 64"
