package rowscan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/seed-e5e476df/logbook/sdk"
	"github.com/seed-e5e476df/logbook/sdk/persistencetest"
	"github.com/seed-e5e476df/logbook/sdk/rowscan"
)

type row struct {
	seq    int64
	reason string
}

func run(nextSeq int64, rows ...row) (*rowscan.Scan, []int64) {
	s := rowscan.New(nextSeq)
	var prefix []int64
	for _, r := range rows {
		env := []byte(fmt.Sprintf(`{"seq":%d}`, r.seq))
		if s.Row(r.seq, env, r.reason, func() []byte { return []byte("bad " + r.reason) }) {
			prefix = append(prefix, r.seq)
		}
	}
	s.Finish()
	return s, prefix
}

func TestRowsPastNextSeqAreATornTail(t *testing.T) {
	s, prefix := run(2, row{0, ""}, row{1, ""}, row{2, ""})
	if s.End != 2 || len(prefix) != 2 || s.Torn.FromSeq != 2 || s.Torn.Bytes != int64(len(`{"seq":2}`)+1) || s.Rows != 1 || s.CommittedDamage() {
		t.Fatalf("scan = %+v", s)
	}
}

func TestABadRowWithoutAnIntactOneAfterIsATornTail(t *testing.T) {
	s, _ := run(3, row{0, ""}, row{1, ""}, row{2, "bad json"})
	if s.End != 2 || s.Bad != 2 || s.Corrupt("test", "s1", "here") != nil || string(s.Artifact()) != "bad bad json\n" {
		t.Fatalf("scan = %+v", s)
	}
}

func TestABadRowBeforeAnIntactOneIsCorrupt(t *testing.T) {
	s, prefix := run(4, row{0, ""}, row{1, "bad json"}, row{2, ""}, row{3, ""})
	if len(prefix) != 1 || s.IntactAt != 2 || s.Intact != 2 {
		t.Fatalf("scan = %+v", s)
	}
	persistencetest.RequireCode(t, s.Corrupt("test", "s1", "db"), sdk.CodeCorruptLog, "s1", "event 1", "bad json", "event 2")
}

func TestGapsAreMissingLines(t *testing.T) {
	s, _ := run(5, row{0, ""}, row{3, ""})
	if s.End != 1 || !strings.Contains(string(s.Artifact()), `{"missing":{"fromSeq":1,"toSeq":2}}`) ||
		!strings.Contains(string(s.Artifact()), `{"missing":{"fromSeq":4,"toSeq":4}}`) || !s.CommittedDamage() {
		t.Fatalf("scan = %+v, artifact %s", s, s.Artifact())
	}
}

func Example() {
	s := rowscan.New(3) // the sessions row says next_seq 3
	for seq, reason := range []string{"", "", "", ""} {
		env := []byte(fmt.Sprintf(`{"seq":%d,…}`, seq))
		s.Row(int64(seq), env, reason, nil)
	}
	s.Finish()
	fmt.Println(s.End, s.Torn.FromSeq, s.Rows)
	// Output: 3 3 1
}
