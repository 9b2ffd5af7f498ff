%% Erlang distribution's side of the node benchmarks (make bench): two
%% nodes on this machine (the second started with OTP's peer module; epmd
%% comes with erlang-base), as bench/nodes.lua does with two tend nodes
%% over NATS. Output in the peers' format.
%% Usage: erl -sname A -noshell +S 1 -pa DIR -run peers_dist main
%%          pingpong N | call N | stream N | ring SIZE TOKENS ROUNDS K
%% (ring: SIZE processes in contiguous shares on K nodes, TOKENS tokens
%% going ROUNDS times around at once; stream: N integers one way to a
%% process on the other node, which answers with its count after them)
-module(peers_dist).
-export([main/1, pong/0, server_loop/0, relay/0, sink/1]).

main(["pingpong", NStr]) ->
    N = list_to_integer(NStr),
    {Peer, Node} = peer_node(b),
    Pong = spawn(Node, ?MODULE, pong, []),
    ping(Pong, 1000), % warm up
    T0 = now_s(),
    ping(Pong, N),
    emit("remote_pingpong", 2 * N, now_s() - T0),
    peer:stop(Peer),
    halt(0);
main(["call", NStr]) ->
    N = list_to_integer(NStr),
    {Peer, Node} = peer_node(b),
    Srv = spawn(Node, ?MODULE, server_loop, []),
    call(Srv, 1000),
    T0 = now_s(),
    call(Srv, N),
    emit("remote_call", N, now_s() - T0),
    peer:stop(Peer),
    halt(0);
main(["stream", NStr]) ->
    N = list_to_integer(NStr),
    {Peer, Node} = peer_node(b),
    Sink = spawn(Node, ?MODULE, sink, [0]),
    stream(Sink, 1000), % warm up
    T0 = now_s(),
    stream(Sink, N),
    emit("remote_stream", N, now_s() - T0),
    peer:stop(Peer),
    halt(0);
main(["ring", SStr, TStr, RStr, KStr]) ->
    [Size, Tokens, Rounds, K] = [list_to_integer(X) || X <- [SStr, TStr, RStr, KStr]],
    Peers = [peer_node(list_to_atom("r" ++ integer_to_list(I))) || I <- lists:seq(2, K)],
    Nodes = list_to_tuple([node() | [N || {_, N} <- Peers]]),
    Main = self(),
    Members = list_to_tuple([spawn(element((I - 1) * K div Size + 1, Nodes), ?MODULE, relay, [])
                             || I <- lists:seq(1, Size)]),
    [element(I, Members) ! {next, element(I rem Size + 1, Members), Main} || I <- lists:seq(1, Size)],
    %% every member has its next before the clock starts (each node's last
    %% member answers once its setup, sent before, is taken)
    [begin element(I * Size div K, Members) ! {sync, Main}, receive synced -> ok end end
     || I <- lists:seq(2, K)],
    Hops = Size * Rounds,
    T0 = now_s(),
    [element((T - 1) * Size div Tokens + 1, Members) ! Hops || T <- lists:seq(1, Tokens)],
    [receive done -> ok end || _ <- lists:seq(1, Tokens)],
    emit("ring_nodes_" ++ integer_to_list(K), Tokens * Hops, now_s() - T0),
    [peer:stop(P) || {P, _} <- Peers],
    halt(0).

ping(_, 0) -> ok;
ping(Pong, N) ->
    Pong ! {self(), N},
    receive N -> ping(Pong, N - 1) end.

pong() ->
    receive {From, X} -> From ! X, pong() end.

%% gen_server:call's protocol (a monitor and a tagged reply), without the
%% gen_server module on the far side: gen:call does the same
call(_, 0) -> ok;
call(Srv, N) ->
    {ok, N} = gen:call(Srv, '$gen_call', N),
    call(Srv, N - 1).

server_loop() ->
    receive {'$gen_call', From, X} -> gen:reply(From, X), server_loop() end.

stream(Sink, N) ->
    send_all(Sink, 1, N),
    Sink ! {done, self()},
    receive {count, N} -> ok end.

send_all(_, I, N) when I > N -> ok;
send_all(Sink, I, N) -> Sink ! I, send_all(Sink, I + 1, N).

sink(C) ->
    receive
        {done, From} -> From ! {count, C}, sink(0);
        _ -> sink(C + 1)
    end.

relay() -> receive {next, Next, Main} -> relay(Next, Main) end.

relay(Next, Main) ->
    receive
        {sync, From} -> From ! synced, relay(Next, Main);
        0 -> Main ! done, relay(Next, Main);
        N -> Next ! N - 1, relay(Next, Main)
    end.

peer_node(Name) ->
    Dir = filename:dirname(code:which(?MODULE)),
    {ok, Peer, Node} = peer:start_link(#{name => Name,
                                         args => ["-pa", Dir, "+S", "1"]}),
    {Peer, Node}.

now_s() -> erlang:monotonic_time(microsecond) / 1.0e6.

emit(Name, Count, Secs) ->
    io:format("bench=~s impl=erlang count=~b secs=~.4f rate=~b~n",
              [Name, Count, Secs, round(Count / Secs)]).
