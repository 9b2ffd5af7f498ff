%% Erlang's side of the process benchmarks (make bench): open_port with
%% spawn_executable, spawn-and-reap of /bin/true, and lines read from
%% `yes | head -n N` in line mode. Output in the peers' format.
%% Usage: erl -noshell -run peers_process main spawn N | lines N
-module(peers_process).
-export([main/1]).

main([Bench, NStr]) ->
    N = list_to_integer(NStr),
    run(Bench, N),
    halt(0).

now_s() -> erlang:monotonic_time(microsecond) / 1.0e6.

emit(Name, Count, Secs) ->
    io:format("bench=~s impl=erlang count=~b secs=~.4f rate=~b~n",
              [Name, Count, Secs, round(Count / Secs)]).

run("spawn", N) ->
    T0 = now_s(),
    spawn_loop(N),
    emit("proc_spawn", N, now_s() - T0);
run("lines", N) ->
    T0 = now_s(),
    Port = open_port({spawn_executable, "/bin/sh"},
                     [{args, ["-c", "yes | head -n " ++ integer_to_list(N)]},
                      {line, 65536}, exit_status, binary]),
    Count = read_lines(Port, 0),
    emit("proc_lines", Count, now_s() - T0).

spawn_loop(0) -> ok;
spawn_loop(K) ->
    Port = open_port({spawn_executable, "/bin/true"}, [exit_status]),
    receive {Port, {exit_status, 0}} -> ok end,
    spawn_loop(K - 1).

read_lines(Port, C) ->
    receive
        {Port, {data, {eol, _}}} -> read_lines(Port, C + 1);
        {Port, {data, {noeol, _}}} -> read_lines(Port, C);
        {Port, {exit_status, _}} -> C
    end.
