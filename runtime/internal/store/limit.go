package store

// DefaultMaxLiveSessions is Options.MaxLiveSessions by default.
const DefaultMaxLiveSessions = 1000
