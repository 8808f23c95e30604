package main

import (
	"archive/tar"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The annotations on index.json's entry that name the image: containerd (`ctr
// images import`, kind load image-archive) takes the first, OCI tools the second.
const (
	annotationImageName = "io.containerd.image.name"
	annotationRefName   = "org.opencontainers.image.ref.name"
)

// WriteArchive writes idx as an OCI image layout in a tar, named ref: oci-layout,
// index.json and every blob once, in a fixed order, so the same index gives the
// same bytes.
func WriteArchive(w io.Writer, idx v1.ImageIndex, ref name.Tag) error {
	blobs := map[string][]byte{}
	var add func(v1.ImageIndex) error
	add = func(ix v1.ImageIndex) error {
		raw, err := ix.RawManifest()
		if err != nil {
			return err
		}
		d, _ := ix.Digest()
		blobs[d.Hex] = raw
		m, err := ix.IndexManifest()
		if err != nil {
			return err
		}
		for _, desc := range m.Manifests {
			switch desc.MediaType {
			case types.OCIImageIndex, types.DockerManifestList:
				child, err := ix.ImageIndex(desc.Digest)
				if err != nil {
					return err
				}
				if err := add(child); err != nil {
					return err
				}
			default:
				img, err := ix.Image(desc.Digest)
				if err != nil {
					return err
				}
				if err := addImage(blobs, img); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := add(idx); err != nil {
		return err
	}
	d, _ := idx.Digest()
	size, _ := idx.Size()
	mt, _ := idx.MediaType()
	top, err := json.Marshal(v1.IndexManifest{SchemaVersion: 2, MediaType: types.OCIImageIndex, Manifests: []v1.Descriptor{{
		MediaType: mt, Digest: d, Size: size,
		Annotations: map[string]string{annotationImageName: ref.Name(), annotationRefName: ref.TagStr()},
	}}})
	if err != nil {
		return err
	}
	tw := tar.NewWriter(w)
	file := func(name string, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), ModTime: epoch,
			Typeflag: tar.TypeReg, Format: tar.FormatPAX}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	if err := file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return err
	}
	if err := file("index.json", top); err != nil {
		return err
	}
	hexes := make([]string, 0, len(blobs))
	for h := range blobs {
		hexes = append(hexes, h)
	}
	sort.Strings(hexes)
	for _, h := range hexes {
		if err := file("blobs/sha256/"+h, blobs[h]); err != nil {
			return err
		}
	}
	return tw.Close()
}

func addImage(blobs map[string][]byte, img v1.Image) error {
	raw, err := img.RawManifest()
	if err != nil {
		return err
	}
	d, _ := img.Digest()
	blobs[d.Hex] = raw
	cfg, err := img.RawConfigFile()
	if err != nil {
		return err
	}
	cd, _ := img.ConfigName()
	blobs[cd.Hex] = cfg
	layers, err := img.Layers()
	if err != nil {
		return err
	}
	for _, l := range layers {
		ld, err := l.Digest()
		if err != nil {
			return err
		}
		rc, err := l.Compressed()
		if err != nil {
			return err
		}
		data, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return err
		}
		blobs[ld.Hex] = data
	}
	return nil
}

// ReadArchive unpacks an archive of WriteArchive into dir and returns the index
// it holds and the name it was given.
func ReadArchive(archive, dir string) (v1.ImageIndex, string, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", archive, err)
		}
		clean := filepath.Clean(h.Name)
		if h.Typeflag != tar.TypeReg || filepath.IsAbs(clean) || strings.HasPrefix(clean, "..") {
			return nil, "", fmt.Errorf("%s: entry %q is not a file of an OCI layout", archive, h.Name)
		}
		dst := filepath.Join(dir, clean)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, "", err
		}
		out, err := os.Create(dst)
		if err != nil {
			return nil, "", err
		}
		_, err = io.Copy(out, tr)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, "", err
		}
	}
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		return nil, "", fmt.Errorf("%s is not an OCI image archive: %w", archive, err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		return nil, "", err
	}
	if len(m.Manifests) != 1 {
		return nil, "", fmt.Errorf("%s: index.json has %d entries, want the one image index", archive, len(m.Manifests))
	}
	idx, err := top.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", archive, err)
	}
	return idx, m.Manifests[0].Annotations[annotationImageName], nil
}
