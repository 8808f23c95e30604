// Command images packs static binaries into one-layer images in the docker-archive
// format, for `ctr -n k8s.io images import` on a node that reaches no registry (the
// end-to-end tests, hack/e2e.sh). The first -file is the entrypoint:
//
//	go run ./tools/images -ref locus.local/e2e/pause:1 -o pause.tar -file /pause=bin/pause
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/locus-project/locus/pkg/atomicfile"
)

type fileFlags []string

func (f *fileFlags) String() string     { return strings.Join(*f, ",") }
func (f *fileFlags) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "images:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("images", flag.ContinueOnError)
	ref := fs.String("ref", "", "image reference, host.domain/path:tag")
	out := fs.String("o", "", "output archive")
	var files fileFlags
	fs.Var(&files, "file", "DEST=SRC: put file SRC at DEST in the image (repeatable; the first is the entrypoint)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *ref == "" || *out == "" || len(files) == 0 || fs.NArg() > 0 {
		return fmt.Errorf("usage: images -ref REF -o OUT -file DEST=SRC [-file DEST=SRC...]")
	}
	img := Image{Ref: *ref}
	for _, f := range files {
		dest, src, ok := strings.Cut(f, "=")
		if !ok {
			return fmt.Errorf("-file %q is not DEST=SRC", f)
		}
		data, err := os.ReadFile(src)
		if err != nil {
			return err
		}
		img.Files = append(img.Files, File{Path: dest, Mode: 0o755, Data: data})
	}
	img.Entrypoint = []string{img.Files[0].Path}
	var buf bytes.Buffer
	if err := WriteDockerArchive(&buf, img); err != nil {
		return err
	}
	return atomicfile.Write(*out, buf.Bytes(), 0o644)
}
