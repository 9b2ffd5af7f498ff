#!/usr/bin/env bash
# The peers of bench/http_server.lua (make bench): nginx + Lua
# (bench/http_server_nginx.conf: one worker, content_by_lua_block),
# Erlang/OTP's inets httpd (bench/http_server_inets.erl, +S 1), and H2O
# and libwebsockets alone with a C handler (bench/h2o_floor.c,
# bench/lws_floor.c: the floors of a server on either library), each on
# core 0 (taskset), under the same wrk as tend's (core 1: WRK_CPU), or
# with bench/http_idle.py for the memory per idle keep-alive connection.
# Usage: bench/http_server_peers.sh nginx|inets|h2o|lws SECONDS hello
#        bench/http_server_peers.sh nginx|inets|h2o|lws idle N
# Prints one bench= line as bench/http_server.lua does (impl=nginx|erlang|h2o|lws).
set -euo pipefail
cd "$(dirname "$0")/.."
impl="$1" secs="$2" mode="${3:-hello}"
[[ "$secs" == idle ]] && mode=idle
wrk_cpu="${WRK_CPU-1}"
dir="$(mktemp -d)"
pid=""
cleanup() { [[ -n "$pid" ]] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT
wrk=(wrk)
[[ -n "$wrk_cpu" ]] && wrk=(taskset -c "$wrk_cpu" wrk)

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() { for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$1/" && return 0; sleep 0.05; done; echo "$impl did not start" >&2; exit 1; }

case "$impl" in
  nginx)
    port=$(free_port)
    sed -e "s|PORT|$port|; s|DIR|$dir|g" bench/http_server_nginx.conf > "$dir/nginx.conf"
    taskset -c 0 nginx -c "$dir/nginx.conf" -p "$dir" & # taskset execs: $! is nginx
    pid=$!
    wait_up "$port"
    server=$(pgrep -P "$pid" | head -1) # the worker: it holds the connections
    name=nginx ;;
  inets)
    erlc -o "$dir" bench/http_server_inets.erl
    taskset -c 0 erl -noshell +S 1 -pa "$dir" -run http_server_inets main > "$dir/out" &
    pid=$!
    for _ in $(seq 100); do grep -q '^port=' "$dir/out" && break; sleep 0.05; done
    port=$(sed -n 's/^port=//p' "$dir/out")
    wait_up "$port"
    server=$pid
    name=erlang ;;
  h2o|lws) # H2O or libwebsockets alone (bench/h2o_floor.c, bench/lws_floor.c)
    libs="-lwebsockets"
    [[ "$impl" == h2o ]] && libs="$(pkg-config --cflags --libs libh2o) -luv"
    cc -O2 -o "$dir/floor" "bench/${impl}_floor.c" $libs
    port=$(free_port)
    taskset -c 0 "$dir/floor" "$port" > "$dir/out" &
    pid=$!
    wait_up "$port"
    server=$pid
    name=$impl ;;
  *) echo "usage: $0 nginx|inets|h2o|lws SECONDS hello | nginx|inets|h2o|lws idle N" >&2; exit 2 ;;
esac

if [[ "$mode" == idle ]]; then
  python3 bench/http_idle.py "$server" "$port" "${3:-2000}" | sed "s/\$/ impl=$name/"
  exit 0
fi
# the server's CPU time (user + system, clock ticks) from /proc: per
# request, steadier than the rate on a shared machine (as tend's cpu_us)
ticks() { sed 's/^.*) //' "/proc/$server/stat" | awk '{ print $12 + $13 }'; }
t0=$(ticks)
out=$("${wrk[@]}" -t1 -c100 -d"${secs}s" --latency "http://127.0.0.1:$port/")
t1=$(ticks)
rate=$(sed -n 's/^Requests\/sec:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$out")
p99=$(sed -n 's/^[[:space:]]*99%[[:space:]]*\([0-9.]*[a-z]*\).*/\1/p' <<<"$out")
non2xx=$(sed -n 's/^[[:space:]]*Non-2xx or 3xx responses: \([0-9]*\).*/\1/p' <<<"$out")
[[ -z "$rate" ]] && { echo "wrk failed: $out" >&2; exit 1; }
n=$(sed -n 's/^[[:space:]]*\([0-9]*\) requests in.*/\1/p' <<<"$out")
cpu_us=$(awk -v t="$((t1 - t0))" -v n="${n:-0}" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.1f", (n > 0 ? t * 1e6 / hz / n : 0) }')
echo "bench=http_serve_$mode impl=$name secs=$secs rate=$rate p99=${p99:-?} non2xx=${non2xx:-0} cpu_us=$cpu_us"
