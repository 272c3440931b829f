package flight

import (
	"encoding/json"

	"lakegate/flight/backend"
	"lakegate/flight/ticket"
)

// What a statement ticket carries, sealed (flight/ticket): its first byte
// says which kind of plan follows as JSON — a query's (payloadV2) or a
// SHOW, DESCRIBE or EXPLAIN (payloadShow).

// payloadV2 is the version byte of a query ticket payload, followed by
// JSON of ticketPayload.
const payloadV2 = 2

// ticketPayload is what a statement ticket carries: the rendered SQL and the
// table versions it reads, pinned at planning.
type ticketPayload struct {
	SQL    string                 `json:"sql,omitempty"`
	Tables []backend.TableVersion `json:"tables,omitempty"`
	// Access is the statement as the access log records it, set when its
	// plan reached authorization and the server keeps an access log.
	Access accessedStatement `json:"access,omitzero"`
}

// accessedStatement is a statement's kind and normalised text (literals
// replaced), which a ticket carries to the DoGet that records it.
type accessedStatement struct {
	Kind      string `json:"kind,omitempty"`
	Statement string `json:"statement,omitempty"`
}

// encodePayload is the ticket payload of a query plan.
func encodePayload(pl *plan, st accessedStatement) ([]byte, error) {
	b, err := json.Marshal(ticketPayload{SQL: pl.sql, Tables: pl.tables, Access: st})
	if err != nil {
		return nil, err
	}
	return append([]byte{payloadV2}, b...), nil
}

// decodePayload reads a query ticket's payload; anything else is an
// invalid ticket.
func decodePayload(b []byte) (ticketPayload, error) {
	var tp ticketPayload
	if len(b) < 1 || b[0] != payloadV2 || json.Unmarshal(b[1:], &tp) != nil {
		return tp, ticket.ErrInvalid
	}
	return tp, nil
}

// payloadShow is the version byte of a show ticket payload.
const payloadShow = 3

// encodeShow is the ticket payload of a show plan.
func encodeShow(q *showQuery, st accessedStatement) ([]byte, error) {
	withAccess := *q
	withAccess.Access = st
	b, err := json.Marshal(&withAccess)
	if err != nil {
		return nil, err
	}
	return append([]byte{payloadShow}, b...), nil
}

// isShowPayload reports whether a ticket payload is a show payload.
func isShowPayload(b []byte) bool { return len(b) > 0 && b[0] == payloadShow }
