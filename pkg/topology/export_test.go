package topology

// ScanPCIWithin is ScanPCI under caps a test can reach with a few entries.
func ScanPCIWithin(root string, t *Topology, entries, devices, bytes int) (PCIScan, error) {
	return scanPCI(root, t, pciLimits{entries: entries, devices: devices, bytes: bytes})
}
