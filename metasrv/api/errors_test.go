package api_test

import (
	"errors"
	"testing"

	"lakegate/metasrv/api"
)

// TestDecodeError: the envelope's fields are kept, the cluster endpoints'
// {"error"} becomes the message, and nothing else of a body is.
func TestDecodeError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		body   string
		want   api.Error
	}{
		{"envelope", 404, `{"code":1003,"type":"NoSuchDomainException","message":"no domain Draft"}`,
			api.Error{Status: 404, Code: 1003, Type: "NoSuchDomainException", Message: "no domain Draft"}},
		{"cluster error", 503, `{"error":"not the leader"}`, api.Error{Status: 503, Message: "not the leader"}},
		{"message wins over error", 400, `{"code":1001,"message":"m","error":"e"}`, api.Error{Status: 400, Code: 1001, Message: "m"}},
		{"not JSON", 502, `<html>token=secret</html>`, api.Error{Status: 502}},
		{"other JSON", 500, `{"stack":"at main.go:1"}`, api.Error{Status: 500}},
		{"empty", 500, ``, api.Error{Status: 500}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := api.DecodeError(tc.status, []byte(tc.body)); *got != tc.want {
				t.Fatalf("got %+v, want %+v", *got, tc.want)
			}
		})
	}
}

// TestErrorIs: each sentinel matches its status (and for 409 its code)
// only.
func TestErrorIs(t *testing.T) {
	sentinels := []error{api.ErrUnauthenticated, api.ErrForbidden, api.ErrNotFound, api.ErrBadRequest,
		api.ErrUnavailable, api.ErrAlreadyExists, api.ErrVersionConflict}
	for _, tc := range []struct {
		status, code int
		want         error // nil: none
	}{
		{401, 1011, api.ErrUnauthenticated},
		{403, 1008, api.ErrForbidden},
		{404, 1003, api.ErrNotFound},
		{400, 1001, api.ErrBadRequest},
		{413, 0, api.ErrBadRequest},
		{503, 1002, api.ErrUnavailable},
		{409, 1004, api.ErrAlreadyExists},
		{409, 1012, api.ErrVersionConflict},
		{409, 1005, nil},
		{500, 1002, nil},
	} {
		e := &api.Error{Status: tc.status, Code: tc.code}
		for _, s := range sentinels {
			if got := errors.Is(e, s); got != (s == tc.want) {
				t.Errorf("HTTP %d code %d: errors.Is(%v) = %v", tc.status, tc.code, s, got)
			}
		}
	}
}

// TestErrorText: the message first, then the status and the exception.
func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		e    api.Error
		want string
	}{
		{api.Error{Status: 404, Code: 1003, Type: "NotFoundException", Message: "no table t"},
			"no table t (HTTP 404 Not Found, NotFoundException 1003)"},
		{api.Error{Status: 503, Message: "not the leader"}, "not the leader (HTTP 503 Service Unavailable)"},
		{api.Error{Status: 500}, "no message (HTTP 500 Internal Server Error)"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
