package sloconfig

import (
	"strings"
	"sync"
	"testing"
)

func TestHolderKeepsLastGoodConfig(t *testing.T) {
	h := NewHolder(ParseResourceQoS)
	if h.Known() || h.Current().Cluster.MemQoS.LS != nil {
		t.Fatal("a new holder must know nothing")
	}
	good := `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true, "throttlingPercent": 70}}}}`
	if err := h.Update(good); err != nil || !h.Known() {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true, "throttlingPercent": 120}}}}`,
		`{"clusterStrategy": `,
		`{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": "yes"}}}}`,
	} {
		if err := h.Update(bad); err == nil {
			t.Fatalf("%s: accepted", bad)
		}
		cur := h.Current().Cluster.MemQoS
		if cur.LS == nil || !*cur.LS.Enable || *cur.LS.Params.ThrottlingPercent != 70 {
			t.Fatalf("after %q the previous config was lost: %+v", bad, cur.LS)
		}
	}
	if err := h.Update(""); err != nil || h.Current().Cluster.MemQoS.LS != nil || !h.Known() {
		t.Fatalf("a removed key must switch back to the empty config: %+v, %v", h.Current(), err)
	}
}

func TestNamespaceHolder(t *testing.T) {
	h := NewHolder(ParseNamespaces)
	if err := h.Update(`{"enabledNamespaces": ["a"]}`); err != nil {
		t.Fatal(err)
	}
	if err := h.Update(`{"enabledNamespaces": ["a"], "disabledNamespaces": ["a"]}`); err == nil ||
		!strings.Contains(err.Error(), "both") {
		t.Fatalf("conflict accepted: %v", err)
	}
	if got := h.Current(); len(got.Enabled) != 1 || got.Enabled[0] != "a" || len(got.Disabled) != 0 {
		t.Fatalf("lost the previous lists: %+v", got)
	}
}

func TestHolderConcurrentUse(t *testing.T) {
	h := NewHolder(ParseResourceQoS)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if i%2 == 0 {
					_ = h.Update(`{"clusterStrategy": {"beClass": {"memoryQOS": {"enable": true}}}}`)
				} else if c := h.Current().Cluster.MemQoS; c.BE != nil && !*c.BE.Enable {
					t.Error("torn read")
				}
			}
		}()
	}
	wg.Wait()
}

func TestHolderBadValueKnowsNothing(t *testing.T) {
	h := NewHolder(ParseResourceQoS)
	if err := h.Update(`{"clusterStrategy": `); err == nil || h.Known() {
		t.Fatalf("a bad value made it known: %v", err)
	}
	if err := h.Update(`{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true}}}}`); err != nil || !h.Known() {
		t.Fatalf("Update: %v", err)
	}
	if cur := h.Current().Cluster.MemQoS; cur.LS == nil || !*cur.LS.Enable {
		t.Fatalf("value not in force: %+v", cur)
	}
	if err := h.Update(`{"clusterStrategy": `); err == nil || !h.Known() || h.Current().Cluster.MemQoS.LS == nil {
		t.Fatal("a bad update lost the value in force")
	}
}
