package memqos

import "sync"

// Holder keeps the last config that parsed. A ConfigMap edit with a typo
// must not switch memory QoS off (or on) across the node: the bad value is
// reported and the previous one stays in force. A holder may start without
// any value known (NewPendingHolder): then nothing is in force until a good
// value arrives, which callers must tell apart from "memory QoS off".
// Safe for concurrent use.
type Holder[T any] struct {
	mu      sync.RWMutex
	parse   func(string) (T, error)
	current T
	known   bool
	lastErr error
}

// NewHolder starts with initial in force (usually the parse of "").
func NewHolder[T any](parse func(string) (T, error), initial T) *Holder[T] {
	return &Holder[T]{parse: parse, current: initial, known: true}
}

// NewPendingHolder starts with no value known: Known is false until an
// Update succeeds or Restore is called.
func NewPendingHolder[T any](parse func(string) (T, error)) *Holder[T] {
	return &Holder[T]{parse: parse}
}

// NewConfigHolder holds resource-qos-config; memory QoS is off until set.
func NewConfigHolder() *Holder[Config] { return NewHolder(ParseResourceQoSConfig, Config{}) }

// NewNamespaceHolder holds the memory-qos namespace lists; empty until set.
func NewNamespaceHolder() *Holder[NamespaceConfig] {
	return NewHolder(ParseNamespaceConfig, NamespaceConfig{})
}

// Update parses raw. On success it replaces the value in force; on failure
// it keeps the previous one and returns (and remembers) the error. A deleted
// ConfigMap key is Update("").
func (h *Holder[T]) Update(raw string) error {
	v, err := h.parse(raw)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lastErr = err
	if err == nil {
		h.current, h.known = v, true
	}
	return err
}

// Restore puts a value saved earlier in force, if it still parses (a saved
// value is outside text too). It does not touch LastError.
func (h *Holder[T]) Restore(raw string) error {
	v, err := h.parse(raw)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.current, h.known = v, true
	return nil
}

// Current returns the value in force.
func (h *Holder[T]) Current() T {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.current
}

// Known says whether a value is in force: false for a pending holder that
// has seen no good value yet.
func (h *Holder[T]) Known() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.known
}

// LastError returns the error of the latest Update, nil if it succeeded.
func (h *Holder[T]) LastError() error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.lastErr
}
