// A Go program that writes a CPU and a heap profile with Go's own runtime/pprof, so
// kestrel's pprof reader is tested on another tool's files. Usage: prog CPU.pb.gz HEAP.pb.gz
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
	"syscall"
)

var kept [][]byte

func cpuTime() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// burn spins for 300 ms of CPU time (not wall time: the machine may be busy).
//
//go:noinline
func burn() uint64 {
	x := uint64(1)
	for end := cpuTime() + 300e6; cpuTime() < end; {
		for i := 0; i < 100000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	return x
}

// keepBlocks holds 16 MiB until the heap profile is written.
//
//go:noinline
func keepBlocks() {
	for i := 0; i < 256; i++ {
		kept = append(kept, make([]byte, 64<<10))
	}
}

func main() {
	runtime.MemProfileRate = 4096
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	pprof.StartCPUProfile(f)
	burn()
	pprof.StopCPUProfile()
	f.Close()
	keepBlocks()
	// A heap profile shows the heap as of a completed GC cycle: two GCs publish the
	// blocks (most of them: Go's in-use total read 13.7 to 16.0 MiB in runs here).
	runtime.GC()
	runtime.GC()
	h, err := os.Create(os.Args[2])
	if err != nil {
		panic(err)
	}
	pprof.Lookup("heap").WriteTo(h, 0)
	h.Close()
}
