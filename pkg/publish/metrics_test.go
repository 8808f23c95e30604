package publish

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// A config error is counted when fresh, and the invalid gauge follows the
// config in force.
func TestCountConfigError(t *testing.T) {
	m := NewMetrics("", "")
	for _, c := range []struct {
		fresh, invalid bool
		errs, bad      float64
	}{{true, true, 1, 1}, {false, true, 1, 1}, {true, true, 2, 1}, {false, false, 2, 0}} {
		m.CountConfigError(c.fresh, c.invalid)
		if errs, bad := testutil.ToFloat64(m.ConfigErrs), testutil.ToFloat64(m.ConfigBad); errs != c.errs || bad != c.bad {
			t.Fatalf("after %+v: errors %v, invalid %v", c, errs, bad)
		}
	}
}
