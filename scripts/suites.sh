# A pool of suites run in parallel, sourced by scripts/test and
# scripts/check (bash). Each suite is a command whose output is kept apart
# and printed whole, in the order the suites were added, as soon as it and
# every suite before it have ended (grouped, never interleaved). At the end:
# the ten slowest suites with their wall times, then one line
# "N passed, M failed" over all.
#
#   suite NAME KIND [PATTERN] -- COMMAND...   adds a suite; KIND says how
#                                             it counts:
#     count    its last line says "... N passed, M failed"
#     spec     its line "tend test: N passed, M failed"; an exit status
#              other than 0 with "0 failed" (a leak, a crash at the end)
#              or no such line is one failure more
#     example  one passed when it exits 0 and a line matches PATTERN
#              (grep -E), else one failed
#     status   one passed when it exits 0
#   header TEXT                               a "== TEXT" line before the
#                                             next suite's output (count and
#                                             spec suites print "== NAME")
#   run_suites                                runs them all with at most
#                                             JOBS at once; returns 0 when
#                                             none failed
# JOBS: $TEST_JOBS, else twice the processors (the real-time suites mostly
# wait on the clock, not on a processor). TEST_TIMES=FILE keeps every
# suite's wall and processor time there.
set -u
s_n=0
s_passed=0
s_failed=0
s_tmp=$(mktemp -d)
trap 'rm -rf "$s_tmp"' EXIT
declare -a s_name s_kind s_pat s_cmd s_head

header() { s_pending_header="$1"; }
s_pending_header=""

suite() {
  local name=$1 kind=$2 pat=""
  shift 2
  if [ "$1" != "--" ]; then pat=$1; shift; fi
  shift # --
  s_name[s_n]=$name s_kind[s_n]=$kind s_pat[s_n]=$pat
  s_cmd[s_n]=$(printf '%q ' "$@")
  s_head[s_n]=$s_pending_header
  s_pending_header=""
  s_n=$((s_n + 1))
}

s_add() { # $1 $2: passed and failed counts
  s_passed=$((s_passed + $1))
  s_failed=$((s_failed + $2))
}

s_tally() { # $1: the suite's index; prints its output and counts it
  local i=$1 out="$s_tmp/$1.out" rc line p f
  rc=$(cat "$s_tmp/$i.rc")
  [ -n "${s_head[i]}" ] && echo "== ${s_head[i]}"
  case ${s_kind[i]} in
    count | spec)
      if [ "${s_kind[i]}" = count ]; then
        line=$(tail -n 1 "$out")
      else
        line=$(grep '^tend test:' "$out" | tail -n 1)
      fi
      echo "== ${s_name[i]}"
      cat "$out"
      p=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\1/p')
      f=$(printf '%s\n' "$line" | sed -n 's/.* \([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed.*/\2/p')
      if [ -z "$p" ]; then
        echo "${s_name[i]}: FAILED (no summary line; exit status $rc)"
        s_add 0 1
      else
        s_add "$p" "$f"
        if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
          echo "${s_name[i]}: FAILED (exit status $rc)"
          s_add 0 1
        fi
      fi ;;
    example | status)
      if [ "$rc" -eq 0 ] && { [ "${s_kind[i]}" = status ] || grep -Eq "${s_pat[i]}" "$out"; }; then
        echo "${s_name[i]}: ok"
        s_add 1 0
      else
        echo "${s_name[i]}: FAILED (exit status $rc)"
        cat "$out"
        s_add 0 1
      fi ;;
  esac
}

s_start() { # $1: the suite's index; runs it in the background
  local i=$1
  (
    t0=$EPOCHREALTIME
    eval "${s_cmd[i]}" > "$s_tmp/$i.out" 2>&1 < /dev/null
    rc=$?
    t1=$EPOCHREALTIME
    times > "$s_tmp/$i.cpu" # its second line: the suite's user and system time
    echo "$t0 $t1 $(tail -n 1 "$s_tmp/$i.cpu")" | awk -v n="${s_name[i]}" '
      function sec(x) { split(x, p, "m"); return p[1] * 60 + p[2] }
      { printf "%.1f\t%.1f\t%s\n", $2 - $1, sec($3) + sec($4), n }' > "$s_tmp/$i.time"
    echo "$rc" > "$s_tmp/$i.rc" # last: the suite has ended
  ) &
}

run_suites() {
  local jobs=${TEST_JOBS:-$(($(nproc) * 2))} next=0 shown=0
  while [ "$shown" -lt "$s_n" ]; do
    while [ "$next" -lt "$s_n" ] && [ "$(jobs -rp | wc -l)" -lt "$jobs" ]; do
      s_start "$next"
      next=$((next + 1))
    done
    while [ "$shown" -lt "$s_n" ] && [ -e "$s_tmp/$shown.rc" ]; do
      s_tally "$shown"
      shown=$((shown + 1))
    done
    [ "$shown" -lt "$s_n" ] && { wait -n 2> /dev/null || :; }
  done
  wait
  echo "== the ten slowest suites (wall time, processor time; $jobs at once)"
  cat "$s_tmp"/*.time | sort -rn | head -n 10 |
    awk -F '\t' '{ printf "%6.1f s %6.1f s  %s\n", $1, $2, $3 }'
  [ -n "${TEST_TIMES:-}" ] && sort -rn "$s_tmp"/*.time > "$TEST_TIMES"
  cat "$s_tmp"/*.time | awk -F '\t' '{ w += $1; c += $2 }
    END { printf "all suites: %.1f s of wall time one after the other, %.1f s of processor time\n", w, c }'
  echo "$s_passed passed, $s_failed failed"
  [ "$s_failed" -eq 0 ]
}
