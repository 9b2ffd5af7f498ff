# The Elixir twin of bench/streams.lua's async mode: the same work (map
# x * 3, keep the even ones, sum them over 1..N) with the same number of
# process boundaries as tend.stream's
# range(1, N):async():map(f):async():filter(g):async():run_fold: a source
# process, a map process, a filter process and the folding caller, linked
# by the same demand protocol as tend's :async() (GenStage's, by hand: a
# consumer grants its producer up to its buffer, 16, asks again once half
# of it is free; a producer sends what it has, up to the credit, as one
# message). Prints a bench= line (impl=erlang: the column of the BEAM in
# make bench).
# The fused mode is Elixir's Stream itself (Stream.map |> Stream.filter |>
# Enum.reduce, in one process): the peer of the fused row.
# Usage: elixir --erl "+S 1" bench/streams.exs [async|fused] N
defmodule Twin do
  @buf 16
  @half div(@buf, 2)

  # The source: a batch of up to its credit at a time.
  def source(i, n, credit) do
    receive do
      {:subscribe, down} -> source(i, n, credit, down)
    end
  end

  defp source(i, n, 0, down) do
    receive do
      {:demand, k} -> source(i, n, k, down)
    end
  end

  defp source(i, n, credit, down) do
    if i > n do
      send(down, :done)
    else
      hi = min(n, i + credit - 1)
      send(down, {:batch, Enum.to_list(i..hi)})
      source(hi + 1, n, credit - (hi - i + 1), down)
    end
  end

  # A stage between two boundaries: step(x) -> {:ok, y} | :skip.
  def stage(up, step) do
    receive do
      {:subscribe, down} ->
        send(up, {:subscribe, self()})
        send(up, {:demand, @buf})
        loop(up, down, step, [], 0, @buf, 0, false)
    end
  end

  defp loop(up, down, step, q, qn, outstanding, credit, done) do
    {q, qn, outstanding, credit, done} =
      receive do
        {:batch, xs} -> {q ++ xs, qn + length(xs), outstanding - length(xs), credit, done}
        {:demand, k} -> {q, qn, outstanding, credit + k, done}
        :done -> {q, qn, outstanding, credit, true}
      end

    {out, nout, q, qn} = emit(q, qn, step, credit, [], 0)
    if nout > 0, do: send(down, {:batch, Enum.reverse(out)})
    credit = credit - nout
    ahead = outstanding + qn

    outstanding =
      if not done and ahead <= @half do
        send(up, {:demand, @buf - ahead})
        outstanding + @buf - ahead
      else
        outstanding
      end

    if done and qn == 0 do
      send(down, :done)
    else
      loop(up, down, step, q, qn, outstanding, credit, done)
    end
  end

  defp emit(q, qn, _step, credit, out, nout) when nout >= credit or qn == 0, do: {out, nout, q, qn}

  defp emit([x | q], qn, step, credit, out, nout) do
    case step.(x) do
      {:ok, y} -> emit(q, qn - 1, step, credit, [y | out], nout + 1)
      :skip -> emit(q, qn - 1, step, credit, out, nout)
    end
  end

  # The caller: folds what arrives, asking again once half its buffer is free.
  def fold(up, acc) do
    send(up, {:subscribe, self()})
    send(up, {:demand, @buf})
    fold(up, acc, @buf)
  end

  defp fold(up, acc, outstanding) do
    receive do
      {:batch, xs} ->
        acc = Enum.reduce(xs, acc, fn x, a -> a + x end)
        outstanding = outstanding - length(xs)

        if outstanding <= @half do
          send(up, {:demand, @buf - outstanding})
          fold(up, acc, @buf)
        else
          fold(up, acc, outstanding)
        end

      :done ->
        acc
    end
  end
end

{mode, n} =
  case System.argv() do
    [n] -> {"async", n}
    [mode, n] -> {mode, n}
  end

n = String.to_integer(n)
t0 = System.monotonic_time(:microsecond)

sum =
  case mode do
    # the twin of the async row: four processes, the demand protocol above
    "async" ->
      src = spawn_link(fn -> Twin.source(1, n, 0) end)
      mapper = spawn_link(fn -> Twin.stage(src, fn x -> {:ok, x * 3} end) end)
      filter = spawn_link(fn -> Twin.stage(mapper, fn x -> if rem(x, 2) == 0, do: {:ok, x}, else: :skip end) end)
      Twin.fold(filter, 0)

    # Elixir's Stream itself: lazy, in the calling process (the fused row's peer)
    "fused" ->
      1..n
      |> Stream.map(fn x -> x * 3 end)
      |> Stream.filter(fn x -> rem(x, 2) == 0 end)
      |> Enum.reduce(0, fn x, acc -> acc + x end)
  end

secs = (System.monotonic_time(:microsecond) - t0) / 1.0e6
^sum = 3 * div(n, 2) * (div(n, 2) + 1)
IO.puts("bench=stream_#{mode} impl=erlang count=#{n} seconds=#{:erlang.float_to_binary(secs, decimals: 6)} rate=#{round(n / secs)}")
