#!/bin/bash
# report: "jobrun report --html=FILE" writes one self-contained page
# (backlog per type and in total, jobs finished and failed per hour over
# the last 24 hours as SVG bar charts, the last 20 failures) and --json
# gives the same figures.  Checked as a person sees it: headless Chromium
# renders the page (--dump-dom: the document it built; --screenshot: the
# pixels), tidy finds no error, hostile keys, types and errors stay text
# (no element or attribute of theirs in the DOM), no connection detail
# or handler setting is on the page, and the report reads the last day's
# rows, not the history (Handler_read_* around it, on our own server).
# Without sql/005_finished.sql the charts are left out, not scanned for.
. "${0%/*}/lib.sh"

plan 58
# Its own server: the Handler_read_* counters are global.
use_own_server
setup_db
sql "$(cat "$TOP/sql/005_finished.sql")" || bail_out "cannot apply sql/005"
write_config <<EOF2
[type.work]
handler = exec
command = $T/secret-handler-path

[type.mail]
handler = http
url = http://127.0.0.1:9/hook?token=s3cr3t-token
EOF2

# Old history: finished before the charted day, never counted or read.
history=20000
case $JOBRUN in */asan/*) history=10000 ;; esac
under_valgrind && history=5000

# Not in the last minute of an hour: the fixture's hours are the
# report's only if the hour does not turn in between.
hour_has_room() {
	[ "$(sql 'SELECT MINUTE(NOW()) * 60 + SECOND(NOW()) < 3540')" = 1 ]
}
wait_for 70 hour_has_room || bail_out "the hour did not turn"
from=$(sql "SELECT DATE_FORMAT(NOW() - INTERVAL 23 HOUR, '%Y-%m-%d %H:00:00')")

# done[h] jobs of type work finished in charted hour h (h = 0 is $from's
# hour, 23 the current one), the first at the hour's first second.
done=() failed=()
for h in $(seq 0 23); do done[h]=$(( (h * 5) % 13 + 1 )); failed[h]=0; done
failed[5]=1 failed[22]=20 failed[23]=5
sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
       next_run_at, created_at, updated_at, finished_at)
     SELECT CONCAT('ok:', h.seq, ':', n.seq), 'work', 'success', 1,
       '$from', '$from', '$from',
       '$from' + INTERVAL h.seq HOUR + INTERVAL n.seq - 1 SECOND
     FROM seq_0_to_23 AS h JOIN seq_1_to_13 AS n
       ON n.seq <= (h.seq * 5) % 13 + 1;
     INSERT INTO polling_jobs (business_key, type, status, attempts,
       next_run_at, created_at, updated_at, finished_at)
     SELECT CONCAT('old:', seq), IF(seq % 3, 'work', 'mail'),
       IF(seq % 1000, 'success', 'failed'), 1, '$from' - INTERVAL 2 DAY,
       '$from' - INTERVAL 2 DAY, '$from' - INTERVAL 2 DAY,
       '$from' - INTERVAL 1 SECOND - INTERVAL seq SECOND
     FROM seq_1_to_$history;
     INSERT INTO polling_jobs (business_key, type, status, attempts,
       next_run_at, created_at, updated_at, finished_at, last_error)
     SELECT CONCAT('fail:', seq), 'mail', 'failed', 5, '$from', '$from',
       '$from', '$from' + INTERVAL 22 HOUR + INTERVAL seq SECOND,
       CONCAT('HTTP 500 #', seq)
     FROM seq_1_to_20;
     INSERT INTO polling_jobs (business_key, type, status, attempts,
       next_run_at, created_at, updated_at, finished_at, last_error)
     VALUES ('late:1', 'mail', 'failed', 1, '$from', '$from', '$from',
       '$from' + INTERVAL 5 HOUR, 'exit status 2'),
     ('fail:21', 'mail', 'failed', 5, '$from', '$from', '$from',
       '$from' + INTERVAL 23 HOUR + INTERVAL 1 SECOND, 'HTTP 500 #21'),
     ('fail:22', 'mail', 'failed', 5, '$from', '$from', '$from',
       '$from' + INTERVAL 23 HOUR + INTERVAL 2 SECOND, 'HTTP 500 #22'),
     ('fail:23', 'mail', 'failed', 5, '$from', '$from', '$from',
       '$from' + INTERVAL 23 HOUR + INTERVAL 3 SECOND, 'HTTP 500 #23'),
     ('<img src=x onerror=alert(1)>', 'mail', 'failed', 5, '$from',
       '$from', '$from', '$from' + INTERVAL 23 HOUR + INTERVAL 4 SECOND,
       CONCAT('<script>document.title=\"pwned\"</script>', CHAR(0),
       X'EDA080', CHAR(27), '[31m\" onmouseover=\"alert(2)', CHAR(10),
       'second line')),
     (CONCAT('k', CHAR(0), '<b>bold</b>'), '<svg onload=alert(3)>',
       'failed', 1, '$from', '$from', '$from',
       '$from' + INTERVAL 23 HOUR + INTERVAL 5 SECOND, '&lt;not-a-tag&gt;')" ||
    bail_out "cannot insert the finished jobs"
# The backlog: 3 work jobs due (the oldest 90 s ago), 1 later, 1 mail job
# processing under an expired lock.
sql "INSERT INTO polling_jobs (business_key, type, next_run_at, created_at,
       updated_at)
     VALUES ('due:1', 'work', NOW() - INTERVAL 90 SECOND, NOW(), NOW()),
       ('due:2', 'work', NOW() - INTERVAL 30 SECOND, NOW(), NOW()),
       ('due:3', 'work', NOW(), NOW(), NOW()),
       ('later:1', 'work', NOW() + INTERVAL 1 HOUR, NOW(), NOW());
     INSERT INTO polling_jobs (business_key, type, status, attempts,
       next_run_at, locked_by, locked_until, created_at, updated_at)
     VALUES ('stuck:1', 'mail', 'processing', 1, NOW() - INTERVAL 10 MINUTE,
       'gone', NOW() - INTERVAL 1 MINUTE, NOW(), NOW())" ||
    bail_out "cannot insert the backlog"
lag_set=$(date +%s)
# A job an operator cancels now is failed, finished this hour, with the
# words cancel writes: the report does not count it as a failure.
jobrun enqueue --type=mail --key=cancelled:1 --delay=3600 >/dev/null
run jobrun cancel "$(sql "SELECT id FROM polling_jobs WHERE business_key = 'cancelled:1'")"
[ "$rc" = 0 ] || bail_out "cancel failed: $err"
sql "ANALYZE TABLE polling_jobs" >/dev/null

json_list() {
	local IFS=,
	printf '[%s]\n' "$*" | sed 's/,/, /g'
}
want_done=$(json_list "${done[@]}")
want_failed=$(json_list "${failed[@]}")
total_done=0
for h in $(seq 0 23); do total_done=$((total_done + done[h])); done

# --- the usage ------------------------------------------------------------

run jobrun report
is "$rc/$err" "64/jobrun: report needs --html=FILE or --json
Try 'jobrun --help'." "report without --html or --json is a usage error"
run jobrun report --html=- --json
is "$rc" 64 "--html=- with --json is a usage error (both on stdout)"

# --- the cost: the last day's rows, not the history ------------------------

reads() {
	mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot -N -B -e \
	    "SHOW GLOBAL STATUS LIKE 'Handler_read%'" | awk '{ s += $2 } END { print s }'
}
r0=$(reads)
r1=$(reads)
run jobrun report --json
s1=$(date +%s)
r2=$(reads)
json=$out
is "$rc/$err" 0/ "report --json exits 0, nothing on stderr"
# The charted day holds 24 + 171 + 26 finished rows and the backlog 5;
# counting the history would read 20000 more.
read_rows=$(( (r2 - r1) - (r1 - r0) ))
between "$read_rows" 1 1500 \
    "the report reads at most 1500 rows ($read_rows) with $history finished before the day"

# --- --json ----------------------------------------------------------------

is "$(jkeys <<<"$json")" database_now,hours,last_failures,total,types,written_at \
    "--json has the documented keys"
is "$(jpy 'd["hours"]["from"]' <<<"$json")" "$from" \
    "the hours start 23 hours before the current one, by the database clock"
is "$(jpy 'd["hours"]["finished"]' <<<"$json")" "$want_done" \
    "jobs finished per hour: the 24 hours' counts, the history left out"
is "$(jpy 'd["hours"]["failed"]' <<<"$json")" "$want_failed" \
    "jobs failed per hour"
is "$(jpy '[d["total"][k] for k in ("pending", "due", "processing", "expired_locks", "failed", "finished_24h", "failed_24h")]' <<<"$json")" \
    "[4, 3, 1, 1, $((26 + history / 1000)), $total_done, 26]" \
    "the total: 4 pending, 3 due, 1 processing, 1 expired, every failed job, the day's"
between "$(jpy 'd["total"]["lag_seconds"]' <<<"$json")" 90 $((90 + s1 - lag_set + 1)) \
    "the total's lag is the oldest due job's (90 s)"
is "$(jpy '[[t["type"], t["handler"], t["pending"], t["finished_24h"], t["failed_24h"]] for t in d["types"]]' <<<"$json")" \
    "[[\"work\", \"exec\", 4, $total_done, 0], [\"mail\", \"http\", 0, 0, 25], [\"<svg onload=alert(3)>\", null, 0, 0, 1]]" \
    "per type: the handler's kind, pending, finished and failed in the day"
is "$(jpy '[f["business_key"] for f in d["last_failures"]]' <<<"$json")" \
    '["k\u0000<b>bold</b>", "<img src=x onerror=alert(1)>", "fail:23", "fail:22", "fail:21", "fail:20", "fail:19", "fail:18", "fail:17", "fail:16", "fail:15", "fail:14", "fail:13", "fail:12", "fail:11", "fail:10", "fail:9", "fail:8", "fail:7", "fail:6"]' \
    "the last 20 failures, latest first"
is "$(jpy '[d["last_failures"][2][k] for k in ("type", "attempts", "max_attempts", "last_error")]' <<<"$json")" \
    '["mail", 5, 5, "HTTP 500 #23"]' "each with its type, attempts and last_error"

# --- the page --------------------------------------------------------------

page=$T/www/report.html
mkdir -p "$T/www"
echo old >"$page"
run jobrun report --html="$page"
is "$rc/$err/$out" 0// "report --html exits 0 and prints nothing"
is "$(stat -c %a "$page")" 644 "the page is readable by the web server's user (0644)"
is "$(ls -A "$T/www")" report.html "written in place of the old file, no temporary file left"
like "$(head -c 200 "$page")" '^<!DOCTYPE html>' "it is an HTML document"
run tidy -q -e "$page"
is "$rc/$err" 0/ "tidy finds no error or warning in it"
is "$(grep -Eic '<(script|link|img|iframe|object|embed)|@import|url\(' "$page")" 0 \
    "it loads nothing: no script, link, img, iframe, object, embed, @import or url()"
for secret in "$JOBRUN_TEST_SOCKET" "$DB" "$CONF" secret-handler-path \
    s3cr3t-token 127.0.0.1; do
	is "$(grep -Fc -- "$secret" "$page")" 0 "no connection detail or handler setting on the page: $secret"
done

# --- as Chromium builds and draws it --------------------------------------

if ! command -v chromium >/dev/null; then
	skip 18 "chromium is not installed (contrib/install-deps)"
	exit 0
fi
# chromium URL-OUTPUT-ARGS...: headless, its own profile, killed if it hangs
browse() {
	timeout -k 5 60 chromium --headless --no-sandbox --disable-gpu \
	    --user-data-dir="$T/chromium" --hide-scrollbars "$@" \
	    "file://$page" 2>>"$T/chromium.log"
}
check() {
	python3 "$TOP/test/html-check.py" "$@"
}
browse --dump-dom >"$T/dom.html"
ok "chromium's DOM of the page (--dump-dom)" test -s "$T/dom.html"
is "$(check tags "$T/dom.html")" \
    body,h1,h2,head,html,line,meta,p,pre,rect,span,style,svg,table,tbody,td,text,tfoot,th,thead,title,tr \
    "the DOM has only the page's own elements (no img, script, b or svg from a value)"
is "$(check attrs "$T/dom.html")" \
    aria-label,charset,class,content,height,id,lang,name,role,text-anchor,viewbox,width,x,x1,x2,xmlns,y,y1,y2 \
    "and only the page's own attributes (no onerror, onload, onmouseover, src)"
# bar heights: 140 px for the largest count, the rest in proportion
heights() {
	local max=0 v out=()
	for v; do [ "$v" -gt "$max" ] && max=$v; done
	for v; do
		v=$(( (v * 140 + max / 2) / max ))
		out+=("$v")
	done
	echo "${out[*]}"
}
is "$(check bars "$T/dom.html" done)" "$(heights "${done[@]}")" \
    "the finished chart has 24 bars, each as tall as its hour's count"
is "$(check bars "$T/dom.html" failed)" "$(heights "${failed[@]}")" \
    "the failed chart has 24 bars (a count of 1 out of 20 is still 7 px)"
is "$(check column "$T/dom.html" failures 2 | sed -n 1,2p)" '"k\\x00<b>bold</b>"
"<img src=x onerror=alert(1)>"' "hostile business keys read as text, NUL as \\x00"
is "$(check column "$T/dom.html" failures 1 | sed -n 1p)" '"<svg onload=alert(3)>"' \
    "a hostile type reads as text"
is "$(check column "$T/dom.html" failures 5 | sed -n 2p)" \
    '"<script>document.title=\"pwned\"</script>\\x00\\xed\\xa0\\x80\\x1b[31m\" onmouseover=\"alert(2)\nsecond line"' \
    "a hostile last_error reads as text, its bytes escaped, its line break kept"
is "$(check column "$T/dom.html" failures 5 | sed -n 1p)" '"&lt;not-a-tag&gt;"' \
    "an entity in a value is shown as written, not decoded"
is "$(check column "$T/dom.html" backlog 0)" '"work"
"mail"
"<svg onload=alert(3)>"' "the backlog lists each type, the hostile one as text"
is "$(check column "$T/dom.html" backlog 1)" '"exec"
"http"
"none"' "with its handler's kind only"
is "$(check column "$T/dom.html" backlog 2 | tr '\n' ' ')$(check column "$T/dom.html" backlog 3 | tr '\n' ' ')" \
    '"4" "0" "0" "3" "0" "0" ' "pending and due per type"
is "$(check column "$T/dom.html" backlog 6 | tr '\n' ' ')" '"0" "1" "0" ' \
    "the expired lock is mail's"

browse --screenshot="$T/page.png" --window-size=1000,1300 >/dev/null
ok "chromium draws the page (--screenshot)" test -s "$T/page.png"
read -r ink blue red <<<"$(check pixels "$T/page.png" 3b7dd8 d64545)"
between "$ink" 20000 1300000 "the picture is not blank ($ink pixels not background)"
# Each bar is 23 px wide: the blue and red areas are the bars' heights
# times 23, give or take the anti-aliased edges.
sum() { local s=0 v; for v; do s=$((s + v)); done; echo "$s"; }
area=$(( 23 * $(sum $(check bars "$T/dom.html" done)) ))
between "$blue" $((area * 9 / 10)) $((area * 11 / 10)) "the finished bars are drawn ($blue px of $area)"
area=$(( 23 * $(sum $(check bars "$T/dom.html" failed)) ))
between "$red" $((area * 9 / 10)) $((area * 11 / 10)) "the failed bars are drawn ($red px of $area)"

# --- without sql/005_finished.sql ------------------------------------------

sql "ALTER TABLE polling_jobs DROP INDEX idx_finished"
run jobrun report --json --html="$page"
is "$rc/$err" 0/ "without idx_finished the report still works"
is "$(jpy '[d["hours"], d["total"]["finished_24h"], len(d["last_failures"])]' <<<"$out")" \
    '[null, null, 20]' "--json: no hours, no day's totals (not counted by a scan), still the failures"
is "$(grep -c '<rect' "$page")/$(grep -c 'sql/005_finished.sql' "$page")" 0/1 \
    "the page has no chart and says which migration adds them"
run jobrun check
is "$(grep -A1 idx_finished <<<"$out")" "advice   no index idx_finished: jobrun report leaves out the jobs finished and failed per hour
         fix: sql/005_finished.sql" \
    "check recommends sql/005_finished.sql"

# --- a file that cannot be written ----------------------------------------

run jobrun report --html="$T/no/such/dir/report.html"
like "$rc/$err" "^74/jobrun: write report $T/no/such/dir/report\.html\.[A-Za-z0-9]{6}: No such file or directory\$" \
    "a page that cannot be written exits 74 and says why"

# --- what PATH is --------------------------------------------------------------
# A regular file or a new name is replaced whole (above); a symbolic link
# is followed, the link kept; a FIFO or a device is written through, never
# replaced by a regular file (at b888798 --html=/dev/full, as root,
# replaced the system's /dev/full); a directory is an error.
page_in() {	# page_in FILE: FILE holds a whole page
	grep -q '</html>' "$1"
}
ln -s "$T/target.html" "$T/link.html"
: >"$T/target.html"
run jobrun report --html="$T/link.html"
is "$rc" 0 "--html=a symbolic link: exit 0"
ok "the link is still a link" test -L "$T/link.html"
ok "its target holds the page" page_in "$T/target.html"
mkfifo "$T/fifo"
timeout 60 cat "$T/fifo" >"$T/from-fifo" &
reader=$!
run jobrun report --html="$T/fifo"
wait "$reader"
is "$rc" 0 "--html=a FIFO: exit 0"
ok "the FIFO is still a FIFO" test -p "$T/fifo"
ok "its reader got the whole page" page_in "$T/from-fifo"
if [ "$(id -u)" = 0 ]; then
	mknod "$T/full" c 1 7	# a /dev/full of the test's own
	run jobrun report --html="$T/full"
	is "$rc/$err" "74/jobrun: write report $T/full: No space left on device" \
	    "--html=a full device: exit 74, and why"
	ok "the device is still a device" test -c "$T/full"
else
	pass "# skip: mknod needs root"
	pass "# skip: mknod needs root"
fi
mkdir "$T/dir"
run jobrun report --html="$T/dir/"
is "$rc/$err" "74/jobrun: write report $T/dir/: Is a directory" \
    "--html=DIR/: exit 74, Is a directory"
ok "and nothing is left in the directory" test -z "$(ls -A "$T/dir")"

# --- text that reorders a line ------------------------------------------------
# A type holding U+202E RIGHT-TO-LEFT OVERRIDE would show the rest of its
# line backwards: the page shows it as \u202e.
sql "INSERT INTO polling_jobs (business_key, type, status, attempts,
       next_run_at, created_at, updated_at)
     VALUES ('bidi', CONCAT('t', X'E280AE', 'txt.exe'), 'pending', 0,
       NOW(), NOW(), NOW())" || bail_out "cannot insert the bidi job"
run jobrun report --html="$page"
is "$(grep -c -F 't\u202etxt.exe' "$page")/$(grep -c $'\xe2\x80\xae' "$page")" 1/0 \
    "a bidirectional override in a type is shown as \\u202e, never as it is"
