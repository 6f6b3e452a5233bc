# Go (Debian's golang-go, CGO_ENABLED=0): libos/tests/go/goroutines.go
# (hello world, goroutines over channels, WaitGroup and Mutex, select: the
# runtime starts several OS threads with clone, parks them on futexes and
# signals them with tgkill) and libos/tests/go/gotimers.go (time.Sleep, a
# Timer, time.After and filepath.WalkDir over /etc: Go's netpoller, epoll).
cbin/goroutines
echo "goroutines: $?"
cbin/gotimers
echo "gotimers: $?"
