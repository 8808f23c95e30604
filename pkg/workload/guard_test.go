package workload

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneWorkloadParser: workload text (the annotation and label keys a
// workload is opted in, classified and configured by, and the Kubernetes QoS
// class) is read only here, when the workload arrives, so that a pod, a
// standalone workload and the scheduler cannot drift apart in what they
// mean by it, and the decision receives types. pkg/memqos included: it takes
// the class and the memoryQOS annotation read (MemQoSOf).
func TestOneWorkloadParser(t *testing.T) {
	forbidden := []string{
		// Classifying QoS: the Kubernetes QoS class.
		"Status.QOSClass", "corev1.PodQOSBestEffort",
		// Reading a key through its constant.
		"Annotations[workload.", "Labels[workload.", "annotations[workload.", "labels[workload.",
	}
	// The keys, spelled out.
	for _, k := range []string{AnnotationCPUSet, AnnotationCPUPolicy, AnnotationResourceStatus, AnnotationStopOnExit,
		AnnotationCoreIsolation, LabelQoSClass, LegacyQoSClass, AnnotationMemoryQoS, LegacyAnnotationMemoryQoS,
		AnnotationMemoryLocality, AnnotationCPUBurst} {
		forbidden = append(forbidden, `"`+k+`"`)
	}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == ".git" || d.Name() == "testdata" ||
			path == filepath.Join(root, "bench") || path == filepath.Join(root, "pkg", "workload")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, f := range forbidden {
			if strings.Contains(string(raw), f) {
				t.Errorf("%s contains %s: read workload text with pkg/workload", path, f)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
