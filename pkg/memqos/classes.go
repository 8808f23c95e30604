package memqos

// classConfig picks the memoryQOS section that governs a workload and names
// it. An unlabelled Guaranteed pod reads lsrClass (koordinator maps
// Guaranteed there) and otherwise has the built-in setting, which is off.
// LSR/LSE and SYSTEM read their own section when the config has one, else
// lsClass.
func classConfig(cfg Config, c Class, guaranteed bool) (*ClassConfig, string) {
	const prefix = "clusterStrategy."
	switch {
	case guaranteed:
		return cfg.LSR, prefix + "lsrClass.memoryQOS"
	case c == ClassBE:
		return cfg.BE, prefix + "beClass.memoryQOS"
	case (c == ClassLSR || c == ClassLSE) && cfg.LSR != nil:
		return cfg.LSR, prefix + "lsrClass.memoryQOS"
	case c == ClassSystem && cfg.System != nil:
		return cfg.System, prefix + "systemClass.memoryQOS"
	}
	return cfg.LS, prefix + "lsClass.memoryQOS"
}
