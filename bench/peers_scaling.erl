%% The Erlang twins of four rows of bench/scaling.lua, the complexity
%% audit (one scheduler: +S 1): what a registered name and a supervisor's
%% children cost the BEAM as their number grows, on the same machine and
%% in the same invocation as tend's rows. Output: the audit's line, with
%% the op named erlang:OP (scripts/bench prints it as a row of its own):
%%   bench=scaling impl=erlang op=erlang:OP size=SIZE count=COUNT ns=NS unit=U
%%   send_by_name SIZE       SIZE registered processes; COUNT sends by a
%%                           name made per call (list_to_atom, as
%%                           tend's "n" .. i)
%%   send_to_held_name SIZE  the same with the names made beforehand
%%   which_children SIZE     supervisor:which_children of SIZE children,
%%                           per row
%%   registered SIZE         erlang:registered() with SIZE names, per name
%% Times are the process's CPU time (statistics(runtime): ms), as tend's
%% rows read os.clock; COUNT is large enough for tens of milliseconds.
%% Run as: erl +S 1 +P 4000000 +t 4000000 -noshell -run peers_scaling main OP SIZE
-module(peers_scaling).
-export([main/1, init/1, start_idle/0]).

main([Op, Size0]) ->
    logger:set_primary_config(level, none),
    Size = list_to_integer(Size0),
    {Count, Ms} = op(Op, Size),
    io:format("bench=scaling impl=erlang op=erlang:~s size=~b count=~b ns=~.1f unit=~s~n",
              [Op, Size, Count, Ms * 1.0e6 / Count, unit(Op)]),
    erlang:halt(0).

unit("send_by_name") -> "send_by_a_name_made_per_call";
unit("send_to_held_name") -> "send_by_a_held_name";
unit("which_children") -> "row";
unit("registered") -> "name_listed".

cpu_ms() -> {Ms, _} = erlang:statistics(runtime), Ms.

idle() -> receive stop -> ok end.

name(I) -> list_to_atom("n" ++ integer_to_list(I)).

%% SIZE idle processes registered as n1..nSIZE (their mailboxes drained
%% by nobody: the sends queue, as tend's idle actors' do)
register_all(Size) ->
    [register(name(I), spawn(fun idle/0)) || I <- lists:seq(1, Size)],
    ok.

op("send_by_name", Size) ->
    register_all(Size),
    M = 100000,
    T0 = cpu_ms(),
    send_by_name(1, M, Size),
    {M, cpu_ms() - T0};
op("send_to_held_name", Size) ->
    register_all(Size),
    Names = list_to_tuple([name(I) || I <- lists:seq(1, Size)]),
    M = 100000,
    T0 = cpu_ms(),
    send_held(1, M, Size, Names),
    {M, cpu_ms() - T0};
op("which_children", Size) ->
    {ok, Sup} = supervisor:start_link(?MODULE, Size),
    Calls = max(1, 2000000 div Size),
    _ = supervisor:which_children(Sup),
    T0 = cpu_ms(),
    _ = [supervisor:which_children(Sup) || _ <- lists:seq(1, Calls)],
    {Calls * Size, cpu_ms() - T0};
op("registered", Size) ->
    register_all(Size),
    Calls = max(1, 2000000 div Size),
    T0 = cpu_ms(),
    Names = lists:sum([length(erlang:registered()) || _ <- lists:seq(1, Calls)]),
    {Names, cpu_ms() - T0}.

send_by_name(I, M, _Size) when I > M -> ok;
send_by_name(I, M, Size) ->
    name(I rem Size + 1) ! I,
    send_by_name(I + 1, M, Size).

send_held(I, M, _Size, _Names) when I > M -> ok;
send_held(I, M, Size, Names) ->
    element(I rem Size + 1, Names) ! I,
    send_held(I + 1, M, Size, Names).

start_idle() -> {ok, spawn_link(fun idle/0)}.

%% the supervisor of which_children: SIZE idle children
init(Size) ->
    Child = fun(I) -> #{id => I, start => {?MODULE, start_idle, []}} end,
    {ok, {#{strategy => one_for_one, intensity => 1, period => 5},
          [Child(I) || I <- lists:seq(1, Size)]}}.
