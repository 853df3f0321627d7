#!/bin/bash
# No hidden limits.  A configuration may have any number of types: a run
# and check work with 200 of them (it once stopped at 64, with exit 70 at
# every run).  A value larger than the server's max_allowed_packet is said
# to be what it is, and never sent twice: a checkpoint that large is
# refused with the reason and the handler goes on (enqueue: test 68).
. "${0%/*}/lib.sh"

plan 12

use_own_server
setup_db
mariadb --no-defaults -S "$JOBRUN_TEST_SOCKET" -uroot "$DB" <"$TOP/sql/002_checkpoint.sql"

# A handler that saves a 30000-byte checkpoint (a JSON string), waits for
# the answer, prints it and succeeds.
cat >"$T/bigcp" <<'EOS'
#!/bin/sh
printf '"%s"\n' "$(head -c 30000 /dev/zero | tr '\0' x)" >&3
read -r answer <&3
echo "$answer"
EOS
chmod +x "$T/bigcp"
{
	for i in $(seq 200); do
		printf '[type.t%03d]\nhandler = exec\ncommand = %s %s\n\n' "$i" \
		    "$HANDLERS/append-id" "$T/ran"
	done
	printf '[type.bigcp]\nhandler = exec\ncommand = %s\n' "$T/bigcp"
} | write_config

for i in 001 064 065 200; do
	insert_job k$i t$i
done
run jobrun --json
is "$rc" 0 "a run with 201 types exits 0"
is "$(jget claimed <<<"$out")/$(jget succeeded <<<"$out")" 4/4 \
    "it claims jobs of the 1st, 64th, 65th and 200th type"
is "$(sort -n "$T/ran" | tr '\n' ' ')" \
    "$(sql "SELECT id FROM polling_jobs WHERE business_key LIKE 'k%' ORDER BY id" | tr '\n' ' ')" \
    "each of them ran"
run jobrun check --json
is "$rc" 0 "check with 201 types exits 0"
like "$out" '"claim of all types uses idx_pick' "and explains the claim over all of them"
run jobrun status --json
is "$(jpy "len(d['types'])" <<<"$out")" 201 "status lists all 201 types"

aborted() {
	grep -c "bigger than 'max_allowed_packet'" "$OWN_SERVER/error.log"
}
# MySQL logs an aborted connection as a note, at log_error_verbosity 3
# only (its default is 2).
if on_mysql; then
	sql "SET GLOBAL log_error_verbosity = 3" ||
	    bail_out "cannot log aborted connections"
fi
sql "SET GLOBAL max_allowed_packet = 16384"
insert_job bigcp bigcp
before=$(aborted)
run jobrun --type=bigcp --json
is "$rc" 0 "a checkpoint over max_allowed_packet does not stop the run"
is "$(jget succeeded <<<"$out")" 1 "the handler went on and succeeded"
# The server's own answer (1153), or, when the connection closed first,
# jobrun's reading of max_allowed_packet on a new one.
like "$err" "checkpoint refused: .*(too large for the server.s max_allowed_packet \\(16384\\)|bigger than 'max_allowed_packet')" \
    "the refusal says why, not 'server has gone away'"
is "$(sql "SELECT checkpoint IS NULL FROM polling_jobs WHERE business_key = 'bigcp'")" 1 \
    "nothing was stored"
is "$(( $(aborted) - before ))" 1 "the statement reached the server once"
is "$(sql "SELECT status FROM polling_jobs WHERE business_key = 'bigcp'")" success \
    "and the job's outcome was recorded on the new connection"
