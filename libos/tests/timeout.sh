# busybox timeout (issue 29: `timeout CMD` never started CMD): the
# command runs and its status comes back; one that runs too long is ended
# by the signal asked for.
timeout 5 echo started; echo "status $?"
timeout 5 sh -c 'exit 7'; echo "status $?"
timeout 1 sleep 3; echo "killed: $?"
timeout -s KILL 1 sleep 3; echo "killed by KILL: $?"
# (A relative path: the host runs in a copy of the root, not its own /etc.)
timeout 5 cat etc/group | head -n 1
