package main

import (
	"github.com/seed-e5e476df/logbook/provider"
)

// The --format values of `logbook messages` and `logbook request`.
var (
	messageFormats = provider.MessageFormats()
	requestFormats = provider.RequestFormats()
)

// checkFormat is USAGE naming the allowed values when format is not one.
func checkFormat(cmd, format string, allowed []string) error {
	return provider.CheckFormat(cmd, "--format", format, allowed)
}
