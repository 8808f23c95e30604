// Package quantity bounds the cost of reading a Kubernetes quantity whose
// text someone else wrote.
package quantity

import (
	"math"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Bounded says whether q may be compared and converted exactly (Cmp,
// CmpInt64, Value, MilliValue, AsInt64) in bounded time. A quantity's
// exponent is its author's text: "e122222222111" and "1e122222222111"
// parse, and exact arithmetic on them builds a number of that many digits,
// which does not end in any time a reader can wait. The float approximation
// is made from the mantissa and the exponent alone; it is finite only when
// the exponent is one a float64 can hold (at most 308) and the mantissa has
// at most 308 digits, where exact arithmetic takes microseconds. Every
// quantity a resource can sensibly hold is among those.
func Bounded(q *resource.Quantity) bool {
	f := q.AsApproximateFloat64()
	return !math.IsNaN(f) && !math.IsInf(f, 0)
}
