package persistencetest_test

import (
	"testing"

	"github.com/seed-e5e476df/logbook/plugins/memory"
	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
	"github.com/seed-e5e476df/logbook/sdk/pluginrpc"
	"github.com/seed-e5e476df/logbook/sdk/plugintest"
)

// A backend's test runs the suite twice: against the backend directly, and
// through plugintest over the real gRPC plugin protocol, as the host will
// reach it. The body of conformance is the backend's TestConformance; Run
// needs the *testing.T of a test, so this example does not run.
func ExampleRun() {
	conformance := func(t *testing.T) {
		newBackend := func(t *testing.T) sdk.Persistence {
			return memory.New() // the backend under test, over fresh storage (t.TempDir())
		}
		t.Run("in-process", func(t *testing.T) {
			persistencetest.Run(t, persistencetest.Harness{Name: memory.Name, New: newBackend})
		})
		t.Run("grpc", func(t *testing.T) {
			persistencetest.Run(t, persistencetest.Harness{
				Name: memory.Name,
				New: func(t *testing.T) sdk.Persistence {
					c := plugintest.Connect(t, pluginrpc.ServeConfig{
						Info:        sdk.Info{Name: memory.Name, Kinds: []sdk.Kind{sdk.KindPersistence}},
						Persistence: newBackend(t),
					})
					p, err := c.Persistence()
					if err != nil {
						t.Fatal(err)
					}
					return p
				},
			})
		})
		// Setting Reopen, Tear, Corrupt and SetFormatVersion as the storage
		// allows runs the groups that need them; each nil hook skips them.
	}
	_ = conformance // func TestConformance(t *testing.T) { conformance(t) }
}
