package decisionsig

import (
	"encoding/base64"
	"strings"
	"testing"
)

// keyLine is a key file line with a secret made of b.
func keyLine(id string, b byte) string {
	return id + " " + base64.StdEncoding.EncodeToString([]byte(strings.Repeat(string(b), MinKeyBytes)))
}

func mustKeys(t testing.TB, lines ...string) *Keys {
	t.Helper()
	k, err := ParseKeys([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func ptr(s string) *string { return &s }

// TestVerify: a signature holds for exactly the pod, node and text signed;
// any change to one of them, a container-cpusets added or dropped, another
// key, or a signature made by hand is refused with the reason.
func TestVerify(t *testing.T) {
	keys := mustKeys(t, keyLine("k2", 'b'), keyLine("k1", 'a'))
	d := Claim{PodUID: "0b8d-uid", Node: "node-a", ResourceStatus: `{"cpuset":"2-3"}`}
	sig, err := Sign(keys, d)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sig, "v1:k2:") {
		t.Fatalf("signature %q: want the first key, k2", sig)
	}
	if err := Verify(keys, d, sig); err != nil {
		t.Fatalf("own signature refused: %v", err)
	}
	withParts := d
	withParts.ContainerCPUSets = ptr(`{"app":"2-3"}`)
	partsSig, _ := Sign(keys, withParts)
	older := mustKeys(t, keyLine("k1", 'a'))
	oldSig, _ := Sign(older, d)
	for name, tc := range map[string]struct {
		d    Claim
		sig  string
		keys *Keys
		want string
	}{
		"another pod":           {Claim{PodUID: "other", Node: d.Node, ResourceStatus: d.ResourceStatus}, sig, keys, "does not match"},
		"another node":          {Claim{PodUID: d.PodUID, Node: "node-b", ResourceStatus: d.ResourceStatus}, sig, keys, "does not match"},
		"other CPUs":            {Claim{PodUID: d.PodUID, Node: d.Node, ResourceStatus: `{"cpuset":"0-3"}`}, sig, keys, "does not match"},
		"container-cpusets set": {withParts, sig, keys, "does not match"},
		"container-cpusets cut": {d, partsSig, keys, "does not match"},
		"container-cpusets changed": {Claim{PodUID: d.PodUID, Node: d.Node, ResourceStatus: d.ResourceStatus,
			ContainerCPUSets: ptr(`{"app":"0-1"}`)}, partsSig, keys, "does not match"},
		"fields shifted":  {Claim{PodUID: d.PodUID + "node-a", Node: "", ResourceStatus: d.ResourceStatus}, sig, keys, "does not match"},
		"unknown key":     {d, strings.Replace(sig, "v1:k2:", "v1:k9:", 1), keys, `key "k9"`},
		"no signature":    {d, "", keys, "no signature"},
		"no key":          {d, sig, nil, "no decision key"},
		"other version":   {d, strings.Replace(sig, "v1:", "v2:", 1), keys, "not v1:"},
		"short MAC":       {d, "v1:k2:AAAA", keys, "32 bytes"},
		"huge":            {d, strings.Repeat("v1:k2:", 1000), keys, "more than"},
		"not base64":      {d, "v1:k2:" + strings.Repeat("!", 43), keys, "base64url"},
		"extra separator": {d, sig + ":x", keys, "not v1:"},
	} {
		t.Run(name, func(t *testing.T) {
			err := Verify(tc.keys, tc.d, tc.sig)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify = %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), strings.TrimPrefix(sig, "v1:k2:")) {
				t.Errorf("the error repeats the MAC: %v", err)
			}
		})
	}
	// A rotation: the new key signs, a decision signed with the old one
	// still holds while the file keeps it.
	if err := Verify(keys, d, oldSig); err != nil {
		t.Errorf("signature of the older key refused: %v", err)
	}
	if err := Verify(keys, withParts, partsSig); err != nil {
		t.Errorf("signature with container-cpusets refused: %v", err)
	}
}

func TestParseKeys(t *testing.T) {
	good := keyLine("k1", 'a')
	for name, tc := range map[string]struct {
		raw  string
		want string // "" for success
	}{
		"one":          {good, ""},
		"comments":     {"# rotated 2025-01\n\n" + good + "\n" + keyLine("k0", 'z') + "\n", ""},
		"empty":        {"# nothing\n", "no key"},
		"bad id":       {"k/1 " + strings.SplitN(good, " ", 2)[1], "only letters"},
		"long id":      {strings.Repeat("k", MaxIDLen+1) + " " + strings.SplitN(good, " ", 2)[1], "1 to 32"},
		"short secret": {"k1 " + base64.StdEncoding.EncodeToString([]byte("short")), "5 bytes"},
		"not base64":   {"k1 ***", "not standard base64"},
		"one field":    {"k1", "1 fields"},
		"three fields": {good + " x", "3 fields"},
		"twice":        {good + "\n" + good, "given twice"},
		"too many":     {manyKeys(MaxKeys + 1), "more than 16 keys"},
		"huge":         {strings.Repeat("#", MaxFileBytes+1), "more than"},
	} {
		t.Run(name, func(t *testing.T) {
			k, err := ParseKeys([]byte(tc.raw))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("ParseKeys: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("ParseKeys = %v, %v; want an error containing %q", k.IDs(), err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), strings.SplitN(good, " ", 2)[1]) {
				t.Errorf("the error repeats a secret: %v", err)
			}
		})
	}
}

func manyKeys(n int) string {
	var lines []string
	for i := range n {
		lines = append(lines, keyLine("k"+strings.Repeat("x", i), 'a'))
	}
	return strings.Join(lines, "\n")
}
