package errorsdoc_test

import (
	"fmt"
	"os"

	"github.com/seed-e5e476df/logbook/sdk/internal/errorsdoc"
)

// Parse reads the areas of sdk/codes.go; each area's entries carry the doc
// comment that docs/errors.md shows.
func ExampleParse() {
	src, err := os.ReadFile("../../codes.go")
	if err != nil {
		fmt.Println(err)
		return
	}
	areas, err := errorsdoc.Parse("codes.go", src)
	if err != nil {
		fmt.Println(err)
		return
	}
	first := areas[0]
	fmt.Println(first.Title+":", first.Entries[0].Value)
	// Output: Identity and envelope: INVALID_SESSION_ID
}
