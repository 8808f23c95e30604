package kubelet

import "embed"

//go:embed testdata/checkpoints
var fixtureFS embed.FS
