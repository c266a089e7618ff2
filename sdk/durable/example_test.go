package durable_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/seed-e5e476df/logbook/sdk/durable"
)

// WriteFileFunc stores a file whose content a function writes into the
// temporary file: here two parts at their offsets.
func ExampleWriteFileFunc() {
	dir, err := os.MkdirTemp("", "durable-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "log")
	err = durable.WriteFileFunc(path, 0o600, func(f durable.File) error {
		if _, err := f.WriteAt([]byte("header\n"), 0); err != nil {
			return err
		}
		_, err := f.WriteAt([]byte("body\n"), 7)
		return err
	})
	data, _ := os.ReadFile(path)
	fmt.Printf("%v %q\n", err, data)
	// Output: <nil> "header\nbody\n"
}
