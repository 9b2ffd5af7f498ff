# A pool of suites run in parallel, sourced by scripts/test and
# scripts/check (bash). Each suite is a command whose output is kept apart
# and printed whole, in the order the suites were added, as soon as it and
# every suite before it have ended (grouped, never interleaved). At the end:
# the ten slowest suites with their wall and processor times, the failed
# suites again with their failing tests (so the end of a long log names
# them), then one line "N passed, M failed" over all.
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
# JOBS: $TEST_JOBS, else three times the processors (the real-time suites
# mostly wait on the clock, not on a processor: on 2 processors, 4 at once
# took 55 s, 6 at once 42 s). TEST_TIMES=FILE keeps every suite's wall
# and processor time there.
set -u
s_n=0
s_passed=0
s_failed=0
s_tmp=$(mktemp -d)
trap 'rm -rf "$s_tmp"' EXIT
declare -a s_name s_kind s_pat s_cmd s_head s_fails
s_fails=()

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

s_failed_at() { # $1: the suite's index; keeps its name and failing tests
  # (luaunit's "N) test_name" lines and the line after each) for the end
  local l grab=0 tests=""
  while IFS= read -r l || [ -n "$l" ]; do
    if [ "$grab" -eq 1 ]; then tests+="      ${l:0:200}"$'\n'; grab=0; fi
    if [[ $l =~ ^[0-9]+\)\ [A-Za-z_] ]]; then tests+="    $l"$'\n'; grab=1; fi
  done < "$s_tmp/$1.out"
  s_fails+=("  ${s_name[$1]}"$'\n'"$tests")
}

s_tally() { # $1: the suite's index; prints its output and counts it
  # (few forks: a fork costs ~20 ms on a loaded machine, ~100 suites)
  local i=$1 out="$s_tmp/$1.out" rc line="" l f0=$s_failed
  read -r rc < "$s_tmp/$i.rc"
  [ -n "${s_head[i]}" ] && echo "== ${s_head[i]}"
  case ${s_kind[i]} in
    count | spec)
      while IFS= read -r l || [ -n "$l" ]; do
        if [ "${s_kind[i]}" = count ] || [[ $l == "tend test:"* ]]; then line=$l; fi
      done < "$out"
      echo "== ${s_name[i]}"
      cat "$out"
      if [[ $line =~ \ ([0-9]+)\ passed,\ ([0-9]+)\ failed ]]; then
        s_add "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}"
        if [ "$rc" -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ]; then
          echo "${s_name[i]}: FAILED (exit status $rc)"
          s_add 0 1
        fi
      else
        echo "${s_name[i]}: FAILED (no summary line; exit status $rc)"
        s_add 0 1
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
  [ "$s_failed" -gt "$f0" ] && s_failed_at "$i"
  return 0
}

s_ms() { # $1: a time as `times` prints it (1m2.345s); sets REPLY to its ms
  [[ $1 =~ ^([0-9]+)m([0-9]+)\.([0-9]+)s$ ]] || { REPLY=0; return; }
  REPLY=$((BASH_REMATCH[1] * 60000 + 10#${BASH_REMATCH[2]} * 1000 + 10#${BASH_REMATCH[3]}))
}

s_start() { # $1: the suite's index; runs it in the background
  local i=$1
  (
    t0=${EPOCHREALTIME/./}
    eval "${s_cmd[i]}" > "$s_tmp/$i.out" 2>&1 < /dev/null
    rc=$?
    t1=${EPOCHREALTIME/./}
    times > "$s_tmp/$i.cpu" # its second line: the suite's user and system time
    { read -r _; read -r user sys; } < "$s_tmp/$i.cpu"
    s_ms "$user"
    cpu=$REPLY
    s_ms "$sys"
    printf '%d\t%d\t%s\n' $(((t1 - t0) / 1000)) $((cpu + REPLY)) "${s_name[i]}" > "$s_tmp/$i.time"
    echo "$rc" > "$s_tmp/$i.rc" # last: the suite has ended
  ) &
}

run_suites() {
  local jobs=${TEST_JOBS:-$(($(nproc) * 3))} next=0 shown=0 ended
  shopt -s nullglob
  while [ "$shown" -lt "$s_n" ]; do
    ended=("$s_tmp"/*.rc) # (no fork: `jobs` in $(...) sees no job)
    while [ "$next" -lt "$s_n" ] && [ $((next - ${#ended[@]})) -lt "$jobs" ]; do
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
  cat "$s_tmp"/*.time | sort -rn | awk -F '\t' -v keep="${TEST_TIMES:-}" '
    NR <= 10 { printf "%6.1f s %6.1f s  %s\n", $1 / 1000, $2 / 1000, $3 }
    keep != "" { printf "%.1f\t%.1f\t%s\n", $1 / 1000, $2 / 1000, $3 > keep }
    { w += $1; c += $2 }
    END { printf "all suites: %.1f s of wall time one after the other, %.1f s of processor time\n", w / 1000, c / 1000 }'
  if [ "${#s_fails[@]}" -gt 0 ]; then
    echo "== failed suites"
    printf '%s' "${s_fails[@]}"
  fi
  echo "$s_passed passed, $s_failed failed"
  [ "$s_failed" -eq 0 ]
}
