# Debian's Erlang (erlang-base): beam.smp started directly, as erl's
# scripts would start it (BINDIR set), with one scheduler of each kind.
# It starts its signal and message threads, a scheduler, dirty schedulers
# and a poller, forks erl_child_setup (which closes what it inherited with
# close_range) and loads the kernel and stdlib applications.
# with: erlang-base
E=$(echo /usr/lib/erlang/erts-*/bin)
beam() {
    BINDIR=$E $E/beam.smp -S 1:1 -SDcpu 1:1 -SDio 1 -- -root /usr/lib/erlang \
        -bindir $E -progname erl -- -home / -noshell -eval "$1"
    echo "status $?"
}
beam 'io:format("hi~n"), halt().'
# Processes, messages and a timer: a spawned process answers a ping, a
# receive with nothing to receive times out after 10 ms, and halt/1's
# status reaches the shell.
beam '
Me = self(),
P = spawn(fun() -> receive {ping, From, N} -> From ! {pong, N * 2} end end),
P ! {ping, Me, 21},
receive {pong, X} -> io:format("pong ~p~n", [X]) end,
T0 = erlang:monotonic_time(millisecond),
receive never -> ok after 10 -> ok end,
Waited = erlang:monotonic_time(millisecond) - T0,
io:format("waited at least 10 ms: ~p~n", [Waited >= 10]),
Sum = lists:sum([N * N || N <- lists:seq(1, 100)]),
io:format("~p ~s~n", [Sum, lists:reverse("olleh")]),
halt(3).'
