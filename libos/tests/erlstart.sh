# Debian's Erlang started the usual ways (issue 29): erl -noshell -eval
# (through erl's shell script and erlexec), escript, and a port to a shell
# command through erl_child_setup (open_port({spawn, Cmd})), with its
# output and exit status.
# with: erlang-base
erl -noshell -eval 'io:format("erl ~p~n", [lists:sum([1,2,3])]), halt().'
echo "erl: $?"
erl -noshell -eval 'halt(4).'
echo "erl halt(4): $?"
mkdir -p tmp
cat > tmp/hello.escript <<'ES'
#!/usr/bin/env escript
main(Args) ->
    io:format("escript args ~p~n", [Args]),
    halt(length(Args)).
ES
escript tmp/hello.escript a b
echo "escript: $?"
erl -noshell -eval '
P = open_port({spawn, "echo from a port; exit 3"}, [exit_status, stderr_to_stdout]),
Loop = fun L(Acc) -> receive {P, {data, D}} -> L(Acc ++ D); {P, {exit_status, S}} -> {Acc, S} end end,
{Out, Status} = Loop([]),
io:format("port said ~p, status ~p~n", [Out, Status]),
io:format("os:cmd ~p~n", [os:cmd("echo hi; echo there")]),
halt().'
echo "port: $?"
