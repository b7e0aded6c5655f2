#!/bin/sh
# bad_input.sh: every file of the bad-input catalogue (tests/data/bad/EXPECTED) makes `collsim verify`
# exit 2 with FILE:LINE: and the expected message on stderr; so does a file over CS_XML_MAX_BYTES,
# generated here. Then the whole catalogue once more under valgrind, when it is installed (and the
# build has no AddressSanitizer, which valgrind cannot run).
set -u

src=${CS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${CS_BUILDDIR:-$(pwd)}
collsim=$build/collsim
dir=$src/tests/data/bad
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cs-bad.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
fails=0
n=0

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# check FILE LINE SUBSTRING: exit status 2, and a stderr line "FILE:LINE: ...SUBSTRING..."
check() {
    "$collsim" verify "$1" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    n=$((n + 1))
    if [ "$2" = 0 ]; then prefix="$1: "; else prefix="$1:$2: "; fi
    if [ "$rc" -ne 2 ]; then
        fail "$1: exit status $rc, expected 2"
        sed 's/^/  /' "$tmp/err" >&2
    elif ! grep -F -- "$prefix" "$tmp/err" | grep -q -F -- "$3"; then
        fail "$1: stderr lacks '$prefix...$3...'"
        sed 's/^/  /' "$tmp/err" >&2
    fi
}

[ -x "$collsim" ] || { echo "bad_input.sh: $collsim not built" >&2; exit 99; }
[ -f "$dir/EXPECTED" ] || { echo "bad_input.sh: $dir/EXPECTED missing" >&2; exit 99; }

tab=$(printf '\t')
files=""
while IFS="$tab" read -r file line msg; do
    case "$file" in '#'* | '') continue ;; esac
    [ -f "$dir/$file" ] || { fail "$file listed in EXPECTED but missing"; continue; }
    check "$dir/$file" "$line" "$msg"
    files="$files $dir/$file"
done <"$dir/EXPECTED"

# Every catalogue file is listed.
for f in "$dir"/*.xml; do
    grep -q "^$(basename "$f")$tab" "$dir/EXPECTED" || fail "$f is not listed in EXPECTED"
done

# A file over CS_XML_MAX_BYTES (64 MiB): refused before parsing, from a path and from stdin.
big=$tmp/huge.xml
{
    echo '<algo name="huge" proto="LL" nchannels="1" nchunksperloop="1" ngpus="1" coll="allreduce" inplace="1">'
    echo '<!--'
    head -c 68000000 /dev/zero | tr '\0' ' '
    echo '-->'
    echo '</algo>'
} >"$big"
check "$big" 0 "file is larger than"
"$collsim" verify - <"$big" >"$tmp/out" 2>"$tmp/err"
rc=$?
n=$((n + 1))
[ "$rc" -eq 2 ] && grep -q -F '<stdin>: file is larger than' "$tmp/err" ||
    fail "huge file on stdin: exit $rc, stderr: $(head -c 300 "$tmp/err")"
rm -f "$big"

# A missing file and a directory are unreadable, not crashes.
check "$tmp/does-not-exist.xml" 0 "cannot open"
check "$tmp" 0 "read error"

echo "bad_input.sh: $n cases, $fails failures"

if command -v valgrind >/dev/null 2>&1; then
    if ldd "$collsim" 2>/dev/null | grep -q libasan; then
        echo "bad_input.sh: sanitizer build, skipping valgrind"
    else
        # shellcheck disable=SC2086
        valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
            "$collsim" verify $files >/dev/null 2>"$tmp/vg"
        rc=$?
        if [ "$rc" -ne 2 ]; then
            fail "valgrind run over the catalogue: exit status $rc (99: memory errors or leaks)"
            grep '^==' "$tmp/vg" | head -40 >&2
        else
            echo "bad_input.sh: valgrind clean over the catalogue"
        fi
    fi
else
    echo "bad_input.sh: valgrind not installed, skipping the valgrind run"
fi

[ "$fails" -eq 0 ]
