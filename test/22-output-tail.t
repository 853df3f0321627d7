#!/bin/bash
# A handler that floods its output: last_error keeps the tail, at most 1000
# characters of valid UTF-8, after the exit-status prefix.
. "${0%/*}/lib.sh"

plan 8
setup_db
write_config <<EOF2
[type.flood]
handler = exec
command = $HANDLERS/flood
timeout = 20
EOF2

jobrun enqueue --type=flood --key=flood:1 >/dev/null
run jobrun
is "$rc" 1 "the run exits 1"
is "$(field 1 status)/$(field 1 attempts)" pending/1 "the job is retried"
between "$(field 1 'CHAR_LENGTH(last_error)')" 200 1000 "last_error is at most 1000 characters"
like "$(field 1 last_error)" '^exit status 3: ' "it starts with the exit status"
like "$(field 1 last_error)" 'END-OF-OUTPUT' "it keeps the end of the output"
unlike "$(field 1 last_error)" 'line 0:' "and drops the beginning"
ok "last_error is valid UTF-8" python3 -c '
import sys
bytes.fromhex(sys.argv[1]).decode("utf-8", "strict")' "$(field 1 'HEX(last_error)')"
is "$(field 1 'last_error = CONVERT(CONVERT(last_error USING binary) USING utf8mb4)')" 1 \
    "and round-trips through the server unchanged"
