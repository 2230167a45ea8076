# shellcheck shell=bash
# Reporting: PASS/FAIL lines and their counts, notes, timings, and the closing summary line.
# shellcheck disable=SC2015 # pass and fail always succeed, so `test && pass || fail` is safe

failures=0
checks=0
timings=()

pass() { checks=$((checks + 1)); printf 'PASS %s\n' "$*"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); printf 'FAIL %s\n' "$*"; }
die() { failures=$((failures + 1)) && checks=$((checks + 1)) && printf 'FAIL %s\n' "$*" && exit 1; }
skip() { printf 'SKIP %s\n' "$*"; }
note() { printf -- '--- %s\n' "$*"; }
warn() { printf 'WARN %s\n' "$*"; }
since() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f s", b - a }'; }

# timed <label> <command...>: runs the command and adds how long it took to the timings.
timed() {
  local label=$1 started=$EPOCHREALTIME
  shift
  "$@"
  timings+=("$label: $(since "$started")")
}

# finish <exit status>: prints the timings and the summary, then exits, with 1 when a check failed.
finish() {
  local status=$1
  ((${#timings[@]} == 0)) || printf '\nTimings:\n%s\n' "$(printf '  %s\n' "${timings[@]}")"
  if ((status == 0 && failures == 0)); then
    printf '\ncontainer recipe: PASS (%d checks)\n' "$checks"
  else
    printf '\ncontainer recipe: FAIL (%d of %d checks failed%s)\n' "$failures" "$checks" \
      "$( ((status == 0)) || printf ', stopped early')"
    ((status != 0)) || status=1
  fi
  exit "$status"
}
