package kubelet

import (
	"hash/fnv"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// The kubelet's checkpoint checksum is FNV-32a over a go-spew dump of the
// checkpoint struct, its Checksum field zero (k8s.io/apimachinery's
// dump.ForHash: "%#v" with SortKeys, SpewKeys, DisableMethods,
// DisablePointerAddresses, DisableCapacities). The dump prints Go type names
// as the kubelet's packages spell them ("state.CPUManagerCheckpoint",
// "checksum.Checksum"), so the checkpoint types here, which live in another
// package, are printed under the kubelet's names through spewNames. dump
// follows go-spew 1.1.1's formatter for the kinds those types use (pointer,
// struct, map, slice, string, integers), including its quirks: values inside
// maps and slices carry no type, a pointer there prints as "<*>" and a nil
// one as "<nil>", which also leaves the next value's type out (go-spew does
// not reset its ignoreNextType then), and a nil map or slice prints "<nil>".
// The bench module proves it against checkpoints written by the kubelet's
// own state packages.

// spewNames are the kubelet's names of the checkpoint types.
var spewNames = map[reflect.Type]string{}

// registerSpewName gives t the name the kubelet's dump prints for it.
func registerSpewName(v any, name string) {
	spewNames[reflect.TypeOf(v)] = name
}

// spewTypeName is what reflect.Type.String says of t in the kubelet.
func spewTypeName(t reflect.Type) string {
	if n, ok := spewNames[t]; ok {
		return n
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + spewTypeName(t.Elem())
	case reflect.Slice:
		return "[]" + spewTypeName(t.Elem())
	case reflect.Map:
		return "map[" + spewTypeName(t.Key()) + "]" + spewTypeName(t.Elem())
	}
	return t.String()
}

// checksum is the kubelet's checksum of v, a pointer to a checkpoint whose
// checksum field is zero.
func checksum(v any) uint64 {
	d := dumper{}
	d.format(reflect.ValueOf(v))
	h := fnv.New32a()
	h.Write([]byte(d.b.String()))
	return uint64(h.Sum32())
}

type dumper struct {
	b          strings.Builder
	ignoreType bool // go-spew's ignoreNextType
}

func (d *dumper) format(v reflect.Value) {
	if v.Kind() == reflect.Pointer {
		d.formatPtr(v)
		return
	}
	if !d.ignoreType {
		d.b.WriteString("(" + spewTypeName(v.Type()) + ")")
	}
	d.ignoreType = false
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.b.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		d.b.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.String:
		d.b.WriteString(v.String())
	case reflect.Slice:
		if v.IsNil() {
			d.b.WriteString("<nil>")
			return
		}
		d.b.WriteString("[")
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				d.b.WriteString(" ")
			}
			d.ignoreType = true
			d.format(v.Index(i))
		}
		d.b.WriteString("]")
	case reflect.Map:
		if v.IsNil() {
			d.b.WriteString("<nil>")
			return
		}
		d.b.WriteString("map[")
		for i, k := range sortedKeys(v) {
			if i > 0 {
				d.b.WriteString(" ")
			}
			d.ignoreType = true
			d.format(k)
			d.b.WriteString(":")
			d.ignoreType = true
			d.format(v.MapIndex(k))
		}
		d.b.WriteString("]")
	case reflect.Struct:
		d.b.WriteString("{")
		for i := 0; i < v.NumField(); i++ {
			if i > 0 {
				d.b.WriteString(" ")
			}
			d.b.WriteString(v.Type().Field(i).Name + ":")
			d.format(v.Field(i))
		}
		d.b.WriteString("}")
	default:
		// The checkpoint types use no other kind; printing the kind keeps
		// a future field from hashing silently like something else.
		d.b.WriteString("<" + v.Kind().String() + ">")
	}
}

// formatPtr is go-spew's: the type with its stars when types are shown,
// else "<*>"; then the value, or "<nil>". The checkpoints hold no cycles.
func (d *dumper) formatPtr(v reflect.Value) {
	if v.IsNil() && d.ignoreType {
		d.b.WriteString("<nil>")
		return // go-spew leaves ignoreNextType set
	}
	stars, ve := 0, v
	for ve.Kind() == reflect.Pointer && !ve.IsNil() {
		stars++
		ve = ve.Elem()
	}
	nilFound := ve.Kind() == reflect.Pointer
	if !d.ignoreType {
		d.b.WriteString("(" + strings.Repeat("*", stars) + spewTypeName(ve.Type()) + ")")
	} else {
		if nilFound {
			stars += strings.Count(spewTypeName(ve.Type()), "*")
		}
		d.b.WriteString("<" + strings.Repeat("*", stars) + ">")
	}
	if nilFound {
		d.b.WriteString("<nil>")
		return // go-spew leaves ignoreNextType as it was
	}
	d.ignoreType = true
	d.format(ve)
}

// sortedKeys sorts map keys as go-spew's SortKeys does for the kinds of
// the checkpoints' keys: strings and integers by value.
func sortedKeys(v reflect.Value) []reflect.Value {
	keys := v.MapKeys()
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		switch a.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			return a.Int() < b.Int()
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			return a.Uint() < b.Uint()
		}
		return a.String() < b.String()
	})
	return keys
}
