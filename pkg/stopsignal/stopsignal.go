// Package stopsignal catches SIGTERM and SIGINT from the first moments of
// the process, before main runs: the Go runtime and the packages the agent
// imports take tens of milliseconds to initialise, and a SIGTERM in that
// time (a pod deleted right after it started, a service stopped during a
// restart) would otherwise kill the agent without its clean shutdown.
//
// Import it from the main package. A command that shuts down cleanly calls
// Context; every other command calls Release, after which the signals act
// as if never caught, including one that arrived in the meantime.
package stopsignal

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

var (
	caught = make(chan os.Signal, 2)
	once   sync.Once
)

// Initialising this package is the earliest a Go program can catch a
// signal: it imports nothing outside the standard library, so it runs
// before the heavy packages do.
func init() { signal.Notify(caught, syscall.SIGTERM, syscall.SIGINT) }

// Context returns a context cancelled by the first SIGTERM or SIGINT,
// including one received before the call; stop releases the signals.
func Context(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	go func() {
		select {
		case <-caught:
			cancel()
		case <-done:
		}
	}()
	return ctx, func() {
		once.Do(func() {
			close(done)
			signal.Stop(caught)
		})
		cancel()
	}
}

// Release gives SIGTERM and SIGINT back their default action. A signal
// caught before the call is delivered again, so it still ends the process.
func Release() {
	once.Do(func() {
		signal.Stop(caught)
		select {
		case sig := <-caught:
			_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		default:
		}
	})
}
