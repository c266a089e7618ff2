package pluginrpc

import (
	"context"

	"github.com/seed-e5e476df/logbook/sdk"
	logbookv1 "github.com/seed-e5e476df/logbook/sdk/proto/logbook/v1"
)

// summarizerClient implements sdk.Summarizer and sdk.RangeSelector over gRPC.
type summarizerClient struct {
	rpc logbookv1.SummarizerClient
}

func (c *summarizerClient) Summarize(ctx context.Context, r sdk.SummarizeRequest) (sdk.SummarizeReply, error) {
	rep, err := c.rpc.Summarize(ctx, &logbookv1.SummarizeRequest{
		SessionId:    r.SessionID,
		CompactionId: r.CompactionID,
		Provider:     r.Provider,
		Model:        r.Model,
		MaxTokens:    r.MaxTokens,
		System:       r.System,
		Tools:        r.Tools,
		Config:       r.Config,
		Messages:     r.Messages,
		Instruction:  r.Instruction,
	})
	if err != nil {
		return sdk.SummarizeReply{}, fromStatus(ctx, "summarizer.Summarize", err)
	}
	return sdk.SummarizeReply{
		Summary:   rep.GetSummary(),
		Provider:  rep.GetProvider(),
		Model:     rep.GetModel(),
		Usage:     rep.GetUsage(),
		RawOutput: rep.GetRawOutput(),
	}, nil
}

func (c *summarizerClient) SelectRange(ctx context.Context, r sdk.SelectRangeRequest) (sdk.SelectRangeReply, error) {
	rep, err := c.rpc.SelectRange(ctx, &logbookv1.SelectRangeRequest{
		SessionId:    r.SessionID,
		Nodes:        fromSeqs(r.Nodes),
		Tokens:       r.Tokens,
		Messages:     r.Messages,
		RetainTokens: r.RetainTokens,
	})
	if err != nil {
		return sdk.SelectRangeReply{}, fromStatus(ctx, "summarizer.SelectRange", err)
	}
	return sdk.SelectRangeReply{Start: sdk.Seq(rep.GetStart()), End: sdk.Seq(rep.GetEnd()), OK: rep.GetOk()}, nil
}
