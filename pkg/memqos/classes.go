package memqos

import (
	"fmt"
	"strings"
)

// Pod label and annotation keys. The alibabacloud.com keys are the protocol
// of older agents; when both generations are present the koordinator.sh key
// wins, whatever the legacy one says.
const (
	AnnotationMemoryQoS       = "koordinator.sh/memoryQOS"
	LegacyAnnotationMemoryQoS = "alibabacloud.com/memoryQOS"
	LabelQoSClass             = "koordinator.sh/qosClass"
	LegacyQoSClass            = "alibabacloud.com/qosClass" // label, or annotation as older agents wrote it
)

// ParsePodSetting reads a memoryQOS annotation value, e.g. {"policy": "auto"}
// or {"policy": "auto", "throttlingPercent": 90}. The policy is
// case-insensitive; a missing or empty policy is "default". Blank input is
// PolicyDefault with no parameters.
func ParsePodSetting(raw string) (PodSetting, error) {
	ps := PodSetting{Policy: PolicyDefault}
	doc, err := document(raw)
	if err != nil {
		return ps, err
	}
	o, err := asObject(doc, "")
	if err != nil || o == nil {
		return ps, err
	}
	cc, err := parseMemoryQOS(o, "", true)
	if err != nil {
		return ps, err
	}
	ps.Params = cc.Params
	p, err := asString(o["policy"], "policy")
	if err != nil {
		return ps, err
	}
	switch Policy(strings.ToLower(strings.TrimSpace(p))) {
	case "", PolicyDefault:
	case PolicyAuto:
		ps.Policy = PolicyAuto
	case PolicyNone:
		ps.Policy = PolicyNone
	default:
		return ps, fmt.Errorf("policy: %q is not one of auto, default, none", clip(p))
	}
	return ps, nil
}

// podSetting finds and parses the workload's memoryQOS annotation and
// returns the key it came from ("" when there is none).
func podSetting(w Workload) (PodSetting, string, error) {
	for _, key := range []string{AnnotationMemoryQoS, LegacyAnnotationMemoryQoS} {
		raw, ok := w.Annotations[key]
		if !ok {
			continue
		}
		ps, err := ParsePodSetting(raw)
		if err != nil {
			return ps, key, fmt.Errorf("annotation %s: %w", key, err)
		}
		return ps, key, nil
	}
	return PodSetting{Policy: PolicyDefault}, "", nil
}

// ClassLabel finds the class label as written and where it was found (""
// when none is set, blanks not counting): the koordinator.sh label, then
// the legacy label, then the legacy key as an annotation, as older agents
// wrote it. It is the one reader of these keys; pkg/workload classifies on
// top of it.
func ClassLabel(labels, annotations map[string]string) (raw, where string) {
	for _, s := range []struct{ where, value string }{
		{"label " + LabelQoSClass, labels[LabelQoSClass]},
		{"label " + LegacyQoSClass, labels[LegacyQoSClass]},
		{"annotation " + LegacyQoSClass, annotations[LegacyQoSClass]},
	} {
		if strings.TrimSpace(s.value) != "" {
			return s.value, s.where
		}
	}
	return "", ""
}

// classOf resolves the workload's class: the koordinator.sh label, then the
// legacy label, then the legacy annotation, then the Kubernetes QoS class.
// It also reports where the class came from, and whether it was mapped from
// Guaranteed (which has its own built-in setting).
func classOf(w Workload) (c Class, from string, guaranteed bool, err error) {
	if raw, where := ClassLabel(w.Labels, w.Annotations); where != "" {
		switch v := Class(strings.ToUpper(strings.TrimSpace(raw))); v {
		case ClassLSE, ClassLSR, ClassLS, ClassBE, ClassSystem:
			return v, where, false, nil
		}
		return "", "", false, fmt.Errorf("%s: %q is not one of LSE, LSR, LS, BE, SYSTEM", where, clip(raw))
	}
	from = "Kubernetes QoS " + string(w.KubeQoS)
	switch {
	case strings.EqualFold(string(w.KubeQoS), string(Guaranteed)):
		return ClassLS, from, true, nil
	case strings.EqualFold(string(w.KubeQoS), string(Burstable)):
		return ClassLS, from, false, nil
	case strings.EqualFold(string(w.KubeQoS), string(BestEffort)):
		return ClassBE, from, false, nil
	case w.KubeQoS == "":
		return "", "", false, fmt.Errorf("no QoS class: set label %s or the Kubernetes QoS class", LabelQoSClass)
	}
	return "", "", false, fmt.Errorf("the Kubernetes QoS class %q is not one of Guaranteed, Burstable, BestEffort", clip(string(w.KubeQoS)))
}

// classConfig picks the memoryQOS section that governs a class and names it.
// An unlabelled Guaranteed pod reads lsrClass (koordinator maps Guaranteed
// there) and otherwise has the built-in setting, which is off. LSR/LSE and
// SYSTEM read their own section when the config has one, else lsClass.
func classConfig(cfg Config, c Class, guaranteed bool) (*ClassConfig, string) {
	const prefix = "clusterStrategy."
	switch {
	case guaranteed:
		return cfg.LSR, prefix + "lsrClass.memoryQOS"
	case c == ClassBE:
		return cfg.BE, prefix + "beClass.memoryQOS"
	case (c == ClassLSR || c == ClassLSE) && cfg.LSR != nil:
		return cfg.LSR, prefix + "lsrClass.memoryQOS"
	case c == ClassSystem && cfg.System != nil:
		return cfg.System, prefix + "systemClass.memoryQOS"
	}
	return cfg.LS, prefix + "lsClass.memoryQOS"
}
