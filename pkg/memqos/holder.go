package memqos

import "sync"

// Holder keeps the last config that parsed. A ConfigMap edit with a typo
// must not switch memory QoS off (or on) across the node: the bad value is
// reported and the previous one stays in force. Safe for concurrent use.
type Holder[T any] struct {
	mu      sync.RWMutex
	parse   func(string) (T, error)
	current T
	lastErr error
}

// NewHolder starts with initial in force (usually the parse of "").
func NewHolder[T any](parse func(string) (T, error), initial T) *Holder[T] {
	return &Holder[T]{parse: parse, current: initial}
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
		h.current = v
	}
	return err
}

// Current returns the value in force.
func (h *Holder[T]) Current() T {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.current
}

// LastError returns the error of the latest Update, nil if it succeeded.
func (h *Holder[T]) LastError() error {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.lastErr
}
