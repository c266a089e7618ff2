// Package pluginrpc carries the plain-Go plugin interfaces of package sdk
// (Persistence, Summarizer, Pruner, Projector) across a process boundary with
// HashiCorp go-plugin over gRPC (docs/architecture.md). It holds both ends:
//
//   - Plugin side: Serve, called from a plugin's main, wires go-plugin for the
//     author: handshake, VersionedPlugins, the gRPC server with the message
//     size limit, and the mapping of returned *sdk.Error values to gRPC
//     status (docs/errors.md).
//   - Host side: NewClientConfig (or PluginSets, GRPCDialOptions and
//     Handshake) builds the go-plugin ClientConfig; NewClient wraps the
//     connected plugin.ClientProtocol in a Client whose accessors return
//     adapters implementing the sdk interfaces over gRPC.
//
// # Wire
//
// The services are those of sdk/proto/logbook/v1 (package logbook.v1): one
// service per kind plus PluginInfo, which every plugin process serves. The
// go-plugin plugin names are the kind strings ("persistence", "summarizer",
// "pruner", "projection") plus "info"; all are served under the one integer
// protocol version sdk.ProtocolVersion. Session headers travel as canonical
// header JSON (sdk/headerjson); events and messages as canonical JSON bytes.
//
// Every request and reply stays under RPCMaxBytes: the Persistence client
// splits an Append batch whose encoding would exceed it into consecutive
// compare-and-set appends (docs/plugins.md), and the server streams Read replies
// in chunks of at most RPCMaxBytes/2 bytes. ReadDamaged streams the valid
// prefix the same way, then the damaged tail in pieces of that size, then
// its summary; against a backend that is no sdk.SalvageReader it answers
// Unimplemented, which the client reports as CONFIG_INVALID. The gRPC limits are RPCMaxBytes
// plus 1 MiB of headroom on both ends.
//
// Every protocol feature is in the .proto: neither end reads or sets gRPC
// metadata. The tenant of a persistence request (sdk.Tenancy) is its field
// tenant: a tenant view of the client (Tenant) names its tenant in every
// request, in each message of the long-lived Append stream and in the
// first of an Import stream; the implicit tenant's requests name none. The
// server serves each request on the backend's view of the tenant it names
// (asked once per name and kept), refuses a tenant on a backend that is
// no sdk.Tenancy with USAGE and an invalid name with TENANT_INVALID.
// Handles belong to the view that issued them: another tenant's handle is
// HANDLE_CLOSED. The list of tenants is the Tenants call.
//
// # Errors
//
// An *sdk.Error returned by a plugin travels as a gRPC status whose details
// hold a google.rpc.ErrorInfo {reason: CODE, domain: "logbook", metadata:
// {op, session_id, seq, index, detail, cause}}; the host rebuilds the same
// *sdk.Error (the wrapped cause comes back as its text). A status without
// that detail becomes PLUGIN_UNAVAILABLE (gRPC Unavailable, DeadlineExceeded,
// Aborted, Canceled) or IO_ERROR (any other), wrapping the status error, and
// the caller's context error when the context ended.
//
// The package lives beside sdk rather than in it because the header codec
// (sdk/headerjson) imports sdk.
package pluginrpc
