package server

import (
	"testing"
	"time"
)

func TestDefaultStaleAfter(t *testing.T) {
	if got := DefaultStaleAfter(10 * time.Second); got != 30*time.Second {
		t.Errorf("DefaultStaleAfter(10s) = %s", got)
	}
	if got := DefaultStaleAfter(time.Minute); got != 3*time.Minute {
		t.Errorf("DefaultStaleAfter(1m) = %s", got)
	}
}
