package cgroup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
)

// The originals checkpoint is written byte for byte as encoding/json wrote
// it (an agent of either build reads the other's, and a file's bytes are
// what tells it changed): for keys and values that need escaping, that are
// not ASCII or not UTF-8, empty and nil maps, and maps of many keys.
func TestStoreEncodingIsEncodingJSONs(t *testing.T) {
	odd := []string{"", "a", "kubepods/pod1/cpuset.cpus", "0-3,8-11", "max", `q"uote`, `back\slash`,
		"<html>&", "tab\there", "nl\n", "\x00\x1f\x7f", "é", "日本", "\u2028\u2029", "\xff\xfe bad utf8",
		"emoji 🙂", "a/b", "\u007f"}
	rnd := rand.New(rand.NewPCG(1, 2))
	pick := func() string {
		if rnd.IntN(3) == 0 {
			return odd[rnd.IntN(len(odd))]
		}
		return fmt.Sprintf("kubepods/burstable/pod%d/c%d/cpu.weight", rnd.IntN(1000), rnd.IntN(9))
	}
	cases := []struct {
		data  map[string]string
		marks map[string]Mark
	}{
		{nil, nil},
		{map[string]string{}, map[string]Mark{}},
		{map[string]string{"a": "1"}, map[string]Mark{"p": FromDefaults, "q": LeaveAlone}},
	}
	for range 200 {
		c := struct {
			data  map[string]string
			marks map[string]Mark
		}{map[string]string{}, nil}
		for range rnd.IntN(300) {
			c.data[pick()] = pick()
		}
		if rnd.IntN(2) == 0 {
			c.marks = map[string]Mark{}
			for range rnd.IntN(20) {
				c.marks[pick()] = Mark(pick())
			}
		}
		cases = append(cases, c)
	}
	var buf []byte
	var keys []string
	for i, c := range cases {
		var want bytes.Buffer
		if err := json.NewEncoder(&want).Encode(storeFile{Format: storeFormat, Originals: c.data, Marks: c.marks}); err != nil {
			t.Fatal(err)
		}
		buf = appendStoreFile(buf[:0], &keys, c.data, c.marks)
		if !bytes.Equal(buf, want.Bytes()) {
			t.Fatalf("case %d:\n got %q\nwant %q", i, buf, want.Bytes())
		}
	}
}
