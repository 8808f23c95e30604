package memqos

// The decision takes types: these build them as pkg/sloconfig and
// pkg/workload read them from text.

// p is a parameter given (a pointer to v).
func p(v int64) *int64 { return &v }

// class is a class's memoryQOS section: enable nil when the key is absent.
func class(enable *bool, params Params) *ClassConfig {
	return &ClassConfig{Enable: enable, Params: params}
}

var (
	on  = new(true)
	off = new(false)
)

// labelled is a workload whose class label says c.
func labelled(c Class) Workload {
	return Workload{Class: c, ClassFrom: "label koordinator.sh/qosClass"}
}

// unlabelled is a workload without a class label, classed by its
// Kubernetes QoS class as pkg/workload does.
func unlabelled(q KubeQoS) Workload {
	w := Workload{Class: ClassLS, ClassFrom: "Kubernetes QoS " + string(q)}
	switch q {
	case BestEffort:
		w.Class = ClassBE
	case Guaranteed:
		w.Guaranteed = true
	}
	return w
}

// annotated is w with its koordinator.sh/memoryQOS annotation read.
func annotated(w Workload, policy Policy, params Params) Workload {
	w.Pod, w.PodKey = PodSetting{Policy: policy, Params: params}, "koordinator.sh/memoryQOS"
	return w
}
