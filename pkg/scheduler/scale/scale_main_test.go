package scale

import (
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"k8s.io/klog/v2"

	"github.com/locus-project/locus/internal/kubetest"
)

// gate turns the measured run on (its size, a pause between passes);
// without it the test is a small check of the decisions.
const gate = "LOCUS_SCHED_SCALE"

var cp *kubetest.ControlPlane

// schedulerLog receives both schedulers' klog output (they run in this
// process, one after the other); it is kept for a look after the run.
var schedulerLog string

func TestMain(m *testing.M) {
	if os.Getenv("LOCUS_SCHED_MEMPROFILE") != "" {
		// One sample per 16 KiB allocated rather than 512: a plugin's
		// few megabytes otherwise show as a handful of samples.
		runtime.MemProfileRate = 16 << 10
	}
	klog.InitFlags(nil)
	dir, err := os.MkdirTemp("", "locus-scale-")
	if err != nil {
		panic(err)
	}
	schedulerLog = filepath.Join(dir, "scheduler.log")
	_ = flag.Set("logtostderr", "false")
	_ = flag.Set("alsologtostderr", "false")
	_ = flag.Set("v", envString("LOCUS_SCHED_V", "0"))
	f, err := os.Create(schedulerLog)
	if err != nil {
		panic(err)
	}
	klog.SetOutput(f)
	kubetest.Main(m, &cp)
}
