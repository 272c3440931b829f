package ingest

// Legacy returns cfg set to write as the writer did before its encoding
// was chosen by measurement: the baseline of BenchmarkCopy.
func Legacy(cfg Config) Config {
	cfg.legacy = true
	return cfg
}
