// The Go workload of the VM test runtime-go (tests/vm/build-progs builds it
// three ways: gosplit, gosplit-stripped with -ldflags=-s -w, and
// gosplit-pie-stripped), and the unit tests' Go fixture (the Makefile
// builds it four ways in build/fixtures/go/). For SECONDS it runs two call chains,
// main -> outerA -> hotA and main -> outerB -> hotB, 7 units of work to 3:
// each call is A's with probability 7/10, of a random length, so that no
// period of the calls can beat with the sampling timer's (a fixed A, B of
// fixed lengths, close to one sampling period under TCG, gave hotA 74%
// of the samples for 69% of the time). It measures the CPU time each
// chain takes (its thread's CPU clock: the
// main goroutine stays on its thread; under a loaded host the guest's
// other tasks take wall time a profile does not see); then prints
//
//	gosplit: a=NS b=NS
//
// The leaves set up no frame (no locals, no calls): a walk that follows
// frame pointers skips their caller; one that reads Go's table does not.
//
// gosplit -frames prints its own stack as Go's runtime names it, from
// inside a chain the compiler inlines whole into main (main -> framesOuter
// -> framesMid -> framesLeaf): for each pc runtime.Callers gives, one per
// logical frame, a line
//
//	pc PC ENTRY FUNCTION FILE LINE
//
// (ENTRY: the start of the function the code is in; FILE: its base name),
// the answer test_symbolize checks the symbolizer's inlined frames against.
//
// gosplit -units runs the two chains on command, for scripts/bench-guest
// (insns part runtimes): for each line N it reads, N times each, then
// prints "done".
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"time"
	"unsafe"
)

var sink uint64

//go:noinline
func hotA(n int) uint64 {
	var s uint64
	for i := 0; i < n; i++ {
		s += uint64(i) * 2654435761
	}
	return s
}

//go:noinline
func hotB(n int) uint64 {
	var s uint64
	for i := 0; i < n; i++ {
		s ^= uint64(i) * 40503
	}
	return s
}

//go:noinline
func outerA(n int) { sink += hotA(n) }

//go:noinline
func outerB(n int) { sink += hotB(n) }

func framesLeaf() []uintptr {
	pcs := make([]uintptr, 64)
	return pcs[:runtime.Callers(1, pcs)]
}

func framesMid() []uintptr { return framesLeaf() }

func framesOuter() []uintptr { return framesMid() }

func printFrames() {
	for _, pc := range framesOuter() {
		f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
		fmt.Printf("pc %#x %#x %s %s %d\n", pc, f.Entry, f.Function,
			filepath.Base(f.File), f.Line)
	}
}

func runUnits() {
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		n, err := strconv.Atoi(in.Text())
		if err != nil {
			fmt.Fprintln(os.Stderr, "gosplit -units: not a number:", in.Text())
			os.Exit(2)
		}
		for i := 0; i < n; i++ {
			outerA(70000)
			outerB(30000)
		}
		fmt.Println("done")
	}
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-frames" {
		printFrames()
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "-units" {
		runUnits()
		return
	}
	secs, err := strconv.ParseFloat(os.Args[len(os.Args)-1], 64)
	if len(os.Args) != 2 || err != nil || secs <= 0 {
		fmt.Fprintln(os.Stderr, "usage: gosplit SECONDS | gosplit -frames | gosplit -units")
		os.Exit(2)
	}
	runtime.LockOSThread()
	var ta, tb int64
	// xorshift64: the calls' order and lengths (20000 to 80000 iterations).
	state := uint64(os.Getpid())*0x9e3779b97f4a7c15 | 1
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for time.Now().Before(end) {
		state ^= state << 13
		state ^= state >> 7
		state ^= state << 17
		n := 20000 + int(state>>8%60000)
		t0 := threadNS()
		if state%10 < 7 {
			outerA(n)
			ta += threadNS() - t0
		} else {
			outerB(n)
			tb += threadNS() - t0
		}
	}
	fmt.Printf("gosplit: a=%d b=%d\n", ta, tb)
}

// threadNS is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
// in nanoseconds; the Go of every release here has no call for it.
func threadNS() int64 {
	const clockThreadCPUTime = 3
	var ts syscall.Timespec

	_, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime,
		uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		fmt.Fprintln(os.Stderr, "gosplit: clock_gettime:", errno)
		os.Exit(1)
	}
	return ts.Nano()
}
