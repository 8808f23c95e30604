package decisionsig

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
)

// version prefixes the signed message and the signature: a later format
// is a new version, never read as this one.
const version = "v1"

// Claim is what a signature covers: the pod it is for (its UID, so a
// signed annotation copied onto another pod, even one of the same name,
// is refused), the node it was decided on (so a pod's copy on another node
// is refused), and the decision's annotation values as written.
// ContainerCPUSets is nil when the decision has none: an annotation added
// later breaks the signature.
type Claim struct {
	PodUID, Node     string
	ResourceStatus   string
	ContainerCPUSets *string
}

// message writes the decision into h: the version, then each field framed
// by its length, so no two decisions write the same bytes.
func (d Claim) message(h hash.Hash) {
	h.Write([]byte("locus.io/decision/" + version + "\n"))
	for _, f := range []*string{&d.PodUID, &d.Node, &d.ResourceStatus, d.ContainerCPUSets} {
		if f == nil {
			h.Write([]byte("-,"))
			continue
		}
		h.Write([]byte(strconv.Itoa(len(*f)) + ":"))
		h.Write([]byte(*f))
		h.Write([]byte(","))
	}
}

func (d Claim) mac(secret []byte) []byte {
	h := hmac.New(sha256.New, secret)
	d.message(h)
	return h.Sum(nil)
}

// Sign signs d with the signing key: "v1:<key id>:<base64url MAC>".
func Sign(k *Keys, d Claim) (string, error) {
	if k == nil || len(k.keys) == 0 {
		return "", ErrNoKey
	}
	key := k.signing()
	return version + ":" + key.ID + ":" + base64.RawURLEncoding.EncodeToString(d.mac(key.secret)), nil
}

// ErrNoKey: no key is configured, so nothing can be signed or verified.
var ErrNoKey = errors.New("no decision key is configured")

// maxSignatureLen bounds a signature before it is split: the version, the
// longest id and a MAC, with room.
const maxSignatureLen = 128

// Verify says whether sig is a signature of d under one of the keys, in
// time independent of how much of the MAC matches. The error says why
// not, without repeating the MAC.
func Verify(k *Keys, d Claim, sig string) error {
	if k == nil || len(k.keys) == 0 {
		return ErrNoKey
	}
	if sig == "" {
		return errors.New("no signature")
	}
	if len(sig) > maxSignatureLen {
		return fmt.Errorf("signature of %d bytes, more than %d", len(sig), maxSignatureLen)
	}
	parts := strings.Split(sig, ":")
	if len(parts) != 3 || parts[0] != version {
		return fmt.Errorf("signature is not %s:<key id>:<MAC>", version)
	}
	key, ok := k.byID(parts[1])
	if !ok {
		return fmt.Errorf("signed with key %q, which this node does not hold (keys: %s)", parts[1], strings.Join(k.IDs(), ", "))
	}
	got, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("signature's MAC is not %d bytes of unpadded base64url", sha256.Size)
	}
	if !hmac.Equal(got, d.mac(key.secret)) {
		return fmt.Errorf("signature does not match: not signed by key %q for this pod (UID %s) on node %s, or changed since", key.ID, d.PodUID, d.Node)
	}
	return nil
}
