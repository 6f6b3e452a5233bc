// Go timers, sleeps and a directory walk on Veneer (Debian's golang-go,
// CGO_ENABLED=0; run as cbin/gotimers by libos/tests/go.sh): the runtime
// parks its timers in its netpoller (epoll_create1, epoll_pwait), and
// filepath.WalkDir reads directories through it too.
package main

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
)

func main() {
	start := time.Now()
	time.Sleep(30 * time.Millisecond)
	fmt.Println("slept at least 30 ms:", time.Since(start) >= 30*time.Millisecond)
	t := time.NewTimer(20 * time.Millisecond)
	<-t.C
	fmt.Println("timer fired")
	select {
	case <-time.After(10 * time.Millisecond):
		fmt.Println("after fired")
	}
	n := 0
	filepath.WalkDir("/etc", func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			n++
		}
		return nil
	})
	fmt.Println("walked /etc:", n > 0)
}
