package nri

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/containerd/nri/pkg/stub"
)

// Options configure the plugin.
type Options struct {
	// Socket is the runtime's NRI socket (default DefaultSocket).
	Socket string
	// FailClosed refuses to create a container of a pod asking for
	// exclusive CPUs when its values cannot be decided; by default it
	// starts, and the reconcile loop applies them (fail open).
	FailClosed bool
	// Index orders Locus among the runtime's plugins (default "50").
	Index  string
	Logger *slog.Logger
	// MinBackoff and MaxBackoff bound the wait between connection attempts
	// (defaults 500ms and 30s).
	MinBackoff, MaxBackoff time.Duration
	// OnChange is told when the path changes (connected or not), so the
	// status can say so; it must not block.
	OnChange func()
}

// PluginName is how Locus registers with the runtime.
const PluginName = "locus"

// State says which path the node is on: Connected means containers are
// created pinned; otherwise the reconcile loop alone applies the decision
// after they start, and Reason says why.
type State struct {
	Connected bool      `json:"connected"`
	Since     time.Time `json:"since"`
	Reason    string    `json:"reason,omitempty"`
	Runtime   string    `json:"runtime,omitempty"` // name and version, once configured
	// Synchronized counts the synchronizations with the runtime (one per
	// connection).
	Synchronized int `json:"synchronized"`
}

// Plugin keeps Locus registered with the runtime while it runs.
type Plugin struct {
	opts Options
	h    Handler
	log  *slog.Logger

	mu    sync.Mutex
	state State
	// stub is the connection in use (nil when none), for UpdateContainers.
	stub stub.Stub
}

// New returns a plugin that asks h for every decision.
func New(h Handler, o Options) *Plugin {
	if o.Socket == "" {
		o.Socket = DefaultSocket
	}
	if o.Index == "" {
		o.Index = "50"
	}
	if o.OnChange == nil {
		o.OnChange = func() {}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 500 * time.Millisecond
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(30*time.Second, o.MinBackoff)
	}
	return &Plugin{opts: o, h: h, log: o.Logger,
		state: State{Reason: "not connected yet", Since: time.Now()}}
}

// State returns the path the node is on now.
func (p *Plugin) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// Run connects to the runtime and stays connected until ctx ends: a socket
// missing, refusing or closed is retried with a growing backoff, and each
// connection starts with a synchronization, so no decision is lost across a
// runtime restart. Each change of path is logged once.
func (p *Plugin) Run(ctx context.Context) {
	wait := p.opts.MinBackoff
	for ctx.Err() == nil {
		start := time.Now()
		err := p.runOnce(ctx)
		if ctx.Err() != nil {
			break
		}
		p.disconnected(reasonOf(err))
		if time.Since(start) > p.opts.MaxBackoff {
			wait = p.opts.MinBackoff // it was up a while: retry soon
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
		wait = min(2*wait, p.opts.MaxBackoff)
	}
	p.disconnected("the agent is stopping")
}

// runOnce makes one connection and returns when it ends.
func (p *Plugin) runOnce(ctx context.Context) error {
	if _, err := os.Stat(p.opts.Socket); err != nil {
		return err
	}
	closed := make(chan struct{})
	var once sync.Once
	s, err := stub.New(&events{p: p}, stub.WithPluginName(PluginName), stub.WithPluginIdx(p.opts.Index),
		stub.WithSocketPath(p.opts.Socket), stub.WithLogger(logger{p.log}),
		stub.WithOnClose(func() { once.Do(func() { close(closed) }) }))
	if err != nil {
		return err
	}
	if err := s.Start(ctx); err != nil {
		s.Stop()
		return err
	}
	p.mu.Lock()
	p.stub = s
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.stub = nil
		p.mu.Unlock()
	}()
	select {
	case <-ctx.Done():
		s.Stop()
		return ctx.Err()
	case <-closed:
		return errors.New("the runtime closed the connection")
	}
}

// connected is told by Configure: the runtime accepted the plugin.
func (p *Plugin) connected(runtime string) {
	p.mu.Lock()
	changed := !p.state.Connected
	if changed {
		p.log.Info("NRI: connected; containers are created pinned", "socket", p.opts.Socket, "runtime", runtime)
		p.state = State{Connected: true, Since: time.Now(), Runtime: runtime, Synchronized: p.state.Synchronized}
	}
	p.mu.Unlock()
	if changed {
		p.opts.OnChange()
	}
}

func (p *Plugin) synchronized() {
	p.mu.Lock()
	p.state.Synchronized++
	p.mu.Unlock()
}

// disconnected logs the reason once per change of it.
func (p *Plugin) disconnected(reason string) {
	p.mu.Lock()
	changed := p.state.Connected || p.state.Reason != reason
	if changed {
		p.log.Warn("NRI: not connected; the reconcile loop applies decisions after containers start", "socket", p.opts.Socket, "reason", reason)
		p.state = State{Since: time.Now(), Reason: reason, Synchronized: p.state.Synchronized}
	}
	p.mu.Unlock()
	if changed {
		p.opts.OnChange()
	}
}

// reasonOf names a connection failure in words stable across retries, so a
// socket that stays missing is logged once.
func reasonOf(err error) string {
	switch {
	case err == nil:
		return "the connection ended"
	case errors.Is(err, os.ErrNotExist):
		return "the NRI socket does not exist (the runtime has no NRI, or it is disabled)"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "the runtime refuses connections on the NRI socket"
	case errors.Is(err, os.ErrPermission):
		return "no permission to open the NRI socket"
	}
	return fmt.Sprint(err)
}
