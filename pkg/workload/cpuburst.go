package workload

import (
	"github.com/locus-project/locus/pkg/cpuburst"
	"github.com/locus-project/locus/pkg/sloconfig"
)

// CPUBurstOf reads a workload's own CPU Burst fields: its annotation, nil
// when it has none; the error names the annotation and the field.
func CPUBurstOf(annotations map[string]string) (*cpuburst.Config, error) {
	raw, ok := annotations[AnnotationCPUBurst]
	if !ok {
		return nil, nil
	}
	c, err := sloconfig.ParseCPUBurstAnnotation(raw, "annotation "+AnnotationCPUBurst)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// SetCPUBurst fills the workload's CPU Burst fields from its annotations.
func (w *Workload) SetCPUBurst(annotations map[string]string) {
	c, err := CPUBurstOf(annotations)
	w.CPUBurst, w.CPUBurstInvalid = c, ""
	if err != nil {
		w.CPUBurstInvalid = err.Error()
	}
}
