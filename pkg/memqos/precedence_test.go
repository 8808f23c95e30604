package memqos

import "testing"

// TestPrecedenceTable is the table in docs/memory-qos.md ("Precedence, case
// by case"), row by row, on pods with request = limit (1000). The text of
// each row (the annotation, the ConfigMaps, the class label) is read as
// pkg/workload and pkg/sloconfig read it; their tests hold that reading.
func TestPrecedenceTable(t *testing.T) {
	var (
		lsLow   = Config{LS: class(on, Params{LowLimitPercent: p(50)})}
		lsOff   = Config{LS: class(off, Params{LowLimitPercent: p(50)})}
		beThrot = Config{BE: class(off, Params{ThrottlingPercent: p(80)})}
		none    = Config{}
		nsOn    = NamespaceConfig{Enabled: []string{"ns"}}
		nsOff   = NamespaceConfig{Disabled: []string{"ns"}}
		ls      = labelled(ClassLS)
	)
	rows := []struct {
		row         int
		ann         *PodSetting // nil: no annotation
		cfg         Config
		ns          NamespaceConfig
		w           Workload
		src         Source
		low, high   int64 // written values; 0 = restored
		wmarkMinAdj int64
	}{
		{1, &PodSetting{Policy: PolicyNone}, lsLow, nsOn, ls, FromAnnotation, 0, 0, 0},
		{2, &PodSetting{Policy: PolicyAuto}, lsLow, nsOff, ls, FromAnnotation, 0, 0, -25},
		{3, nil, lsLow, nsOff, ls, FromNamespace, 0, 0, 0},
		{4, nil, lsOff, nsOn, ls, FromNamespace, 500, 0, -25},
		{5, nil, none, nsOn, ls, FromNamespace, 0, 0, -25},
		{6, nil, lsLow, nsOn, unlabelled(Burstable), FromNamespace, 500, 0, -25},
		{7, nil, beThrot, nsOn, unlabelled(BestEffort), FromNamespace, 0, 800, 50},
		{8, nil, lsLow, nsOn, unlabelled(Guaranteed), FromNamespace, 0, 0, -25},
		{9, &PodSetting{Params: Params{ThrottlingPercent: p(80)}}, lsLow, nsOn, ls, FromNamespace, 500, 800, -25},
		{10, nil, lsLow, NamespaceConfig{}, ls, FromClassConfig, 500, 0, -25},
		{11, nil, lsOff, NamespaceConfig{}, ls, FromClassConfig, 0, 0, 0},
		{12, nil, lsLow, NamespaceConfig{}, unlabelled(Guaranteed), FromBuiltin, 0, 0, 0},
		{13, nil, none, NamespaceConfig{}, ls, FromBuiltin, 0, 0, 0},
	}
	for _, r := range rows {
		w := r.w
		if r.ann != nil {
			w = annotated(w, r.ann.Policy, r.ann.Params)
		}
		w.Namespace = "ns"
		w.Containers = []Container{{Name: "c", RequestBytes: 1000, LimitBytes: 1000}}
		d, err := Compute(r.cfg, r.ns, w, Options{})
		if err != nil {
			t.Fatalf("row %d: %v", r.row, err)
		}
		enabled := r.wmarkMinAdj != 0
		if d.Source != r.src || d.Enabled != enabled {
			t.Errorf("row %d: enabled %v from %s (%s), want %v from %s", r.row, d.Enabled, d.Source, d.Reason, enabled, r.src)
			continue
		}
		op := func(v int64) want {
			if v == 0 {
				return want{Restore, 0}
			}
			return want{Write, v}
		}
		wants := map[Knob]want{MemoryLow: op(r.low), MemoryHigh: op(r.high), MemoryWmarkMinAdj: op(r.wmarkMinAdj)}
		t.Run("row", func(t *testing.T) { checkSettings(t, d.Containers[0].Settings, wants) })
	}
}
