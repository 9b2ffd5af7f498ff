%% Erlang/OTP's inets httpd for bench/http_server_peers.sh: hello world
%% from a module of its own (do/1, the httpd callback), keep-alive, on a
%% free port of 127.0.0.1; prints "port=N" and serves until killed.
%% Run: erl -noshell +S 1 -pa DIR -run http_server_inets main
-module(http_server_inets).
-export([main/0, do/1]).

-include_lib("inets/include/httpd.hrl").

main() ->
    ok = inets:start(),
    Dir = filename:basedir(user_cache, "tend_bench_inets"),
    ok = filelib:ensure_path(Dir),
    {ok, Pid} = inets:start(httpd, [
        {port, 0}, {bind_address, {127, 0, 0, 1}},
        {server_name, "bench"}, {server_root, Dir}, {document_root, Dir},
        {modules, [?MODULE]},
        {keep_alive, true}, {max_keep_alive_request, 1000000},
        {keep_alive_timeout, 75}, {max_clients, 100000}]),
    [{port, Port}] = httpd:info(Pid, [port]),
    io:format("port=~p~n", [Port]),
    receive stop -> ok end.

do(#mod{}) ->
    Body = "hello, world\n",
    {proceed, [{response, {response,
        [{code, 200}, {content_type, "text/plain; charset=utf-8"},
         {content_length, integer_to_list(length(Body))}], Body}}]}.
