// Package accesslog records data access: one Event for every statement and
// discovery call that reaches authorization, batched per tenant and
// written as Parquet files into the tenant's own stage, where they are read
// back through SQL as the governed, read-only table system.access_events.
//
// It owns the event's shape (Event, the columns of the table), batching in
// bounded memory, the spool on local disk that holds batches while the
// stage is unavailable, and the decision to refuse new statements when the
// spool is full (fail closed, unless the operator chose otherwise for a
// tenant). Where a batch goes is a Sink's business.
//
// It must never hold a statement's literal values (Statement is the
// normalised text), never write a tenant's events outside that tenant's
// prefix, and never lose an event silently: what can be lost on a crash is
// bounded by the flush interval and documented.
package accesslog
