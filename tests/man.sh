#!/bin/sh
# man.sh: the manual page `make` assembles from the usage texts (doc/collsim.1) names every command
# with its usage, is what scripts/gen-man writes from the program now, and groff reads it cleanly;
# `collsim --version` names the commit the program was built from.
set -u
src=${CS_SRCDIR:?}
b=${CS_BUILDDIR:?}
cs=$b/collsim
page=$b/doc/collsim.1
. "$src/tests/lib.sh"

[ -f "$page" ] || fail "no $page (make builds it)"
cmds=$("$cs" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z0-9-]*\) .*/\1/p')
[ "$(printf '%s\n' "$cmds" | wc -l)" -ge 10 ] || fail "collsim --help lists too few commands"
for c in $cmds; do
    grep -q "^\.SS \"collsim $c\"\$" "$page" || fail "the page has no section for $c"
    u=$("$cs" help "$c" | head -n 1 | sed -e 's/\\/\\e/g' -e 's/-/\\-/g')
    grep -qF -- "$u" "$page" || fail "the page lacks the usage line of $c: $u"
done
grep -q 'busbw\\-scale' "$page" || fail "plot's --busbw-scale is not in the page"
grep -q '^\.TH COLLSIM 1 "" "collsim [0-9]' "$page" || fail "no title line with the version"

# current: gen-man on the program as built writes the same page
data=$(sed -n 's|^\.I \(.*\)/platforms/$|\1|p' "$page")
[ -n "$data" ] || fail "the page names no data folder"
sh "$src/scripts/gen-man" "$cs" "$data" >"$tmp/collsim.1" || fail "gen-man failed"
cmp -s "$page" "$tmp/collsim.1" || fail "doc/collsim.1 differs from what gen-man writes now"

if command -v groff >/dev/null 2>&1; then
    w=$(groff -man -Tutf8 -ww -z "$page" 2>&1)
    [ -z "$w" ] || fail "groff warns: $w"
fi
# in a git checkout, the commit of this build (make looks it up every time), not configure's
if sha=$(cd "$src" && git rev-parse --short HEAD 2>/dev/null) && [ -n "$sha" ]; then
    "$cs" --version | head -n 1 | grep -Eq "^collsim [0-9][0-9.]* \(git $sha(-dirty)?\)\$" ||
        fail "--version does not name the commit $sha: $("$cs" --version | head -n 1)"
fi
[ "$fails" -eq 0 ] || exit 1
echo "man: ok"
