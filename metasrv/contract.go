package metasrv

import "lakegate/metasrv/api"

// Names of the wire contract's types (package api declares them) under
// which metasrv's callers and tests know them.
type (
	ResolveRequest     = api.ResolveRequest
	ResolveRef         = api.ResolveRef
	ResolveResponse    = api.ResolveResponse
	TableDescriptor    = api.TableDescriptor
	DescriptorColumn   = api.Column
	DescriptorFile     = api.DataFile
	DescriptorMask     = api.ColumnMask
	DescriptorUpstream = api.Upstream
	ConflictResult     = api.ConflictResult
	ListTablesRequest  = api.ListTablesRequest
	ListTablesResponse = api.ListTablesResponse
	ListedTable        = api.ListedTable
	FilesResponse      = api.FilesResponse
	FileRef            = api.FileRef
	WatchRequest       = api.WatchRequest
	WatchResponse      = api.WatchResponse
)

// Bounds of the internal API's requests.
const (
	MaxResolveRefs  = api.MaxResolveRefs
	MaxWatchTenants = api.MaxWatchTenants
)
