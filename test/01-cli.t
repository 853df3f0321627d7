#!/bin/bash
# Command line: --help, --version, and usage errors (exit 64) that write
# nothing; each command's --help, and the hidden --completion-helper the
# bash completion asks, against the commands table.
. "${0%/*}/lib.sh"

plan 35
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

# --- each command's --help, the completion helper -----------------------

run jobrun_raw purge --help
is "$rc/$err" 0/ "purge --help exits 0, nothing on stderr"
like "$out" '^usage: jobrun purge --status=' "purge --help starts with purge's synopsis"
purge_help=$(grep -o -- '--[a-z][a-z-]*' <<<"$out" | sort -u | tr '\n' ' ')
is "$purge_help" "--config --dry-run --help --json --log --older-than --quiet --status --type --verbose --version " \
    "purge --help names purge's options and the common ones, no other"
unlike "$out" 'keys-from|jobrun enqueue|Exit status:' "purge --help: not enqueue's options, nor the overview"

run jobrun_raw frobnicate --help
is "$rc/$out" 64/ "--help of an unknown command is a usage error (64)"

# The commands table, as the overview's synopses name it, and as the
# completion helper lists it.
table=$(jobrun_raw --help | sed -n 's/^\(usage:\)\{0,1\} *jobrun \[\{0,1\}\([a-z]*\).*/\2/p' |
    awk '$0 != "" && !seen[$0]++' | tr '\n' ' ')
run jobrun_raw --completion-helper
is "$rc/$(tr '\n' ' ' <<<"$out")" "0/$table" \
    "--completion-helper lists the commands of --help's synopses, in order"
unlike "$(jobrun_raw --help)" 'completion-helper' "--completion-helper is hidden from --help"

# For every command: --help exits 0 with its own synopsis, and the helper
# offers exactly the options its --help shows ("=" when it takes a value).
# Under valgrind three commands go through (both are one walk of
# src/commands.c's table, whatever the command): the other ten cost 20
# jobruns, a second of CPU each there, for the same path.
cmds=$table every="every command"
if under_valgrind; then
	cmds="run enqueue purge" every="under valgrind, run, enqueue, purge"
fi
help_rcs= mismatch=
for c in $cmds; do
	help=$(jobrun_raw "$c" --help)
	help_rcs+="$c:$? "
	[[ ${help%%$'\n'*} =~ ^usage:\ jobrun\ \[?$c\]?(\ |$) ]] ||
	    mismatch+="$c: not its synopsis; "
	shown=$(sed -n 's/^  \(-., \|    \)\(--[a-z-]*\)\(=\{0,1\}\).*/\2\3/p' <<<"$help" | sort)
	offered=$(jobrun_raw --completion-helper "$c" | grep -- '^--' | sort)
	[ -n "$shown" ] && [ "$shown" = "$offered" ] || mismatch+="$c: [$offered] vs [$shown]; "
done
is "$help_rcs" "$(for c in $cmds; do printf '%s:0 ' "$c"; done)" "$every: --help exits 0"
is "$mismatch" "" "$every: the helper's options are those its --help shows"
is "$(jobrun_raw --completion-helper purge | tr '\n' ' ')" \
    "--config= --json --log= --verbose --quiet --help --version --type= --status= --older-than= --dry-run -c= -t= " \
    "--completion-helper purge: purge's options, = after those with a value, then the short names that take one"

# The bash completion asks the jobrun it completes (here, from PATH).
mkdir -p "$T/bin"
printf '#!/bin/sh\nexec "%s" "$@"\n' "$JOBRUN" >"$T/bin/jobrun"
chmod +x "$T/bin/jobrun"
complete_words() {
	PATH=$T/bin:$PATH bash -c 'source "$1"; shift
	    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _jobrun
	    printf "%s\n" "${COMPREPLY[@]}"' _ "$TOP/contrib/bash-completion/jobrun" "$@" |
	    sort | tr '\n' ' '
}
is "$(complete_words jobrun pu) $(complete_words jobrun -q '')" \
    "purge  $(printf '%s\n' $table | sort | tr '\n' ' ')" \
    "completion: the commands, from jobrun itself"
is "$(complete_words jobrun -n '')|$(complete_words jobrun -j '')" " | " \
    "completion: the word after -n or -j is their value, not a command"
is "$(complete_words jobrun purge --)" "$(jobrun_raw --completion-helper purge | grep -- '^--' | sort | tr '\n' ' ')" \
    "completion: purge -- offers what the helper lists for purge"
