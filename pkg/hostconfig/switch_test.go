package hostconfig

import "testing"

// TestMovesAndMovable: moves.enabled and a workload's movable are true or
// false, nothing else, and an error names the field's path and the value.
func TestMovesAndMovable(t *testing.T) {
	head := "apiVersion: locus.io/v1alpha1\nkind: HostConfig\n"
	cfg, err := Parse([]byte(head + "workloads:\n- {name: a, command: [x]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MovesEnabled() || cfg.Workloads[0].Movable != nil {
		t.Fatalf("moves on or a workload movable without saying so: %+v", cfg)
	}
	cfg, err = Parse([]byte(head + "moves: {enabled: true}\nworkloads:\n- {name: a, command: [x], movable: true}\n- {name: b, command: [x], movable: false}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.MovesEnabled() || cfg.RebalanceEnabled() || !bool(*cfg.Workloads[0].Movable) || bool(*cfg.Workloads[1].Movable) {
		t.Fatalf("moves.enabled or movable not read, or rebalancing on unasked: %+v %+v", cfg.Moves, cfg.Workloads)
	}
	// Rebalancing moves workloads too: it needs moves on.
	for doc, want := range map[string]bool{"moves: {enabled: true, rebalance: true}\n": true, "moves: {enabled: false, rebalance: true}\n": false} {
		cfg, err := Parse([]byte(head + doc + "workloads: []\n"))
		if err != nil || cfg.RebalanceEnabled() != want {
			t.Errorf("%q: rebalancing %v (%v), want %v", doc, cfg != nil && cfg.RebalanceEnabled(), err, want)
		}
	}
	for doc, want := range map[string]string{
		"moves: {enabled: yes}\nworkloads: []\n":                                             `moves.enabled: "yes": want true or false`,
		"moves: {enabled: on}\nworkloads: []\n":                                              `moves.enabled: "on": want true or false`,
		"moves: {enabled: True}\nworkloads: []\n":                                            `moves.enabled: "True": want true or false`,
		"moves: {enabled: \"true\"}\nworkloads: []\n":                                        `moves.enabled: "true": want true or false`,
		"moves: {enabled: 1}\nworkloads: []\n":                                               `moves.enabled: 1: want true or false`,
		"moves: {enabled: true, rebalance: yes}\nworkloads: []\n":                            `moves.rebalance: "yes": want true or false`,
		"moves: {enable: true}\nworkloads: []\n":                                             `moves.enable: unknown field (did you mean "enabled"?)`,
		"workloads:\n- {name: a, command: [x]}\n- {name: b, command: [x], movable: maybe}\n": `workloads[1].movable: "maybe": want true or false`,
		"workloads:\n- {name: a, command: [x], movable: [true]}\n":                           `workloads[0].movable: [true]: want true or false`,
	} {
		_, err := Parse([]byte(head + doc))
		if err == nil || err.Error() != want {
			t.Errorf("%q: error %v, want %q", doc, err, want)
		}
	}
}
