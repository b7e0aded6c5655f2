#!/bin/sh
# bad_input.sh: every file of the bad-input catalogue (tests/data/bad/EXPECTED) makes `collsim verify`
# exit 2 with FILE:LINE: and the expected message on stderr; so does a file over CS_SCHED_MAX_BYTES,
# generated here, and so do the bad platforms generated here from a committed one (`predict`). Then the whole catalogue once more under valgrind, when it is installed (and the
# build has no AddressSanitizer, which valgrind cannot run).
set -u

src=${CS_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
build=${CS_BUILDDIR:-$(pwd)}
collsim=$build/collsim
dir=$src/tests/data/bad
. "$src/tests/lib.sh"
n=0

# refused WHAT FILE LINE SUBSTRING CMD...: CMD exits 2 with a stderr line
# "FILE:LINE: ...SUBSTRING..." (LINE 0: "FILE: ..."); a failure is named WHAT.
refused() {
    what=$1 file=$2 line=$3 want=$4
    shift 4
    "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    n=$((n + 1))
    if [ "$line" = 0 ]; then prefix="$file: "; else prefix="$file:$line: "; fi
    if [ "$rc" -ne 2 ]; then
        fail "$what: exit status $rc, expected 2"
        sed 's/^/  /' "$tmp/err" >&2
    elif ! grep -F -- "$prefix" "$tmp/err" | grep -q -F -- "$want"; then
        fail "$what: stderr lacks '$prefix...$want...'"
        sed 's/^/  /' "$tmp/err" >&2
    fi
}

# check FILE LINE SUBSTRING: `collsim verify FILE` is refused so
check() { refused "$1" "$@" "$collsim" verify "$1"; }

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

# A schedule over CS_SCHED_MAX_BYTES (1 GiB): refused before parsing, from a path and from stdin
# (a sparse file: its size is all the reader looks at).
big=$tmp/huge.xml
echo '<algo name="huge" proto="LL" nchannels="1" nchunksperloop="1" ngpus="1" coll="allreduce" inplace="1">' >"$big"
truncate -s 1100M "$big"
check "$big" 0 "file is larger than 1073741824 bytes"
"$collsim" verify - <"$big" >"$tmp/out" 2>"$tmp/err"
rc=$?
n=$((n + 1))
[ "$rc" -eq 2 ] && grep -q -F '<stdin>: file is larger than' "$tmp/err" ||
    fail "huge file on stdin: exit $rc, stderr: $(head -c 300 "$tmp/err")"
rm -f "$big"

# Platforms, read by predict before SimGrid sees them: a DOCTYPE may name SimGrid's DTD (never
# loaded) but have no internal subset, whatever hides it from a byte scan; no entity reference,
# NUL byte, encoding but UTF-8 or file over CS_XML_MAX_BYTES. Each exits 2 with FILE:LINE.
plat=$src/platforms/a100-pcie-4gpu.xml
ring4=$src/tests/data/msccl-xml/simple_allreduce_ring.4gpu.1inst.xml
check_platform() { refused "platform $1" "$@" "$collsim" predict "$ring4" --platform "$1" -b 1M -e 1M; }
subset='SYSTEM "https://simgrid.org/simgrid.dtd" [<!ENTITY g "gpu">]>'
no_subset="not declare anything: no internal subset"
sed "s|^SYSTEM \"https://simgrid.org/simgrid.dtd\">|$subset|; s|id=\"gpu0\"|id=\"\&g;0\"|" "$plat" \
    >"$tmp/p_entity.xml"
check_platform "$tmp/p_entity.xml" 3 "$no_subset"
sed "s|^SYSTEM \"https://simgrid.org/simgrid.dtd\">|SYSTEM \"x\" [<!-- only a comment -->]>|" "$plat" \
    >"$tmp/p_comment_subset.xml"
check_platform "$tmp/p_comment_subset.xml" 3 "$no_subset"
{
    echo '<?note <!-- ?>'
    sed '1d' "$tmp/p_entity.xml"
} >"$tmp/p_pi.xml"
check_platform "$tmp/p_pi.xml" 3 "$no_subset"
if command -v iconv >/dev/null 2>&1; then
    { printf '\377\376'; sed 's/UTF-8/UTF-16/' "$tmp/p_entity.xml" | iconv -f UTF-8 -t UTF-16LE; } \
        >"$tmp/p_utf16_entity.xml"
    check_platform "$tmp/p_utf16_entity.xml" 3 "$no_subset"
    sed 's/UTF-8/IBM037/' "$tmp/p_entity.xml" | iconv -f UTF-8 -t IBM037 >"$tmp/p_ebcdic_entity.xml"
    check_platform "$tmp/p_ebcdic_entity.xml" 3 "$no_subset"
    { printf '\377\376'; sed 's/UTF-8/UTF-16/' "$plat" | iconv -f UTF-8 -t UTF-16LE; } \
        >"$tmp/p_utf16.xml"
    check_platform "$tmp/p_utf16.xml" 1 "a platform must be UTF-8"
fi
line=$(grep -n 'id="gpu0"' "$plat" | head -1 | cut -d: -f1)
sed 's|id="gpu0"|id="gpu\&z;0"|' "$plat" >"$tmp/p_undeclared.xml"
check_platform "$tmp/p_undeclared.xml" "$line" "entity references are not allowed in a platform (&z;)"
attrs=$(seq 2000 | sed 's/.*/x&=""/' | tr '\n' ' ')
sed "s|id=\"gpu0\"|id=\"gpu0\" $attrs|" "$plat" >"$tmp/p_attrs.xml"
check_platform "$tmp/p_attrs.xml" "$line" "a start tag with more than 1024 attributes"
line=$(($(wc -l <"$plat") + 1))
{ cat "$plat"; printf '\0<junk/>\n'; } >"$tmp/p_nul.xml"
check_platform "$tmp/p_nul.xml" "$line" "a NUL byte"
{
    echo '<platform version="4.1">'
    echo '<!--'
    head -c 68000000 /dev/zero | tr '\0' ' '
    echo '-->'
    echo '</platform>'
} >"$tmp/p_huge.xml"
check_platform "$tmp/p_huge.xml" 0 "file is larger than"
rm -f "$tmp/p_huge.xml"

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
