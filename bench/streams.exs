# The Elixir twin of bench/streams.lua's async mode: Stream.map, then
# Stream.filter, then a fold (Enum.reduce) over 1..N, the same work as
# tend.stream's range(1, N):async():map(f):async():filter(g):async():run_fold.
# Prints a bench= line (impl=erlang: the column of the BEAM in make bench).
# Usage: elixir --erl "+S 1" bench/streams.exs N
[n] = System.argv()
n = String.to_integer(n)
t0 = System.monotonic_time(:microsecond)
sum =
  1..n
  |> Stream.map(fn x -> x * 3 end)
  |> Stream.filter(fn x -> rem(x, 2) == 0 end)
  |> Enum.reduce(0, fn x, acc -> acc + x end)
secs = (System.monotonic_time(:microsecond) - t0) / 1.0e6
true = sum > 0
IO.puts("bench=stream_async impl=erlang count=#{n} seconds=#{:erlang.float_to_binary(secs, decimals: 6)} rate=#{round(n / secs)}")
