package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Target is where an archive named REPO/IMAGE:TAG goes in registry: registry/IMAGE:TAG.
func Target(registry, archiveRef string) (name.Tag, error) {
	registry = strings.TrimSuffix(strings.TrimSpace(registry), "/")
	if registry == "" {
		return name.Tag{}, errors.New("no registry: set REGISTRY, e.g. make push REGISTRY=ghcr.io/you")
	}
	src, err := name.NewTag(archiveRef, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("archive names %q, not REPOSITORY:TAG: %w", archiveRef, err)
	}
	dst := registry + "/" + path.Base(src.RepositoryStr()) + ":" + src.TagStr()
	t, err := name.NewTag(dst, name.StrictValidation)
	if err != nil {
		return name.Tag{}, fmt.Errorf("registry %q: %s is not an image reference", registry, dst)
	}
	return t, nil
}

// Push pushes the index of the archive to registry under the archive's image name
// and tag, with the credentials of the Docker config (docker login, $DOCKER_CONFIG).
func Push(archive, registry string, opts ...remote.Option) (name.Tag, error) {
	tmp, err := os.MkdirTemp("", "oci-push-")
	if err != nil {
		return name.Tag{}, err
	}
	defer os.RemoveAll(tmp)
	idx, ref, err := ReadArchive(archive, tmp)
	if err != nil {
		return name.Tag{}, err
	}
	dst, err := Target(registry, ref)
	if err != nil {
		return name.Tag{}, err
	}
	opts = append([]remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	if err := remote.WriteIndex(dst, idx, opts...); err != nil {
		return dst, explain(dst, err)
	}
	return dst, nil
}

// explain turns a failed push into one line that says what to do: the registry
// is unreachable, or refused the credentials, or said something else.
func explain(dst name.Tag, err error) error {
	reg := dst.RegistryStr()
	var terr *transport.Error
	if errors.As(err, &terr) {
		switch terr.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("registry %s refused to let this push %s (HTTP %d): log in first (docker login %s, or credentials in $DOCKER_CONFIG/config.json)",
				reg, dst, terr.StatusCode, reg)
		}
		return fmt.Errorf("registry %s refused %s: %s", reg, dst, oneLine(terr.Error()))
	}
	var nerr net.Error
	var operr *net.OpError
	var dnserr *net.DNSError
	if errors.As(err, &dnserr) || errors.As(err, &operr) || errors.As(err, &nerr) {
		return fmt.Errorf("cannot reach registry %s: %s", reg, oneLine(err.Error()))
	}
	return fmt.Errorf("push %s: %s", dst, oneLine(err.Error()))
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
