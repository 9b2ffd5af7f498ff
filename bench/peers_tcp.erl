%% Erlang's side of the TCP benchmarks (make bench): gen_tcp with
%% {active, once} and {packet, line}, a process per connection on both
%% ends, as bench/tcp.lua does with actors. Output in the peers' format.
%% Usage: erl -noshell +S 1 -run peers_tcp main echo N C | idle K
-module(peers_tcp).
-export([main/1]).

main(["echo", NStr, CStr]) ->
    {N, C} = {list_to_integer(NStr), list_to_integer(CStr)},
    Port = server(),
    Per = N div C,
    Self = self(),
    Clients = [spawn(fun() -> client(Port, Per, Self) end) || _ <- lists:seq(1, C)],
    [receive {ready, P} -> ok end || P <- Clients],
    T0 = now_s(),
    [P ! go || P <- Clients],
    [receive {done, P} -> ok end || P <- Clients],
    Name = "tcp_echo_" ++ integer_to_list(C),
    emit(Name, Per * C, now_s() - T0, ""),
    halt(0);
main(["idle", KStr]) ->
    K = list_to_integer(KStr),
    Port = server(),
    erlang:garbage_collect(),
    Before = erlang:memory(total),
    Self = self(),
    T0 = now_s(),
    Clients = [spawn(fun() -> idle_client(Port, Self) end) || _ <- lists:seq(1, K)],
    [receive {ready, P} -> ok end || P <- Clients],
    wait_accepted(K),
    Secs = now_s() - T0,
    erlang:garbage_collect(),
    Bytes = (erlang:memory(total) - Before) div K,
    emit("tcp_idle", K, Secs, " bytes_per_conn=" ++ integer_to_list(Bytes)),
    halt(0).

now_s() -> erlang:monotonic_time(microsecond) / 1.0e6.

emit(Name, Count, Secs, Extra) ->
    io:format("bench=~s impl=erlang count=~b secs=~.4f rate=~b~s~n",
              [Name, Count, Secs, round(Count / Secs), Extra]).

server() ->
    {ok, L} = gen_tcp:listen(0, [binary, {packet, line}, {active, false},
                                 {reuseaddr, true}, {backlog, 4096}]),
    {ok, Port} = inet:port(L),
    register(counter, spawn(fun() -> count(0, []) end)),
    spawn(fun() -> acceptor(L) end),
    Port.

acceptor(L) ->
    {ok, S} = gen_tcp:accept(L),
    P = spawn(fun() -> receive go -> echo(S) end end),
    ok = gen_tcp:controlling_process(S, P),
    P ! go,
    counter ! accepted,
    acceptor(L).

echo(S) ->
    ok = inet:setopts(S, [{active, once}]),
    receive
        {tcp, S, Line} -> gen_tcp:send(S, Line), echo(S);
        {tcp_closed, S} -> ok
    end.

count(N, Waiting) ->
    receive
        accepted -> [W ! {accepted, N + 1} || W <- Waiting], count(N + 1, Waiting);
        {wait, W} -> W ! {accepted, N}, count(N, [W | Waiting])
    end.

wait_accepted(K) ->
    counter ! {wait, self()},
    wait_count(K).

wait_count(K) ->
    receive
        {accepted, N} when N >= K -> ok;
        {accepted, _} -> wait_count(K)
    end.

client(Port, Per, Parent) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {packet, line}, {active, false}]),
    Parent ! {ready, self()},
    receive go -> ok end,
    ping(S, Per),
    Parent ! {done, self()}.

ping(_, 0) -> ok;
ping(S, K) ->
    ok = gen_tcp:send(S, <<"ping\n">>),
    ok = inet:setopts(S, [{active, once}]),
    receive {tcp, S, _} -> ping(S, K - 1) end.

idle_client(Port, Parent) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {packet, line}, {active, false}]),
    Parent ! {ready, self()},
    receive stop -> gen_tcp:close(S) end.
