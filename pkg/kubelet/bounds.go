package kubelet

import (
	"bytes"
	"fmt"

	"k8s.io/utils/cpuset"

	"github.com/locus-project/locus/pkg/topology"
)

// checkpointBudget is what a checkpoint's lists may name in all.
func checkpointBudget() *topology.CPUBudget {
	return topology.NewCPUBudget(MaxCheckpointCPUs, "a checkpoint names each of a machine's CPUs a few times")
}

// header checks the policy's name and charges the default set.
func header(budget *topology.CPUBudget, policy, def string) error {
	if len(policy) > maxPolicyNameLen {
		return fmt.Errorf("policyName: %s is longer than %d bytes", topology.Quote(policy), maxPolicyNameLen)
	}
	if _, err := budget.Charge(def); err != nil {
		return fmt.Errorf("defaultCpuSet: %v", err)
	}
	return nil
}

// charge checks an entry's key and counts its list against the budget.
func charge(budget *topology.CPUBudget, list, field, name string) error {
	if err := checkName(field, name); err != nil {
		return err
	}
	if _, err := budget.Charge(list); err != nil {
		return fmt.Errorf("%s: %v", field, err)
	}
	return nil
}

// mustParse expands a list the budget has counted: it parses.
func mustParse(list string) cpuset.CPUSet {
	set, _ := topology.ParseCPUList(list)
	return set
}

// checkDepth refuses JSON nested deeper than max before it is decoded: a
// checkpoint is at most a few levels deep, and deep nesting is only cost.
func checkDepth(raw []byte, max int) error {
	depth, inString, escaped := 0, false, false
	for _, c := range raw {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if depth++; depth > max {
				return fmt.Errorf("nested deeper than %d levels", max)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// shortErr cuts a decoder's error, which may quote the input.
func shortErr(err error) string {
	s := err.Error()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return string(bytes.ToValidUTF8([]byte(s), []byte("?")))
}
