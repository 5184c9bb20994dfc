// A Go program to sample from outside (tests/attach/test_attach.py): main and one
// goroutine burn CPU in main.burn for the seconds given.
package main

import (
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func burn(n int) {
	for i := 0; i < n; i++ {
		sink += uint64(i) * 7
	}
}

func main() {
	secs := 3.0
	if len(os.Args) > 1 {
		secs, _ = strconv.ParseFloat(os.Args[1], 64)
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	done := make(chan bool)
	go func() {
		for time.Now().Before(end) {
			burn(1000000)
		}
		done <- true
	}()
	for time.Now().Before(end) {
		burn(2000000)
	}
	<-done
}
