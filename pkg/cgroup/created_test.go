package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// openBoth opens the originals and the record of created cgroups in dir,
// as the agent does.
func openBoth(t *testing.T, dir string) (*FileStore, *Created) {
	t.Helper()
	fs, err := OpenFileStore(filepath.Join(dir, "originals.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := OpenCreated(filepath.Join(dir, "created.json"), fs)
	if err != nil {
		t.Fatal(err)
	}
	return fs, c
}

func marks(s interface{ Keys() []string }) []string {
	var out []string
	for _, k := range s.Keys() {
		if strings.HasSuffix(k, "/") {
			out = append(out, k)
		}
	}
	return out
}

// The marks of the cgroups Locus created outlive the originals file: lost
// or damaged, it gets them back from the record; the originals of files
// are not in the record, and a mark forgotten is gone from both.
func TestCreatedOutlivesTheOriginals(t *testing.T) {
	for _, loss := range []string{"lost", "damaged"} {
		t.Run(loss, func(t *testing.T) {
			dir := t.TempDir()
			_, c := openBoth(t, dir)
			if err := c.RecordOriginals(map[string]string{"cpuset/locus.slice/": "created", "cpuset/locus.slice/a/": "created",
				"cpuset/locus.slice/b/": "created", "cpuset/locus.slice/a/cpuset.cpus": "0-3"}); err != nil {
				t.Fatal(err)
			}
			if err := c.Forget("cpuset/locus.slice/b/", "cpuset/locus.slice/a/cpuset.cpus"); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "originals.json")
			var err error
			if loss == "lost" {
				err = os.Remove(path)
			} else {
				err = os.WriteFile(path, []byte(`{"format":"locus-cgroup-orig`), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
			fs, _ := openBoth(t, dir)
			want := []string{"cpuset/locus.slice/", "cpuset/locus.slice/a/"}
			if got := fs.Keys(); !slices.Equal(got, want) {
				t.Errorf("originals after they were %s: %v, want the marks %v back", loss, got, want)
			}
		})
	}
}

// A record missing (the agent's first start with it) or damaged starts
// from the marks in the originals, the damaged one kept aside; and an
// intact originals file is not given marks it has forgotten.
func TestCreatedRebuiltFromTheOriginals(t *testing.T) {
	dir := t.TempDir()
	fs, err := OpenFileStore(filepath.Join(dir, "originals.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.RecordOriginals(map[string]string{"x/": "created", "x/cpu.weight": "100"}); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCreated(filepath.Join(dir, "created.json"), fs); err != nil {
		t.Fatal(err)
	}
	dirs, err := readCreated(filepath.Join(dir, "created.json"))
	if err != nil || !slices.Equal(dirs, []string{"x/"}) {
		t.Fatalf("record started from the originals: %v, %v", dirs, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "created.json"), []byte(`{"format":"locus-cgroup-created/v1","dirs":["../etc/"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	fs, c := openBoth(t, dir)
	if got := marks(c); !slices.Equal(got, []string{"x/"}) {
		t.Errorf("marks %v, want x/ from the originals", got)
	}
	if aside, _ := filepath.Glob(filepath.Join(dir, "created.json.corrupt-*")); len(aside) != 1 {
		t.Errorf("damaged record not kept aside: %v", aside)
	}
	if err := fs.Forget("x/"); err != nil { // forgotten from the originals only: an old agent's doing
		t.Fatal(err)
	}
	fs, _ = openBoth(t, dir)
	if got := marks(fs); len(got) != 0 {
		t.Errorf("intact originals given back a mark they had forgotten: %v", got)
	}
}

// A record that is not one is refused whole, naming why, before a list of
// its size is made.
func TestParseCreatedRefuses(t *testing.T) {
	many := `{"format":"locus-cgroup-created/v1","dirs":[` + strings.Repeat(`"a/",`, maxCreatedDirs) + `"a/"]}`
	for _, tc := range []struct{ raw, want string }{
		{`{"format":"locus-cgroup-created/v2","dirs":[]}`, "format"},
		{`{"format":"locus-cgroup-created/v1","dirs":["a"]}`, "dirs[0]"},
		{`{"format":"locus-cgroup-created/v1","dirs":["a/","/etc/"]}`, "dirs[1]"},
		{`{"format":"locus-cgroup-created/v1","dirs":["a/../../b/"]}`, "dirs[0]"},
		{`{"format":"locus-cgroup-created/v1","dirs":["/"]}`, "dirs[0]"},
		{`{"format":"locus-cgroup-created/v1","dirs":{}}`, "dirs: not a list"},
		{`{"format":"locus-cgroup-created/v1","other":1}`, "unknown field"},
		{`{"format":"locus-cgroup-created/v1"} {}`, "data after"},
		{many, fmt.Sprintf("more than %d", maxCreatedDirs)},
		{strings.Repeat(" ", maxCreatedBytes+1), "larger than"},
	} {
		_, err := parseCreated("created.json", []byte(tc.raw))
		if !errors.Is(err, errCreatedDamaged) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60s: %v, want an error naming %s", tc.raw, err, tc.want)
		}
	}
	got, err := parseCreated("created.json", []byte(`{"format":"locus-cgroup-created/v1","dirs":["b/c/","a/","b/c/"]}`))
	if err != nil || !slices.Equal(got, []string{"a/", "b/c/"}) {
		t.Errorf("a good record: %v, %v", got, err)
	}
}

// Whatever the file holds, what is kept of it is a bounded list of clean
// creation marks.
func FuzzParseCreated(f *testing.F) {
	f.Add([]byte(`{"format":"locus-cgroup-created/v1","dirs":["cpuset/locus.slice/","cpuset/locus.slice/a/"]}`))
	f.Add([]byte(`{"format":"locus-cgroup-created/v1","dirs":["a/","a/"]}`))
	f.Add([]byte(`{"dirs":[null],"format":""}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		dirs, err := parseCreated("created.json", raw)
		if err != nil {
			if !errors.Is(err, errCreatedDamaged) {
				t.Fatalf("error without errCreatedDamaged: %v", err)
			}
			return
		}
		if len(dirs) > maxCreatedDirs {
			t.Fatalf("%d dirs kept", len(dirs))
		}
		for _, d := range dirs {
			rel, ok := strings.CutSuffix(d, "/")
			if !ok || rel == "" || CheckRel(rel) != nil {
				t.Fatalf("kept %q", d)
			}
		}
	})
}
