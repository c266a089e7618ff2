package appendinput_test

import (
	"fmt"
	"io"
	"strings"

	"github.com/seed-e5e476df/logbook/runtime/internal/appendinput"
)

// Lines of NDJSON read one by one, each parsed into an append input whose
// data keeps its bytes as written.
func Example() {
	body := `{"type":"app/note","ignorable":true,"data":{"n":1.0e0,"b":1,"a":2}}` + "\n\n" +
		`{"type":"user/message","surfaceOp":"append","data":{"id":"u1"}}` + "\n"
	r := appendinput.NewReader(strings.NewReader(body), 1<<20)
	for {
		line, err := r.Next()
		if err == io.EOF {
			break
		}
		if len(line) == 0 {
			continue // a blank line
		}
		in, err := appendinput.Parse(line)
		if err != nil {
			fmt.Println("line", r.Line(), err)
			return
		}
		fmt.Printf("line %d: %s %s surface=%v\n", r.Line(), in.Type, in.Data, in.SurfaceOp != nil)
	}
	// Output:
	// line 1: app/note {"n":1.0e0,"b":1,"a":2} surface=false
	// line 3: user/message {"id":"u1"} surface=true
}
