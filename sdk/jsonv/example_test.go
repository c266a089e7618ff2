package jsonv_test

import (
	"fmt"

	"github.com/seed-e5e476df/logbook/sdk/jsonv"
)

// AppendStringArray writes canonical JSON: <, > and & stay as they are,
// unlike encoding/json's escaping.
func ExampleAppendStringArray() {
	fmt.Println(string(jsonv.AppendStringArray(nil, []string{"c1", "a<b>&c"})))
	fmt.Println(string(jsonv.AppendStringArray([]byte("ids="), nil)))
	// Output:
	// ["c1","a<b>&c"]
	// ids=[]
}
