// Go on Veneer (Debian's golang-go, CGO_ENABLED=0; run as cbin/goroutines
// by libos/tests/go.sh, output compared with the host's): hello world,
// goroutines over channels (unbuffered and buffered, fan-out and fan-in),
// a sync.WaitGroup and a sync.Mutex over many goroutines, select over two
// channels, GOMAXPROCS above one so the runtime starts several threads.
package main

import (
	"fmt"
	"runtime"
	"sync"
)

func main() {
	fmt.Println("hello from Go")
	runtime.GOMAXPROCS(4)

	ch := make(chan int)
	done := make(chan int)
	for i := 0; i < 4; i++ {
		go func() {
			s := 0
			for v := range ch {
				s += v
			}
			done <- s
		}()
	}
	for i := 1; i <= 1000; i++ {
		ch <- i
	}
	close(ch)
	t := 0
	for i := 0; i < 4; i++ {
		t += <-done
	}
	fmt.Println("fan-out, fan-in:", t)

	var wg sync.WaitGroup
	var mu sync.Mutex
	count := 0
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 100; k++ {
				mu.Lock()
				count++
				mu.Unlock()
				if k%10 == 0 {
					runtime.Gosched()
				}
			}
		}()
	}
	wg.Wait()
	fmt.Println("waitgroup and mutex:", count)

	buf := make(chan string, 8)
	quit := make(chan bool)
	go func() {
		for _, w := range []string{"a", "b", "c"} {
			buf <- w
		}
		quit <- true
	}()
	got := ""
	for running := true; running; {
		select {
		case w := <-buf:
			got += w
		case <-quit:
			for len(buf) > 0 {
				got += <-buf
			}
			running = false
		}
	}
	fmt.Println("select:", got)
}
