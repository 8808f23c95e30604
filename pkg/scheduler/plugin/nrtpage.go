package plugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/locus-project/locus/pkg/kube/nrt"
)

// maxReportBytes: a report's JSON beyond this is refused, as one beyond
// the bounds of checkReport (the API server stores objects of about
// 1.5 MB at most; a report of a 192-CPU machine is about 24 KB).
const maxReportBytes = 3 << 20

// pageMeta is what a page of the list says of the list.
type pageMeta struct {
	ResourceVersion    string `json:"resourceVersion"`
	Continue           string `json:"continue"`
	RemainingItemCount *int64 `json:"remainingItemCount"`
}

// decodePage reads one page of the NodeResourceTopology list, as the API
// server writes it, appending an nrtEntry per report to out: the report
// decoded, or the error that decoding it met. It reads one report at a
// time from r, so that only one report's text is held at once besides the
// entries. A report that cannot be read is an entry with its error (the
// node is then as one without a report); a page that is not a list's JSON
// is an error.
func decodePage(r io.Reader, texts texts, out []runtime.RawExtension) ([]runtime.RawExtension, pageMeta, error) {
	var meta pageMeta
	dec := json.NewDecoder(r)
	if err := expectDelim(dec, '{'); err != nil {
		return out, meta, fmt.Errorf("a page of %s: %w", nrt.GVR.Resource, err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return out, meta, fmt.Errorf("a page of %s: %w", nrt.GVR.Resource, err)
		}
		switch tok {
		case "metadata":
			err = dec.Decode(&meta)
		case "items":
			out, err = decodeItems(dec, texts, out)
		default: // apiVersion, kind
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return out, meta, fmt.Errorf("a page of %s: %v: %w", nrt.GVR.Resource, tok, err)
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return out, meta, fmt.Errorf("a page of %s: %w", nrt.GVR.Resource, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return out, meta, fmt.Errorf("a page of %s: data after the list", nrt.GVR.Resource)
	}
	return out, meta, nil
}

// decodeItems reads the list's items, null or an array of reports.
func decodeItems(dec *json.Decoder, texts texts, out []runtime.RawExtension) ([]runtime.RawExtension, error) {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return out, err
	}
	if tok != json.Delim('[') {
		return out, fmt.Errorf("want an array, have %v", tok)
	}
	for dec.More() {
		var l listedReport
		if err := dec.Decode(&l); err != nil {
			return out, err
		}
		if e := l.entry(texts); e != nil {
			out = append(out, runtime.RawExtension{Object: e})
		}
	}
	return out, expectDelim(dec, ']')
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("want %v, the text ends", d)
	}
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("want %v, have %v", d, tok)
	}
	return nil
}

// listedReport is one item of a page: its name and version, and the report
// or the error that reading it met. Reading it never fails, so that one
// unreadable report does not refuse the others of its page.
type listedReport struct {
	name, version string
	o             *nrt.Object
	err           error
}

// listedItem is a report with the version the list gives it.
type listedItem struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		nrt.Metadata
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Zones []nrt.Zone `json:"zones"`
}

func (l *listedReport) UnmarshalJSON(b []byte) error {
	var it listedItem
	err := fmt.Errorf("%d bytes, at most %d", len(b), maxReportBytes)
	if len(b) <= maxReportBytes {
		err = json.Unmarshal(b, &it)
	}
	if err != nil {
		// The name and version alone, for the entry that says the report
		// is unreadable. Without a name there is no entry.
		var id struct {
			Metadata struct {
				Name            string `json:"name"`
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(b, &id)
		l.name, l.version = id.Metadata.Name, id.Metadata.ResourceVersion
		l.err = fmt.Errorf("NodeResourceTopology %q: %w", l.name, err)
		return nil
	}
	l.name, l.version = it.Metadata.Name, it.Metadata.ResourceVersion
	o := &nrt.Object{APIVersion: it.APIVersion, Kind: it.Kind, Metadata: it.Metadata.Metadata, Zones: it.Zones}
	if l.err = checkReport(l.name, o); l.err == nil {
		l.o = o
	}
	return nil
}

// entry is the informer's entry for the report, its long annotations kept
// once for all the reports that carry the same text (texts); nil for an
// item without a name, which the store could not key.
func (l *listedReport) entry(texts texts) *nrtEntry {
	if l.name == "" {
		return nil
	}
	e := &nrtEntry{name: l.name, version: l.version}
	if l.o != nil {
		texts.share(l.o.Metadata.Annotations)
	}
	e.raw.Store(&received{o: l.o, err: l.err})
	return e
}
