package fuzzseed

import (
	"regexp"

	"k8s.io/apimachinery/pkg/api/resource"
)

// longExponent is a decimal exponent of four digits or more.
var longExponent = regexp.MustCompile(`[eE][+-]?0*[0-9]{4,}$`)

// ParseQuantity is resource.ParseQuantity for a fuzz target's text, except
// an exponent of four digits or more: apimachinery's own parser can take
// unbounded time over one ("22e2212222111", "1e-99999999999") before any
// code under test runs, and a pod reaches that code already parsed by the
// API server and the client, which would have spent that time first. The
// quantities of that kind that parse at once ("e122222222111") are in the
// targets' tables; quantity.Parse, which screens them, has its own target.
func ParseQuantity(text string) (resource.Quantity, bool) {
	if longExponent.MatchString(text) {
		return resource.Quantity{}, false
	}
	q, err := resource.ParseQuantity(text)
	return q, err == nil
}
