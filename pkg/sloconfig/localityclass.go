package sloconfig

import "strings"

// LocalityForClass picks the memoryLocality section of resource-qos-config
// that governs a workload of QoS class class (LS, BE, LSR, LSE, SYSTEM, any
// case), from a node's sections (Node.Locality), and names it. It maps classes
// the way memory QoS does, so one class label means the same for both
// features:
//   - BE reads beClass; LS (and an unknown or empty class) reads lsClass;
//   - LSR and LSE read lsrClass when it has a memoryLocality section, else
//     lsClass; SYSTEM reads systemClass likewise;
//   - a workload without a class label that Kubernetes calls Guaranteed
//     (unlabelledGuaranteed) reads lsrClass only: without one the built-in
//     default, off, applies, since changing such pods needs an explicit
//     opt-in.
//
// It returns nil (and the section it looked for) when no section applies.
func LocalityForClass(classes map[string]Locality, class string, unlabelledGuaranteed bool) (*Locality, string) {
	pick := func(key string) (*Locality, string) {
		path := "clusterStrategy." + key + ".memoryLocality"
		if s, ok := classes[key]; ok {
			return &s, path
		}
		return nil, path
	}
	has := func(key string) bool { _, ok := classes[key]; return ok }
	switch c := strings.ToUpper(strings.TrimSpace(class)); {
	case unlabelledGuaranteed:
		return pick("lsrClass")
	case c == "BE":
		return pick("beClass")
	case (c == "LSR" || c == "LSE") && has("lsrClass"):
		return pick("lsrClass")
	case c == "SYSTEM" && has("systemClass"):
		return pick("systemClass")
	}
	return pick("lsClass")
}
