package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/locus-project/locus/pkg/doctor"
)

func newDoctorCmd() *cobra.Command {
	var env doctor.Env
	var output string
	cmd := &cobra.Command{
		Use:   "doctor [-o table|json]",
		Short: "Check whether this host has what Locus needs",
		Long: `Check this host: the cgroup version and controllers, the memory QoS files
the kernel has (and so the knobs that will be skipped), NUMA nodes and their
memory, AutoNUMA, KSM, transparent huge pages, the memory watermarks,
SMT and offline CPUs, isolated CPUs, the kubelet's CPU, memory and topology
managers, reserved CPUs and cgroup driver (from its config file), its CPU and
memory manager checkpoints, NRI, the permission to move pages, and which numad
libvirt runs for placement='auto' (Locus, numad itself, or none). Each check says what it found and what to do
(docs/doctor.md lists them).

It only reads, below the roots given. Exit status: 0 when every check is ok or
n/a, 1 when one warns, 2 when one fails.`,
		Args: rejectTopologyArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			rs := doctor.Run(env)
			var err error
			if output == "json" {
				err = writeJSON(cmd.OutOrStdout(), rs)
			} else {
				err = renderDoctor(cmd.OutOrStdout(), rs)
			}
			if err != nil {
				return err
			}
			return doctorVerdict(rs)
		},
	}
	f := cmd.Flags()
	f.StringVar(&env.SysfsRoot, "sysfs-root", doctor.DefaultSysfsRoot, "where sysfs is mounted")
	f.StringVar(&env.ProcRoot, "proc-root", doctor.DefaultProcRoot, "where procfs is mounted")
	f.StringVar(&env.CgroupRoot, "cgroup-root", doctor.DefaultCgroupRoot, "where cgroups are mounted")
	f.StringVar(&env.KubeletDir, "kubelet-dir", doctor.DefaultKubeletDir, "the kubelet's root directory")
	f.StringVar(&env.KubeletConfig, "kubelet-config", "", "the kubelet's config file (default <kubelet-dir>/config.yaml)")
	f.StringVar(&env.NRISocket, "nri-socket", doctor.DefaultNRISocket, "where the runtime's NRI socket would be")
	f.StringVar(&env.BinRoot, "bin-root", doctor.DefaultBinRoot, "where the host's programs (libvirt's daemons, numad) are looked for")
	outputFlag(cmd, &output)
	return cmd
}

// renderDoctor prints one row per check; long texts wrap within their
// column, so the table stays readable in a terminal.
func renderDoctor(w io.Writer, rs []doctor.Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSTATUS\tFOUND\tWHAT TO DO")
	for _, r := range rs {
		found, do := wrap(r.Found, doctorColumn), wrap(r.Do, doctorColumn)
		for i := 0; i < max(len(found), len(do), 1); i++ {
			check, status := "", ""
			if i == 0 {
				check, status = r.Check, string(r.Status)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", check, status, line(found, i), line(do, i))
		}
	}
	return tw.Flush()
}

// doctorColumn is the width the found and what-to-do texts wrap at.
const doctorColumn = 60

// wrap splits s into lines of at most width bytes at spaces (a longer word
// gets a line of its own); newlines and tabs from a file count as spaces.
func wrap(s string, width int) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		if cur != "" && len(cur)+1+len(word) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += word
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

func line(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return ""
}

// doctorStatus is the error of a run with warnings or failures: its exit
// status is doctor.ExitCode's.
type doctorStatus struct {
	code int
	msg  string
}

func (e doctorStatus) Error() string { return e.msg }

func doctorVerdict(rs []doctor.Result) error {
	code := doctor.ExitCode(rs)
	if code == 0 {
		return nil
	}
	count := map[doctor.Status]int{}
	for _, r := range rs {
		count[r.Status]++
	}
	return doctorStatus{code: code, msg: fmt.Sprintf("doctor: %d fail, %d warn", count[doctor.Fail], count[doctor.Warn])}
}

// oneLine keeps a text on one line whatever a file put in it.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
