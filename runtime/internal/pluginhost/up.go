package pluginhost

// Up reports whether the plugin's process runs and is connected. It is
// false from the moment the process exits (a crash, a kill) until the
// supervisor's restart has configured a new one, and after Stop.
func (p *Plugin) Up() bool {
	p.mu.RLock()
	c := p.cur
	p.mu.RUnlock()
	return c != nil && !c.client.Exited()
}
