// Command oci builds the project's images as OCI archives and pushes them, with no
// container daemon (make images, make push):
//
//	oci build -name locus -version 0.1.0 -revision SHA -repo ghcr.io/locus-project \
//	    -bin linux/amd64=bin/linux-amd64/locus -bin linux/arm64=bin/linux-arm64/locus -o locus.oci.tar
//	oci push -registry registry.example.com/team locus.oci.tar locus-scheduler.oci.tar
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "oci:", err)
		os.Exit(1)
	}
}

type binFlags map[string]string

func (b binFlags) String() string { return fmt.Sprint(map[string]string(b)) }
func (b binFlags) Set(v string) error {
	plat, file, ok := strings.Cut(v, "=")
	if !ok || plat == "" || file == "" {
		return fmt.Errorf("%q is not PLATFORM=PATH", v)
	}
	b[plat] = file
	return nil
}

func run(args []string) error {
	if len(args) == 0 {
		return errors.New("usage: oci build|push FLAGS")
	}
	switch args[0] {
	case "build":
		return build(args[1:])
	case "push":
		fs := flag.NewFlagSet("push", flag.ContinueOnError)
		registry := fs.String("registry", "", "push to REGISTRY/IMAGE:TAG, e.g. ghcr.io/you")
		if err := fs.Parse(args[1:]); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			return errors.New("push: no archive (make images writes them)")
		}
		for _, a := range fs.Args() {
			dst, err := Push(a, *registry)
			if err != nil {
				return err
			}
			fmt.Println("pushed", dst)
		}
		return nil
	}
	return fmt.Errorf("unknown command %q: want build or push", args[0])
}

func build(args []string) error {
	s := Spec{Binaries: binFlags{}}
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	fs.StringVar(&s.Name, "name", "", "binary and image name")
	fs.StringVar(&s.Version, "version", "", "tag and version label")
	fs.StringVar(&s.Revision, "revision", "", "commit, for the revision label")
	fs.StringVar(&s.Source, "source", "https://github.com/locus-project/locus", "source label")
	fs.StringVar(&s.User, "user", "", "user the image runs as, e.g. 65532:65532 (default root)")
	repo := fs.String("repo", "", "the archive names the image REPO/NAME:VERSION")
	out := fs.String("o", "", "output archive")
	fs.Var(binFlags(s.Binaries), "bin", "PLATFORM=PATH: the binary for linux/amd64, linux/arm64 (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *repo == "" || *out == "" || fs.NArg() > 0 {
		return errors.New("usage: oci build -name NAME -version V -repo REPO -bin PLATFORM=PATH... -o OUT")
	}
	ref, err := name.NewTag(*repo+"/"+s.Name+":"+s.Version, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("-repo %q, -version %q: %w", *repo, s.Version, err)
	}
	idx, err := Build(s)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := WriteArchive(&buf, idx, ref); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return err
	}
	tmp := *out + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, *out); err != nil {
		return err
	}
	fmt.Printf("%s: %s, %d bytes\n", *out, ref, buf.Len())
	return nil
}
