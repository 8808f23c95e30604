package memqos

import "testing"

// TestPrecedenceTable is the table in docs/memory-qos.md ("Precedence, case
// by case"), row by row, on pods with request = limit (1000) or request 500.
func TestPrecedenceTable(t *testing.T) {
	const (
		lsLow   = `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": true, "lowLimitPercent": 50}}}}`
		lsOff   = `{"clusterStrategy": {"lsClass": {"memoryQOS": {"enable": false, "lowLimitPercent": 50}}}}`
		beThrot = `{"clusterStrategy": {"beClass": {"memoryQOS": {"enable": false, "throttlingPercent": 80}}}}`
	)
	ls := map[string]string{LabelQoSClass: "LS"}
	on := NamespaceConfig{Enabled: []string{"ns"}}
	off := NamespaceConfig{Disabled: []string{"ns"}}
	rows := []struct {
		row         int
		ann, cfg    string
		ns          NamespaceConfig
		labels      map[string]string
		kube        KubeQoS
		src         Source
		low, high   int64 // written values; 0 = restored
		wmarkMinAdj int64
	}{
		{1, `{"policy": "none"}`, lsLow, on, ls, "", FromAnnotation, 0, 0, 0},
		{2, `{"policy": "auto"}`, lsLow, off, ls, "", FromAnnotation, 0, 0, -25},
		{3, "", lsLow, off, ls, "", FromNamespace, 0, 0, 0},
		{4, "", lsOff, on, ls, "", FromNamespace, 500, 0, -25},
		{5, "", "{}", on, ls, "", FromNamespace, 0, 0, -25},
		{6, "", lsLow, on, nil, Burstable, FromNamespace, 500, 0, -25},
		{7, "", beThrot, on, nil, BestEffort, FromNamespace, 0, 800, 50},
		{8, "", lsLow, on, nil, Guaranteed, FromNamespace, 0, 0, -25},
		{9, `{"throttlingPercent": 80}`, lsLow, on, ls, "", FromNamespace, 500, 800, -25},
		{10, "", lsLow, NamespaceConfig{}, ls, "", FromClassConfig, 500, 0, -25},
		{11, "", lsOff, NamespaceConfig{}, ls, "", FromClassConfig, 0, 0, 0},
		{12, "", lsLow, NamespaceConfig{}, nil, Guaranteed, FromBuiltin, 0, 0, 0},
		{13, "", "{}", NamespaceConfig{}, ls, "", FromBuiltin, 0, 0, 0},
	}
	for _, r := range rows {
		w := Workload{Namespace: "ns", Labels: r.labels, KubeQoS: r.kube,
			Containers: []Container{{Name: "c", RequestBytes: 1000, LimitBytes: 1000}}}
		if r.ann != "" {
			w.Annotations = map[string]string{AnnotationMemoryQoS: r.ann}
		}
		d, err := Decide(mustConfig(t, r.cfg), r.ns, w, Options{})
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
