# Stress (Veneer only): issue 27's hostile programs, each with a verdict
# line (ok, or FAILED with what it printed). Run by linux.sh while the
# heartbeat watches.
verdict() {
    name=$1 good=$2
    shift 2
    read up idle </proc/uptime
    echo "phase: $name from $up s"
    out=$("$@" 2>&1)
    if [ -n "$out" ] && [ -z "$(echo "$out" | grep -v -E -e "$good" -e '^threadbomb: (process|longest)')" ]; then
        echo "$name: ok $(echo "$out" | grep -E '^threadbomb: (process|longest)' | tr '\n' ' ')"
    else
        echo "$name: FAILED: $(echo "$out" | tr '\n' ' ')"
    fi
}
# Thread bombs across several processes, a process forked meanwhile.
verdict threadbomb "joined them; a process forked meanwhile napped on time: yes" cbin/threadbomb -v 8
verdict threadbomb "joined them; a process forked meanwhile napped on time: yes" cbin/threadbomb -v -d 17
# Parents killed with children running: reaped at once, orphans to init.
verdict orphans 'yes$|parent: 1$' cbin/orphans
i=0 bad=0
while [ $i -lt 30 ]; do
    ( sleep 1000; true ) & P=$!
    sleep 0.1
    kill -9 $P
    wait $P
    [ $? -eq 137 ] || bad=$((bad + 1))
    i=$((i + 1))
done
ps -o pid,args | while read pid a b; do [ "$a $b" = "sleep 1000" ] && kill $pid; done
sleep 1
left=$(ps -o args | grep -c "^sleep 1000")
if [ $bad -eq 0 ] && [ $left -eq 0 ]; then r=ok; else r=FAILED; fi
echo "orphans: 30 parents killed with a child running: $bad waits not 137, $left orphans left: $r"
# Siblings unmapping a blocked reader's buffer; a thread the kernel ends.
verdict unmapread 'read: (-1 EFAULT|4096); joined: yes|left in the pipe: (8192|4096)$' cbin/unmapread
verdict threaddeath "joined: yes; its robust mutex: EOWNERDEAD" cbin/threaddeath
# A signal storm; 100 futex waiters requeued.
verdict sigstorm 'yes$' cbin/sigstorm
verdict futexcrowd 'accepted|100 waiters of 100 woken; a process napping meanwhile was on time: yes' cbin/futexcrowd
# CPU-bound programs under interval timers.
verdict itimers 'exited with 0' cbin/itimerspin
# A measurement (issue 27 class 2; lx_manythreads asserts it on a quiet
# machine): an uninvolved `sleep 1` beside 61 spinning threads, and naps
# beside them, under the campaign's load; cut at 60 s.
read up idle </proc/uptime
echo "phase: spinwait from $up s"
timeout 60 cbin/manythreads 1 61 0 -v 2>&1 >/tmp/manythreads.out | sed 's/^manythreads:/spinwait:/'
timeout 120 cbin/manythreads 10 200 0 -v 2>&1 >/tmp/manythreads.out | sed 's/^manythreads:/spinwait:/'
