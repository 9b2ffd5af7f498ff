%% The Erlang twins of bench/bench.lua: the same workloads, sizes and output
%% format (one line: bench=NAME impl=erlang variant=V ... rate=R), run with
%% one scheduler (+S 1) by scripts/bench.
%%   pingpong N int|string|table  N round trips; the answer goes to the
%%                                 sender carried in the message
%%   ring SIZE ROUNDS              a token around SIZE processes
%%   call N                        N gen_server:call round trips
%%   spawn N                       N idle processes (after a first round:
%%                                 warm), rate and bytes per process
%%   restart K                     an OTP supervisor (one_for_one) whose
%%                                 gen_server child crashes K times
%%   restart_raw K                 the same with spawn_link and trap_exit
%%   pairs P N                     P independent pingpong pairs of N round
%%                                 trips each (bench/schedulers.lua's)
%%   workers W N J                 W CPU-bound workers, J rounds of N terms
%%                                 each (run with +S 1 and +S 2)
-module(peers).
-export([main/1, init/1, handle_call/3, handle_cast/2, handle_info/2]).

main([Bench | Args]) ->
    logger:set_primary_config(level, none), % no crash reports
    bench(Bench, Args),
    erlang:halt(0).

now_us() -> erlang:monotonic_time(microsecond).

emit(Bench, Variant, Count, Us, Extra) ->
    Secs = Us / 1.0e6,
    io:format("bench=~s impl=erlang variant=~s count=~b secs=~.4f rate=~b~s~n",
              [Bench, Variant, Count, Secs, round(Count / Secs), Extra]).

%% ---------------------------------------------------------------- pingpong
bench("pingpong", [N0, Kind]) ->
    N = list_to_integer(N0),
    Msg = case Kind of
              "int" -> 42;
              "string" -> <<"ping">>;
              "table" -> {ping, 1, [1, 2, 3]}
          end,
    Self = self(),
    Pong = spawn(fun pong/0),
    Ping = spawn(fun() -> receive go -> ok end,
                          T0 = now_us(), ping(Pong, Msg, N),
                          Self ! {done, now_us() - T0} end),
    Ping ! go,
    receive {done, Us} -> ok end,
    exit(Pong, kill),
    emit(pingpong, Kind, 2 * N, Us, "");

%% ---------------------------------------------------------------- pairs
bench("pairs", [P0, N0]) ->
    P = list_to_integer(P0),
    N = list_to_integer(N0),
    Self = self(),
    Pings = [spawn(fun() -> Pong = spawn(fun pong/0),
                            receive go -> ok end,
                            ping(Pong, 42, N),
                            exit(Pong, kill),
                            Self ! done end) || _ <- lists:seq(1, P)],
    T0 = now_us(),
    [Ping ! go || Ping <- Pings],
    [receive done -> ok end || _ <- Pings],
    emit(pairs, "S" ++ integer_to_list(erlang:system_info(schedulers_online)),
         2 * P * N, now_us() - T0, "");

%% ---------------------------------------------------------------- workers
bench("workers", [W0, N0, J0]) ->
    W = list_to_integer(W0),
    N = list_to_integer(N0),
    J = list_to_integer(J0),
    Self = self(),
    Workers = [spawn(fun() -> work_loop(N, Self) end) || _ <- lists:seq(1, W)],
    T0 = now_us(),
    lists:foreach(fun(_) ->
                          [Wk ! go || Wk <- Workers],
                          [receive {sum, _} -> ok end || _ <- Workers]
                  end, lists:seq(1, J)),
    Us = now_us() - T0,
    [exit(Wk, kill) || Wk <- Workers],
    emit(workers, "S" ++ integer_to_list(erlang:system_info(schedulers_online)),
         W * J, Us, "");

%% ---------------------------------------------------------------- ring
bench("ring", [Size0, Rounds0]) ->
    Size = list_to_integer(Size0),
    Rounds = list_to_integer(Rounds0),
    Self = self(),
    Head = spawn(fun() -> receive {next, Next} -> head(Next, Self) end end),
    Rest = [spawn(fun() -> receive {next, Next} -> fwd(Next) end end)
            || _ <- lists:seq(2, Size)],
    All = [Head | Rest],
    [P ! {next, Next} || {P, Next} <- lists:zip(All, Rest ++ [Head])],
    T0 = now_us(),
    Head ! Rounds,
    receive ring_done -> ok end,
    Us = now_us() - T0,
    [exit(P, kill) || P <- All],
    emit(ring, "int", Size * Rounds, Us, "");

%% ---------------------------------------------------------------- call
bench("call", [N0]) ->
    N = list_to_integer(N0),
    {ok, Server} = gen_server:start(?MODULE, server, []),
    T0 = now_us(),
    call_loop(Server, N),
    Us = now_us() - T0,
    emit(call, "gen_server", N, Us, "");

%% ---------------------------------------------------------------- spawn
bench("spawn", [N0]) ->
    N = list_to_integer(N0),
    spawn_round(N), % cold: fresh memory
    erlang:garbage_collect(),
    M0 = erlang:memory(processes),
    T0 = now_us(),
    Pids = spawn_round(N),
    Us = now_us() - T0,
    M1 = erlang:memory(processes),
    [exit(P, kill) || P <- Pids],
    emit(spawn, "warm", N, Us,
         io_lib:format(" bytes_per_actor=~b", [round((M1 - M0) / N)]));

%% ---------------------------------------------------------------- restart
bench("restart", [K0]) ->
    K = list_to_integer(K0),
    process_flag(trap_exit, true),
    {ok, Sup} = supervisor:start_link(?MODULE, {sup, self()}),
    First = receive {started, P} -> P end,
    T0 = now_us(),
    crash_loop(First, K),
    Us = now_us() - T0,
    exit(Sup, shutdown),
    emit(restart, "otp-supervisor", K, Us, "");
bench("restart_raw", [K0]) ->
    K = list_to_integer(K0),
    Self = self(),
    spawn(fun() -> process_flag(trap_exit, true), raw_parent(Self, raw_child(Self)) end),
    First = receive {started, P} -> P end,
    T0 = now_us(),
    crash_loop(First, K),
    Us = now_us() - T0,
    emit(restart, "raw-link", K, Us, "").

ping(_Pong, _Msg, 0) -> ok;
ping(Pong, Msg, N) ->
    Pong ! {self(), Msg},
    receive {_, _} -> ping(Pong, Msg, N - 1) end.

pong() ->
    receive {From, Msg} -> From ! {self(), Msg}, pong() end.

head(Next, Driver) ->
    receive
        0 -> Driver ! ring_done, head(Next, Driver);
        R -> Next ! R - 1, head(Next, Driver)
    end.

fwd(Next) -> receive R -> Next ! R, fwd(Next) end.

call_loop(_Server, 0) -> ok;
call_loop(Server, N) -> N = gen_server:call(Server, N), call_loop(Server, N - 1).

idle() -> receive stop -> ok end.

%% Spawns N idle processes and waits until each has reached its receive.
spawn_round(N) ->
    Pids = [spawn(fun idle/0) || _ <- lists:seq(1, N)],
    settle(),
    Pids.

settle() ->
    case erlang:statistics(total_run_queue_lengths_all) of
        0 -> ok;
        _ -> erlang:yield(), settle()
    end.

%% Crashes the child K times, each time waiting for its successor.
crash_loop(Last, 0) -> Last;
crash_loop(Child, K) ->
    gen_server:cast(Child, crash),
    receive {started, Next} -> crash_loop(Next, K - 1) end.

raw_child(Driver) ->
    spawn_link(fun() -> Driver ! {started, self()},
                        receive {'$gen_cast', crash} -> exit(crash) end end).

raw_parent(Driver, _Child) ->
    receive {'EXIT', _, _} -> raw_parent(Driver, raw_child(Driver)) end.

%% ---------------------------------------------------------------- callbacks
%% One module is both the supervisor (init({sup, Driver})) and its
%% gen_server child (init({child, Driver})), and the call server.
init({sup, Driver}) ->
    Child = #{id => child, start => {gen_server, start_link, [?MODULE, {child, Driver}, []]}},
    {ok, {#{strategy => one_for_one, intensity => 100000000, period => 1}, [Child]}};
init({child, Driver}) ->
    Driver ! {started, self()},
    {ok, Driver};
init(server) ->
    {ok, none}.

handle_call(Req, _From, State) -> {reply, Req, State}.
handle_cast(crash, _State) -> exit(crash).
handle_info(_, State) -> {noreply, State}.

work_loop(N, Done) ->
    receive go -> Done ! {sum, squares(1, N, 0)}, work_loop(N, Done) end.

squares(I, N, S) when I > N -> S;
squares(I, N, S) -> squares(I + 1, N, S + I * I rem 7).
