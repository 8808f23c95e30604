package sloconfig

import (
	"encoding/json"

	"github.com/locus-project/locus/pkg/cpuqos"
)

// cpuQOSFields are the keys of a class's cpuQOS section, as the protocol
// writes them: enable, groupIdentity (-1..2, Alibaba Cloud Linux's
// cpu.bvt_warp_ns), schedIdle (0..1, cpu.idle) and coreExpeller.
var cpuQOSFields = []string{"enable", "groupIdentity", "schedIdle", "coreExpeller"}

// parseCPUQOS reads one cpuQOS section strictly: an unknown field, a wrong
// type or a value out of range is an error naming the field. A missing or
// null section gives nil.
func parseCPUQOS(raw json.RawMessage, path string) (*cpuqos.ClassConfig, error) {
	o, err := asObject(raw, path)
	if err != nil || o == nil {
		return nil, err
	}
	var cc cpuqos.ClassConfig
	var errs []error
	for _, key := range keys(o) {
		field := join(path, key)
		switch key {
		case "enable":
			cc.Enable, err = asBool(o[key], field)
		case "groupIdentity":
			cc.GroupIdentity, err = asInt(o[key], field, -1, 2)
		case "schedIdle":
			cc.SchedIdle, err = asInt(o[key], field, 0, 1)
		case "coreExpeller":
			cc.CoreExpeller, err = asBool(o[key], field)
		default:
			err = unknownField(path, key, cpuQOSFields)
		}
		errs = append(errs, err)
	}
	if err := joinErrors(errs); err != nil {
		return nil, err
	}
	return &cc, nil
}
