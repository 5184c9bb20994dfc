// A Go program with cgo (so it is linked dynamically and the runtime is preloaded into
// it) that spins for os.Args[1] seconds in Go code and ends as every Go program does:
// os.Exit, a raw exit_group that runs no destructor.
package main

// #include <unistd.h>
import "C"

import (
	"os"
	"strconv"
	"time"
)

var sink float64

//go:noinline
func spinGo(secs float64) {
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for time.Now().Before(end) {
		for i := 0; i < 20000; i++ {
			sink += float64(i) * 0.5
		}
	}
}

func main() {
	secs, _ := strconv.ParseFloat(os.Args[1], 64)
	_ = C.getpid()
	spinGo(secs)
	os.Exit(0)
}
