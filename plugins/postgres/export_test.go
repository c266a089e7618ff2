package postgres

// SetBeforeCAS makes every append transaction of b call f just before its
// compare-and-set, so a test can hold a transaction open while another
// host takes the session over.
func SetBeforeCAS(b *Backend, f func()) {
	b.mu.Lock()
	b.beforeCAS = f
	b.mu.Unlock()
}
