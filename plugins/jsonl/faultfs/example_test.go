package faultfs_test

import (
	"fmt"
	"os"
	"syscall"

	"github.com/seed-e5e476df/logbook/plugins/jsonl/faultfs"
)

// A crash keeps what was synced and nothing else; an armed fault fails the
// matching calls.
func Example() {
	fsys := faultfs.New()
	if err := fsys.WriteFile("/log", []byte("synced\n"), 0o600); err != nil {
		panic(err)
	}
	f, _ := fsys.OpenFile("/log", os.O_RDWR, 0)
	f.WriteAt([]byte("lost\n"), 7) // never synced
	fsys.Crash()
	data, _ := fsys.ReadFile("/log")
	fmt.Printf("%q\n", data)

	remove := fsys.Inject(faultfs.Fault{Op: faultfs.OpSync, Name: "log", Err: syscall.ENOSPC, Times: 1})
	defer remove()
	f, _ = fsys.OpenFile("/log", os.O_RDWR, 0)
	fmt.Println(f.Sync())
	fmt.Println(f.Sync())
	// Output:
	// "synced\n"
	// fdatasync /log: no space left on device
	// <nil>
}
