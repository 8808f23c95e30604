package workload

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneWorkloadParser: workload text (the annotation and label keys a
// workload is opted in and classified by, and the Kubernetes QoS class) is
// read only here, so that a pod, a standalone workload and the scheduler
// cannot drift apart in what they mean by it. pkg/memqos reads its own
// memoryQOS annotation and validates the class label for its errors.
func TestOneWorkloadParser(t *testing.T) {
	forbidden := []string{
		// The keys, spelled out or through the constants.
		`"` + AnnotationCPUSet + `"`, `"` + AnnotationCPUPolicy + `"`,
		`"` + AnnotationResourceStatus + `"`, `"` + AnnotationStopOnExit + `"`, `"` + AnnotationCoreIsolation + `"`,
		"Annotations[workload.", "Labels[workload.",
		// Classifying QoS: the class keys and the Kubernetes QoS class.
		"memqos.LabelQoSClass", "memqos.LegacyQoSClass", "Status.QOSClass", "corev1.PodQOSBestEffort",
	}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".cache" || d.Name() == ".git" || d.Name() == "testdata" ||
			path == filepath.Join(root, "bench") || path == filepath.Join(root, "pkg", "workload") ||
			path == filepath.Join(root, "pkg", "memqos")) {
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
