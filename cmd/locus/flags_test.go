package main

import (
	"errors"
	"strings"
	"testing"
)

// A number flag given text says what it wants, not which Go function failed.
func TestBadNumberFlagSaysWhatItWants(t *testing.T) {
	_, err := runLocus(t, "run", "--cpus", "abc", "--", "true")
	var ue usageError
	if err == nil || !errors.As(err, &ue) || err.Error() != `--cpus "abc": want a whole number` {
		t.Fatalf("--cpus abc: %v", err)
	}
	if strings.Contains(err.Error(), "strconv") {
		t.Errorf("error shows Go's parser: %v", err)
	}
}
