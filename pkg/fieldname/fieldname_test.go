package fieldname

import "testing"

func TestClosest(t *testing.T) {
	known := []string{"minLimitPercent", "lowLimitPercent", "throttlingPercent", "enable", "resources"}
	for key, want := range map[string]string{"lowLimitPercnt": "lowLimitPercent", "MinLimitPercent": "minLimitPercent",
		"resoures": "resources", "enabel": "enable"} {
		if got, ok := Closest(key, known); !ok || got != want {
			t.Errorf("Closest(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
	for _, key := range []string{"policy", "x", "completelyUnrelatedName"} {
		if got, ok := Closest(key, known); ok {
			t.Errorf("Closest(%q) = %q, want no suggestion", key, got)
		}
	}
}
