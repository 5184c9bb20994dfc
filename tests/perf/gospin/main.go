// A Go program with cgo (so dynamically linked: LD_PRELOAD reaches it) that spins for
// a while: Go's runtime installs a handler for every signal, the signal engine's and
// its spares included (tests/perf/test_go_signal.py).
package main

/*
static int twice(int x) { return 2 * x; }
*/
import "C"

import (
	"fmt"
	"os"
	"time"
)

func spin(d time.Duration) uint64 {
	end := time.Now().Add(d)
	var x uint64
	for time.Now().Before(end) {
		for i := 0; i < 100000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

func main() {
	d := 1500 * time.Millisecond
	if len(os.Args) > 1 {
		d, _ = time.ParseDuration(os.Args[1])
	}
	fmt.Println(spin(d), C.twice(2))
}
