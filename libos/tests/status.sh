# Exit statuses and dying readers: a writer whose reader has gone gets
# SIGPIPE (141 under pipefail) or, ignoring it, EPIPE; statuses of exits and
# signals reach the shell as on Linux; failing applets report their errors.
# (Shell errors come from `sh -c`: this script's path differs on the host.)
set -o pipefail
yes | head -n 3; echo "yes | head: $?"
seq 100000 | head -n 2; echo "seq | head: $?"
(trap '' PIPE; yes | head -n 1); echo "yes, SIGPIPE ignored: $?"
(trap '' PIPE; seq 100000 | head -n 1); echo "seq, SIGPIPE ignored: $?"
yes | sh -c 'exit 5'; echo "reader exits 5: $?"
true | false | true; echo "false in the middle: $?"
set +o pipefail
yes | head -n 1 | wc -l; echo "without pipefail: $?"
sh -c 'exit 3'; echo "exit 3: $?"
(exit 300); echo "exit 300: $?"
sh -c 'kill -9 $$'; echo "SIGKILL: $?"
sh -c 'kill $$'; echo "SIGTERM: $?"
sh -c 'kill -PIPE $$'; echo "SIGPIPE: $?"
sh -c 'kill -HUP $$'; echo "SIGHUP: $?"
sh -c 'kill -USR1 $$'; echo "SIGUSR1: $?"
cat tmp; echo "cat a directory: $?"
cat tmp/missing; echo "cat a missing file: $?"
sh -c 'cat < tmp/missing'; echo "redirect from a missing file: $?"
mkdir tmp; echo "mkdir an existing directory: $?"
rmdir etc; echo "rmdir a full directory: $?"
ls tmp/missing; echo "ls a missing file: $?"
sh -c 'echo x > tmp/missing/x'; echo "write under a missing directory: $?"
echo still running
