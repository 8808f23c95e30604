// Package locality measures where a workload's memory lives relative to the
// NUMA nodes it runs on, plans moving remote memory to those local nodes and
// moves it with bounded stalls.
//
// The package has a pure core and a thin shell:
//   - parsers for /proc/PID/numa_maps, /proc/PID/maps, /proc/PID/status and a
//     node's meminfo (numamaps.go, mapsfile.go, procstatus.go, meminfo.go);
//   - the planner (plan.go), the batch-size controller (batch.go), the
//     memoryLocality settings (settings.go), the Event messages (event.go)
//     and the reporting rule (report.go), which take data and return decisions;
//   - the shell that reads /proc and sysfs (measure.go) and calls
//     move_pages(2) and migrate_pages(2) (syscalls_linux.go, migrate*.go).
//
// Page counts are in base pages (the kernel's page size, 4 KiB on x86-64): a
// 2 MiB huge page counts as 512.
package locality
