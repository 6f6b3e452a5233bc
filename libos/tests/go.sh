# Go (Debian's golang-go, CGO_ENABLED=0; libos/tests/go/goroutines.go):
# hello world, goroutines over channels, WaitGroup and Mutex, select. Go's
# runtime starts several OS threads (clone), parks them on futexes and
# signals them with tgkill.
cbin/goroutines
echo "goroutines: $?"
