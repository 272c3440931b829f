package api

// HTTP headers of the REST and internal APIs.
const (
	// CallerHeader carries the original caller's principal id on a request
	// a follower forwards to the leader. Only metadata_peer principals may
	// send it (or raftnode.ForwardedHeader); anyone else is rejected and
	// audited.
	CallerHeader = "Lakegate-Caller"
	// DelegateTenantHeader and DelegateUserHeader carry query_service
	// delegation: the tenant (the metalake addressed) and the user name in
	// that metalake the service acts for. Anyone else who sends them is
	// rejected and audited.
	DelegateTenantHeader = "Lakegate-Delegate-Tenant"
	DelegateUserHeader   = "Lakegate-Delegate-User"
	// GenerationHeader is on every response about a metalake: the
	// metalake's generation the response was computed at.
	GenerationHeader = "Lakegate-Generation"
	// IndexHeader is the Raft index: of the write for writes, applied on
	// the answering node for reads.
	IndexHeader = "Lakegate-Index"
)

// Media types of REST bodies (the v2 tag association body is name/value
// pairs).
const (
	MediaJSON = "application/json"
	MediaV1   = "application/vnd.gravitino.v1+json"
	MediaV2   = "application/vnd.gravitino.v2+json"
)
