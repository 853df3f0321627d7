#!/bin/bash
# Command line: --help, --version, and usage errors (exit 64) that write
# nothing.
. "${0%/*}/lib.sh"

plan 22
setup_db
write_config <<EOF2
[type.email]
handler = noop
EOF2

run jobrun_raw --help
is "$rc" 0 "--help exits 0"
like "$out" '[Uu]sage' "--help prints the usage on stdout"
like "$out" 'enqueue' "the usage mentions enqueue"
is "$err" "" "--help prints nothing on stderr"

run jobrun_raw -h
is "$rc" 0 "-h exits 0"

run jobrun_raw --version
is "$rc" 0 "--version exits 0"
is "$out" "jobrun $VERSION" "--version prints the Makefile's version"

run jobrun_raw -V
is "$out" "jobrun $VERSION" "-V prints the version"

run jobrun --frobnicate
is "$rc" 64 "an unknown option exits 64"
like "$err" '^jobrun: ' "the message starts with jobrun:"

run jobrun --max=abc
is "$rc" 64 "--max=abc exits 64"
run jobrun --max=10x
is "$rc" 64 "--max=10x exits 64"
run jobrun --max=0
is "$rc" 64 "--max=0 (out of range) exits 64"
run jobrun --max-seconds=abc
is "$rc" 64 "--max-seconds=abc exits 64"
run jobrun -n
is "$rc" 64 "-n without its value exits 64"
run jobrun --type
is "$rc" 64 "--type without its value exits 64"
run jobrun frobnicate
is "$rc" 64 "an unknown subcommand exits 64"

run jobrun enqueue --type=email --key=k1 --delay=soon
is "$rc" 64 "enqueue --delay=soon exits 64"
run jobrun enqueue --type=email --key=k1 --max-attempts=x
is "$rc" 64 "enqueue --max-attempts=x exits 64"
run jobrun enqueue --type=email --payload='{}'
is "$rc" 64 "enqueue without --key exits 64"
run jobrun enqueue --type=email --key=k1 --bogus
is "$rc" 64 "enqueue with an unknown option exits 64"

is "$(sql 'SELECT COUNT(*) FROM polling_jobs')" 0 "no usage error wrote a job"
