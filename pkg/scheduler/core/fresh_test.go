package core

import (
	"strings"
	"testing"
	"time"

	"github.com/locus-project/locus/pkg/kube/nrt"
)

// A report is fresh while its heartbeat is at most maxAge old; one without
// a heartbeat, or a check with maxAge 0, always passes; a heartbeat that is
// not a time makes the report unreadable.
func TestFresh(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		heartbeat string // "" : no annotation
		maxAge    time.Duration
		want      Kind // -1: fresh
		wantErr   string
	}{
		{name: "just written", heartbeat: "2026-11-22T09:00:00Z", maxAge: 3 * time.Minute, want: -1},
		{name: "at the limit", heartbeat: "2026-11-22T08:57:00Z", maxAge: 3 * time.Minute, want: -1},
		{name: "one second past", heartbeat: "2026-11-22T08:56:59Z", maxAge: 3 * time.Minute, want: Silent,
			wantErr: "last wrote its NodeResourceTopology 3m1s ago (at 2026-11-22T08:56:59Z), more than nrtMaxAge 3m0s"},
		{name: "another zone's offset", heartbeat: "2026-11-22T10:59:00+02:00", maxAge: 3 * time.Minute, want: -1},
		{name: "check off", heartbeat: "2026-11-20T00:00:00Z", maxAge: 0, want: -1},
		{name: "no heartbeat", maxAge: 3 * time.Minute, want: -1},
		{name: "not a time", heartbeat: "yesterday", maxAge: 3 * time.Minute, want: BadTopology,
			wantErr: `annotation locus.io/heartbeat: "yesterday" is not an RFC 3339 time`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := publish(t, twoNode, "n", reservedCore, nil)
			if tt.heartbeat != "" {
				o.Metadata.Annotations[nrt.AnnotationHeartbeat] = tt.heartbeat
			}
			c := NewCluster()
			c.SetNRT("n", o)
			v := c.Snapshot().Get("n")
			err := error(v.Err)
			if v.Err == nil {
				err = Fresh(v, now, tt.maxAge)
			}
			if got := kind(err); got != tt.want {
				t.Fatalf("kind %d (%v), want %d", got, err, tt.want)
			}
			if tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %q, want it to say %q", err, tt.wantErr)
			}
			if err == nil {
				if _, perr := Place(v, 0, req(2, "", 0)); perr != nil {
					t.Errorf("a fresh report places nothing: %v", perr)
				}
			}
		})
	}
	if err := Fresh(nil, now, time.Minute); err != nil {
		t.Errorf("no view: %v (Place says why)", err)
	}
}
