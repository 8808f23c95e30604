package sloconfig

import "sync"

// Holder keeps the last value of one key that decoded, typed. A ConfigMap
// edit with a typo must not switch memory QoS off (or on) across the node:
// the bad value is reported and the previous one stays in force. A holder
// starts with no value known: nothing is in force until a good value
// arrives (or a saved one is restored), which callers must tell apart from
// "memory QoS off". Safe for concurrent use.
type Holder[T any] struct {
	mu      sync.RWMutex
	parse   func(string) (T, error)
	current T
	known   bool
}

// NewHolder holds the values parse decodes; none is known yet.
func NewHolder[T any](parse func(string) (T, error)) *Holder[T] {
	return &Holder[T]{parse: parse}
}

// Update decodes raw: a value as it arrives, or as it was saved when it
// arrived before a restart (saved text is outside text too). On success it
// replaces the value in force; on failure it keeps the previous one and
// returns the error. A deleted ConfigMap key is Update("").
func (h *Holder[T]) Update(raw string) error {
	v, err := h.parse(raw)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.current, h.known = v, true
	return nil
}

// Current returns the value in force (the zero value while none is known).
func (h *Holder[T]) Current() T {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.current
}

// Known says whether a value is in force: false until a good value has
// been decoded.
func (h *Holder[T]) Known() bool {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.known
}
