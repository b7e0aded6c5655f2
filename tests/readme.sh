#!/bin/sh
# readme.sh: the examples of the README and of docs/*.md (`    $ collsim ...` blocks) still print
# what they show.
# Each shown output line, with whitespace collapsed and "..." taken as "something elided", must
# appear in the command's output (stdout and stderr), piece by piece; a command shown without
# output must exit 0. Examples that read ../shared are skipped when it is absent.
set -u
: "${CS_SRCDIR:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${CS_BUILDDIR:=$(pwd)}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bin" "$tmp/w"
ln -s "$(cd "$CS_BUILDDIR" && pwd)/collsim" "$tmp/bin/collsim"
for d in platforms schedules tests results; do ln -s "$CS_SRCDIR/$d" "$tmp/w/$d"; done
[ -d "$CS_SRCDIR/../shared" ] && ln -s "$CS_SRCDIR/../shared" "$tmp/shared"
PATH="$tmp/bin:$PATH"
export PATH

# One record per line: C<TAB>command (continuations joined) or O<TAB>shown output line.
awk '
    function flush() { if (cmd != "") print "C\t" cmd; cmd = "" }
    FNR == 1 { flush(); cont = 0; inex = 0 }
    cont { cmd = cmd " " $0; sub(/^ +/, " ", cmd); cont = sub(/ *\\$/, "", cmd); if (!cont) flush(); next }
    /^    \$ / { cmd = substr($0, 7); cont = sub(/ *\\$/, "", cmd); if (!cont) flush(); inex = 1; next }
    inex && /^    / { print "O\t" substr($0, 5); next }
    { inex = 0 }
' "$CS_SRCDIR/README" "$CS_SRCDIR"/docs/*.md >"$tmp/examples"

rc=0
n=0
check() { # the previous command against its shown lines
    [ -n "${cmd:-}" ] || return 0
    if [ "$skip" -eq 0 ] && [ "$shown" -eq 0 ] && [ "$st" -ne 0 ]; then
        echo "FAIL: example '$cmd' exits $st:" >&2
        cat "$tmp/out" >&2
        rc=1
    fi
}
cmd=""
skip=0
shown=0
st=0
while IFS='	' read -r kind text; do
    if [ "$kind" = C ]; then
        check
        cmd=$text
        shown=0
        skip=0
        case $cmd in *../shared*) [ -d "$tmp/shared" ] || skip=1 ;; esac
        [ "$skip" -eq 1 ] && continue
        n=$((n + 1))
        (cd "$tmp/w" && sh -c "$cmd") >"$tmp/out" 2>&1
        st=$?
        tr -s ' \t\n' '   ' <"$tmp/out" >"$tmp/norm"
        continue
    fi
    [ "$skip" -eq 1 ] && continue
    # "..." elides: each piece between elisions must appear.
    printf '%s\n' "$text" | tr -s ' \t' '  ' | sed 's/\.\.\./\n/g' | sed 's/^ *//; s/ *$//' |
        while IFS= read -r want; do
            [ ${#want} -gt 1 ] || continue
            grep -qF -- "$want" "$tmp/norm" && continue
            echo "FAIL: example '$cmd' no longer prints: $want" >&2
            echo x >>"$tmp/failed"
        done
    shown=1
done <"$tmp/examples"
check
[ -f "$tmp/failed" ] && rc=1
echo "readme.sh: $n examples run (README, docs/*.md)"
[ "$n" -gt 0 ] || { echo "FAIL: no example found in README" >&2; rc=1; }
exit $rc
