#!/bin/sh
# schedules.sh: the committed schedules/ equal what collsim generates now, and the folder can serve
# as the MSCCL executor's MSCCL_ALGO_DIR: it holds only the schedules of
# tests/data/schedules.manifest (the executor reads every regular file there and stops at the first
# that is not a schedule), each with the <algo> attributes the executor requires.
set -u
dir=$CS_SRCDIR/schedules
manifest=$CS_SRCDIR/tests/data/schedules.manifest
tab=$(printf '\t')
. "$CS_SRCDIR/tests/lib.sh"

"$CS_SRCDIR/scripts/gen-schedules" "$CS_BUILDDIR/collsim" "$CS_SRCDIR" --check || fail "stale schedules"
n=0
for f in "$dir"/* "$dir"/.[!.]* "$dir"/..?*; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    b=${f##*/}
    n=$((n + 1))
    if [ -L "$f" ] || [ ! -f "$f" ]; then
        fail "schedules/$b is not a regular file"
        continue
    fi
    case "$b" in
        *.xml) ;;
        *) fail "schedules/$b is not a schedule (.xml); indexes belong outside the folder" ;;
    esac
    awk -F "$tab" -v f="$b" '$1 == f { found = 1 } END { exit !found }' "$manifest" || fail "schedules/$b is not listed in tests/data/schedules.manifest"
    head -1 "$f" | grep -q '^<algo .* inplace="1" outofplace="0" minBytes="[0-9]*" maxBytes="[0-9]*">$' ||
        fail "schedules/$b: <algo> lacks inplace, outofplace, minBytes or maxBytes: $(head -c 300 "$f")"
done
want=$(grep -c "^[^#]" "$manifest")
[ "$n" -eq "$want" ] || fail "schedules/ holds $n entries, the manifest lists $want"
[ "$n" -gt 0 ] || fail "schedules/ is empty"
[ "$fails" -eq 0 ] || { echo "schedules.sh: $fails failures" >&2; exit 1; }
echo "schedules.sh: ok ($n schedules)"
