package service_test

import (
	"context"
	"fmt"

	"github.com/seed-e5e476df/logbook/config"
	"github.com/seed-e5e476df/logbook/events"
	"github.com/seed-e5e476df/logbook/runtime/service"
	"github.com/seed-e5e476df/logbook/sdk"
)

// A door creates a session, appends at the length it expects, and reports
// a partial failure from the result.
func Example() {
	ctx := context.Background()
	cfg, err := config.Parse([]byte(`persistence "memory" {}`), "example.hcl")
	if err != nil {
		fmt.Println(err)
		return
	}
	svc, err := service.Open(ctx, service.Options{Config: cfg, Executable: logbookBin})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer svc.Close(ctx)
	if _, err := svc.Create(ctx, service.CreateRequest{ID: "s1", Header: events.CreateOptions{CWD: "/work"}, Stored: true}); err != nil {
		fmt.Println(err)
		return
	}
	note := events.Input{Type: "app/note", Ignorable: true, Data: []byte(`{"n":1}`)}
	at := sdk.Offset(0)
	res, err := svc.Append(ctx, "s1", service.AppendRequest{Inputs: []events.Input{note, note}, Expected: &at, Flush: true})
	fmt.Println("appended:", len(res.Events), "first seq:", *res.FirstSeq, "error:", err)

	res, err = svc.Append(ctx, "s1", service.AppendRequest{Inputs: []events.Input{note, {Type: "app/note", Ignorable: true, Data: []byte(`{`)}}})
	fmt.Println("appended:", len(res.Events), "first seq:", *res.FirstSeq, "code:", sdk.CodeOf(err))

	_, err = svc.Append(ctx, "s1", service.AppendRequest{Inputs: []events.Input{note}, Expected: &at})
	fmt.Println("stale expected seq:", sdk.CodeOf(err))
	// Output:
	// appended: 2 first seq: 0 error: <nil>
	// appended: 1 first seq: 2 code: JSON_SYNTAX
	// stale expected seq: SEQ_CONFLICT
}
