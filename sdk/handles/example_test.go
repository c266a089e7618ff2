package handles_test

import (
	"fmt"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/handles"
)

// A backend's Open(write) and Close with the shared bookkeeping: the claim
// table refuses a second writer, the handle table names handles and
// answers HANDLE_CLOSED for a closed one.
func Example() {
	type handle struct {
		id    string
		write bool
	}
	open := handles.NewTable[handle]("mybackend")
	claims := handles.NewClaims[handle]()

	openWrite := func(id string) (string, error) {
		hd := &handle{id: id, write: true}
		if _, ok := claims.Take(id, hd); !ok {
			return "", handles.AlreadyOwned("mybackend", id, "another handle holds it")
		}
		name := open.NewName()
		open.Put(name, hd)
		return name, nil
	}
	closeHandle := func(name string) {
		if hd, ok := open.Remove(name); ok {
			claims.Release(hd.id, hd)
		}
	}

	h1, _ := openWrite("s1")
	_, err := openWrite("s1")
	fmt.Println(sdk.CodeOf(err))
	closeHandle(h1)
	_, err = open.Get(h1)
	fmt.Println(sdk.CodeOf(err))
	_, err = openWrite("s1")
	fmt.Println(err)
	// Output:
	// ALREADY_OWNED
	// HANDLE_CLOSED
	// <nil>
}
