package cgroup

import (
	"encoding/json"
	"slices"
)

// The originals checkpoint is rewritten whole at every record, and
// encoding/json's reflection over its two maps (a copy of every value, a
// sorted list of every key, a buffer grown from nothing after each
// collection) was 6 % of the bytes the agent allocated under a 300-pod
// churn. appendStoreFile writes the very bytes json.Encoder writes for a
// storeFile (TestStoreEncodingIsEncodingJSONs holds it to that) into the
// store's reused buffer.

// appendStoreFile appends storeFile{storeFormat, data, marks} as
// json.Encoder encodes it, newline included; keys is scratch for sorting.
func appendStoreFile(buf []byte, keys *[]string, data map[string]string, marks map[string]Mark) []byte {
	buf = append(buf, `{"format":`...)
	buf = appendJSONString(buf, storeFormat)
	buf = append(buf, `,"originals":`...)
	buf = appendStringMap(buf, keys, data)
	if len(marks) > 0 { // omitempty
		buf = append(buf, `,"marks":`...)
		buf = appendStringMap(buf, keys, marks)
	}
	return append(buf, "}\n"...)
}

// appendStringMap appends m as an object, its keys sorted as encoding/json
// sorts them (byte-wise); a nil map is null.
func appendStringMap[V ~string](buf []byte, keys *[]string, m map[string]V) []byte {
	if m == nil {
		return append(buf, "null"...)
	}
	ks := (*keys)[:0]
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	buf = append(buf, '{')
	for i, k := range ks {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, k)
		buf = append(buf, ':')
		buf = appendJSONString(buf, string(m[k]))
	}
	clear(ks) // keeps no key alive until the next save
	*keys = ks[:0]
	return append(buf, '}')
}

// appendJSONString appends s quoted as encoding/json quotes it. Cgroup
// paths and values are printable ASCII, written as they are; any other
// string (a control character, a quote, HTML's <, > and &, which json
// escapes, anything not ASCII) is left to encoding/json itself.
func appendJSONString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(buf, q...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}
