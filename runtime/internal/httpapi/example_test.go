package httpapi_test

import (
	"fmt"
	"net/http/httptest"

	"github.com/seed-e5e476df/logbook/runtime/internal/httpapi"
	"github.com/seed-e5e476df/logbook/sdk"
)

// An error becomes a problem+json answer whose status follows its code.
func ExampleNewProblem() {
	err := sdk.Errorf(sdk.CodeSeqConflict, "append", "the append expected a log length of 1 but the log holds 3").
		WithMeta("expected", "1").WithMeta("actual", "3")
	rec := httptest.NewRecorder()
	httpapi.NewProblem(err).Write(rec)
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"))
	fmt.Print(rec.Body.String())
	// Output:
	// 409 application/problem+json
	// {"type":"urn:logbook:error:SEQ_CONFLICT","title":"Seq conflict","status":409,"detail":"append: SEQ_CONFLICT: the append expected a log length of 1 but the log holds 3","code":"SEQ_CONFLICT","op":"append","expected":1,"actual":3}
}
