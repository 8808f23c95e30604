package quantity

import (
	"bytes"
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/resource"
)

// MaxText bounds a quantity's text before it is parsed: the longest
// quantity any resource holds ("18446744073709551615Ei") is 22 bytes.
const MaxText = 64

// maxExponent is the largest decimal exponent Parse reads, the largest a
// float64 holds. apimachinery's parser itself takes time that grows faster
// than the exponent: "1e-3000000" takes a fifth of a second, and the 14
// bytes "1e-99999999999" would not end.
const maxExponent = 308

// Parse reads a quantity whose text someone else wrote, in bounded time:
// the text is bounded, its exponent screened before apimachinery parses it,
// and the result Bounded.
func Parse(text string) (resource.Quantity, error) {
	if len(text) > MaxText {
		return resource.Quantity{}, fmt.Errorf("%.20q... is %d bytes, more than a quantity's %d", text, len(text), MaxText)
	}
	if exponentTooLarge(text) {
		return resource.Quantity{}, fmt.Errorf("%q has an exponent beyond ±%d", text, maxExponent)
	}
	q, err := resource.ParseQuantity(text)
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("%q: %v", text, err)
	}
	if !Bounded(&q) {
		return resource.Quantity{}, fmt.Errorf("%q is out of range", text)
	}
	return q, nil
}

// exponentTooLarge says whether text ends in a decimal exponent
// ("e<signed integer>" or "E<signed integer>") beyond ±maxExponent.
// "1E" and "1Ei" (exa, exbi) have no digits after the E and are not one.
func exponentTooLarge(text string) bool {
	i := len(text)
	for i > 0 && text[i-1] >= '0' && text[i-1] <= '9' {
		i--
	}
	digits := text[i:]
	if i > 0 && (text[i-1] == '+' || text[i-1] == '-') {
		i--
	}
	if digits == "" || i == 0 || (text[i-1] != 'e' && text[i-1] != 'E') {
		return false
	}
	n := 0
	for _, c := range []byte(digits) {
		if n = n*10 + int(c-'0'); n > maxExponent {
			return true
		}
	}
	return false
}

// FromJSON reads a quantity from its JSON form, a string or a number, with
// Parse; JSON null is nil.
func FromJSON(data []byte) (*resource.Quantity, error) {
	data = bytes.TrimSpace(data)
	if string(data) == "null" {
		return nil, nil
	}
	if len(data) > MaxText+2 {
		return nil, fmt.Errorf("%.20s... is %d bytes, more than a quantity's %d", data, len(data), MaxText)
	}
	text := string(data)
	switch {
	case len(data) >= 2 && data[0] == '"' && data[len(data)-1] == '"' && bytes.IndexByte(data, '\\') < 0:
		text = text[1 : len(text)-1] // the common case, without a decoder
	case len(data) > 0 && data[0] == '"':
		if err := json.Unmarshal(data, &text); err != nil {
			return nil, err
		}
	}
	q, err := Parse(text)
	if err != nil {
		return nil, err
	}
	return &q, nil
}
