# lib.sh: what the shell tests share, sourced after they set their own variables: a temporary
# folder $tmp removed at exit, fail(), which reports a failure and counts it in $fails, and
# expect(), which checks a command's exit status.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0

fail() {
    echo "FAIL: $*" >&2
    fails=$((fails + 1))
}

# expect RC CMD...: run CMD, compare its exit status; stdout goes to $tmp/out, stderr to $tmp/err
expect() {
    want=$1
    shift
    "$@" >"$tmp/out" 2>"$tmp/err"
    got=$?
    [ "$got" -eq "$want" ] || fail "$* exited $got, expected $want: $(head -c 300 "$tmp/err")"
}
