package decisionsig

import (
	"strings"
	"testing"

	"github.com/locus-project/locus/internal/fuzzseed"
)

// FuzzParseKeys reads hostile key files: an answer in bounded time, an
// error that never repeats a secret's text, or at most MaxKeys keys.
func FuzzParseKeys(f *testing.F) {
	f.Add(keyLine("k1", 'a') + "\n" + keyLine("k0", 'b'))
	fuzzseed.Add(f, func(s string) string { return "k1 " + s })
	fuzzseed.Add(f, func(s string) string { return s + " " + strings.SplitN(keyLine("k", 'a'), " ", 2)[1] })
	fuzzseed.Add(f, fuzzseed.Same)
	f.Fuzz(func(t *testing.T, raw string) {
		var k *Keys
		var err error
		fuzzseed.Timed(t, "ParseKeys", func() { k, err = ParseKeys([]byte(raw)) })
		fuzzseed.CheckError(t, err)
		if err == nil && (len(k.keys) == 0 || len(k.keys) > MaxKeys) {
			t.Fatalf("%d keys", len(k.keys))
		}
	})
}

// FuzzVerify checks hostile signatures and decisions: never accepted
// unless signed, in bounded time, with a short error.
func FuzzVerify(f *testing.F) {
	keys := mustKeys(f, keyLine("k1", 'a'))
	d := Claim{PodUID: "u", Node: "n", ResourceStatus: `{"cpuset":"1"}`}
	good, _ := Sign(keys, d)
	f.Add(good, d.ResourceStatus)
	for _, s := range append(fuzzseed.Texts(), fuzzseed.Lists()...) {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, sig, status string) {
		var err error
		e := Claim{PodUID: "u", Node: "n", ResourceStatus: status}
		fuzzseed.Timed(t, "Verify", func() { err = Verify(keys, e, sig) })
		fuzzseed.CheckError(t, err)
		want, _ := Sign(keys, e)
		if (err == nil) != (sig == want) {
			t.Fatalf("Verify(%q) = %v; the signature is %q", sig, err, want)
		}
	})
}
