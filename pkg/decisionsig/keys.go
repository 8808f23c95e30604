// Package decisionsig signs the scheduler's decisions on pods and verifies
// them on the node: HMAC-SHA256 under a key that only the scheduler and the
// node agents hold, over the pod's UID, the node's name and the decision's
// text. A decision is an annotation any writer of the pod can set; the
// signature says the scheduler set it, for this pod on this node. It is
// pure; pkg/decisionsig/keyfile reads the key file.
package decisionsig

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
)

// Bounds on a key file, checked before anything is kept: a key file holds
// the key in use and the few kept to verify during a rotation.
const (
	MaxFileBytes = 16 << 10
	MaxKeys      = 16
	MaxIDLen     = 32
	// MinKeyBytes is HMAC-SHA256's block-strength key: shorter keys are
	// refused, not padded.
	MinKeyBytes = 32
	MaxKeyBytes = 64
)

// Key is one signing key and the id a signature names it by.
type Key struct {
	ID     string
	secret []byte
}

// Keys are the keys of a key file: the first signs, any verifies. A Keys is
// never changed once parsed, so it can be shared and compared by pointer.
type Keys struct {
	keys []Key
}

// ParseKeys reads a key file: one key a line, "<id> <base64 secret>", the
// first line signing; blank lines and lines starting with # are skipped.
// An id is 1 to MaxIDLen letters, digits, '.', '_' or '-'; a secret
// MinKeyBytes to MaxKeyBytes bytes in standard base64. Errors name the
// line; they never repeat a secret.
func ParseKeys(raw []byte) (*Keys, error) {
	if len(raw) > MaxFileBytes {
		return nil, fmt.Errorf("%d bytes, more than %d", len(raw), MaxFileBytes)
	}
	out := &Keys{}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 1024), MaxFileBytes+1)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		k, err := parseKey(text)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if seen[k.ID] {
			return nil, fmt.Errorf("line %d: key id %q given twice", line, k.ID)
		}
		if len(out.keys) == MaxKeys {
			return nil, fmt.Errorf("line %d: more than %d keys", line, MaxKeys)
		}
		seen[k.ID] = true
		out.keys = append(out.keys, k)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(out.keys) == 0 {
		return nil, fmt.Errorf("no key: want lines of \"<id> <base64 secret>\"")
	}
	return out, nil
}

func parseKey(text string) (Key, error) {
	fields := strings.Fields(text)
	if len(fields) != 2 {
		return Key{}, fmt.Errorf("%d fields, want \"<id> <base64 secret>\"", len(fields))
	}
	id, enc := fields[0], fields[1]
	if err := checkID(id); err != nil {
		return Key{}, err
	}
	if len(enc) > base64.StdEncoding.EncodedLen(MaxKeyBytes) {
		return Key{}, fmt.Errorf("key %q: secret longer than %d bytes", id, MaxKeyBytes)
	}
	secret, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return Key{}, fmt.Errorf("key %q: secret is not standard base64", id)
	}
	if len(secret) < MinKeyBytes || len(secret) > MaxKeyBytes {
		return Key{}, fmt.Errorf("key %q: secret of %d bytes, want %d to %d", id, len(secret), MinKeyBytes, MaxKeyBytes)
	}
	return Key{ID: id, secret: secret}, nil
}

// checkID refuses an id a signature could not carry unambiguously.
func checkID(id string) error {
	if id == "" || len(id) > MaxIDLen {
		return fmt.Errorf("key id of %d bytes, want 1 to %d", len(id), MaxIDLen)
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("key id %q: only letters, digits, '.', '_' and '-'", id)
		}
	}
	return nil
}

// IDs are the keys' ids, the signing one first (for logs: never a secret).
func (k *Keys) IDs() []string {
	if k == nil {
		return nil
	}
	ids := make([]string, len(k.keys))
	for i, key := range k.keys {
		ids[i] = key.ID
	}
	return ids
}

// signing is the key that signs.
func (k *Keys) signing() Key { return k.keys[0] }

// byID is the key a signature names, if these keys hold it.
func (k *Keys) byID(id string) (Key, bool) {
	for _, key := range k.keys {
		if key.ID == id {
			return key, true
		}
	}
	return Key{}, false
}
