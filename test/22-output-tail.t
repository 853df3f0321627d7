#!/bin/bash
# A handler that floods its output: last_error keeps the tail, at most 1000
# characters (whole ones), after the exit-status prefix.
. "${0%/*}/lib.sh"

plan 7
setup_db
write_config <<EOF2
[type.flood]
handler = exec
command = $HANDLERS/flood
timeout = 20
EOF2

insert_job flood:1 flood
run jobrun
is "$rc" 1 "the run exits 1"
is "$(field 1 status)/$(field 1 attempts)" pending/1 "the job is retried"
is "$(field 1 'CHAR_LENGTH(last_error)')" 1000 "last_error is 1000 characters, the most it keeps"
like "$(field 1 last_error)" '^exit status 3: ' "it starts with the exit status"
like "$(field 1 last_error)" 'END-OF-OUTPUT$' "it keeps the end of the output"
unlike "$(field 1 last_error)" 'line 0:' "and drops the beginning"
# The exact text: the prefix, then the last 985 characters of the output
# (the final newline dropped), cut between characters, not inside one.
want=$("$HANDLERS/flood" | python3 -c '
import sys
out = sys.stdin.buffer.read().decode("utf-8").rstrip("\n")
print(("exit status 3: " + out[-985:]).encode("utf-8").hex().upper())')
is "$(field 1 'HEX(last_error)')" "$want" \
    "last_error is exactly the prefix and the last 985 characters of the output"
