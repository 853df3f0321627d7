#!/bin/bash
# Start latency over the last hour (sql/008_start_latency.sql): each run
# adds its jobs' latencies (claim less the later of next_run_at and
# created_at, by the server's clock) to the table per type and minute;
# status and report give p50 and p99 of the last 60 minutes, read from the
# histogram's buckets.  Jobs made due long ago fall in known buckets, so
# the figures are exact whatever the machine's speed: 10 jobs due 100 s
# ago land between 30 s and 300 s (p50 = 30 + 270 x 5/10 s), one due two
# hours ago past 300 s.  Without the table everything works as before.
. "${0%/*}/lib.sh"

plan 21
setup_db
write_config <<EOF2
[type.b]
handler = noop
[type.c]
handler = noop
EOF2
# due TYPE N SECONDS-AGO: N jobs of TYPE due and made that long ago
due() {
	sql "INSERT INTO polling_jobs (business_key, type, next_run_at,
	        created_at, updated_at)
	     SELECT CONCAT('$1-$3-', seq), '$1', NOW() - INTERVAL $3 SECOND,
	        NOW() - INTERVAL $3 SECOND, NOW() FROM seq_1_to_$2"
}
latency() {
	jobrun status --json | jpy "d.get('start_latency', 'absent')"
}

# --- without the table ----------------------------------------------------------

due b 2 100
run jobrun
is "$rc" 0 "without the table a run exits 0"
is "$(sql "SELECT COUNT(*) FROM polling_jobs WHERE status = 'success'")" 2 \
    "and runs its jobs"
is "$(latency)" absent "status --json has no start_latency"
run jobrun check
unlike "$out" 'start latency' "check says nothing of the optional table"
run jobrun report --json
is "$(jpy "d.get('start_latency', 'absent')" <<<"$out")" absent \
    "nor has report --json"

# --- with it --------------------------------------------------------------------

mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" \
    <"$TOP/sql/008_start_latency.sql" || bail_out "cannot load sql/008"
sql "DELETE FROM polling_jobs"
due b 10 100
due c 1 7200
run jobrun
is "$rc" 0 "a run with the table exits 0"
is "$(latency | jpy '[d["jobs"], d["p50_ms"], d["p99_ms"], d["minutes"]]')" \
    "[11, 178500, 300000, 60]" \
    "all types: 11 jobs, p50 30 + 270 x 5.5/10 s, p99 past the last bound"
is "$(latency | jpy '[[t["type"], t["jobs"], t["p50_ms"], t["p99_ms"]] for t in d["types"]]')" \
    '[["b", 10, 165000, 297300], ["c", 1, 300000, 300000]]' \
    "per type: b between 30 s and 300 s, c past 300 s"
is "$(jobrun status --type=b --json | jpy '[d["start_latency"]["jobs"], len(d["start_latency"]["types"])]')" \
    "[10, 1]" "status --type=b: b's alone"
run jobrun status
like "$out" 'Start latency, last 60 minutes: p50 178500 ms, p99 300 s or more \(11 jobs\)' \
    "status says it under the table"
run jobrun report --json
is "$(jpy 'd["start_latency"]["p50_ms"]' <<<"$out")" 178500 "report --json has it"
run jobrun report --html=-
like "$out" '<h2 id="latency">Start latency</h2>' "the report page has its section"
like "$out" '<tr><td>c</td><td>p50 300 s or more, p99 300 s or more \(1 job\)</td></tr>' \
    "with a row per type"

run jobrun check
like "$out" 'ok +start latency is kept \(table jobrun_start_latency\), last 60 minutes: p50 178500 ms' \
    "check says the table is there, with the figures"

# A run that claims nothing writes nothing.
before=$(sql "SELECT SUM(jobs) FROM jobrun_start_latency")
run jobrun
is "$(sql "SELECT SUM(jobs) FROM jobrun_start_latency")" "$before" \
    "a run that claimed nothing adds nothing"

# --- the window's edge: this minute and the 59 before ----------------------------

# edge_rows: a row of type e one minute inside the window and one just
# outside it, made and read within one server minute (else again)
edge_rows() {
	local m
	m=$(sql "SELECT UNIX_TIMESTAMP() DIV 60")
	sql "DELETE FROM jobrun_start_latency WHERE type = 'e';
	     INSERT INTO jobrun_start_latency (job_table, type, minute, le_5,
	        le_10, le_25, le_50, le_100, le_250, le_500, le_1000, le_5000,
	        le_30000, le_300000, jobs)
	     VALUES ('polling_jobs', 'e', $m - 59, 1,1,1,1,1,1,1,1,1,1,1,1),
	            ('polling_jobs', 'e', $m - 60, 0,0,0,0,0,0,0,0,0,0,0,100)"
	got=$(jobrun status --json |
	    jpy '[t["jobs"] for t in d["start_latency"]["types"] if t["type"] == "e"]')
	[ "$(sql "SELECT UNIX_TIMESTAMP() DIV 60")" = "$m" ]
}
wait_for 200 edge_rows
is "$got" "[1]" "the row 59 minutes back counts, the one 60 back does not"

# --- old rows go ----------------------------------------------------------------

sql "INSERT INTO jobrun_start_latency (job_table, type, minute, jobs)
     VALUES ('polling_jobs', 'old', UNIX_TIMESTAMP() DIV 60 - 121, 1),
            ('polling_jobs', 'old', UNIX_TIMESTAMP() DIV 60 - 119, 1),
            ('other_table', 'old', UNIX_TIMESTAMP() DIV 60 - 500, 1)"
due b 1 0
run jobrun
is "$rc" 0 "another run exits 0"
is "$(sql "SELECT GROUP_CONCAT(CONCAT(job_table, ' ', (UNIX_TIMESTAMP() DIV 60) - minute > 120) ORDER BY minute)
    FROM jobrun_start_latency WHERE type = 'old'")" \
    "other_table 1,polling_jobs 0" \
    "a run deletes its table's rows over two hours old, not another table's"
is "$(sql "SELECT SUM(jobs) FROM jobrun_start_latency WHERE type = 'b'")" 11 \
    "its job was added to b's: 10 + 1"

# --- --jobs=4: the same figures --------------------------------------------------

sql "DELETE FROM polling_jobs; DELETE FROM jobrun_start_latency"
due b 10 100
run jobrun --jobs=4
is "$rc" 0 "--jobs=4 exits 0"
is "$(latency | jpy '[d["jobs"], d["p50_ms"]]')" "[10, 165000]" \
    "--jobs=4 adds its slots' jobs as one"
