package pruner

import (
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
)

// FuzzPrune feeds arbitrary messages and budgets to PruneMessage. It must
// never panic; it fails only with CONFIG_INVALID (exactly when the budget
// is refused) or PAYLOAD_INVALID; a replacement is a canonical content
// array whose text holds exactly CharsAfter code points, and pruning the
// rewritten message again returns no replacement. The seed corpus is in
// testdata/fuzz/FuzzPrune.
func FuzzPrune(f *testing.F) {
	f.Fuzz(func(t *testing.T, msg []byte, threshold, head, tail int64) {
		b := budget(threshold, head, tail)
		r, ok, err := PruneMessage(msg, b)
		budgetErr := ValidateBudget(b)
		if err != nil {
			switch code := sdk.CodeOf(err); {
			case budgetErr != nil && code == sdk.CodeConfigInvalid:
			case budgetErr == nil && code == sdk.CodePayloadInvalid:
			default:
				t.Fatalf("error %v (budget error %v)", err, budgetErr)
			}
			if ok || r.Content != nil {
				t.Fatalf("a failure returned a replacement: %s", r.Content)
			}
			return
		}
		if budgetErr != nil {
			t.Fatalf("budget %+v refused by ValidateBudget (%v) but accepted by PruneMessage", b, budgetErr)
		}
		if !ok {
			return
		}
		n, _, _ := textChars(t, r.Content)
		if n != r.CharsAfter || r.CharsAfter != head+MarkerChars+tail || r.CharsBefore <= threshold {
			t.Fatalf("chars %d → %d; the content holds %d; budget %+v", r.CharsBefore, r.CharsAfter, n, b)
		}
		if _, again, err := PruneMessage(withContent(t, msg, r.Content), b); again || err != nil {
			t.Fatalf("second run: replacement %v, error %v", again, err)
		}
	})
}
